#!/bin/sh
# One NATS user per identity, each with only its own subjects
# (docs/operations.md "NATS users"; the subjects: protos/node.proto). The
# one place these permissions are written: `make up` (scripts/up.sh) and
# the test stack (tests/controlplane/cp_stack.c) run it; the Helm chart has
# one shared node user instead (a DaemonSet's pods cannot each be listed).
#
# usage: nats-users.sh [--tls PKI_DIR] CREDS_DIR CONF NODE_ID...
# Makes CREDS_DIR/<user> ("user:password", 0400; kept when present, so a
# restart keeps every service's password) for `scheduler`, `gateway` and
# `node-<id>` of each NODE_ID, and writes CONF (0600): nats-server's
# authorization block for them. With --tls, CONF also has a tls block:
# nats-server serves TLS with PKI_DIR/nats.crt (scripts/internal-pki.sh
# PKI_DIR nats) and refuses every client without a certificate of
# PKI_DIR/ca.crt (verify). The certificate is a second factor: the user
# and its permissions still come from the password (a DaemonSet's nodes in
# the chart share one user, which a certificate per node could not name
# with verify_and_map; docs/operations.md "NATS over TLS").
#   node-N     publishes its own heartbeat, its template build streams and
#              replies to the requests it got; subscribes to its own
#              subjects and the roll-call. It cannot forge another node's
#              heartbeat, receive its work or send work to any node.
#   scheduler  sends work to every node and reads their heartbeats and
#              build streams; publishes events and key revocations.
#   gateway    only reads events and key revocations.
set -eu
PKI=
if [ "${1:-}" = --tls ]; then
    PKI=${2:-}
    shift 2 || true
    case $PKI in
        ''|*[\"\\]*) echo "nats-users.sh: --tls wants a directory without quotes or backslashes" >&2
            exit 2 ;;
    esac
fi
[ $# -ge 3 ] || {
    echo "usage: nats-users.sh [--tls PKI_DIR] CREDS_DIR CONF NODE_ID..." >&2
    exit 2
}
CREDS=$1
CONF=$2
shift 2
(umask 077 && mkdir -p "$CREDS")

# The password of user $1, made once (48 hex digits).
password() {
    f="$CREDS/$1"
    if [ ! -s "$f" ]; then
        (umask 077 && printf '%s:%s\n' "$1" \
            "$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')" >"$f.tmp" && mv "$f.tmp" "$f")
    fi
    chmod 400 "$f"
    cut -d: -f2- "$f"
}

for node in "$@"; do
    case $node in
        *[!A-Za-z0-9_-]*|'')
            echo "nats-users.sh: node id \"$node\" must be letters, digits, '_' and '-'" \
                "(a NATS subject token)" >&2
            exit 2 ;;
    esac
done

TMP="$CONF.tmp"
(umask 077 && : >"$TMP")
{
    printf 'authorization {\n  users = [\n'
    printf '    {user: "scheduler", password: "%s", permissions: {\n' "$(password scheduler)"
    printf '      publish: {allow: ["airlock.node.*.*", "airlock.nodes.roll-call",'
    printf ' "airlock.events.>", "airlock.keys.revoked"], deny: ["airlock.node.*.heartbeat"]}\n'
    printf '      subscribe: {allow: ["airlock.node.*.heartbeat", "airlock.builds.*.>",'
    printf ' "_INBOX.>"]}\n    }}\n'
    printf '    {user: "gateway", password: "%s", permissions: {\n' "$(password gateway)"
    printf '      publish: {deny: [">"]}\n'
    printf '      subscribe: {allow: ["airlock.events.>", "airlock.keys.revoked"]}\n    }}\n'
    for node in "$@"; do
        printf '    {user: "node-%s", password: "%s", permissions: {\n' "$node" \
            "$(password "node-$node")"
        printf '      publish: {allow: ["airlock.node.%s.heartbeat", "airlock.builds.%s.>"]}\n' \
            "$node" "$node"
        printf '      subscribe: {allow: ["airlock.node.%s.>", "airlock.nodes.roll-call"]}\n' \
            "$node"
        printf '      allow_responses: true\n    }}\n'
    done
    printf '  ]\n}\n'
    if [ -n "$PKI" ]; then
        # timeout: the handshake's seconds (the default half second is
        # short for a loaded machine).
        printf 'tls {\n  cert_file: "%s/nats.crt"\n  key_file: "%s/nats.key"\n' "$PKI" "$PKI"
        printf '  ca_file: "%s/ca.crt"\n  verify: true\n  timeout: 2\n}\n' "$PKI"
    fi
} >>"$TMP"
mv "$TMP" "$CONF"
