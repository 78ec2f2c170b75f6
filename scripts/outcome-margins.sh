#!/bin/sh
# The tests whose verdict could hang on how a CPU's kernels round, under each OpenBLAS
# core type this CPU can run: the training outcomes (Check tag `outcome`: every model
# variant's validation loss falls, eight pairs overfit) and the numerical core's own
# suites (tag `cores`: the gradient checks, a step kept or computed again giving the same
# bits). OpenBLAS picks its kernels by CPU, and each kernel rounds differently: these
# must hold under all of them. Prints each training outcome's value per core type as a
# Markdown table (a loss ratio against its bar; the steps the overfit took of those
# allowed), and exits 1 if any run failed.
#
#   sh scripts/outcome-margins.sh [--cores "SkylakeX Prescott"] [--bin build/check_s2s]
#
# Default cores: every one of Prescott, Nehalem, Sandybridge, Haswell, Zen, SkylakeX and
# Cooperlake whose instructions /proc/cpuinfo lists (a kernel the CPU lacks would die of
# SIGILL). Needs the test binary and ./s2s built (make test builds both).
set -eu

cores=""
bin=./build/check_s2s
while [ $# -gt 0 ]; do
    case "$1" in
    --cores) cores=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: sh scripts/outcome-margins.sh [--cores LIST] [--bin CHECK_BINARY]" >&2; exit 2 ;;
    esac
done

# has FLAG...: the CPU lists every flag
has() {
    for flag in "$@"; do
        grep -qw "$flag" /proc/cpuinfo || return 1
    done
}
if [ -z "$cores" ]; then
    has pni && cores="$cores Prescott" # SSE3
    has sse4_2 && cores="$cores Nehalem"
    has avx && cores="$cores Sandybridge"
    has avx2 fma && cores="$cores Haswell Zen"
    has avx512f avx512dq avx512cd avx512bw avx512vl && cores="$cores SkylakeX"
    has avx512f avx512dq avx512cd avx512bw avx512vl avx512_bf16 && cores="$cores Cooperlake"
fi

if [ -z "$cores" ]; then
    echo "outcome-margins: no OpenBLAS core type found that this CPU runs (/proc/cpuinfo)" >&2
    exit 1
fi

out=$(mktemp -d /tmp/s2s-outcome.XXXXXX)
failed=0
for core in $cores; do
    # an OpenBLAS built for one CPU (no DYNAMIC_ARCH) ignores OPENBLAS_CORETYPE: the runs
    # would all be one kernel's, reported as seven
    if ! OPENBLAS_CORETYPE=$core "${S2S_BIN:-./s2s}" --version | grep -q "^BLAS: .*\b$core\b"; then
        echo "outcome-margins: OPENBLAS_CORETYPE=$core is not honoured: $("${S2S_BIN:-./s2s}" --version | grep '^BLAS')" >&2
        failed=1
        continue
    fi
    start=$(date +%s)
    if ! OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS=1 S2S_BIN=${S2S_BIN:-./s2s} \
         S2S_FAULTS_BIN=${S2S_FAULTS_BIN:-./build/s2s-faults} CK_INCLUDE_TAGS="outcome cores" \
         "$bin" > "$out/$core.log" 2>&1; then
        failed=1
        echo "outcome-margins: FAILED under OPENBLAS_CORETYPE=$core:" >&2
        grep -E ':[FE]:' "$out/$core.log" >&2 || tail -5 "$out/$core.log" >&2
    fi
    echo "outcome-margins: $core done in $(( $(date +%s) - start )) s" >&2
done

# one row per check, one column per core type: "ratio 0.897 (bar 0.95)" -> 0.897
printf '| check |'
for core in $cores; do printf ' %s |' "$core"; done
printf '\n| --- |'
for core in $cores; do printf ' --- |'; done
printf '\n'
first=$(echo $cores | cut -d' ' -f1)
grep "^outcome " "$out/$first.log" 2>/dev/null | sed 's/:.*//; s/^outcome //' | while read -r check; do
    printf '| %s |' "$check"
    for core in $cores; do
        line=$(grep "^outcome $check:" "$out/$core.log" 2>/dev/null || true)
        value=$(echo "$line" | sed -n 's/.*ratio \([0-9.]*\).*/\1/p; s/.*after \([0-9]*\) of \([0-9]*\) .*/\1 of \2 steps/p')
        printf ' %s |' "${value:-?}"
    done
    printf '\n'
done
bar=$(grep -ho "bar [0-9.]*" "$out/$first.log" 2>/dev/null | head -1)
worst=$(cat "$out"/*.log 2>/dev/null | sed -n 's/^outcome variant.*ratio \([0-9.]*\).*/\1/p' | sort -n | tail -1)
echo
echo "largest loss ratio over every variant and core type: $worst ($bar)"
rm -rf "$out"
exit $failed
