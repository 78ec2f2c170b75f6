#!/bin/sh
# Regenerates the checkpoint, alignments and SentencePiece seeds of the fuzzers
# (tests/fuzz/seeds/ckpt, align and spm) with the built ./s2s: a tiny model (sizes of 2,
# six words) trained for two steps with each optimizer, so each checkpoint is a few KiB.
# Run from the repository root after `make`; the seeds are committed, so this is needed
# only when the checkpoint format or the alignments.jsonl records change.
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
# SentencePiece models of 30 pieces, unigram and bpe, learned by SentencePiece's Python
# module (python3-sentencepiece): without NFKC's tables (normalization "identity") a
# model is a few hundred bytes, where s2s's own (NFKC) carry some 240 KB of them
mkdir -p tests/fuzz/seeds/spm
printf 'a b c ab abc\nbca cab ba\n\303\200 la c\303\264t\303\251 \303\251t\303\251\nzwei Hunde\n' \
    >"$work/spm.txt"
for k in 1 2 3 4; do cat "$work/spm.txt"; done >"$work/spm5.txt"
cat "$work/spm.txt" >>"$work/spm5.txt"
for type in unigram bpe; do
    /usr/bin/python3 -c "import sentencepiece as s, sys; s.SentencePieceTrainer.train(
input=sys.argv[1], model_prefix=sys.argv[2], model_type=sys.argv[3], vocab_size=30,
normalization_rule_name='identity', character_coverage=1.0, minloglevel=2,
hard_vocab_limit=False)" "$work/spm5.txt" "$work/$type" "$type"
    cp "$work/$type.model" "tests/fuzz/seeds/spm/$type-identity.model"
done
ls -l tests/fuzz/seeds/ckpt tests/fuzz/seeds/align tests/fuzz/seeds/spm
