#!/bin/sh
# The experiment that motivated attention (Bahdanau et al. 2014, Fig. 2): without
# attention, translation quality falls as sentences get longer; with it, it holds.
#
# Writes the toy-fr-long corpus (sentences of 5 to 50 words), trains
# configs/toy-fr-long.yaml once per attention score -- none (the fixed context of a
# Sutskever-style encoder-decoder) and the four scores -- with equal sizes and equal
# training time, translates the test set with each (beam search), and reports BLEU by
# source length as a Markdown table and an SVG line plot, and the attention each score
# learned for one long test sentence, side by side.
#
# usage: scripts/experiments/length-experiment.sh [--seconds N] [--size N] [--out DIR] [--scores LIST]
#   --seconds  training time of each model (default 600)
#   --size     training pairs (default 40000)
#   --out      where everything goes (default runs/length-experiment)
#   --scores   the models, in order (default "none additive dot general scaled_dot"); also
#              additive-4-heads, self-attention-2 (2 layers on the bi-GRU) and
#              attention-only (model.encoder_cell none, 2 layers)
# Results: OUT/table.md, OUT/bleu-by-length.svg, OUT/alignments/*.svg and OUT/summary.txt;
# each model's run directory is OUT/<score>.
set -eu

seconds=600
size=40000
out=runs/length-experiment
scores="none additive dot general scaled_dot"
s2s=${S2S:-./s2s}
width=10
while [ $# -gt 0 ]; do
    case $1 in
        --seconds) seconds=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --scores) scores=$2; shift 2 ;;
        *) echo "length-experiment: unknown option $1 (see the head of $0)" >&2; exit 2 ;;
    esac
done
here=$(dirname "$0")
corpus=$out/corpus

# The --set options of a model's name: a score, or one of issue 18's variants.
model_sets() {
    case $1 in
        none | additive | dot | general | scaled_dot) echo "--set model.attention=$1" ;;
        additive-4-heads) echo "--set model.attention_heads=4" ;;
        self-attention-2) echo "--set model.self_attention_layers=2" ;;
        attention-only)
            echo "--set model.encoder_cell=none --set model.self_attention_layers=2" ;;
        *) echo "length-experiment: unknown model $1" >&2; exit 2 ;;
    esac
}
mkdir -p "$out"

echo "length-experiment: corpus toy-fr-long, $size training pairs, in $corpus" >&2
"$s2s" corpus toy-fr-long --out "$corpus" --size "$size" >&2

# One long test sentence (the first of 40 words or more) for the alignment figures.
awk 'NF >= 40 { print NR; exit }' "$corpus/test.src" > "$out/long-line"
long=$(cat "$out/long-line")
sed -n "${long}p" "$corpus/test.src" > "$out/long.src"
sed -n "${long}p" "$corpus/test.tgt" > "$out/long.tgt"
mkdir -p "$out/alignments"

for score in $scores; do
    run=$out/$score
    sets=$(model_sets "$score")
    echo "length-experiment: training $score ($sets) for $seconds s" >&2
    rm -rf "$run"
    # shellcheck disable=SC2086 # word splitting of the --set list is intended
    "$s2s" train configs/toy-fr-long.yaml --set run_dir="$run" $sets \
        --set training.max_time="$seconds" \
        --set data.train_src="$corpus/train.src" --set data.train_tgt="$corpus/train.tgt" \
        --set data.valid_src="$corpus/valid.src" --set data.valid_tgt="$corpus/valid.tgt" \
        --set data.test_src="$corpus/test.src" --set data.test_tgt="$corpus/test.tgt" \
        --set data.valid_align="$corpus/valid.align" --set data.test_align="$corpus/test.align" \
        > /dev/null 2>&1
    model=$run/checkpoints/best.ckpt
    "$s2s" translate --model "$model" < "$corpus/test.src" > "$run/test.beam.hyp"
    "$s2s" eval --hyp "$run/test.beam.hyp" --ref "$corpus/test.tgt" --src "$corpus/test.src" \
        --by-length "$width" --metric bleu --metric exact > "$run/eval.txt"
    if [ "$score" != none ]; then
        "$s2s" align --model "$model" --src "$out/long.src" --tgt "$out/long.tgt" \
            --out "$run/long.jsonl" > /dev/null
        "$s2s" heatmap "$run/long.jsonl" --format svg --out "$run/long-heatmap"
        cp "$run"/long-heatmap/heatmap-*.svg "$out/alignments/$score.svg"
    fi
done

# The table, the plot and the verdict.
/usr/bin/python3 "$here/length_report.py" --out "$out" --scores "$scores" --width "$width" \
    --seconds "$seconds" --long-line "$long"
