#!/usr/bin/python3
"""Cross-check of the C model against the same model in PyTorch.

For each size, the C core (float build, then double build) writes its weights, a
padded batch, its loss and every gradient (tests/crosscheck/crosscheck_dump.c). This
script loads the weights into the reference PyTorch model of ../shared/bench/torch_ref.py
in float64, recomputes loss and gradients with autograd and compares. Then the same for
each model variant: the attention scores with torch_ref's own model, and other cells
(torch.nn.LSTM, RNN and their cells), deeper encoders, dropout (with the masks the C
pass drew) and label smoothing (torch's cross_entropy) with a subclass of it whose
forward pass is written out below. Tolerances:
  float build:  loss to 1e-5 relative, each gradient tensor to 1e-4 relative norm;
  double build: loss to 1e-14 relative, each gradient tensor to 1e-13 relative norm.
With --s2s, it also tokenizes the Tatoeba valid and test files (both languages, with
and without lowercasing) with `s2s tokenize` and with torch_ref's tokenize(), and
requires identical tokens, so that BLEU scores of the two trainers are comparable.
Exits 1 if any comparison fails.

usage: crosscheck.py --dump build/crosscheck_dump --dump build/crosscheck_dump_f64 --s2s ./s2s
"""
import argparse
import importlib.util
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("S2S_SHARED", os.path.join(HERE, "..", "..", "shared"))

# (V_x, V_y, m, n, p, a, l, B, seed): the gradient-check size, and one with every
# dimension different and larger batches.
SIZES = [
    (9, 8, 3, 4, 5, 5, 4, 3, 1),
    (50, 60, 16, 24, 32, 20, 28, 6, 2),
    (120, 90, 32, 48, 64, 40, 56, 16, 3),
]
TOLERANCES = {"float": (1e-5, 1e-4), "double": (1e-14, 1e-13)}

# The variants, each at one size where p = 2n (so dot is valid):
# (score, encoder cell, decoder cell, encoder layers, embedding dropout, readout dropout,
#  label smoothing).
VARIANT_SIZE = (50, 60, 16, 12, 24, 20, 28, 6, 4)
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
]

# C tensor name -> PyTorch parameter name in torch_ref.RNNSearch.
TORCH_NAMES = {
    "E_x": "emb_x.weight", "E_y": "emb_y.weight",
    "enc_fwd.W_i": "encoder.weight_ih_l0", "enc_fwd.W_h": "encoder.weight_hh_l0",
    "enc_fwd.b_i": "encoder.bias_ih_l0", "enc_fwd.b_h": "encoder.bias_hh_l0",
    "enc_bwd.W_i": "encoder.weight_ih_l0_reverse", "enc_bwd.W_h": "encoder.weight_hh_l0_reverse",
    "enc_bwd.b_i": "encoder.bias_ih_l0_reverse", "enc_bwd.b_h": "encoder.bias_hh_l0_reverse",
    "W_s": "init_s.weight", "b_s": "init_s.bias",
    "W_a": "W_a.weight", "U_a": "U_a.weight", "b_a": "U_a.bias", "v_a": "v_a.weight",
    "W_g": "W_g.weight", "W_q": "W_q.weight", "W_k": "W_k.weight",
    "dec.W_i": "decoder.weight_ih", "dec.W_h": "decoder.weight_hh",
    "dec.b_i": "decoder.bias_ih", "dec.b_h": "decoder.bias_hh",
    "W_t": "readout.weight", "b_t": "readout.bias",
    "W_o": "out.weight", "b_o": "out.bias",
}


def torch_name(c_name):
    """The torch parameter of a C tensor; encoder layers above the first are
    enc_fwd_l1.W_i -> encoder.weight_ih_l1 and so on."""
    if "_l" in c_name.split(".")[0]:
        side, layer = c_name.split(".")[0].split("_l")
        base = TORCH_NAMES[side + "." + c_name.split(".")[1]]
        return base.replace("_l0", "_l" + layer)
    return TORCH_NAMES[c_name]


def load_torch_ref():
    """Imports torch_ref.py as a module. It reads its options from sys.argv at import
    time, so it is given none."""
    path = os.path.join(SHARED, "bench", "torch_ref.py")
    saved = sys.argv
    sys.argv = [path]
    try:
        spec = importlib.util.spec_from_file_location("torch_ref", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.argv = saved
    return module


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
                         float(head[6]), float(head[7]))
        elif key in ("mask_x", "mask_y", "mask_t"):
            dump[key] = [float(x) for x in next(lines).split()]
        elif key in ("src", "src_len", "tgt_in", "tgt_out"):
            dump[key] = [int(x) for x in next(lines).split()]
        elif key in ("param", "grad"):
            name, rows, cols = head[1], int(head[2]), int(head[3])
            values = [float(x) for x in next(lines).split()]
            assert len(values) == rows * cols, name
            dump[key][name] = values
        elif key == "loss":
            dump["loss"] = float(head[1])
    return dump


def rel_norm(a, b, torch):
    return (torch.linalg.norm(a - b) / max(torch.linalg.norm(b).item(), 1e-300)).item()


def variant_model(torch_ref, dims, variant):
    """torch_ref's RNNSearch with variant's cells, encoder depth, dropout masks and label
    smoothing. Plain score variants (GRU, one layer, no dropout or smoothing) use
    torch_ref's model and forward pass unchanged."""
    torch = torch_ref.torch
    nn, F = torch.nn, torch.nn.functional
    score, enc_cell, dec_cell, layers, emb_drop, ro_drop, smoothing = variant
    vx, vy, m, n, p, a, l = dims
    if (enc_cell, dec_cell, layers, emb_drop, ro_drop, smoothing) == ("gru", "gru", 1, 0, 0, 0):
        model = torch_ref.RNNSearch(vx, vy, m, n, p, a, l, score)
        return model, lambda batch, masks: model(*batch)

    class Variant(torch_ref.RNNSearch):
        def __init__(self):
            super().__init__(vx, vy, m, n, p, a, l, score)
            recurrent = {"gru": nn.GRU, "lstm": nn.LSTM, "rnn": nn.RNN}[enc_cell]
            self.encoder = recurrent(m, n, num_layers=layers, bidirectional=True)
            self.decoder = {"gru": nn.GRUCell, "lstm": nn.LSTMCell, "rnn": nn.RNNCell}[dec_cell](
                m + 2 * n, p)

        def loss(self, src, src_len, tgt_in, tgt_out, masks):
            """MODEL.md's forward pass; an LSTM decoder starts from cell state 0."""
            S, B = src.shape
            src_mask = torch.arange(S).unsqueeze(1) < src_len.unsqueeze(0)
            ex = self.emb_x(src)
            if "mask_x" in masks:                  # embedding dropout, the C pass's masks
                ex = ex * masks["mask_x"]
            packed = torch_ref.pack_padded_sequence(ex, src_len, enforce_sorted=False)
            out, _ = self.encoder(packed)
            H, _ = torch_ref.pad_packed_sequence(out, total_length=S)
            s = torch.tanh(self.init_s(H[0, :, n:]))
            cell = torch.zeros_like(s)
            keys, c_fixed = self.source_side(H, src_len)
            ey = self.emb_y(tgt_in)
            if "mask_y" in masks:
                ey = ey * masks["mask_y"]
            states, contexts = [], []
            for i in range(tgt_in.size(0)):
                c = c_fixed if score == "none" else self.attention(s, H, keys, src_mask)[0]
                x = torch.cat([ey[i], c], dim=1)
                if dec_cell == "lstm":
                    s, cell = self.decoder(x, (s, cell))
                else:
                    s = self.decoder(x, s)
                states.append(s)
                contexts.append(c)
            real = tgt_out != torch_ref.PAD
            t = torch.tanh(self.readout(torch.cat([torch.stack(states)[real],
                                                   torch.stack(contexts)[real], ey[real]], dim=1)))
            if "mask_t" in masks:
                t = t * masks["mask_t"]
            return F.cross_entropy(self.out(t), tgt_out[real], label_smoothing=smoothing)

    model = Variant()
    return model, lambda batch, masks: model.loss(*batch, masks)


def check(dump_binary, size, torch_ref, variant=None):
    torch = torch_ref.torch
    args = [str(x) for x in size] + ([str(x) for x in variant] if variant else [])
    text = subprocess.run([dump_binary] + args, check=True, capture_output=True, text=True).stdout
    dump = parse_dump(text)
    vx, vy, m, n, p, a, l = dump["dims"]
    B, S, T = dump["batch"]
    variant = dump["variant"]
    model, loss_of = variant_model(torch_ref, dump["dims"], variant)
    model = model.double()
    params = dict(model.named_parameters())
    names = {c_name: torch_name(c_name) for c_name in dump["param"]}
    assert set(params) == set(names.values()), "unmapped torch parameters: %s" % sorted(
        set(params) ^ set(names.values()))
    with torch.no_grad():
        for c_name, values in dump["param"].items():
            w = params[names[c_name]]
            w.copy_(torch.tensor(values, dtype=torch.float64).view_as(w))
    src = torch.tensor(dump["src"]).view(S, B)
    src_len = torch.tensor(dump["src_len"])
    tgt_in = torch.tensor(dump["tgt_in"]).view(T, B)
    tgt_out = torch.tensor(dump["tgt_out"]).view(T, B)
    shapes = {"mask_x": (S, B, m), "mask_y": (T, B, m), "mask_t": (-1, l)}
    masks = {k: torch.tensor(dump[k], dtype=torch.float64).view(*shapes[k])
             for k in shapes if k in dump}
    loss = loss_of((src, src_len, tgt_in, tgt_out), masks)
    loss.backward()

    precision = dump["precision"]
    loss_tol, grad_tol = TOLERANCES[precision]
    loss_err = abs(dump["loss"] - loss.item()) / abs(loss.item())
    ok = loss_err <= loss_tol
    print("crosscheck %s build, %s attention, %s encoder x%d, %s decoder, dropout %g/%g, "
          "smoothing %g, V_x=%d V_y=%d m=%d n=%d p=%d a=%d l=%d B=%d (S=%d T=%d): "
          "loss C %.10f torch %.10f, relative error %.2e%s"
          % ((precision, variant[0], variant[1], variant[3], variant[2]) + variant[4:] +
             (vx, vy, m, n, p, a, l, B, S, T, dump["loss"], loss.item(), loss_err,
              "" if loss_err <= loss_tol else "  FAIL")))
    worst = 0.0
    for c_name, values in dump["grad"].items():
        w = params[names[c_name]]
        g_c = torch.tensor(values, dtype=torch.float64).view_as(w)
        err = rel_norm(g_c, w.grad, torch)
        worst = max(worst, err)
        flag = "" if err <= grad_tol else "  FAIL"
        ok = ok and err <= grad_tol
        print("  %-16s |g| %.3e  relative norm of the difference %.2e%s"
              % (c_name, torch.linalg.norm(w.grad).item(), err, flag))
    print("  worst gradient tensor: %.2e (tolerance %.0e)" % (worst, grad_tol))
    return ok


def check_tokenizer(s2s, torch_ref):
    corpus = os.path.join(SHARED, "corpora", "tatoeba-eng-fra")
    ok = True
    for name in ("valid.en", "valid.fr", "test.en", "test.fr"):
        path = os.path.join(corpus, name)
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")[:-1]
        for lowercase in (False, True):
            args = [s2s, "tokenize"] + (["--lowercase"] if lowercase else [])
            with open(path, "rb") as f:
                ours = subprocess.run(args, stdin=f, check=True, capture_output=True,
                                      text=True).stdout.split("\n")[:-1]
            theirs = [" ".join(torch_ref.tokenize(line, lowercase)) for line in lines]
            diff = [k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b]
            same = len(ours) == len(theirs) and not diff
            ok = ok and same
            print("tokenizer %-8s lowercase=%d: %d lines, %s" % (
                name, lowercase, len(lines), "identical to torch_ref" if same else
                "FAIL: line %d: %r vs %r" % (diff[0] + 1, ours[diff[0]], theirs[diff[0]])
                if diff else "FAIL: %d lines vs %d" % (len(ours), len(theirs))))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", action="append", required=True,
                    help="a crosscheck_dump binary (float or double build); repeatable")
    ap.add_argument("--s2s", help="the s2s binary, to compare its tokenizer too")
    args = ap.parse_args()
    torch_ref = load_torch_ref()
    ok = True
    if args.s2s:
        ok = check_tokenizer(args.s2s, torch_ref)
    for binary in args.dump:
        for size in SIZES:
            ok = check(binary, size, torch_ref) and ok
        for variant in VARIANTS:
            ok = check(binary, VARIANT_SIZE, torch_ref, variant) and ok
    print("CROSSCHECK %s" % ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
