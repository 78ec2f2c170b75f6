#!/bin/sh
# Trains one config once per model variant (attention scores, cells, depth,
# regularization, heads, self-attention layers, the attention-only encoder) and seed,
# with the same budget for each -- a number of steps, or of seconds of training -- and
# prints a Markdown table of the test scores each reached: BLEU (the mean, and the range
# over the seeds when there are several), exact matches, alignment error rate (with the
# config's data.test_align), training speed and size.
#
# usage: scripts/experiments/compare-variants.sh CONFIG BUDGET OUT_DIR [S2S]
#   BUDGET: STEPS (e.g. 1500), or SECONDS followed by s (e.g. 180s: a wall-clock budget,
#           training.max_time, the fair one between variants of different speeds)
#   environment: SEEDS="1 2 3" (default: the config's seed), VARIANTS="additive
#           attention-only" (default: every variant below), SETS="training.threads=1"
#           (--set overrides for every run)
#   e.g. scripts/experiments/compare-variants.sh configs/demo.yaml 1500 runs/variants
#        SEEDS="1 2 3" VARIANTS="additive additive-4-heads self-attention-2 attention-only" \
#            scripts/experiments/compare-variants.sh configs/tatoeba-fr-en.yaml 180s runs/tatoeba-variants
# Each run directory is OUT_DIR/<variant> (OUT_DIR/<variant>-seed<N> with SEEDS); the
# table is OUT_DIR/table.md.
set -eu

config=$1
budget=$2
out=$3
s2s=${4:-./s2s}
seeds=${SEEDS:-}
only=${VARIANTS:-}
common=""
for s in ${SETS:-}; do
    common="$common --set $s"
done
mkdir -p "$out"

case $budget in
    *s) limit="--set training.max_time=${budget%s} --set training.max_steps=0"
        what="${budget%s} s" ;;
    *) limit="--set training.max_steps=$budget --set training.max_time=0"
       what="$budget steps" ;;
esac

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
additive-4-heads|model.attention_heads=4
self-attention-2|model.self_attention_layers=2
attention-only|model.encoder_cell=none model.self_attention_layers=2
hard|model.attention_mode=hard
hard-sentence-reward|model.attention_mode=hard training.hard_reward=sentence
"

# field NAME of the last `test (` line of a train.log
test_field() {
    grep '^test (' "$1" | tail -n 1 | sed -n "s/.* test_$2=\\([0-9.]*\\).*/\\1/p"
}

# "mean" or "mean (min-max)" of the numbers on stdin, with 2 decimals
summary() {
    awk 'NF { s += $1; n++; if (n == 1 || $1 < lo) lo = $1; if (n == 1 || $1 > hi) hi = $1 }
         END { if (!n) { print "?"; exit }
               if (n == 1) printf "%.2f\n", s
               else printf "%.2f (%.2f-%.2f)\n", s / n, lo, hi }'
}

table="$out/table.md"
{
    echo "| variant | test BLEU | exact % | AER | entropy | steps | steps/s | parameters |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
} > "$table"

echo "$variants" | while IFS='|' read -r name sets; do
    [ -n "$name" ] || continue
    if [ -n "$only" ]; then
        case " $only " in *" $name "*) ;; *) continue ;; esac
    fi
    args=""
    for s in $sets; do
        args="$args --set $s"
    done
    bleus="" exacts="" aers="" entropies="" all_steps="" speeds="" params=""
    for seed in ${seeds:-config}; do
        if [ "$seed" = config ]; then
            run="$out/$name" seed_set=""
        else
            run="$out/$name-seed$seed" seed_set="--set seed=$seed"
        fi
        rm -rf "$run"
        echo "compare-variants: $name${seed_set:+ (seed $seed)}, $what" >&2
        # shellcheck disable=SC2086 # word splitting of the --set lists is intended
        "$s2s" train "$config" --set run_dir="$run" $limit --set training.epochs=0 \
            --set training.early_stopping=0 $seed_set $common $args > /dev/null 2>&1
        log="$run/train.log"
        bleus="$bleus $(test_field "$log" bleu)"
        exacts="$exacts $(test_field "$log" exact)"
        aers="$aers $(test_field "$log" aer)"
        # the attention's mean entropy per target word on the validation set, last dump
        entropies="$entropies $(grep '^alignments step=' "$log" | tail -n 1 |
                                sed -n 's/.*attention_entropy=\([0-9.]*\).*/\1/p')"
        params=$(sed -n 's/.*model: \([0-9]*\) parameters.*/\1/p' "$log" | head -n 1)
        # the mean speed over the run: steps / training seconds of the last metrics line
        last=$(grep '"train_seconds"' "$run/metrics.jsonl" | tail -n 1 |
               sed -n 's/.*"step":\([0-9]*\).*"train_seconds":\([0-9.]*\).*/\1 \2/p')
        all_steps="$all_steps $(echo "$last" | awk '{ print $1 }')"
        speeds="$speeds $(echo "$last" | awk '{ if ($2 > 0) printf "%.1f", $1 / $2 }')"
    done
    bleu=$(echo "$bleus" | tr ' ' '\n' | summary)
    exact=$(echo "$exacts" | tr ' ' '\n' | summary)
    aer=$(echo "$aers" | tr ' ' '\n' | awk 'NF { s += $1; n++ } END { if (n) printf "%.3f", s / n; else print "-" }')
    entropy=$(echo "$entropies" | tr ' ' '\n' | awk 'NF { s += $1; n++ } END { if (n) printf "%.3f", s / n; else print "-" }')
    steps=$(echo "$all_steps" | tr ' ' '\n' | awk 'NF { s += $1; n++ } END { if (n) printf "%d", s / n; else print "?" }')
    speed=$(echo "$speeds" | tr ' ' '\n' | awk 'NF { s += $1; n++ } END { if (n) printf "%.1f", s / n; else print "?" }')
    echo "| $name | $bleu | $exact | $aer | $entropy | $steps | $speed | ${params:-?} |" >> "$table"
done
cat "$table"
