#!/bin/sh
# The whole Transformer on the demo (issue 43): configs/demo.yaml with the attention-only
# encoder (2 self-attention layers) and the Transformer decoder (2 layers), nothing else
# changed, in the demo's own 120 s, under each OpenBLAS core type (their kernels round
# differently). For each: the steps trained, the best validation exact match, the test
# set's exact match greedy (the run's own test) and with beam 5, its AER.
#
#   sh scripts/experiments/transformer/run.sh OUT
#
# Run it alone on the machine: the 120 s budget is wall-clock time, and anything beside
# it takes steps away. A kernel the CPU lacks dies of SIGILL: leave out SkylakeX and
# Cooperlake without AVX-512 (CORES="..." sets the list). Results:
# scripts/experiments/transformer/README.md.
set -eu
out=${1:?an output directory}
s2s=${S2S:-./s2s}
mkdir -p "$out"
echo "| kernels | steps | best valid exact | test exact (greedy) | test exact (beam 5) | test BLEU (beam 5) | test AER |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for core in ${CORES:-Prescott Nehalem Sandybridge Haswell SkylakeX Cooperlake}; do
    run="$out/$core"
    rm -rf "$run"
    OPENBLAS_CORETYPE=$core "$s2s" train configs/demo.yaml --set run_dir="$run" \
        --set model.encoder_cell=none --set model.self_attention_layers=2 \
        --set model.decoder_cell=none --set model.decoder_layers=2 > /dev/null 2>&1
    OPENBLAS_CORETYPE=$core "$s2s" translate --model "$run/checkpoints/best.ckpt" --beam 5 \
        < corpora/toy-fr/test.src > "$run/beam5.hyp"
    beam=$("$s2s" eval --hyp "$run/beam5.hyp" --ref corpora/toy-fr/test.tgt --metric exact --metric bleu)
    steps=$(grep -o 'at step [0-9]*' "$run/train.log" | tail -1 | cut -d' ' -f3)
    valid=$(grep -o '"valid_exact":[0-9.]*' "$run/metrics.jsonl" | cut -d: -f2 | sort -g | tail -1)
    greedy=$(grep -o 'test_exact=[0-9.]*' "$run/train.log" | cut -d= -f2)
    aer=$(grep -o 'test_aer=[0-9.]*' "$run/train.log" | cut -d= -f2)
    echo "| $core | $steps | $valid | $greedy | $(echo "$beam" | grep -o 'exact = [0-9.]*' | cut -d' ' -f3) | $(echo "$beam" | grep -o 'BLEU = [0-9.]*' | cut -d' ' -f3) | $aer |"
done
