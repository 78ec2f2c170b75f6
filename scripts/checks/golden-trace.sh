#!/bin/sh
# The golden trace: what must not change when code is moved or reshaped without meaning
# to change behaviour. For each of a set of model variants it trains a fixed-seed run
# and records every logged number (losses, validation scores, AER, entropy; not times),
# a hash of each checkpoint section but the run's progress and log lengths, of
# alignments.jsonl and test.hyp, and then translates and aligns with the checkpoint
# (greedy and beam 5, `s2s align --gold`). With --models DIR it also translates and
# aligns every DIR/*.ckpt: checkpoints written by an earlier commit must give the same
# bytes. Compare two traces with diff (OpenBLAS picks its kernels by CPU: compare traces
# of one machine).
#
#   sh scripts/checks/golden-trace.sh [--s2s ./s2s] [--models DIR] [--keep DIR] > trace.txt
#
# --keep DIR copies each variant's best.ckpt there (DIR/VARIANT.ckpt), for a later
# --models run with another binary.
set -eu

s2s=./s2s
models=""
keep=""
while [ $# -gt 0 ]; do
    case "$1" in
    --s2s) s2s=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: sh scripts/checks/golden-trace.sh [--s2s BIN] [--models DIR] [--keep DIR]" >&2; exit 2 ;;
    esac
done
case "$s2s" in /*) ;; *) s2s="$(pwd)/$s2s" ;; esac

# A fixed place: the effective config in each checkpoint names its paths.
work=/tmp/s2s-golden-trace
rm -rf "$work"
mkdir "$work"
trap 'rm -rf "$work"' EXIT
data=corpora/toy-fr
head -n 200 $data/test.src > "$work/test.src"
head -n 200 $data/test.tgt > "$work/test.tgt"
head -n 200 $data/test.align > "$work/test.align"

# Every section of a checkpoint but PROG and LOGS (which hold times) and CONF (the
# effective config: new keys with their defaults are not a change of behaviour), by tag.
sections() {
    /usr/bin/python3 - "$1" <<'EOF'
import hashlib, struct, sys
b = open(sys.argv[1], "rb").read()
at = 32
while at < len(b):
    tag = b[at:at + 4].decode()
    n = struct.unpack("<Q", b[at + 8:at + 16])[0]
    data = b[at + 16:at + 16 + n]
    if tag not in ("PROG", "LOGS", "CONF"):
        print("  section %s %d %s" % (tag, n, hashlib.sha256(data).hexdigest()[:16]))
    at += 16 + n + 4
EOF
}

# The numbers of metrics.jsonl without the measured times.
metrics() {
    sed -e 's/,"tokens_per_s":[^,}]*//' -e 's/,"train_seconds":[^,}]*//' \
        -e 's/,"seconds":[^,}]*//' "$1" | sed 's/^/  /'
}

hash() {
    printf '  %s %s\n' "$1" "$(sha256sum < "$2" | cut -c1-16)"
}

# Translations (greedy, beam 5) and alignments of a checkpoint.
decode() {
    ckpt=$1
    "$s2s" translate --model "$ckpt" --beam 1 < "$work/test.src" > "$work/greedy" 2>/dev/null
    hash greedy "$work/greedy"
    "$s2s" translate --model "$ckpt" --beam 5 < "$work/test.src" > "$work/beam5" 2>/dev/null
    hash beam5 "$work/beam5"
    if "$s2s" align --model "$ckpt" --src "$work/test.src" --tgt "$work/test.tgt" \
        --gold "$work/test.align" > "$work/links" 2> "$work/aer"; then
        hash links "$work/links"
        sed 's/^/  /' "$work/aer"
    else
        echo "  align: $(head -n 1 "$work/aer")"
    fi
}

# run NAME STEPS [--set KEY=VALUE]...
run() {
    name=$1
    steps=$2
    shift 2
    dir="$work/$name"
    "$s2s" train configs/demo.yaml --set run_dir="$dir" --set training.max_time=0 \
        --set training.max_steps="$steps" --set training.valid_every=$((steps / 2)) \
        --set training.log_every=10 --set alignments.every=$((steps / 2)) --set data.test_src="$work/test.src" \
        --set data.test_tgt="$work/test.tgt" --set data.test_align="$work/test.align" \
        "$@" > /dev/null 2>&1
    echo "variant $name: $*"
    metrics "$dir/metrics.jsonl"
    [ -f "$dir/alignments.jsonl" ] && hash alignments.jsonl "$dir/alignments.jsonl"
    hash test.hyp "$dir/test.hyp"
    for c in last best; do
        echo "  $c.ckpt"
        sections "$dir/checkpoints/$c.ckpt"
    done
    decode "$dir/checkpoints/best.ckpt"
    if [ -n "$keep" ]; then
        mkdir -p "$keep"
        cp "$dir/checkpoints/best.ckpt" "$keep/$name.ckpt"
    fi
}

# Short runs show every number of training; two longer ones translate something real.
run default 60
run dot 60 --set model.attention=dot
run general 60 --set model.attention=general
run scaled_dot 60 --set model.attention=scaled_dot
run none 60 --set model.attention=none
run rnn 60 --set model.encoder_cell=rnn --set model.decoder_cell=rnn
run lstm-deep-dropout 60 --set model.encoder_cell=lstm --set model.decoder_cell=lstm \
    --set model.encoder_layers=2 --set model.embedding_dropout=0.2 \
    --set model.readout_dropout=0.3 --set training.label_smoothing=0.1
run self-attention-dropout 60 --set model.self_attention_layers=2 \
    --set model.self_attention_heads=2 --set model.self_attention_dropout=0.2
run attention-only 60 --set model.encoder_cell=none --set model.self_attention_layers=1
run transformer 60 --set model.encoder_cell=none --set model.self_attention_layers=2 \
    --set model.decoder_cell=none --set model.decoder_layers=2 --set model.self_attention_dropout=0.1
run sgd-clipped 60 --set training.optimizer=sgd --set training.learning_rate=0.5 \
    --set training.clip_grad_norm=0.5
run trained 600
run trained-lstm-general 600 --set model.encoder_cell=lstm --set model.decoder_cell=lstm \
    --set model.attention=general --set model.embedding_dropout=0.1

echo "checkpoint ckpt-v1/reverse.ckpt"
"$s2s" translate --model tests/fixtures/ckpt-v1/reverse.ckpt --beam 1 \
    < tests/fixtures/ckpt-v1/input.txt > "$work/v1"
hash greedy "$work/v1"
"$s2s" translate --model tests/fixtures/ckpt-v1/reverse.ckpt --beam 5 \
    < tests/fixtures/ckpt-v1/input.txt > "$work/v1"
hash beam5 "$work/v1"
if [ -n "$models" ]; then
    for ckpt in "$models"/*.ckpt; do
        echo "checkpoint $(basename "$ckpt")"
        decode "$ckpt"
    done
fi
