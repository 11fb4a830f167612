#!/bin/sh
# `make down`: stops what `make up` started, by the pids it recorded in
# DATA_DIR/run, gateway first and PostgreSQL last. Nothing else is touched.
set -eu
DATA_DIR=${AIRLOCK_DATA_DIR:-/var/lib/airlock}
RUN="$DATA_DIR/run"
PG_BIN=/usr/lib/postgresql/15/bin

stop() {
    name=$1
    [ -f "$RUN/$name.pid" ] || return 0
    pid=$(cat "$RUN/$name.pid")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        i=0
        while kill -0 "$pid" 2>/dev/null; do
            i=$((i + 1))
            [ $i -eq 300 ] && { echo "$name ($pid) did not stop; sending KILL"; kill -KILL "$pid"; }
            sleep 0.2
        done
        echo "$name stopped"
    fi
    rm -f "$RUN/$name.pid"
}

stop gateway
stop vault
stop scheduler
stop vmhost
stop egress
stop nats
if [ -f "$RUN/postgres.started" ]; then
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$DATA_DIR/postgres" -m fast -w stop >/dev/null &&
        echo "postgres stopped"
    rm -f "$RUN/postgres.started"
fi
