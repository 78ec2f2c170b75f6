#!/bin/sh
# Trains one config once per model variant (attention scores, cells, depth,
# regularization) with the same budget of steps, and prints a Markdown table of the
# test scores each reached: BLEU, exact matches, alignment error rate (with the
# config's data.test_align) and training speed.
#
# usage: scripts/compare-variants.sh CONFIG STEPS OUT_DIR [S2S]
#   e.g. scripts/compare-variants.sh configs/demo.yaml 1500 runs/variants
# Each variant's run directory is OUT_DIR/<variant>; the table is OUT_DIR/table.md.
set -eu

config=$1
steps=$2
out=$3
s2s=${4:-./s2s}
mkdir -p "$out"

# name, then its --set overrides (a decoder twice the encoder's size is assumed, as in
# the shipped configs, so that dot is valid)
variants="
additive|
dot|model.attention=dot
general|model.attention=general
scaled_dot|model.attention=scaled_dot
none|model.attention=none
lstm|model.encoder_cell=lstm model.decoder_cell=lstm
rnn|model.encoder_cell=rnn model.decoder_cell=rnn
2-layer-encoder|model.encoder_layers=2
dropout-smoothing|model.embedding_dropout=0.2 model.readout_dropout=0.2 training.label_smoothing=0.1
"

table="$out/table.md"
{
    echo "| variant | test BLEU | exact % | AER | steps/s | parameters |"
    echo "| --- | --- | --- | --- | --- | --- |"
} > "$table"

echo "$variants" | while IFS='|' read -r name sets; do
    [ -n "$name" ] || continue
    run="$out/$name"
    rm -rf "$run"
    args=""
    for s in $sets; do
        args="$args --set $s"
    done
    echo "compare-variants: $name ($steps steps)" >&2
    # shellcheck disable=SC2086 # word splitting of the --set list is intended
    "$s2s" train "$config" --set run_dir="$run" --set training.max_steps="$steps" \
        --set training.max_time=0 --set training.epochs=0 --set training.early_stopping=0 \
        $args > /dev/null 2>&1
    log="$run/train.log"
    test_line=$(grep '^test (' "$log" | tail -n 1)
    bleu=$(echo "$test_line" | sed -n 's/.*test_bleu=\([0-9.]*\).*/\1/p')
    exact=$(echo "$test_line" | sed -n 's/.*test_exact=\([0-9.]*\).*/\1/p')
    aer=$(echo "$test_line" | sed -n 's/.*test_aer=\([0-9.]*\).*/\1/p')
    params=$(sed -n 's/.*model: \([0-9]*\) parameters.*/\1/p' "$log" | head -n 1)
    # the mean speed over the run: steps / training seconds of the last metrics line
    speed=$(grep '"train_seconds"' "$run/metrics.jsonl" | tail -n 1 |
            sed -n 's/.*"step":\([0-9]*\).*"train_seconds":\([0-9.]*\).*/\1 \2/p' |
            awk '{ if ($2 > 0) printf "%.1f", $1 / $2 }')
    echo "| $name | ${bleu:-?} | ${exact:-?} | ${aer:--} | ${speed:-?} | ${params:-?} |" >> "$table"
done
cat "$table"
