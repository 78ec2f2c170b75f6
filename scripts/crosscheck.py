#!/usr/bin/python3
"""Cross-check of the C model against the same model in PyTorch.

For each size, the C core (float build, then double build) writes its weights, a
padded batch, its loss and every gradient (tests/crosscheck/crosscheck_dump.c). This
script loads the weights by name into the PyTorch model of scripts/torch_reference.py
(torch.nn's GRU, LSTM and RNN and their cells, cross_entropy) in float64, recomputes
loss and gradients with autograd and compares; the same for each model variant: every
attention score, other cells, deeper encoders, dropout (with the masks the C pass drew)
and label smoothing; and hard attention's surrogate J, on the sentences and positions the
C pass sampled (which it writes out), with both rewards, baselines and the entropy term.
Tolerances:
  float build:  loss to 1e-5 relative, each gradient tensor to 1e-4 relative norm;
  double build: loss to 1e-14 relative, each gradient tensor to 1e-13 relative norm;
  a gradient whose norm is below 1e-2 is measured as if it were 1e-2 (GRAD_NORM_FLOOR).
With --s2s, it also tokenizes the texts of tests/fixtures/sacrebleu (English and French,
with and without lowercasing) -- and the Tatoeba valid and test files, when
scripts/get-tatoeba.sh has fetched them -- with `s2s tokenize` and with the reference's
tokenize(), and requires identical tokens. Exits 1 if any comparison fails.

usage: crosscheck.py --dump build/crosscheck_dump --dump build/crosscheck_dump_f64 --s2s ./s2s
"""
import argparse
import glob
import os
import struct
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_reference  # noqa: E402

# (V_x, V_y, m, n, p, a, l, B, seed): the gradient-check size, and one with every
# dimension different and larger batches.
SIZES = [
    (9, 8, 3, 4, 5, 5, 4, 3, 1),
    (50, 60, 16, 24, 32, 20, 28, 6, 2),
    (120, 90, 32, 48, 64, 40, 56, 16, 3),
]
TOLERANCES = {"float": (1e-5, 1e-4), "double": (1e-14, 1e-13)}
GRAD_NORM_FLOOR = 1e-2

# The variants, each at one size where p = 2n (so dot is valid) and a = p (so 2, 4 and 8
# heads split every vector evenly; encoder cell none, the attention-only encoder, has d_h =
# m = 16): (score, encoder cell, decoder cell, encoder layers,
# embedding dropout, readout dropout, label smoothing[, heads[, self-attention layers,
# their heads, their feed-forward width (0: 4 d_h), their dropout]]).
VARIANT_SIZE = (50, 60, 16, 12, 24, 24, 28, 6, 4)
VARIANTS = [
    ("dot", "gru", "gru", 1, 0, 0, 0),
    ("general", "gru", "gru", 1, 0, 0, 0),
    ("scaled_dot", "gru", "gru", 1, 0, 0, 0),
    ("none", "gru", "gru", 1, 0, 0, 0),
    ("additive", "lstm", "lstm", 1, 0, 0, 0),
    ("additive", "rnn", "rnn", 1, 0, 0, 0),
    ("scaled_dot", "lstm", "gru", 3, 0, 0, 0),
    ("additive", "gru", "gru", 1, 0.3, 0.4, 0.1),
    ("general", "rnn", "lstm", 2, 0.2, 0.3, 0.2),
    ("additive", "gru", "gru", 1, 0, 0, 0, 4),
    ("dot", "gru", "gru", 1, 0, 0, 0, 8),
    ("general", "gru", "gru", 1, 0, 0, 0, 2),
    ("scaled_dot", "gru", "gru", 1, 0, 0, 0, 4),
    ("additive", "lstm", "lstm", 2, 0.2, 0.3, 0.1, 4),
    ("additive", "gru", "gru", 1, 0, 0, 0, 1, 1, 4, 0, 0),
    ("scaled_dot", "gru", "gru", 1, 0, 0, 0, 4, 2, 8, 40, 0),
    ("general", "lstm", "lstm", 2, 0, 0, 0, 2, 2, 2, 16, 0),
    ("additive", "gru", "gru", 1, 0, 0, 0, 1, 2, 4, 0, 0.3),
    ("scaled_dot", "lstm", "gru", 1, 0.2, 0.3, 0.1, 2, 3, 6, 20, 0.25),
    ("additive", "none", "gru", 1, 0, 0, 0, 1, 2, 4, 0, 0),
    ("scaled_dot", "none", "lstm", 1, 0, 0, 0, 4, 1, 2, 32, 0),
    ("none", "none", "lstm", 1, 0, 0, 0, 1, 1, 4, 0, 0),
    ("general", "none", "lstm", 1, 0.2, 0.3, 0.1, 2, 2, 4, 24, 0.2),
    # Hard attention, after every field above (0 0 0 0: no self-attention layer): (hard,
    # expected_prob, lambda_r, lambda_e, token_reward, baseline, token_baseline). The
    # loss and gradients are the surrogate J's on the positions the C pass sampled; at
    # this size's seed, 2 of the 6 sentences choose when expected_prob is 0.5 or 0.3.
    ("additive", "gru", "gru", 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0.5, 1, 0.3, 0, -2.5, 0),
    ("scaled_dot", "lstm", "lstm", 1, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0, 1, 0.1, 0, 1.5, 0),
    ("dot", "gru", "gru", 1, 0, 0, 0.1, 4, 0, 0, 0, 0, 1, 0.5, 0.7, 0.05, 1, -1, -0.25),
    ("general", "rnn", "lstm", 2, 0.2, 0.3, 0.1, 2, 0, 0, 0, 0, 1, 0.3, 1, 0.2, 1, -2, -0.5),
    ("additive", "lstm", "gru", 1, 0, 0, 0, 2, 1, 4, 0, 0, 1, 0.5, 1, 0.2, 0, -3, 0),
    # b between the rewards of the two sentences that choose (-36.7, -42.7): advantages
    # of both signs, as a baseline that tracks R_s gives. (b = -2 made them ~-40 and the
    # gradients ~10: the exactly-0 key biases' rounding noise grew with them to 7e-14
    # of the GRAD_NORM_FLOOR, too near the double tolerance.)
    ("scaled_dot", "gru", "lstm", 1, 0.2, 0.3, 0.1, 4, 2, 2, 20, 0.25, 1, 0.5, 1, 0.1, 0, -40, 0),
    ("general", "none", "lstm", 1, 0, 0, 0, 2, 2, 4, 24, 0, 1, 0.5, 0.5, 0.1, 1, -1, -0.5),
]
SA_MASKS = ("mask_p", "mask_a", "mask_r", "mask_o")
WORST = {}  # (precision, "soft" or "hard"): the worst loss and gradient errors measured


def check_layer_form():
    """torch_reference.self_attention_layer, which takes the C pass's dropout masks,
    against torch.nn.TransformerEncoderLayer itself with every mask 1: the same output
    and gradients, padding included (float64)."""
    torch.manual_seed(5)
    S, B, d, H, F_ = 6, 4, 12, 3, 20
    layer = torch.nn.TransformerEncoderLayer(d, H, F_, dropout=0.0).double()
    with torch.no_grad():
        for w in layer.parameters():
            w.uniform_(-0.5, 0.5)
    lens = torch.tensor([6, 3, 1, 5])
    padding = torch.arange(S).unsqueeze(0) >= lens.unsqueeze(1)
    real = (~padding).T.unsqueeze(2).double()          # (S, B, 1): only real rows count
    x = torch.randn(S, B, d, dtype=torch.float64, requires_grad=True)
    R = torch.randn(S, B, d, dtype=torch.float64)
    ones = {"mask_p": torch.ones(B, H, S, S, dtype=torch.float64),
            "mask_a": torch.ones(S, B, d, dtype=torch.float64),
            "mask_r": torch.ones(S, B, F_, dtype=torch.float64),
            "mask_o": torch.ones(S, B, d, dtype=torch.float64)}
    results = []
    for form in ("module", "written out"):
        layer.zero_grad()
        x.grad = None
        out = (layer(x, src_key_padding_mask=padding) if form == "module"
               else torch_reference.self_attention_layer(layer, x, padding, ones))
        (out * R * real).sum().backward()
        results.append([out * real, x.grad] + [w.grad.clone() for w in layer.parameters()])
    worst = max(rel_norm(a, b) for a, b in zip(results[1], results[0]))
    ok = worst <= 1e-14
    print("self-attention layer written out vs torch.nn.TransformerEncoderLayer (padding, "
          "masks 1): output and every gradient within %.2e (tolerance 1e-14)%s"
          % (worst, "" if ok else "  FAIL"))
    return ok


def parse_dump(text):
    lines = iter(text.splitlines())
    dump = {"param": {}, "grad": {}}
    for line in lines:
        head = line.split()
        key = head[0]
        if key == "precision":
            dump["precision"] = head[1]
        elif key in ("dims", "batch"):
            dump[key] = [int(x) for x in head[1:]]
        elif key == "variant":
            dump[key] = (head[1], head[2], head[3], int(head[4]), float(head[5]),
                         float(head[6]), float(head[7]), int(head[8]), int(head[9]),
                         int(head[10]), int(head[11]), float(head[12]))
            # hard attention: hard, expected_prob, lambda_r, lambda_e, token_reward,
            # baseline, token_baseline
            dump["hard"] = (int(head[13]), float(head[14]), float(head[15]), float(head[16]),
                            int(head[17]), float(head[18]), float(head[19]))
        elif key in ("mask_x", "mask_y", "mask_t") or key.split(".")[-1] in SA_MASKS:
            dump[key] = [float(x) for x in next(lines).split()]
        elif key in ("src", "src_len", "tgt_in", "tgt_out", "hard_rows", "chosen"):
            dump[key] = [int(x) for x in next(lines).split()]
        elif key in ("param", "grad"):
            name, rows, cols = head[1], int(head[2]), int(head[3])
            values = [float(x) for x in next(lines).split()]
            assert len(values) == rows * cols, name
            dump[key][name] = values
        elif key == "loss":
            dump["loss"] = float(head[1])
    return dump


def rel_norm(a, b):
    return (torch.linalg.norm(a - b) / max(torch.linalg.norm(b).item(), 1e-300)).item()


def check(dump_binary, size, variant=None):
    args = [str(x) for x in size] + ([str(x) for x in variant] if variant else [])
    text = subprocess.run([dump_binary] + args, check=True, capture_output=True, text=True).stdout
    dump = parse_dump(text)
    vx, vy, m, n, p, a, l = dump["dims"]
    B, S, T = dump["batch"]
    variant = dump["variant"]
    score, enc_cell, dec_cell, layers, smoothing, heads = (variant[0], variant[1], variant[2],
                                                           variant[3], variant[6], variant[7])
    sa_layers, sa_heads, sa_ffn = variant[8:11]
    model = torch_reference.Seq2Seq(vx, vy, m, n, p, a, l, score, enc_cell, dec_cell,
                                    layers, heads, sa_layers, sa_heads, sa_ffn).double()
    params = model.c_tensors()
    assert set(params) == set(dump["param"]), "tensors of one side only: %s" % sorted(
        set(params) ^ set(dump["param"]))
    with torch.no_grad():
        for c_name, values in dump["param"].items():
            w = params[c_name]
            w.copy_(torch.tensor(values, dtype=torch.float64).view_as(w))
    src = torch.tensor(dump["src"]).view(S, B)
    src_len = torch.tensor(dump["src_len"])
    tgt_in = torch.tensor(dump["tgt_in"]).view(T, B)
    tgt_out = torch.tensor(dump["tgt_out"]).view(T, B)
    shapes = {"mask_x": (S, B, m), "mask_y": (T, B, m), "mask_t": (-1, l)}
    d_h = m if enc_cell == "none" else 2 * n
    for k in range(sa_layers):
        shapes.update({"sa%d.mask_p" % (k + 1): (B, sa_heads, S, S),
                       "sa%d.mask_a" % (k + 1): (S, B, d_h),
                       "sa%d.mask_r" % (k + 1): (S, B, sa_ffn),
                       "sa%d.mask_o" % (k + 1): (S, B, d_h)})
    masks = {k: torch.tensor(dump[k], dtype=torch.float64).view(*shapes[k])
             for k in shapes if k in dump}
    masks_ok = check_masks(dump, shapes) if masks else True
    hard, paths_ok = None, True
    if dump["hard"][0]:
        hard_rows = torch.tensor(dump["hard_rows"]) == 1
        chosen = torch.tensor(dump["chosen"]).view(T, B, heads)
        hard = torch_reference.HardPass(hard_rows, chosen, *dump["hard"][2:])
        paths_ok, paths = check_paths(hard_rows, chosen, src_len, tgt_out, dump["hard"][1])
    loss = model.loss(src, src_len, tgt_in, tgt_out, masks, smoothing, hard)
    loss.backward()

    precision = dump["precision"]
    loss_tol, grad_tol = TOLERANCES[precision]
    loss_err = abs(dump["loss"] - loss.item()) / abs(loss.item())
    ok = loss_err <= loss_tol and paths_ok and masks_ok
    print("crosscheck %s build, %s attention, %s encoder x%d, %s decoder, dropout %g/%g, "
          "smoothing %g, heads %d, self-attention %d x %d heads ffn %d dropout %g, V_x=%d "
          "V_y=%d m=%d n=%d p=%d a=%d l=%d B=%d (S=%d T=%d): loss C %.10f torch %.10f, "
          "relative error %.2e%s"
          % ((precision, variant[0], variant[1], variant[3], variant[2]) + variant[4:] +
             (vx, vy, m, n, p, a, l, B, S, T, dump["loss"], loss.item(), loss_err,
              "" if loss_err <= loss_tol else "  FAIL")))
    if hard is not None:
        expected_prob, lambda_r, lambda_e, token_reward, baseline, token_baseline = \
            dump["hard"][1:]
        print("  hard attention, the surrogate J: expected context with probability %g, "
              "lambda_r %g, lambda_e %g, %s reward against baseline %g; %s%s"
              % (expected_prob, lambda_r, lambda_e, "token" if token_reward else "sentence",
                 token_baseline if token_reward else baseline, paths,
                 "" if paths_ok else "  FAIL"))
    worst = 0.0
    grads = model.c_grads()
    for c_name, values in dump["grad"].items():
        g = grads[c_name]
        g_c = torch.tensor(values, dtype=torch.float64).view_as(g)
        # Relative to the tensor's norm, but never to less than GRAD_NORM_FLOOR: a
        # gradient that is a near-cancelling sum of O(1) terms (the key bias's is exactly
        # 0, since a softmax ignores a shift common to every key; W_g's falls to ~1e-3
        # behind layer-normalized annotations) keeps ~1e-16 of absolute rounding noise
        # on both sides, which no relative tolerance can hold.
        err = (torch.linalg.norm(g_c - g).item()
               / max(torch.linalg.norm(g).item(), GRAD_NORM_FLOOR))
        worst = max(worst, err)
        flag = "" if err <= grad_tol else "  FAIL"
        ok = ok and err <= grad_tol
        print("  %-16s |g| %.3e  relative norm of the difference %.2e%s"
              % (c_name, torch.linalg.norm(g).item(), err, flag))
    print("  worst gradient tensor: %.2e (tolerance %.0e)" % (worst, grad_tol))
    kind = (precision, "hard" if hard is not None else "soft")
    was = WORST.get(kind, (0.0, 0.0))
    WORST[kind] = (max(was[0], loss_err), max(was[1], worst))
    return ok


def in_precision(x, precision):
    """x as the build computes it: a double, or rounded to the nearest float."""
    return x if precision == "double" else struct.unpack("f", struct.pack("f", x))[0]


def check_masks(dump, shapes):
    """The reference's own view of what a dropout mask is, not the C pass's: inverted
    dropout keeps a value with probability 1 - p and scales it by 1 / (1 - p), so every
    entry is 0 or exactly 1 / (1 - p) in the build's precision, and the share of zeros is
    p, within 6 standard deviations of the binomial over the entries drawn. The
    decoder's rows past a sentence's end are padding (1, never drawn), and so are the
    self-attention weights' entries past a source's length (0). Without this, a wrong
    scale would be shared by both sides of the cross-check."""
    variant = dump["variant"]
    rates = {"mask_x": variant[4], "mask_y": variant[4], "mask_t": variant[5]}
    B = dump["batch"][0]
    ok, drawn, zeros, site_rates = True, {}, {}, {}
    for key, values in dump.items():
        if not (key in rates or key.split(".")[-1] in SA_MASKS):
            continue
        p = rates.get(key, variant[11])
        keep = in_precision(1.0 / (1.0 - p), dump["precision"])
        if key == "mask_y":  # (T, B, m): row (i, b) is drawn while tgt_out[i, b] is a word
            m = shapes["mask_y"][2]
            values = [v for k, v in enumerate(values) if dump["tgt_out"][k // m] != 0]
        if key.endswith("mask_p"):  # (B, H, S, S): within each sentence's length (0 past it)
            _, H, S, _ = shapes[key]
            values = [v for k, v in enumerate(values)
                      if k % S < dump["src_len"][k // (H * S * S)]
                      and k // S % S < dump["src_len"][k // (H * S * S)]]
        site = "self-attention" if key not in rates else key
        bad = [v for v in values if v != 0.0 and v != keep]
        if bad:
            print("  dropout mask %s: %d entries neither 0 nor 1/(1-%g) = %r, e.g. %r  FAIL"
                  % (key, len(bad), p, keep, bad[0]))
            ok = False
        drawn[site] = drawn.get(site, 0) + len(values)
        zeros[site] = zeros.get(site, 0) + sum(1 for v in values if v == 0.0)
        site_rates[site] = p
    for site, n in sorted(drawn.items()):
        p = site_rates[site]
        share = zeros[site] / n
        bound = 6 * (p * (1 - p) / n) ** 0.5 + 1.0 / n
        fine = abs(share - p) <= bound
        ok = ok and fine
        print("  dropout %s: %d entries, each 0 or 1/(1-p); %.4f of them 0 at p = %g (within "
              "%.4f: %s)" % (site, n, share, p, bound, "yes" if fine else "no  FAIL"))
    return ok


def check_paths(hard_rows, chosen, src_len, tgt_out, expected_prob):
    """Whether the C pass's choices are what the surrogate reads and the variant means
    to test: a real source position at every real step of each sentence that chose,
    none (-1) in the sentences that did not; at least one sentence that chose, and,
    when the expected context has a chance (0 < expected_prob < 1), one that did not.
    Also the words that say so."""
    choosing = (tgt_out != torch_reference.PAD) & hard_rows.unsqueeze(0)   # (T, B)
    picks = chosen[choosing]                                                # (steps, heads)
    inside = picks < src_len.expand_as(choosing)[choosing].unsqueeze(1)
    ok = bool(((picks >= 0) & inside).all()) and bool((chosen[:, ~hard_rows] == -1).all())
    chose = int(hard_rows.sum())
    mixed = chose > 0 and (chose < hard_rows.numel() or not 0 < expected_prob < 1)
    words = "%d of %d sentences chose positions (%d steps)%s%s" % (
        chose, hard_rows.numel(), picks.size(0), "" if ok else ", positions out of range",
        "" if mixed else ", not the mix the variant needs (pick another seed)")
    return ok and mixed, words


def tokenizer_texts():
    """The texts to tokenize both ways: every sacreBLEU fixture, and Tatoeba's valid and
    test files if they were fetched (corpora/tatoeba-eng-fra/, scripts/get-tatoeba.sh)."""
    root = os.path.join(HERE, "..")
    paths = sorted(glob.glob(os.path.join(root, "tests", "fixtures", "sacrebleu", "*", "*.txt")))
    paths = [p for p in paths if not p.endswith("expected.txt")]
    for name in ("valid.en", "valid.fr", "test.en", "test.fr"):
        path = os.path.join(root, "corpora", "tatoeba-eng-fra", name)
        if os.path.exists(path):
            paths.append(path)
    return paths


def check_tokenizer(s2s):
    ok = True
    for path in tokenizer_texts():
        with open(path, "rb") as f:
            data = f.read()
        lines = data.decode("utf-8").split("\n")
        if lines[-1] == "":
            lines.pop()
        name = os.path.relpath(path, os.path.join(HERE, ".."))
        for lowercase in (False, True):
            args = [s2s, "tokenize"] + (["--lowercase"] if lowercase else [])
            ours = subprocess.run(args, input=data, check=True,
                                  capture_output=True).stdout.decode("utf-8").split("\n")[:-1]
            theirs = [" ".join(torch_reference.tokenize(line, lowercase)) for line in lines]
            diff = [k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b]
            same = len(ours) == len(theirs) and not diff
            ok = ok and same
            print("tokenizer %s lowercase=%d: %d lines, %s" % (
                name, lowercase, len(lines), "identical to the reference's" if same else
                "FAIL: line %d: %r vs %r" % (diff[0] + 1, ours[diff[0]], theirs[diff[0]])
                if diff else "FAIL: %d lines vs %d" % (len(ours), len(theirs))))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", action="append", required=True,
                    help="a crosscheck_dump binary (float or double build); repeatable")
    ap.add_argument("--s2s", help="the s2s binary, to compare its tokenizer too")
    args = ap.parse_args()
    ok = True
    if args.s2s:
        ok = check_tokenizer(args.s2s)
    ok = check_layer_form() and ok
    for binary in args.dump:
        for size in SIZES:
            ok = check(binary, size) and ok
        for variant in VARIANTS:
            ok = check(binary, VARIANT_SIZE, variant) and ok
    for (precision, kind), (loss_err, grad_err) in sorted(WORST.items()):
        print("worst over the %s build's %s variants: loss %.2e, gradient tensor %.2e"
              % (precision, kind, loss_err, grad_err))
    print("CROSSCHECK %s" % ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
