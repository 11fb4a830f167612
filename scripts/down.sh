#!/bin/sh
# `make down`: stops what `make up` started, by the pids it recorded in
# DATA_DIR/run, gateway first and PostgreSQL last. Nothing else is touched.
# Every node `make up NODES=N` started goes (run/vmhost*.pid,
# run/egress*.pid), whatever NODES is now. A vmhost suspends its sandboxes
# to disk as it stops (the next `make up` resumes each on its first
# request), so it gets longer than the rest; the nodes stop together.
set -eu
DATA_DIR=${AIRLOCK_DATA_DIR:-/var/lib/airlock}
RUN="$DATA_DIR/run"
PG_BIN=/usr/lib/postgresql/15/bin

# stop NAME [SECONDS]: TERM, then KILL after SECONDS (default 60).
stop() {
    name=$1
    ticks=$((${2:-60} * 5))
    [ -f "$RUN/$name.pid" ] || return 0
    pid=$(cat "$RUN/$name.pid")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        i=0
        while kill -0 "$pid" 2>/dev/null; do
            i=$((i + 1))
            [ $i -eq $ticks ] && { echo "$name ($pid) did not stop; sending KILL"; kill -KILL "$pid"; }
            sleep 0.2
        done
        echo "$name stopped"
    fi
    rm -f "$RUN/$name.pid"
}

stop gateway
stop vault
stop scheduler
for pidfile in "$RUN"/vmhost*.pid; do
    [ -f "$pidfile" ] || continue
    name=$(basename "$pidfile" .pid)
    echo "$name: suspending its sandboxes to disk (see its vmhost.log)"
    stop "$name" 900 &
done
wait
for pidfile in "$RUN"/egress*.pid; do
    [ -f "$pidfile" ] || continue
    stop "$(basename "$pidfile" .pid)"
done
stop nats
if [ -f "$RUN/postgres.started" ]; then
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$DATA_DIR/postgres" -m fast -w stop >/dev/null &&
        echo "postgres stopped"
    rm -f "$RUN/postgres.started"
fi
