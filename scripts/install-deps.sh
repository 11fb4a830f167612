#!/bin/sh
# Installs the Debian packages airlock needs to build, test and run, and
# nothing when they are all present. Needs root (apt-get). Used by `make up`,
# `make test` and CI, so a fresh Debian 12 machine needs no manual steps.
set -eu

PACKAGES="
build-essential cmake pkg-config
libgrpc-dev protobuf-c-compiler libprotobuf-c-dev
libpq-dev libnats-dev nats-server
libbtrfsutil-dev btrfs-progs libnl-3-dev libnl-route-3-dev libseccomp-dev
libssl-dev libcmocka-dev libjansson-dev libmicrohttpd-dev libcurl4-openssl-dev libhttp-parser-dev
qemu-system-x86 mmdebstrap busybox-static e2fsprogs cpio procps
postgresql nftables libnftables-dev iproute2 python3-grpcio python3-grpc-tools
python3-yaml curl clang libclang-rt-14-dev nodejs python3-mypy chromium
"

# Test tools from the npm registry, pinned, under one prefix the tests know
# (tests/CMakeLists.txt): s3rver, an S3-compatible server, for the
# snapshot store's S3 backend (docs/snapshot-store.md); e2b, E2B's
# official JavaScript SDK, unchanged, which the E2B-compatible API is
# tested with (docs/e2b.md); @seriousme/openapi-schema-validator, which
# checks docs/openapi.yaml (controlplane.openapi_valid); playwright-core,
# which drives Debian's chromium (above) through the web console
# (controlplane.console, docs/console.md).
TEST_TOOLS=/usr/local/lib/airlock-test-tools
NPM_TOOLS="s3rver@3.7.1 e2b@2.51.0 @seriousme/openapi-schema-validator@2.11.0 playwright-core@1.65.2"

npm_tools_present() {
    [ -x "$TEST_TOOLS/node_modules/.bin/s3rver" ] &&
        [ -f "$TEST_TOOLS/node_modules/e2b/package.json" ] &&
        [ -x "$TEST_TOOLS/node_modules/.bin/validate-api" ] &&
        [ -f "$TEST_TOOLS/node_modules/playwright-core/package.json" ]
}

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
# npm: Debian's package, unless the nodejs installed brings its own (as
# NodeSource's does, which conflicts with Debian's npm).
command -v npm >/dev/null 2>&1 || missing="$missing npm"

# The guest image builder asks apt for package versions and downloads the
# kernel package, so the package lists must exist even when nothing is
# missing.
lists_present() {
    ls /var/lib/apt/lists/ 2>/dev/null | grep -q '_Packages'
}

if [ -z "$missing" ] && lists_present && npm_tools_present; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages:$missing" >&2
    echo "install-deps: run as root (or: sudo apt-get install$missing)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: apt-get update"
apt-get -o DPkg::Lock::Timeout=300 update -q
if [ -n "$missing" ]; then
    echo "install-deps: installing$missing"
    # shellcheck disable=SC2086
    apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends $missing
fi
if ! npm_tools_present; then
    echo "install-deps: npm install $NPM_TOOLS into $TEST_TOOLS"
    mkdir -p "$TEST_TOOLS"
    # shellcheck disable=SC2086
    npm install --prefix "$TEST_TOOLS" --no-audit --no-fund --loglevel=error $NPM_TOOLS
fi
