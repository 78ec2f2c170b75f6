#!/usr/bin/python3
"""torch_reference.py: the s2s model written in PyTorch, from src/model/MODEL.md: the
entry point of the package scripts/reference/, whose modules are its parts:
  model.py       the seq2seq module (torch.nn's own GRU/LSTM/RNN, attention, heads,
                 self-attention layers, the image encoder) and the terms of its loss;
  dropout.py     PCG32 and the order of a pass's dropout masks, drawn again;
  tokenizer.py   s2s's word tokenizer and detokenizer;
  config.py      s2s's configs read as s2s reads them;
  data.py        real text: pairs, vocabularies, batches;
  search.py      greedy decoding and s2s's beam search, written again;
  training.py    the `train` subcommand;
  checkpoint.py  s2s checkpoints read, and the `beamcheck` and `groundcheck` subcommands;
  pictures.py    image corpora: pictures, channel means, word boxes, pointing and mass;
  speed.py       the speed baseline (the `bench` subcommand);
  selfcheck.py   autograd against finite differences; decoding against the loss.

Three users:
  - scripts/checks/crosscheck.py imports the package: the C pass's weights are loaded
    into Seq2Seq in float64 and autograd recomputes the loss and every gradient;
  - scripts/bench/bench.py runs this as the speed baseline: what a user would train
    instead (torch.nn's GRU/LSTM/RNN over packed sequences, Adam), timed on the same
    synthetic batches as `s2s bench`;
  - `train` trains an s2s config's model on its real data and decodes with s2s's beam
    search, so that s2s and PyTorch compare translation for translation at the same
    wall-clock budget (scripts/experiments/tatoeba-experiment.sh); `beamcheck` shows, on
    an s2s checkpoint's own weights, that the beam search is s2s's.

  torch_reference.py bench --size S --batch 32 --steps 100 --warmup 10 [--seed 1] [--json]
  torch_reference.py train CONFIG.yaml [--set KEY=VALUE]... --s2s ./s2s --out DIR [--threads 2]
      # trains what `s2s train CONFIG.yaml` trains, validates as it does, and translates
      # the test sources with s2s's beam search: DIR/test.hyp, DIR/train.log, a RESULT line
  torch_reference.py beamcheck CKPT SRC [--beam K] [--alpha A] [--limit N] [--s2s ./s2s]
      # an s2s checkpoint's weights, decoded by this beam search (and compared with s2s's)
  torch_reference.py groundcheck CKPT SRC TGT GROUND [--s2s ./s2s]
      # an s2s image checkpoint's attention on captions and its pointing and mass against
      # word boxes, here (pictures read and scored as s2s does) and by s2s align
  torch_reference.py tokenize [--lowercase] < text       # the word tokenizer, one line a line
  torch_reference.py selfcheck             # autograd vs finite differences, decoding vs the loss

The model's parameters are torch.nn modules; c_tensors() names each by the C tensor it
holds (E_x, enc_fwd.W_i, ..., b_o), so weights move between the two by name.
Only dependencies: Debian's python3-torch (PyTorch 1.13), and for train, beamcheck and
groundcheck python3-yaml (s2s's configs), python3-sentencepiece (subword units) and
python3-pil (an image corpus's pictures).
"""
import os
import sys

if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] in ("bench", "train"):
    # OpenBLAS reads its thread count once, when torch loads it. On the 2-core bench
    # machine torch is fastest with 1 thread of its own and 2 OpenBLAS threads (2 of
    # its own next to OpenBLAS's 2 was up to 3x slower): the setting a user would find.
    # train does the same (`--threads N`: N OpenBLAS threads, default 2). Measured on
    # configs/tatoeba-fr-en.yaml's model, 2 cores kept busy by another job (load 2-6):
    # 2 torch threads fell to 0.4 steps/s (its OpenMP threads spin against the busy core)
    # where 1 ran 13-24 with 2 OpenBLAS threads and 25-26 with 1 (--threads 1). An idle
    # machine was not to be had: compare --threads 1 and 2 there before a timed run.
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["OPENBLAS_NUM_THREADS"] = "2"
    for k, arg in enumerate(sys.argv[2:], 2):           # --threads N, or --threads=N
        if sys.argv[1] == "train" and arg.startswith("--threads"):
            given = arg.partition("=")[2] if "=" in arg else "".join(sys.argv[k + 1:k + 2])
            os.environ["OPENBLAS_NUM_THREADS"] = given or "2"
elif __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] in ("beamcheck", "groundcheck"):
    # a check, not a race: one thread, whatever else runs
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


import argparse  # noqa: E402

from reference.tokenizer import tokenize  # noqa: E402
from reference.speed import SIZES, bench, bench_translate  # noqa: E402
from reference.training import train  # noqa: E402
from reference.checkpoint import beamcheck, groundcheck  # noqa: E402
from reference.selfcheck import selfcheck  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    b = sub.add_parser("bench", help="the speed baseline on synthetic batches")
    b.add_argument("--size", choices=sorted(SIZES), default="S")
    b.add_argument("--batch", type=int, default=32)
    b.add_argument("--steps", type=int, default=100)
    b.add_argument("--warmup", type=int, default=10)
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--json", action="store_true", help="also print a RESULT {json} line")
    b.add_argument("--heads", type=int, default=1, help="attention heads")
    b.add_argument("--self-attention", type=int, default=None,
                   help="self-attention layers (4 heads, ffn 4 d_h) on the encoder")
    b.add_argument("--attention-only", action="store_true",
                   help="no recurrent encoder (2 self-attention layers unless given)")
    b.add_argument("--decoder-layers", type=int, default=None,
                   help="the Transformer decoder of that many layers (m wide, --heads heads)")
    b.add_argument("--hard", action="store_true", help="hard attention (positions given)")
    b.add_argument("--image", action="store_true",
                   help="s2s bench --image's model instead of a size")
    b.add_argument("--shards", type=int, default=0, help="ignored: s2s's option")
    b.add_argument("--translate", action="store_true",
                   help="greedy decoding speed on formula weights and sources instead")
    b.add_argument("--threads", type=int, default=0, help="ignored: s2s's option")
    r = sub.add_parser("train", help="train an s2s config's model on its data; beam-decode "
                       "the test sources")
    r.add_argument("config", help="an s2s config (YAML)")
    r.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a key, as s2s train --set (repeatable)")
    r.add_argument("--s2s", default="./s2s", help="the s2s binary (its eval scores BLEU)")
    r.add_argument("--out", required=True, help="directory for train.log, test.hyp, ...")
    r.add_argument("--threads", type=int, default=2, help="OpenBLAS threads (torch's own: 1)")
    c = sub.add_parser("beamcheck", help="decode with an s2s checkpoint's weights by this "
                       "beam search; with --s2s, compare with s2s translate")
    c.add_argument("checkpoint")
    c.add_argument("source", help="source sentences, one a line")
    c.add_argument("--beam", type=int, default=0, help="default: translate.beam_size")
    c.add_argument("--alpha", type=float, default=None, help="default: translate.alpha")
    c.add_argument("--limit", type=int, default=0, help="only the first N lines")
    c.add_argument("--s2s", default=None, help="the s2s binary to compare with")
    g = sub.add_parser("groundcheck", help="an s2s image checkpoint's attention on captions, "
                       "here and by s2s align, scored against word boxes by both")
    g.add_argument("checkpoint")
    g.add_argument("source", help="the pictures' list (an image corpus's .src)")
    g.add_argument("target", help="their captions (.tgt)")
    g.add_argument("ground", help="the captions' word boxes (.ground)")
    g.add_argument("--s2s", default="./s2s", help="the s2s binary to compare with")
    t = sub.add_parser("tokenize", help="stdin to tokens, one line a line")
    t.add_argument("--lowercase", action="store_true")
    sub.add_parser("selfcheck", help="the reference's gradients by finite "
                   "differences, its decoding by its loss")
    args = ap.parse_args()
    if args.mode == "bench":
        (bench_translate if args.translate else bench)(args)
    elif args.mode == "train":
        return train(args)
    elif args.mode == "beamcheck":
        return beamcheck(args)
    elif args.mode == "groundcheck":
        return groundcheck(args)
    elif args.mode == "tokenize":
        # lines end at \n only (text mode would also cut at \r, which s2s keeps inside a line)
        lines = sys.stdin.buffer.read().decode("utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for line in lines:
            print(" ".join(tokenize(line[:-1] if line.endswith("\r") else line, args.lowercase)))
    else:
        return selfcheck()
    return 0


if __name__ == "__main__":
    sys.exit(main())
