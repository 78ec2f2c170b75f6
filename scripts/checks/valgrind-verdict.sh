#!/bin/sh
# Fails (and shows them) when any of the per-process valgrind logs of `make valgrind`
# is non-empty: with -q, valgrind writes only errors and definite leaks.
set -eu
dir=$1
logs=$(find "$dir" -name '*.log' | wc -l)
bad=$(find "$dir" -name '*.log' -size +0c)
if [ -n "$bad" ]; then
    for f in $bad; do
        echo "== $f"
        cat "$f"
    done
    echo "valgrind: errors in $(echo "$bad" | wc -l) of $logs processes" >&2
    exit 1
fi
echo "valgrind: $logs processes, no errors, no definite leaks"
