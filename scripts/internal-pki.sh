#!/bin/sh
# The internal PKI (docs/security.md "Between services: mutual TLS"): a CA and a
# certificate per service identity, each naming its role and node. The one
# place these certificates are made: `make up` (scripts/up.sh) and the test
# stack (tests/controlplane/cp_stack.c) run it; the Helm chart makes the same
# with its own templates or takes them from cert-manager.
#
# usage: internal-pki.sh DIR IDENTITY...
#   IDENTITY: gateway | scheduler | vault | nats | vmhost:NODE | egress:NODE
#   (nats: nats-server's own, which every NATS client checks: nats-users.sh --tls)
# Makes (kept when present and valid for 30 more days, so a restart keeps
# every identity; made again when expiring or signed by another CA):
#   DIR/ca.crt, DIR/ca.key (0400)          ECDSA P-256 CA, 10 years
#   DIR/NAME.crt, DIR/NAME.key (0400)      NAME = role or role-NODE, 1 year
# A certificate's identity is its DNS subject alternative name:
#   gateway.airlock.internal, node-a.vmhost.airlock.internal, ...
# (common/tls/peer_identity.h reads it; gRPC clients check the server's).
# Prints "renewed NAME" for each certificate it made, so the caller can
# send SIGHUP to a running service (it reloads its certificate then).
set -eu
[ $# -ge 2 ] || { echo "usage: internal-pki.sh DIR IDENTITY..." >&2; exit 2; }
DIR=$1
shift
DOMAIN=airlock.internal
(umask 077 && mkdir -p "$DIR")

# Valid (signed by our CA, not expiring within 30 days)?
valid() {
    [ -s "$1" ] && openssl verify -CAfile "$DIR/ca.crt" "$1" >/dev/null 2>&1 &&
        openssl x509 -in "$1" -noout -checkend 2592000 >/dev/null 2>&1
}

if ! [ -s "$DIR/ca.key" ] || ! [ -s "$DIR/ca.crt" ] ||
    ! openssl x509 -in "$DIR/ca.crt" -noout -checkend 2592000 >/dev/null 2>&1; then
    rm -f "$DIR/ca.key" "$DIR/ca.crt"
    (umask 077 && openssl ecparam -name prime256v1 -genkey -noout -out "$DIR/ca.key.tmp" &&
        mv "$DIR/ca.key.tmp" "$DIR/ca.key")
    openssl req -x509 -new -key "$DIR/ca.key" -sha256 -days 3650 \
        -subj "/O=airlock/CN=airlock internal CA" \
        -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -out "$DIR/ca.crt.tmp"
    mv "$DIR/ca.crt.tmp" "$DIR/ca.crt"
    chmod 400 "$DIR/ca.key"
    chmod 444 "$DIR/ca.crt"
fi

for id in "$@"; do
    role=${id%%:*}
    node=
    [ "$role" = "$id" ] || node=${id#*:}
    case $role in
        gateway|scheduler|vault|nats) [ -z "$node" ] || { echo "internal-pki.sh: $role has no node" >&2; exit 2; } ;;
        vmhost|egress)
            case $node in
                *[!A-Za-z0-9_-]*|'')
                    echo "internal-pki.sh: \"$id\": node id must be letters, digits, '_' and '-'" >&2
                    exit 2 ;;
            esac ;;
        *) echo "internal-pki.sh: unknown role \"$role\" (gateway, scheduler, vault, nats, vmhost:NODE, egress:NODE)" >&2
           exit 2 ;;
    esac
    if [ -n "$node" ]; then name="$role-$node"; dns="$node.$role.$DOMAIN"
    else name=$role; dns="$role.$DOMAIN"; fi
    valid "$DIR/$name.crt" && [ -s "$DIR/$name.key" ] && continue

    (umask 077 && openssl ecparam -name prime256v1 -genkey -noout -out "$DIR/$name.key.tmp")
    ext="$DIR/$name.ext"
    printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:%s\n' \
        "$dns" >"$ext"
    openssl req -new -key "$DIR/$name.key.tmp" -subj "/O=airlock/CN=$id" -out "$DIR/$name.csr"
    openssl x509 -req -in "$DIR/$name.csr" -CA "$DIR/ca.crt" -CAkey "$DIR/ca.key" \
        -CAcreateserial -CAserial "$DIR/ca.srl" -sha256 -days 365 -extfile "$ext" \
        -out "$DIR/$name.crt.tmp" 2>/dev/null
    rm -f "$DIR/$name.csr" "$ext"
    chmod 400 "$DIR/$name.key.tmp"
    mv "$DIR/$name.key.tmp" "$DIR/$name.key"
    mv "$DIR/$name.crt.tmp" "$DIR/$name.crt"
    chmod 444 "$DIR/$name.crt"
    echo "renewed $name"
done
