#!/bin/sh
# Installs, from Debian's packages, what s2s needs:
#   sh scripts/install-deps.sh          to build and run it (make, make demo, make install)
#   sh scripts/install-deps.sh test     and to test it (make test, asan, valgrind, fuzz)
#   sh scripts/install-deps.sh gemm     and BLIS, which make bench-gemm compares with
#                                       OpenBLAS and libxsmm (s2s does not use BLIS)
# Idempotent: asks apt only for the packages that are not installed yet. Works as root
# or through sudo.
set -eu

# the compiler, OpenBLAS (every matrix product), libyaml (configs), libunistring
# (Unicode normalisation and case mapping for the tokenizer), stb (the images' decoders),
# Open MPI (training on several processes or machines: mpirun, and the library s2s links),
# SentencePiece (subword units: src/text/subwords.h)
BUILD="build-essential pkg-config libopenblas-dev libyaml-dev libunistring-dev libstb-dev"
BUILD="$BUILD libopenmpi-dev openmpi-bin libsentencepiece-dev"
# and on x86-64, libxsmm: JIT kernels for the small products of a training step (1.1-1.5x
# OpenBLAS on them, scripts/bench/gemm-shapes/README.md); elsewhere the Makefile leaves it out
if [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ]; then
    BUILD="$BUILD libxsmm-dev"
fi
# Check (unit tests), xmllint (SVG is XML), Chromium (the report in a real browser),
# clang and its runtime (libFuzzer), valgrind, strace (the system calls of a save),
# PyTorch (the cross-check and the speed baseline) and PyYAML (the PyTorch reference
# reads s2s's configs: scripts/torch_reference.py train), SentencePiece's Python module (the
# reference learns subword models as s2s does) and Pillow (the reference reads an image
# corpus's PNG and JPEG pictures, as s2s does with stb_image)
TEST="check libxml2-utils chromium clang libclang-rt-14-dev valgrind strace python3-torch python3-yaml"
TEST="$TEST python3-sentencepiece python3-pil"
# the other library of small matrix products issue 29 measured
GEMM="libblis-dev"

case "${1:-build}" in
build) PACKAGES=$BUILD ;;
test) PACKAGES="$BUILD $TEST" ;;
gemm) PACKAGES="$BUILD $GEMM" ;;
*) echo "usage: sh scripts/install-deps.sh [build|test|gemm]" >&2; exit 2 ;;
esac

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
