#!/bin/sh
# Installs, from Debian's packages, everything s2s needs to build and test.
# Idempotent: asks apt only for packages that are not installed yet.
# Works as root or through sudo.
set -eu

PACKAGES="build-essential pkg-config libopenblas-dev libyaml-dev libunistring-dev check
libxml2-utils chromium clang libclang-rt-14-dev valgrind strace
python3-torch python3-yaml"

missing=""
for pkg in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $pkg"
    fi
done
if [ -z "$missing" ]; then
    echo "install-deps: all packages present"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1; then
    as_root="sudo"
else
    echo "install-deps: need root or sudo to install:$missing" >&2
    exit 1
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$as_root apt-get update -q
# shellcheck disable=SC2086 # word splitting of the package list is intended
$as_root apt-get install -y -q --no-install-recommends $missing
