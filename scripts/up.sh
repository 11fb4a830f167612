#!/bin/sh
# `make up`: starts airlock on this machine — its own PostgreSQL (unless
# AIRLOCK_DATABASE_URL is set) and nats-server (unless AIRLOCK_NATS_URL is
# set), then egress, vmhost, scheduler, vault and the gateway on
# 127.0.0.1:7070 (REST) and 127.0.0.1:7071 (the public gRPC API) — and
# returns once the API answers. AIRLOCK_NODES=N (`make up NODES=N`, default
# 1) runs N nodes — a vmhost and an egress each, with its own node id, data
# directory (so its own btrfs store), identities and NATS user — beside
# one control plane: a local cluster (docs/operations.md). Idempotent:
# parts already running are left alone. Every process it starts is
# recorded in DATA_DIR/run/*.pid so `make down` stops exactly those. The
# services share the internal token DATA_DIR/internal-token for each
# other's gRPC APIs (0600, made once, kept across restarts;
# AIRLOCK_INTERNAL_TOKEN_FILE names another file); on NATS each has a user
# of its own with only its subjects (scripts/nats-users.sh:
# DATA_DIR/nats-credentials/, 0400), over TLS with
# the internal PKI (scripts/internal-pki.sh: DATA_DIR/pki/, nats-server's
# certificate and each service's). A nats-server of your own
# (AIRLOCK_NATS_URL) must know those users and serve that TLS: its
# authorization and tls blocks are in DATA_DIR/run/nats.conf. Between the
# services mutual TLS with the same PKI (kept, renewed before they expire;
# a renewal is sent to a running service as SIGHUP). AIRLOCK_GATEWAY_TLS_CERT
# and AIRLOCK_GATEWAY_TLS_KEY (both or neither) make the public APIs (REST
# and gRPC) serve TLS with that certificate and key. Every service serves
# Prometheus /metrics on 127.0.0.1 from AIRLOCK_METRICS_PORT (default 9100):
# the scheduler there, vault +1, node I's vmhost +2I and egress +2I+1 (the
# gateway on its API). See docs/operations.md.
set -eu
BUILD_DIR=${1:-build}
DATA_DIR=${AIRLOCK_DATA_DIR:-/var/lib/airlock}
RUN="$DATA_DIR/run"
PG_BIN=/usr/lib/postgresql/15/bin
NATS_PORT=${AIRLOCK_NATS_PORT:-4222}
GATEWAY_ADDR=${AIRLOCK_GATEWAY_ADDR:-127.0.0.1:7070}
GRPC_ADDR=${AIRLOCK_GRPC_ADDR:-127.0.0.1:7071}
TLS_CERT=${AIRLOCK_GATEWAY_TLS_CERT:-}
TLS_KEY=${AIRLOCK_GATEWAY_TLS_KEY:-}
if [ -n "$TLS_CERT" ] && [ -n "$TLS_KEY" ]; then
    SCHEME=https
elif [ -z "$TLS_CERT$TLS_KEY" ]; then
    SCHEME=http
else
    echo "up: AIRLOCK_GATEWAY_TLS_CERT and AIRLOCK_GATEWAY_TLS_KEY go together" >&2
    exit 2
fi
VMHOST="$BUILD_DIR/vmhost/airlock-vmhost"
EGRESS="$BUILD_DIR/egress/airlock-egress"
# The resolver egress asks for allowed names: the host's first IPv4
# nameserver (egress speaks to its resolver over IPv4).
UPSTREAM_DNS=${AIRLOCK_UPSTREAM_DNS:-$(awk '$1 == "nameserver" && $2 ~ /^[0-9.]+$/ { print $2; exit }' /etc/resolv.conf)}
# Ranges no sandbox policy can open (egress --protect-cidr), as the chart's
# node.protectCidrs: every private and shared range, so a sandbox reaches
# neither this machine's LAN nor its provider's. The node's own addresses,
# loopback and 169.254/16 (cloud metadata) are protected always. Opt out
# explicitly: AIRLOCK_PROTECT_CIDRS="" (or name the ranges to keep).
PROTECT_CIDRS=${AIRLOCK_PROTECT_CIDRS-10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 100.64.0.0/10}
SCHEDULER="$BUILD_DIR/scheduler/airlock-scheduler"
GATEWAY="$BUILD_DIR/gateway/airlock-gateway"
VAULT="$BUILD_DIR/vault/airlock-vault"
# This node's name: the host's, made a NATS subject token as vmhost makes
# it (every character but letters, digits, '_' and '-' becomes '-').
NODE_ID=${AIRLOCK_NODE_ID:-$(hostname | tr -c 'A-Za-z0-9_\n-' '-')}
NODES=${AIRLOCK_NODES:-1}
case $NODES in
    '' | *[!0-9]* | 0*) echo "up: AIRLOCK_NODES (NODES) must be a number from 1, not \"$NODES\"" >&2
        exit 2 ;;
esac
NATS_CREDS="$DATA_DIR/nats-credentials"
PKI="$DATA_DIR/pki"
METRICS_PORT=${AIRLOCK_METRICS_PORT:-9100}
case $METRICS_PORT in
    '' | *[!0-9]*) echo "up: AIRLOCK_METRICS_PORT must be a port number, not \"$METRICS_PORT\"" >&2
        exit 2 ;;
esac
# Where service I of the list above serves /metrics (loopback only).
metrics_addr() { echo "127.0.0.1:$((METRICS_PORT + $1))"; }

# Node I of 1..NODES. The first is the node a single `make up` has always
# run (NODE_ID, DATA_DIR, run/vmhost.pid), so its sandboxes stay when
# NODES grows or shrinks; node I > 1 is NODE_ID-I with a data directory
# of its own, DATA_DIR/nodes/NODE_ID-I, and pid files run/vmhost-NODE_ID-I.pid
# and run/egress-NODE_ID-I.pid (named as its certificates are).
node_id() { if [ "$1" -eq 1 ]; then echo "$NODE_ID"; else echo "$NODE_ID-$1"; fi; }
node_dir() { if [ "$1" -eq 1 ]; then echo "$DATA_DIR"; else echo "$DATA_DIR/nodes/$(node_id "$1")"; fi; }
node_pid_name() { if [ "$2" -eq 1 ]; then echo "$1"; else echo "$1-$(node_id "$2")"; fi; }
NODE_IDS=""
NODE_IDENTITIES=""
n=1
while [ $n -le "$NODES" ]; do
    NODE_IDS="$NODE_IDS $(node_id $n)"
    NODE_IDENTITIES="$NODE_IDENTITIES vmhost:$(node_id $n) egress:$(node_id $n)"
    n=$((n + 1))
done

mkdir -p "$RUN"
chmod 755 "$DATA_DIR"
# The snapshot store every node shares (docs/snapshot-store.md): only root
# may enter it. On a real cluster it is a file system every node mounts.
SHARED_STORE="${AIRLOCK_SNAPSHOT_STORE:-$DATA_DIR/shared-store}"
mkdir -p "$SHARED_STORE"
chmod 700 "$SHARED_STORE"

# ---- the internal token (services present it to each other and to NATS) ----
TOKEN_FILE=${AIRLOCK_INTERNAL_TOKEN_FILE:-$DATA_DIR/internal-token}
if [ ! -s "$TOKEN_FILE" ]; then
    # 24 random bytes as 48 hex characters.
    (umask 077 && od -An -tx1 -N24 /dev/urandom | tr -d ' \n' >"$TOKEN_FILE" && echo >>"$TOKEN_FILE")
    echo "internal token: created $TOKEN_FILE"
fi
chmod 600 "$TOKEN_FILE"

running() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

# ---- the internal PKI: a CA and a certificate for nats-server and each
# service identity (kept; made again when it expires within 30 days) ----
# shellcheck disable=SC2086 # one word per identity
RENEWED=$(sh "$(dirname "$0")/internal-pki.sh" "$PKI" nats gateway scheduler vault \
    $NODE_IDENTITIES)
# A running service (nats-server too) takes a renewed certificate on
# SIGHUP, without dropping a call. Its pid file is named as its
# certificate, but for the first node's (vmhost.pid, egress.pid).
for name in $RENEWED; do
    case $name in
        renewed) continue ;;
        vmhost-"$NODE_ID" | egress-"$NODE_ID") service=${name%%-*} ;;
        *) service=$name ;;
    esac
    if running "$service"; then
        kill -HUP "$(cat "$RUN/$service.pid")"
        echo "$service: certificate renewed, reloaded"
    fi
done

# wait_for NAME LOG TEST...: polls TEST for up to 120 s while NAME lives.
wait_for() {
    name=$1 log=$2
    shift 2
    i=0
    until "$@" >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt 600 ] || ! running "$name"; then
            echo "$name did not start; last log lines ($log):" >&2
            tail -n 30 "$log" >&2
            exit 1
        fi
        sleep 0.2
    done
}

# start NAME LOG CMD...: runs CMD in the background, records its pid.
start() {
    name=$1 log=$2
    shift 2
    nohup "$@" >>"$log" 2>&1 &
    echo $! >"$RUN/$name.pid"
}

# ---- PostgreSQL ----
if [ -n "${AIRLOCK_DATABASE_URL:-}" ]; then
    DATABASE_URL=$AIRLOCK_DATABASE_URL
else
    PGDATA="$DATA_DIR/postgres"
    PGSOCK="$RUN/pg"
    pg() { runuser -u postgres -- "$@"; }
    if [ ! -f "$PGDATA/PG_VERSION" ]; then
        echo "postgres: initdb $PGDATA"
        mkdir -p "$PGDATA"
        chown postgres "$PGDATA"
        pg "$PG_BIN/initdb" -D "$PGDATA" -A trust -U airlock >/dev/null
    fi
    mkdir -p "$PGSOCK"
    chown postgres "$PGSOCK"
    chmod 700 "$PGSOCK"
    touch "$DATA_DIR/postgres.log"
    chown postgres "$DATA_DIR/postgres.log"
    if ! pg "$PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
        # Unix socket only (listen_addresses=''), in a directory only root
        # and postgres can enter.
        pg "$PG_BIN/pg_ctl" -D "$PGDATA" -l "$DATA_DIR/postgres.log" -w \
            -o "-k $PGSOCK -p 5432 -c listen_addresses=''" start >/dev/null
        touch "$RUN/postgres.started"
        echo "postgres running (socket in $PGSOCK)"
    fi
    if ! pg "$PG_BIN/psql" -h "$PGSOCK" -U airlock -d postgres -Atc \
        "SELECT 1 FROM pg_database WHERE datname = 'airlock'" | grep -q 1; then
        pg "$PG_BIN/createdb" -h "$PGSOCK" -U airlock airlock
    fi
    DATABASE_URL="host=$PGSOCK port=5432 user=airlock dbname=airlock"
fi

# ---- NATS: a user per identity (made once, kept), then the server; TLS
# with nats-server's certificate of the PKI, which every client checks,
# and each service's, which nats-server asks for ----
NATS_CONF_BEFORE=$(cat "$RUN/nats.conf" 2>/dev/null || true)
# shellcheck disable=SC2086 # one word per node
sh "$(dirname "$0")/nats-users.sh" --tls "$PKI" "$NATS_CREDS" "$RUN/nats.conf" $NODE_IDS
if [ -n "${AIRLOCK_NATS_URL:-}" ]; then
    NATS_URL=$AIRLOCK_NATS_URL
else
    NATS_URL="nats://127.0.0.1:$NATS_PORT"
    if running nats; then
        # Users of nodes it does not know yet (NODES grew): nats-server
        # rereads its config on SIGHUP.
        if [ "$(cat "$RUN/nats.conf")" != "$NATS_CONF_BEFORE" ]; then
            kill -HUP "$(cat "$RUN/nats.pid")"
            echo "nats-server: users changed, reloaded"
        fi
    else
        # The passwords are in a config file (0600), never on a command line;
        # it serves TLS only (its tls block), with the nats certificate.
        start nats "$DATA_DIR/nats.log" /usr/sbin/nats-server -c "$RUN/nats.conf" \
            -a 127.0.0.1 -p "$NATS_PORT"
        wait_for nats "$DATA_DIR/nats.log" grep -q "Server is ready" "$DATA_DIR/nats.log"
        echo "nats-server running on $NATS_URL"
    fi
fi

# ---- each node: egress, then vmhost, which attaches every sandbox to it.
# Every node has its own data directory, sockets, logs and pid files; the
# guest image cache (DATA_DIR/images) is shared, under its own lock. ----
PROTECT_ARGS=""
for cidr in $PROTECT_CIDRS; do
    PROTECT_ARGS="$PROTECT_ARGS --protect-cidr $cidr"
done
n=1
while [ $n -le "$NODES" ]; do
    id=$(node_id $n)
    dir=$(node_dir $n)
    egress=$(node_pid_name egress $n)
    vmhost=$(node_pid_name vmhost $n)
    mkdir -p "$dir"
    if ! running "$egress"; then
        rm -f "$dir/egress.sock"
        # --vault: credentials for hosts bound to a secret (the vault starts
        # later; gRPC connects on first use). --state-dir keeps each sandbox's
        # CA across egress restarts, so guests keep trusting it.
        # shellcheck disable=SC2086 # one word per flag and range
        start "$egress" "$dir/egress.log" "$EGRESS" --listen "unix:$dir/egress.sock" \
            --upstream-dns "$UPSTREAM_DNS" --vault "unix:$DATA_DIR/vault.sock" \
            --state-dir "$dir/egress" --internal-token-file "$TOKEN_FILE" $PROTECT_ARGS \
            --internal-ca "$PKI/ca.crt" --internal-cert "$PKI/egress-$id.crt" \
            --internal-key "$PKI/egress-$id.key" --metrics-listen "$(metrics_addr $((2 * n + 1)))"
        wait_for "$egress" "$dir/egress.log" test -S "$dir/egress.sock"
        echo "$egress running (pid $(cat "$RUN/$egress.pid")), resolver $UPSTREAM_DNS, protected: ${PROTECT_CIDRS:-none beyond the node}, log: $dir/egress.log"
    fi
    if ! running "$vmhost"; then
        "$VMHOST" build-image --data-dir "$dir" --image-dir "$DATA_DIR/images"
        rm -f "$dir/vmhost.sock" # stale from a crash: would look like "up"
        # This node's vmhost flags, the one place they are put together.
        # Every node suspends into the one snapshot store, so any node
        # resumes any suspended sandbox (docs/snapshot-store.md). A warm
        # pool of the default template: creates take a paused, warmed VM
        # (~5 ms) instead of restoring one (~100 ms under TCG); 2 at least,
        # growing to 16 with the creates (docs/snapshots.md "Warm pool").
        # --allow-tcg: a machine without working KVM (nested or none) runs
        # the guests under TCG, which is no security boundary
        # (docs/operations.md).
        set -- serve --data-dir "$dir" --image-dir "$DATA_DIR/images" \
            --nats "$NATS_URL" --node-id "$id" --nats-credentials-file "$NATS_CREDS/node-$id" \
            --egress "unix:$dir/egress.sock" \
            --warm-pool "${AIRLOCK_WARM_POOL:-2}" --warm-pool-max "${AIRLOCK_WARM_POOL_MAX:-16}" \
            --warm-pool-spares "${AIRLOCK_WARM_POOL_SPARES:-2}" \
            --internal-token-file "$TOKEN_FILE" --allow-tcg \
            --internal-ca "$PKI/ca.crt" --internal-cert "$PKI/vmhost-$id.crt" \
            --internal-key "$PKI/vmhost-$id.key" --snapshot-store "$SHARED_STORE" \
            --metrics-listen "$(metrics_addr $((2 * n)))"
        # Nodes on one machine need sandbox namespace names of their own: a
        # sandbox migrating live between them exists on both for a moment.
        [ $n -eq 1 ] || set -- "$@" --netns-prefix "airlock-$id-"
        start "$vmhost" "$dir/vmhost.log" "$VMHOST" "$@"
        wait_for "$vmhost" "$dir/vmhost.log" test -S "$dir/vmhost.sock"
        echo "$vmhost running (pid $(cat "$RUN/$vmhost.pid")), node $id, data $dir, log: $dir/vmhost.log"
        if grep -q 'accel=tcg' "$dir/vmhost.log"; then
            echo "$vmhost: no working KVM here, guests run under TCG (--allow-tcg): TCG is not a"
            echo "        security boundary, the QEMU jail is the only wall; use a KVM host for tenants"
        fi
    fi
    n=$((n + 1))
done

# ---- scheduler ----
if ! running scheduler; then
    rm -f "$DATA_DIR/scheduler.sock"
    start scheduler "$DATA_DIR/scheduler.log" "$SCHEDULER" --data-dir "$DATA_DIR" \
        --database "$DATABASE_URL" --nats "$NATS_URL" --internal-token-file "$TOKEN_FILE" \
        --nats-credentials-file "$NATS_CREDS/scheduler" \
        --internal-ca "$PKI/ca.crt" --internal-cert "$PKI/scheduler.crt" \
        --internal-key "$PKI/scheduler.key" --metrics-listen "$(metrics_addr 0)"
    wait_for scheduler "$DATA_DIR/scheduler.log" test -S "$DATA_DIR/scheduler.sock"
    echo "scheduler running (pid $(cat "$RUN/scheduler.pid")), log: $DATA_DIR/scheduler.log"
fi

# ---- vault (its tables live beside the scheduler's; the master key is
# created 0600 on first start) ----
if ! running vault; then
    rm -f "$DATA_DIR/vault.sock"
    start vault "$DATA_DIR/vault.log" "$VAULT" --database "$DATABASE_URL" \
        --master-key-file "$DATA_DIR/vault-master.key" --listen "unix:$DATA_DIR/vault.sock" \
        --internal-token-file "$TOKEN_FILE" \
        --internal-ca "$PKI/ca.crt" --internal-cert "$PKI/vault.crt" --internal-key "$PKI/vault.key" \
        --metrics-listen "$(metrics_addr 1)"
    wait_for vault "$DATA_DIR/vault.log" test -S "$DATA_DIR/vault.sock"
    echo "vault running (pid $(cat "$RUN/vault.pid")), log: $DATA_DIR/vault.log"
fi

# ---- gateway ----
if ! running gateway; then
    # The gateway's env form of --tls-cert/--tls-key (empty: plain HTTP),
    # so paths with spaces pass whole.
    export AIRLOCK_TLS_CERT="$TLS_CERT" AIRLOCK_TLS_KEY="$TLS_KEY"
    start gateway "$DATA_DIR/gateway.log" "$GATEWAY" --listen "$GATEWAY_ADDR" \
        --scheduler "unix:$DATA_DIR/scheduler.sock" --nats "$NATS_URL" \
        --vault "unix:$DATA_DIR/vault.sock" --grpc-listen "$GRPC_ADDR" \
        --internal-token-file "$TOKEN_FILE" --nats-credentials-file "$NATS_CREDS/gateway" \
        --internal-ca "$PKI/ca.crt" --internal-cert "$PKI/gateway.crt" \
        --internal-key "$PKI/gateway.key"
    echo "gateway running (pid $(cat "$RUN/gateway.pid")), log: $DATA_DIR/gateway.log"
fi
# --insecure: this only waits for the gateway to answer (no key is sent);
# its certificate may name a host other than GATEWAY_ADDR.
wait_for gateway "$DATA_DIR/gateway.log" curl -sf --insecure "$SCHEME://$GATEWAY_ADDR/healthz"

cat <<EOT

airlock is up: $SCHEME://$GATEWAY_ADDR (REST), $GRPC_ADDR (gRPC, docs/grpc-api.md)
admin key (also in $DATA_DIR/admin-key, mode 0600): $(cat "$DATA_DIR/admin-key")
web console: $SCHEME://$GATEWAY_ADDR/console/ (sign in with an API key; docs/console.md)
Try it:
  curl -s -X POST -H "Authorization: Bearer \$(cat $DATA_DIR/admin-key)" $SCHEME://$GATEWAY_ADDR/v1/sandboxes
  or: export AIRLOCK_API_KEY=\$(cat $DATA_DIR/admin-key) AIRLOCK_URL=$SCHEME://$GATEWAY_ADDR
      $BUILD_DIR/cli/airlock create
  (https with a private CA: curl --cacert CA, airlock --ca-file CA or AIRLOCK_CA_FILE=CA)
  a server on port P in sandbox ID: $BUILD_DIR/cli/airlock port ID P prints its URL,
      http://P-ID.${AIRLOCK_PUBLIC_DOMAIN:-localhost}:${GATEWAY_ADDR##*:}/ (docs/ports.md; plain HTTP only)
EOT
echo "nodes ($NODES; make down stops them all):"
n=1
while [ $n -le "$NODES" ]; do
    dir=$(node_dir $n)
    echo "  $(node_id $n): data $dir, vmhost $dir/vmhost.sock (log $dir/vmhost.log), egress $dir/egress.sock (log $dir/egress.log)"
    echo "      metrics: vmhost http://$(metrics_addr $((2 * n)))/metrics, egress http://$(metrics_addr $((2 * n + 1)))/metrics"
    n=$((n + 1))
done
echo "shared snapshot store (suspends; any node resumes them): $SHARED_STORE"
echo "Prometheus /metrics: gateway $SCHEME://$GATEWAY_ADDR/metrics, scheduler http://$(metrics_addr 0)/metrics, vault http://$(metrics_addr 1)/metrics (nodes above)"
echo "Stop everything with: make down"
