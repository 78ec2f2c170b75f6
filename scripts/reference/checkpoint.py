"""s2s checkpoints read into the reference, and the `beamcheck` subcommand: an s2s
checkpoint's weights decoded by the reference's beam search, against s2s's."""
import sys
import time

import torch

from reference.model import BOS, EOS, UNK, pad_batch
from reference.tokenizer import detokenize, tokenize
from reference.config import ConfigError, config_model, load_config
from reference.data import read_lines
from reference.search import beam_search, length_penalty, output_limit


# ---- s2s checkpoints, and beam search against s2s's: the `beamcheck` subcommand --------

def read_checkpoint(path):
    """The sections of an s2s checkpoint (src/run/sectionfile.c): {tag: bytes}, each
    section's CRC-32 checked."""
    import struct
    import zlib
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"S2SCKPT\n":
        raise ConfigError("`%s` is not an s2s checkpoint" % path)
    version, endian, float_size, count, size = struct.unpack_from("=IIIIQ", data, 8)
    if endian != 0x01020304 or float_size != 4 or size != len(data):
        raise ConfigError("`%s`: not a checkpoint of this machine's layout, or truncated" % path)
    sections, at = {}, 32
    for _ in range(count):
        tag = data[at:at + 4].decode("ascii")
        length = struct.unpack_from("=Q", data, at + 8)[0]
        body = data[at + 16:at + 16 + length]
        crc = struct.unpack_from("=I", data, at + 16 + length)[0]
        if zlib.crc32(body) != crc:
            raise ConfigError("`%s`: section %s fails its CRC" % (path, tag))
        sections[tag] = body
        at += 16 + length + 4
    return sections


def load_checkpoint(path):
    """An s2s checkpoint as (config, model, source words, target words): the model built
    from its config and sizes, with its weights (PARM, laid out by its tensor table TNSR)
    moved in by name (c_tensors)."""
    import struct
    sec = read_checkpoint(path)
    cfg = load_config(sec["CONF"].decode("utf-8"), path + " (CONF)")

    def words(body):
        n = struct.unpack_from("=q", body, 0)[0]
        out = body[8:].split(b"\0")[:n]
        return [w.decode("utf-8") for w in out]
    src_words, tgt_words = words(sec["VSRC"]), words(sec["VTGT"])
    vx, vy, m, n, p, a, l = struct.unpack_from("=7q", sec["DIMS"], 0)
    assert (vx, vy) == (len(src_words), len(tgt_words))
    for key, value in zip(("embedding_size", "encoder_size", "decoder_size", "attention_size",
                           "readout_size"), (m, n, p, a, l)):
        cfg["model." + key] = value
    model = config_model(cfg, vx, vy)
    table, body = [], sec["TNSR"]
    count, at = struct.unpack_from("=q", body, 0)[0], 8
    for _ in range(count):
        end = body.index(b"\0", at)
        name = body[at:end].decode("ascii")
        rows, cols = struct.unpack_from("=qq", body, end + 1)
        table.append((name, rows, cols))
        at = end + 17
    flat = torch.frombuffer(bytearray(sec["PARM"]), dtype=torch.float32)
    tensors = model.c_tensors()
    if set(tensors) != {name for name, _, _ in table}:
        raise ConfigError("`%s`: its tensors %s are not this model's %s" % (
            path, sorted(name for name, _, _ in table), sorted(tensors)))
    at = 0
    with torch.no_grad():
        for name, rows, cols in table:
            w = tensors[name]
            assert w.numel() == rows * cols, name
            w.copy_(flat[at:at + rows * cols].view_as(w))
            at += rows * cols
    assert at == flat.numel()
    model.eval()
    if "IMGM" in sec:                                   # an image model's channel means
        model.picture_mean = torch.tensor(struct.unpack_from("=3d", sec["IMGM"], 0),
                                          dtype=torch.float64)
    return cfg, model, src_words, tgt_words


def beamcheck(args):
    """Decodes SRC with an s2s checkpoint's weights by this file's beam search; with --s2s,
    also by `s2s translate` on the same checkpoint, and compares each line's translation
    as s2s writes it (detokenized unless the config says not to) and, for a beam of 2 or
    more, its score. A line whose translations differ is a near tie when this model
    scores s2s's translation within 1e-4 of its own (float rounding chose between them);
    any other difference fails (exit 1)."""
    import subprocess
    try:
        cfg, model, src_words, tgt_words = load_checkpoint(args.checkpoint)
        lines = read_lines(args.source)
    except (ConfigError, OSError) as e:
        print("torch_reference.py beamcheck: error: %s" % e, file=sys.stderr)
        return 2
    if args.limit:
        lines = lines[:args.limit]
    K = args.beam or cfg["translate.beam_size"]
    alpha = cfg["translate.alpha"] if args.alpha is None else args.alpha
    lower = cfg["data.lowercase"]
    src_id = {w: k for k, w in enumerate(src_words)}
    tgt_id = {w: k for k, w in enumerate(tgt_words)}
    sources = [[src_id.get(w, UNK) for w in tokenize(line, lower)] for line in lines]
    limits = [output_limit(len(x), cfg) for x in sources]
    start = time.perf_counter()
    found = beam_search(model, sources, K, alpha, limits)
    seconds = time.perf_counter() - start
    written = detokenize if cfg["translate.detokenize"] else " ".join
    ours = [written([tgt_words[w] for w in r[0]]) if r else None for r in found]
    if not args.s2s:
        for text in ours:
            print(text or "")
        return 0
    stdin = "".join(line + "\n" for line in lines)
    # --n-best 2 writes the scores (its first entry is the translation); 1 would not
    n_best = ["--n-best", "2"] if K > 1 else []
    text = subprocess.run([args.s2s, "translate", "--model", args.checkpoint, "--beam", str(K),
                           "--alpha", repr(alpha)] + n_best, input=stdin, check=True,
                          capture_output=True, text=True).stdout
    theirs = [None] * len(lines)                       # (translation, score); None: no entry
    for k, row in enumerate(text.splitlines()):
        if K > 1:
            index, translation, score = row.split(" ||| ")
            if theirs[int(index)] is None:
                theirs[int(index)] = (translation, float(score))
        elif sources[k]:                               # greedy: a line a line, no scores
            theirs[k] = (row, None)
    same, ties, differ, worst = 0, 0, 0, 0.0
    for k, (mine, r, other) in enumerate(zip(ours, found, theirs)):
        if r is None or other is None:
            if (r is None) != (other is None) and not (r is None and other[0] == ""):
                differ += 1
                print("line %d: reference %r, s2s %r" % (k + 1, mine, other and other[0]))
            else:
                same += 1
            continue
        if mine == other[0]:
            same += 1
            if other[1] is not None:
                worst = max(worst, abs(r[1] - other[1]))
            continue
        # s2s's words as tokenize() reads them back (exact for any sensible sentence)
        words = [tgt_id.get(w, UNK) for w in (tokenize(other[0], lower) if
                                              cfg["translate.detokenize"] else other[0].split())]
        theirs_here = hypothesis_score(model, sources[k], words, limits[k], alpha)
        tie = abs(theirs_here - r[1]) < 1e-4
        ties += tie
        differ += not tie
        print("line %d: reference %r (%.6f), s2s %r (%s; %.6f by the reference)%s" % (
            k + 1, mine, r[1], other[0], "%.6f" % other[1] if other[1] is not None else "-",
            theirs_here, ": a near tie" if tie else ""))
    print("beamcheck: beam %d, alpha %g, %d sentences (%.1f s): %d identical (largest score "
          "difference %s), %d near ties, %d different" % (
              K, alpha, len(lines), seconds, same,
              "%.2e" % worst if K > 1 else "-: greedy has none", ties, differ))
    return 1 if differ else 0


def hypothesis_score(model, source, words, limit, alpha):
    """The beam's score of translating source by words: its summed log-probability (with
    </s> when it ended, i.e. has fewer than limit words) over the length penalty."""
    ended = len(words) < limit
    targets = words + [EOS] if ended else words
    with torch.no_grad():
        src, src_len, _, _ = pad_batch([(source, [])])
        steps = model.decoding(src, src_len, len(targets))
        prev, total = torch.tensor([BOS]), 0.0
        for y in targets:
            o = steps.step(prev).double()[0]
            total += (o[y] - torch.logsumexp(o, 0)).item()
            prev = torch.tensor([y])
    return total / length_penalty(len(targets), alpha)


# ---- an image model's attention, scored against word boxes: the `groundcheck` subcommand ---

def groundcheck(args):
    """An s2s image checkpoint's teacher-forced attention over the captions TGT of the
    pictures SRC, computed here (the pictures read with PIL, resized and less the
    checkpoint's channel means as s2s reads them) and by `s2s align --ground`, and scored
    against the word boxes GROUND by both: every weight must agree to 1e-5, each grounded
    word's most attended cell too unless its two largest weights are within 1e-5 (a near
    tie, counted), and pointing and mass to s2s's 4 printed decimals (pointing give or
    take the near ties). Exit 1 if anything else differs."""
    import json
    import os
    import subprocess
    import tempfile
    from reference.pictures import load_pictures
    from reference.training import Grounding, teacher_forced
    try:
        cfg, model, _, tgt_words = load_checkpoint(args.checkpoint)
        if cfg["model.encoder"] != "image":
            raise ConfigError("`%s` is not an image model" % args.checkpoint)
        paths, captions = read_lines(args.source), read_lines(args.target)
        size = cfg["data.image_size"]
        pictures, sizes = load_pictures(args.source, paths, size, cfg["data.image_resize"])
        grounding = Grounding(args.ground, sizes, size // 2 ** len(cfg["model.conv_channels"]))
    except (ConfigError, OSError) as e:
        print("torch_reference.py groundcheck: error: %s" % e, file=sys.stderr)
        return 2
    model.set_pictures(pictures - model.picture_mean.float())
    G = grounding.G
    tgt_id = {w: k for k, w in enumerate(tgt_words)}
    lower = cfg["data.lowercase"]
    pairs = []
    for k, text in enumerate(captions):
        words = tokenize(text, lower)
        if words:
            pairs.append(([k] * (G * G - 1), [tgt_id.get(w, UNK) for w in words], words, k))
    grounding.records = []
    teacher_forced(model, pairs, 32, grounding)
    pointing, mass = grounding.scores()
    ours = {r["id"]: r for r in grounding.records}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "align.jsonl")
        err = subprocess.run([args.s2s, "align", "--model", args.checkpoint, "--src", args.source,
                              "--tgt", args.target, "--ground", args.ground, "--out", out],
                             check=True, capture_output=True, text=True).stderr
        with open(out, encoding="utf-8") as f:
            theirs = [json.loads(line) for line in f]
    scores = dict(field.split("=") for field in err.split("attention_correctness:")[1].split())
    # each grounded word's most attended cell, by both weights: where they differ, the two
    # largest weights must be a near tie (within 1e-5), and pointing may differ by them
    worst, flips, differ = 0.0, 0, int(len(theirs) != len(ours))
    for r in theirs:
        mine = ours.get(r["id"])
        if mine is None or len(mine["weights"]) != len(r["weights"]):
            differ += 1
            print("line %d: no record here, or another length" % r["id"])
            continue
        a, b = torch.tensor(mine["weights"]), torch.tensor(r["weights"])
        worst = max(worst, float((a - b).abs().max()))
        for i, box in enumerate(grounding.boxes[r["id"] - 1]):
            if box is None or int(a[i].argmax()) == int(b[i].argmax()):
                continue
            top2 = b[i].topk(2).values
            if float(top2[0] - top2[1]) < 1e-5:
                flips += 1
            else:
                differ += 1
                print("line %d, word %d: most attended cell %d here, %d by s2s" % (
                    r["id"], i + 1, int(a[i].argmax()), int(b[i].argmax())))
    theirs_pointing, theirs_mass = float(scores["pointing"]), float(scores["mass"])
    words = int(scores["words"])
    # s2s prints 4 decimals
    same = (worst < 1e-5 and abs(pointing - theirs_pointing) <= flips / max(words, 1) + 5e-5
            and abs(mass - theirs_mass) <= 5e-5 and not differ)
    print("groundcheck: %d captions, %d grounded words, grid %d x %d: weights agree to %.1e "
          "(largest difference); pointing %.4f here, %.4f by s2s; mass %.4f, %.4f; the most "
          "attended cell the same for every word%s -- %s" % (
              len(theirs), words, G, G, worst, pointing, theirs_pointing, mass, theirs_mass,
              " but %d near ties" % flips if flips else "", "the same" if same else "FAIL"))
    return 0 if same else 1
