#!/bin/sh
# `make up`: builds the guest image (cached by content hash) and starts
# vmhost in the background on this machine, then says how to use it.
# The control plane (scheduler, gateway, PostgreSQL, NATS) joins here as it
# lands; see docs/operations.md.
set -eu
BUILD_DIR=${1:-build}
DATA_DIR=${AIRLOCK_DATA_DIR:-/var/lib/airlock}
VMHOST="$BUILD_DIR/vmhost/airlock-vmhost"
CTL="$BUILD_DIR/vmhost/vmhostctl"
PIDFILE="$DATA_DIR/vmhost.pid"
ADDR="unix:$DATA_DIR/vmhost.sock"

mkdir -p "$DATA_DIR"
if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    echo "vmhost is already running (pid $(cat "$PIDFILE"))"
else
    "$VMHOST" build-image --data-dir "$DATA_DIR"
    nohup "$VMHOST" serve --data-dir "$DATA_DIR" >>"$DATA_DIR/vmhost.log" 2>&1 &
    echo $! >"$PIDFILE"
    i=0
    until "$CTL" --addr "$ADDR" ls >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt 600 ] || ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
            echo "vmhost did not start; last log lines:" >&2
            tail -n 30 "$DATA_DIR/vmhost.log" >&2
            exit 1
        fi
        sleep 0.2
    done
    echo "vmhost running (pid $(cat "$PIDFILE")), log: $DATA_DIR/vmhost.log"
fi
cat <<EOT

airlock is up on this machine. Try it:
  export AIRLOCK_VMHOST_ADDR=$ADDR
  $CTL create                       # boots a sandbox microVM, prints its id
  $CTL exec <id> -- uname -a        # runs a command inside it
  $CTL put <id> /root/hello.txt < /etc/hostname
  $CTL cat <id> /root/hello.txt
  $CTL rm <id>
Stop everything with: make down
EOT
