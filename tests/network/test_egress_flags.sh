#!/bin/sh
# airlock-egress refuses options it cannot honour before it starts anything:
# exit 2 and a line naming the option. No namespace, no socket: it never
# gets that far. usage: test_egress_flags.sh AIRLOCK_EGRESS
egress=$1
failed=0

refused() { # what, then the arguments; the message must hold $want
    what=$1
    shift
    out=$("$egress" --upstream-dns 127.0.0.1 "$@" 2>&1)
    rc=$?
    if [ "$rc" -ne 2 ] || ! printf '%s' "$out" | grep -qF -- "$want"; then
        echo "FAIL: $what: exit $rc: $out"
        failed=1
    else
        echo "ok: $what"
    fi
}

want="--vault needs --state-dir"
refused "--vault without --state-dir" --vault unix:/nonexistent/vault.sock
want="--conn-threads: 0"
refused "--conn-threads 0" --conn-threads 0
want="--conn-threads: 65: at most 64"
refused "--conn-threads 65" --conn-threads 65
want="--max-connections: x"
refused "--max-connections x" --max-connections x
exit $failed
