#!/bin/sh
# The matrix products of a training step, on OpenBLAS, BLIS and libxsmm (issue 29's
# library comparison). For each benchmark size at batch 32: `s2s bench` runs under
# sgemm_trace.so, which records the shape of every sgemm it makes and the time spent in
# it; then gemm_shapes replays those products -- the same shapes, as many times each --
# on each library, with 1 and 2 threads (libxsmm's own kernels run on one; the threads
# are those of OpenBLAS, to which it hands the shapes it has no kernel for), and the
# table gives milliseconds of products per training step, the median of REPEATS replays.
# The s2s column is the time the products took inside s2s itself, with the threads
# training uses (2 at batch 32). Every replayed product is checked against a plain loop
# first.
#
#   sh scripts/bench/gemm-shapes/run.sh [--sizes "S M L"] [--steps N] [--repeats R]
#
# Needs libblis-dev and libxsmm-dev (Debian; not needed by s2s itself) and ./s2s built.
# Results: scripts/bench/gemm-shapes/README.md.
set -eu
sizes="S M L"
steps=""
repeats=5
while [ $# -gt 0 ]; do
    case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    *) echo "usage: sh scripts/bench/gemm-shapes/run.sh [--sizes LIST] [--steps N] [--repeats R]" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
s2s=$(cd "$(dirname "${S2S:-./s2s}")" && pwd)/$(basename "${S2S:-./s2s}")
for library in blis libxsmm; do # their headers
    if ! echo "#include <$library.h>" | cc -E -x c - > /dev/null 2>&1; then
        echo "gemm-shapes: no header of $library: apt-get install libblis-dev libxsmm-dev" >&2
        exit 2
    fi
done
out=$(mktemp -d /tmp/s2s-gemm.XXXXXX)
openblas="-I/usr/include/x86_64-linux-gnu/openblas-pthread -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas"
cc -O2 -shared -fPIC -o "$out/sgemm_trace.so" "$here/sgemm_trace.c" \
    -I/usr/include/x86_64-linux-gnu/openblas-pthread -ldl
# shellcheck disable=SC2086
cc -O2 -DLIB_OPENBLAS -o "$out/openblas" "$here/gemm_shapes.c" $openblas
cc -O2 -DLIB_BLIS -o "$out/blis" "$here/gemm_shapes.c" -lblis -lm
# shellcheck disable=SC2086
cc -O2 -DLIB_XSMM -o "$out/xsmm" "$here/gemm_shapes.c" /usr/lib/libxsmm.a $openblas \
    -lpthread -ldl -lm -lrt
total() { # PROGRAM THREADS: milliseconds per step of the replayed trace
    "$out/$1" "$out/trace" "$2" "$repeats" > "$out/$1.$2"
    awk -v n="$n_steps" '/^total/ {printf "%.2f", 1000 * $2 / n}' "$out/$1.$2"
}
echo "| size/batch | step ms (s2s) | products ms in s2s | OpenBLAS 1 thread | OpenBLAS 2 | BLIS 1 thread | BLIS 2 | libxsmm 1 thread | libxsmm 2 | libxsmm's JIT share of the flops |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for size in $sizes; do
    case "$size" in
    S) timed=${steps:-40} ;;
    M) timed=${steps:-8} ;;
    *) timed=${steps:-4} ;;
    esac
    n_steps=$((timed + 1))
    S2S_SGEMM_TRACE="$out/trace" LD_PRELOAD="$out/sgemm_trace.so" \
        "$s2s" bench --size "$size" --batch 32 --steps "$timed" --warmup 1 > "$out/bench.txt"
    step=$(sed -n 's/.*"s_per_step_median": \([0-9.]*\).*/\1/p' "$out/bench.txt")
    inside=$(awk -v n="$n_steps" '{s += $7} END {printf "%.2f", 1000 * s / n}' "$out/trace")
    row="| $size/32 | $(awk -v s="$step" 'BEGIN {printf "%.2f", 1000 * s}') | $inside"
    for lib in openblas blis; do
        for threads in 1 2; do
            row="$row | $(total "$lib" "$threads")"
        done
    done
    row="$row | $(total xsmm 1) | $(total xsmm 2)"
    share=$(awk '/^jit/ {printf "%.0f%%", 100 * $3}' "$out/xsmm.1")
    echo "$row | $share |"
done
rm -rf "$out"
