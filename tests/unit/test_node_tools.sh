#!/bin/sh
# console/node_tools.cmake's refusals, run as CMake runs it while
# configuring: without node or npm on PATH it names scripts/install-deps.sh;
# with a node older than 18 (or one that prints no version) it names the
# version; with a new enough one it passes. Stand-in node/npm scripts in a
# directory of the test's own are all PATH holds.
# usage: test_node_tools.sh CMAKE NODE_TOOLS_CMAKE
set -u
cmake=$1
script=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0

# expect RC FRAGMENT WHAT: runs the script with PATH=$dir; its message,
# lines joined as CMake wraps them, must hold FRAGMENT.
expect() {
    out=$(cd "$dir" && env PATH="$dir" "$cmake" -P "$script" 2>&1)
    rc=$?
    said=$(printf '%s' "$out" | tr '\n' ' ' | tr -s ' ')
    if [ "$rc" -eq "$1" ] && case "$said" in *"$2"*) true ;; *) false ;; esac; then
        echo "ok   $3"
    else
        echo "FAIL $3 (rc $rc, wanted $1 and \"$2\"): $out"
        failed=1
    fi
}

node_says() {
    printf '#!/bin/sh\necho %s\n' "$1" > "$dir/node"
    chmod +x "$dir/node"
}

expect 1 "run scripts/install-deps.sh as root (Debian's nodejs and npm)" "no node and no npm: named"
node_says v20.1.0
expect 1 "node and npm build the web console" "node but no npm: named"
printf '#!/bin/sh\n' > "$dir/npm"
chmod +x "$dir/npm"
node_says v16.20.2
expect 1 "needs Node.js 18 or newer; $dir/node is \"16.20.2\"" "node 16: refused with its version"
node_says garbage
expect 1 "needs Node.js 18 or newer; $dir/node is \"garbage\"" "a node that prints no version: refused"
node_says v18.19.0
expect 0 "" "node 18 and npm: accepted"
exit $failed
