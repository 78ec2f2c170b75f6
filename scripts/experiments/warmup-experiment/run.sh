#!/bin/sh
# The learning-rate warm-up of self-attention models (issue 25): configs/demo.yaml with
# two self-attention layers (4 heads) on toy-fr, under OpenBLAS core types whose kernels
# round differently.
#
#   sh scripts/experiments/warmup-experiment/run.sh sweep OUT    2400 steps each, warm-up 0, 100, 200,
#                                                    300, 500, 1000, Haswell and SkylakeX
#                                                    kernels: validation exact every 300
#                                                    steps, test exact of best.ckpt
#   sh scripts/experiments/warmup-experiment/run.sh budget OUT   the demo's own 120 s, the default
#                                                    warm-up, every core type: steps and
#                                                    test exact of best.ckpt
#
# A kernel the CPU lacks dies of SIGILL: leave out SkylakeX and Cooperlake without
# AVX-512 (CORES="..." sets the list of budget). Results: scripts/experiments/warmup-experiment/README.md.
set -eu
mode=${1:?sweep or budget}
out=${2:?an output directory}
s2s=${S2S:-./s2s}
mkdir -p "$out"
exact() { # exact RUN: the validation exact matches, then the test's
    printf '%s | %s\n' "$(grep -o '"valid_exact":[0-9.]*' "$1/metrics.jsonl" | cut -d: -f2 | tr '\n' ' ')" \
        "$(grep -o 'test_exact=[0-9.]*' "$1/train.log" | cut -d= -f2)"
}
case "$mode" in
sweep)
    for core in Haswell SkylakeX; do
        for w in 0 100 200 300 500 1000; do
            run="$out/$core-$w"
            rm -rf "$run"
            OPENBLAS_CORETYPE=$core "$s2s" train configs/demo.yaml --set run_dir="$run" \
                --set model.self_attention_layers=2 --set training.warmup_steps=$w \
                --set training.max_time=0 --set training.max_steps=2400 > /dev/null 2>&1
            echo "$core warm-up $w: $(exact "$run")"
        done
    done ;;
budget)
    for core in ${CORES:-Prescott Nehalem Sandybridge Haswell Zen SkylakeX Cooperlake}; do
        run="$out/$core"
        rm -rf "$run"
        OPENBLAS_CORETYPE=$core "$s2s" train configs/demo.yaml --set run_dir="$run" \
            --set model.self_attention_layers=2 > /dev/null 2>&1
        echo "$core: $(grep -o 'done: reached [a-z_.]* at step [0-9]*' "$run/train.log"), test exact $(grep -o 'test_exact=[0-9.]*' "$run/train.log" | cut -d= -f2)"
    done ;;
*) echo "usage: sh scripts/experiments/warmup-experiment/run.sh sweep|budget OUT" >&2; exit 2 ;;
esac
