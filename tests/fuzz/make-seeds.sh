#!/bin/sh
# Regenerates the checkpoint and alignments seeds of the fuzzers (tests/fuzz/seeds/ckpt
# and seeds/align) with the built ./s2s: a tiny model (sizes of 2, six words) trained
# for two steps with each optimizer, so each checkpoint is a few KiB. Run from the
# repository root after `make`; the seeds are committed, so this is needed only when
# the checkpoint format or the alignments.jsonl records change.
set -eu

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'a b c\nb c\nc a\na\n' >"$work/train.src"
printf 'x y z\ny z\nz x\nx\n' >"$work/train.tgt"
cat >"$work/tiny.yaml" <<EOF
name: seed
data:
  train_src: $work/train.src
  train_tgt: $work/train.tgt
  valid_src: $work/train.src
  valid_tgt: $work/train.tgt
model:
  embedding_size: 2
  encoder_size: 2
  decoder_size: 2
  attention_size: 2
  readout_size: 2
training:
  batch_size: 2
  max_steps: 2
  valid_every: 1
  threads: 1
alignments:
  every: 1
  probes: 2
EOF

mkdir -p tests/fuzz/seeds/ckpt tests/fuzz/seeds/align
for optimizer in adam sgd adadelta; do
    ./s2s train "$work/tiny.yaml" --set run_dir="$work/$optimizer" \
        --set training.optimizer=$optimizer >/dev/null 2>&1
    cp "$work/$optimizer/checkpoints/last.ckpt" "tests/fuzz/seeds/ckpt/$optimizer.ckpt"
done
./s2s train "$work/tiny.yaml" --set run_dir="$work/char" --set data.level=char \
    --set data.lowercase=true >/dev/null 2>&1
cp "$work/char/checkpoints/last.ckpt" tests/fuzz/seeds/ckpt/char.ckpt
# the sections of training.average_last (AVGK, AVGW) and a tied output layer (no W_o)
./s2s train "$work/tiny.yaml" --set run_dir="$work/averaged" --set model.tie_output=true \
    --set training.average_last=2 >/dev/null 2>&1
cp "$work/averaged/checkpoints/last.ckpt" tests/fuzz/seeds/ckpt/averaged-tied.ckpt
# a whole Transformer (2 decoder layers of 2 heads): its tensors, and its dumps' "layers",
# "layer_heads" and "dec_self"
./s2s train "$work/tiny.yaml" --set run_dir="$work/transformer" --set model.encoder_cell=none \
    --set model.self_attention_layers=1 --set model.self_attention_heads=2 \
    --set model.decoder_cell=none --set model.decoder_layers=2 --set model.attention_heads=2 \
    >/dev/null 2>&1
cp "$work/transformer/checkpoints/last.ckpt" tests/fuzz/seeds/ckpt/transformer.ckpt
cp "$work/transformer/alignments.jsonl" tests/fuzz/seeds/align/transformer.jsonl
cp "$work/adam/alignments.jsonl" tests/fuzz/seeds/align/word.jsonl
cp "$work/char/alignments.jsonl" tests/fuzz/seeds/align/char.jsonl
ls -l tests/fuzz/seeds/ckpt tests/fuzz/seeds/align
