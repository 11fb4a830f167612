#!/bin/sh
# `make down`: stops what `make up` started (by the pid it recorded).
set -eu
DATA_DIR=${AIRLOCK_DATA_DIR:-/var/lib/airlock}
PIDFILE="$DATA_DIR/vmhost.pid"
if [ ! -f "$PIDFILE" ]; then
    echo "nothing to stop (no $PIDFILE)"
    exit 0
fi
pid=$(cat "$PIDFILE")
if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    i=0
    while kill -0 "$pid" 2>/dev/null; do
        i=$((i + 1))
        [ $i -gt 300 ] && { echo "vmhost ($pid) did not stop; sending KILL"; kill -KILL "$pid"; }
        sleep 0.2
    done
    echo "vmhost stopped"
fi
rm -f "$PIDFILE"
