#!/usr/bin/python3
"""torch_reference.py: the s2s model written in PyTorch, from src/model/MODEL.md.

Three users:
  - scripts/crosscheck.py imports it: the C pass's weights are loaded into Seq2Seq in
    float64 and autograd recomputes the loss and every gradient;
  - scripts/bench.py runs it as the speed baseline: what a user would train instead
    (torch.nn's GRU/LSTM/RNN over packed sequences, Adam), timed on the same synthetic
    batches as `s2s bench`;
  - `train` trains an s2s config's model on its real data and decodes with s2s's beam
    search, so that s2s and PyTorch compare translation for translation at the same
    wall-clock budget (scripts/tatoeba-experiment.sh); `beamcheck` shows, on an s2s
    checkpoint's own weights, that the beam search is s2s's.

  torch_reference.py bench --size S --batch 32 --steps 100 --warmup 10 [--seed 1] [--json]
  torch_reference.py train CONFIG.yaml [--set KEY=VALUE]... --s2s ./s2s --out DIR [--threads 2]
      # trains what `s2s train CONFIG.yaml` trains, validates as it does, and translates
      # the test sources with s2s's beam search: DIR/test.hyp, DIR/train.log, a RESULT line
  torch_reference.py beamcheck CKPT SRC [--beam K] [--alpha A] [--limit N] [--s2s ./s2s]
      # an s2s checkpoint's weights, decoded by this beam search (and compared with s2s's)
  torch_reference.py tokenize [--lowercase] < text       # the word tokenizer, one line a line
  torch_reference.py selfcheck                           # autograd vs finite differences

The model's parameters are torch.nn modules; c_tensors() names each by the C tensor it
holds (E_x, enc_fwd.W_i, ..., b_o), so weights move between the two by name.
Only dependencies: Debian's python3-torch (PyTorch 1.13), and for train and beamcheck
python3-yaml (s2s's configs).
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
elif __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "beamcheck":
    # a check, not a race: one thread, whatever else runs
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402
import unicodedata  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence  # noqa: E402

# s2s's special token ids (src/model/batch.h), the same on both sides.
PAD, UNK, BOS, EOS = 0, 1, 2, 3

SCORES = ("additive", "dot", "general", "scaled_dot", "none")
CELLS = {"gru": (nn.GRU, nn.GRUCell), "lstm": (nn.LSTM, nn.LSTMCell), "rnn": (nn.RNN, nn.RNNCell)}
# The bidirectional recurrent encoder, the attention-only one and the image encoder
# (EncoderKind's order).
ENCODERS = ("birnn", "attn", "image")


def self_attention_layer(layer, x, padding, masks):
    """What torch.nn.TransformerEncoderLayer `layer` (post-LN, relu) computes on x (S, B, d)
    with src_key_padding_mask `padding` (B, S), written out so that dropout can use
    given masks: mask_p (B, H, S, S) on the weights, mask_a (S, B, d) on the
    attention's output, mask_r (S, B, F) on the feed-forward's inner layer, mask_o
    (S, B, d) on its output. crosscheck.py checks it against the module itself."""
    S, B, d = x.shape
    H = layer.self_attn.num_heads
    attn = layer.self_attn
    q, k, v = F.linear(x, attn.in_proj_weight, attn.in_proj_bias).chunk(3, dim=-1)

    def by_head(t):                                    # (S, B, d) -> (B, H, S, d / H)
        return t.reshape(S, B, H, d // H).permute(1, 2, 0, 3)
    e = by_head(q) @ by_head(k).transpose(2, 3) / (d // H) ** 0.5
    p = torch.softmax(e.masked_fill(padding[:, None, None, :], float("-inf")), dim=-1)
    z = (p * masks["mask_p"]) @ by_head(v)              # (B, H, S, d / H)
    z = z.permute(2, 0, 1, 3).reshape(S, B, d)
    y = layer.norm1(x + attn.out_proj(z) * masks["mask_a"])
    u = torch.relu(layer.linear1(y)) * masks["mask_r"]
    return layer.norm2(y + layer.linear2(u) * masks["mask_o"])


class Seq2Seq(nn.Module):
    """RNNsearch and its variants (src/model/MODEL.md): a bidirectional recurrent encoder
    (`encoder` "birnn") of `enc_layers` layers, optionally `sa_layers` self-attention
    layers on top (torch.nn.TransformerEncoderLayer, `sa_heads` heads, feed-forward width
    `sa_ffn`, 0 for 4 d_h), s_0 = tanh(W_s bwd_h_1 + b_s) from the recurrent encoder, one
    of five attention scores with `heads` heads, a recurrent decoder on [ey_{i-1} ; c_i],
    the readout tanh(W_t [s_i ; c_i ; ey_{i-1}] + b_t) and the output layer; or `encoder`
    "attn", the attention-only encoder; or "image", the image encoder (torch.nn.Conv2d,
    ReLU and MaxPool2d blocks of `conv_channels` channels over pictures of `image_size`
    pixels, the grid of cells read row by row, learned `grid_positions`; s_0, an LSTM's
    c_0 and score none's context from the mean annotation, as for "attn"). Optionally
    `context_gate`, the gate beta_i on the context, for any encoder; `tie_output`, W_o
    the very parameter E_y (l = m; the model then has no W_o of its own). Sizes as in
    MODEL.md: vx, vy, m, n, p, a, l. The keywords are crosscheck_dump's settings, named
    alike."""

    def __init__(self, vx, vy, m, n, p, a, l, score="additive", enc_cell="gru",
                 dec_cell="gru", enc_layers=1, heads=1, sa_layers=0, sa_heads=4, sa_ffn=0,
                 encoder="birnn", image_size=8, conv_channels=(3, 4), grid_positions=1,
                 context_gate=0, tie_output=0):
        super().__init__()
        assert score in SCORES and encoder in ENCODERS and enc_cell in CELLS and dec_cell in CELLS
        self.n, self.score, self.dec_cell, self.heads = n, score, dec_cell, heads
        self.attention_only = encoder == "attn"
        self.image = encoder == "image"
        # s_0 (and an LSTM's c_0) from the mean annotation, which is score none's context
        self.from_mean = self.attention_only or self.image
        self.E_x = nn.Embedding(vx, m)                # an image model's is never read
        self.E_y = nn.Embedding(vy, m)
        self.convs, self.grid_P = nn.ModuleList(), None
        if self.image:
            # conv blocks over (B, 3, N, N), torch's NCHW; a G x G grid of d_h = C_L cells
            channels = (3,) + tuple(conv_channels)
            assert image_size % 2 ** len(conv_channels) == 0
            self.convs.extend(nn.Conv2d(c_in, c_out, 3, stride=1, padding=1)
                              for c_in, c_out in zip(channels, channels[1:]))
            self.pool = nn.MaxPool2d(2, 2)
            self.encoder = None
            d_h = channels[-1]
            G = image_size // 2 ** len(conv_channels)
            if grid_positions:
                self.grid_P = nn.Parameter(torch.zeros(G * G, d_h))
            self.W_s = nn.Linear(d_h, p)
            self.W_c = nn.Linear(d_h, p) if dec_cell == "lstm" else None
        elif self.attention_only:
            # positions and self-attention layers only; s_0 (and an LSTM's c_0) from the
            # mean of the annotations (MODEL.md, "Attention-only encoder")
            assert sa_layers >= 1 and m % 2 == 0
            self.encoder = None
            d_h = m
            self.W_s = nn.Linear(m, p)
            self.W_c = nn.Linear(m, p) if dec_cell == "lstm" else None
        else:
            self.encoder = CELLS[enc_cell][0](m, n, num_layers=enc_layers, bidirectional=True)
            self.W_s = nn.Linear(n, p)
            self.W_c = None
            d_h = 2 * n
        self.self_attention = nn.ModuleList(
            nn.TransformerEncoderLayer(d_h, sa_heads, sa_ffn or 4 * d_h, dropout=0.0)
            for _ in range(sa_layers))
        if score == "additive":
            self.W_a = nn.Linear(p, a, bias=False)
            self.U_a = nn.Linear(d_h, a)              # its bias is b_a
            self.v_a = nn.Parameter(torch.zeros(a))
        elif score == "general":
            self.W_g = nn.Linear(d_h, p, bias=False)
        elif score == "scaled_dot":
            self.W_q = nn.Linear(p, a, bias=False)
            self.W_k = nn.Linear(d_h, a, bias=False)
        elif score == "dot":
            assert p == d_h, "the dot score needs p = 2n"
        # beta_i = sigmoid(w_beta . s_{i-1} + b_beta): w_beta (1, p) is its weight
        self.gate = nn.Linear(p, 1) if context_gate else None
        self.decoder = CELLS[dec_cell][1](m + d_h, p)
        self.W_t = nn.Linear(p + d_h + m, l)
        self.W_o = nn.Linear(l, vy)
        self.tied = bool(tie_output)
        if self.tied:                                 # one parameter, read twice
            assert l == m, "tie_output needs l = m"
            self.W_o.weight = self.E_y.weight

    def c_tensors(self):
        """{C tensor name: parameter}, for every parameter of this variant (a view of one
        where a C tensor is part of a torch parameter: sa1.W_Q is the first third of
        in_proj_weight)."""
        return self._c_names(lambda w: w)

    def c_grads(self):
        """{C tensor name: its gradient}, named as c_tensors() names the weights (0 for
        one the loss never read: an image model's E_x)."""
        return self._c_names(lambda w: torch.zeros_like(w) if w.grad is None else w.grad)

    def _c_names(self, of):
        names = {"E_x": self.E_x.weight, "E_y": self.E_y.weight,
                 "W_s": self.W_s.weight, "b_s": self.W_s.bias,
                 "dec.W_i": self.decoder.weight_ih, "dec.W_h": self.decoder.weight_hh,
                 "dec.b_i": self.decoder.bias_ih, "dec.b_h": self.decoder.bias_hh,
                 "W_t": self.W_t.weight, "b_t": self.W_t.bias,
                 "W_o": self.W_o.weight, "b_o": self.W_o.bias}
        if self.tied:                                 # s2s has no W_o: it is E_y
            del names["W_o"]
        if self.W_c is not None:
            names.update({"W_c": self.W_c.weight, "b_c": self.W_c.bias})
        if self.grid_P is not None:
            names["grid_P"] = self.grid_P
        if self.gate is not None:
            names.update({"w_beta": self.gate.weight, "b_beta": self.gate.bias})
        for layer in range(self.encoder.num_layers if self.encoder else 0):
            suffix = "_l%d" % layer if layer else ""
            for side, torch_side in (("fwd", ""), ("bwd", "_reverse")):
                for c_part, torch_part in (("W_i", "weight_ih"), ("W_h", "weight_hh"),
                                           ("b_i", "bias_ih"), ("b_h", "bias_hh")):
                    names["enc_%s%s.%s" % (side, suffix, c_part)] = getattr(
                        self.encoder, "%s_l%d%s" % (torch_part, layer, torch_side))
        if self.score == "additive":
            names.update({"W_a": self.W_a.weight, "U_a": self.U_a.weight, "b_a": self.U_a.bias,
                          "v_a": self.v_a})
        elif self.score == "general":
            names["W_g"] = self.W_g.weight
        elif self.score == "scaled_dot":
            names.update({"W_q": self.W_q.weight, "W_k": self.W_k.weight})
        assert len(names) == len(list(self.parameters())) - 12 * len(self.self_attention) \
            - 2 * len(self.convs)
        names = {name: of(w) for name, w in names.items()}
        for k, conv in enumerate(self.convs):
            # torch's (C_out, C_in, 3, 3) is s2s's (C_out, 9 C_in), column c * 9 + ky * 3 + kx
            names["conv%d.W" % (k + 1)] = of(conv.weight).flatten(1)
            names["conv%d.b" % (k + 1)] = of(conv.bias)
        for k, layer in enumerate(self.self_attention):
            at = "sa%d." % (k + 1)
            for part, w in zip(("Q", "K", "V"), of(layer.self_attn.in_proj_weight).chunk(3)):
                names[at + "W_" + part] = w
            for part, b in zip(("Q", "K", "V"), of(layer.self_attn.in_proj_bias).chunk(3)):
                names[at + "b_" + part] = b
            for c_part, w in (("W_O", layer.self_attn.out_proj.weight),
                              ("b_O", layer.self_attn.out_proj.bias),
                              ("W_1", layer.linear1.weight), ("b_1", layer.linear1.bias),
                              ("W_2", layer.linear2.weight), ("b_2", layer.linear2.bias),
                              ("gamma_1", layer.norm1.weight), ("beta_1", layer.norm1.bias),
                              ("gamma_2", layer.norm2.weight), ("beta_2", layer.norm2.bias)):
                names[at + c_part] = of(w)
        return names

    def init_uniform(self, scale=0.1):
        """MODEL.md's initialisation in distribution (not in values: s2s draws from
        PCG32): weights uniform in [-scale, scale], biases 0, layer norms' gains 1."""
        with torch.no_grad():
            for name, w in self.c_tensors().items():
                part = name.split(".")[-1]
                if part.startswith("b_") or part.startswith("beta_") or part == "b":
                    w.zero_()
                elif part.startswith("gamma_"):
                    w.fill_(1)
                else:
                    w.uniform_(-scale, scale)

    def encode(self, src, src_len, masks, pixels=None):
        """src (S, B), src_len (B) -> the recurrent encoder's output (S, B, 2n), 0 at
        padding, and the annotations H: that output through the self-attention layers
        (torch's own modules, or with given dropout masks their written-out form).
        An image model reads pixels (B, N, N, 3) instead (see grid_cells)."""
        if self.image:
            top = self.grid_cells(pixels)
            return top, self.self_attend(top, src_len, masks)
        ex = self.E_x(src)
        if "mask_x" in masks:                          # embedding dropout
            ex = ex * masks["mask_x"]
        if self.attention_only:                        # X = sqrt(m) ex + PE
            pe = positions(src.size(0), ex.size(2)).to(ex.dtype)
            top = ex * ex.size(2) ** 0.5 + pe.unsqueeze(1)
        else:
            packed = pack_padded_sequence(ex, src_len, enforce_sorted=False)
            top, _ = pad_packed_sequence(self.encoder(packed)[0], total_length=src.size(0))
        return top, self.self_attend(top, src_len, masks)

    def grid_cells(self, pixels):
        """The image encoder (MODEL.md, "Image encoder") up to the self-attention layers:
        pixels (B, N, N, 3), channels last as s2s holds them, through the conv blocks
        maxpool(relu(conv(X))) in torch's NCHW, then the last block's G x G grid read row
        by row -- cell j = r G + c -- with its learned position: (S = G^2, B, d_h)."""
        # (B, 3, N, N), made contiguous: the permuted view has channels-last strides,
        # which would send conv and pooling down torch's channels-last kernels
        x = pixels.permute(0, 3, 1, 2).contiguous()
        for conv in self.convs:
            x = self.pool(F.relu(conv(x)))
        B, d_h, G, _ = x.shape
        cells = x.permute(2, 3, 0, 1).reshape(G * G, B, d_h)   # [r, c, b] -> [r G + c, b]
        return cells if self.grid_P is None else cells + self.grid_P.unsqueeze(1)

    def self_attend(self, top, src_len, masks):
        """The self-attention layers (none: top itself) on top (S, B, d_h)."""
        padding = torch.arange(top.size(0)).unsqueeze(0) >= src_len.unsqueeze(1)  # (B, S)
        H = top
        for k, layer in enumerate(self.self_attention):
            at = "sa%d." % (k + 1)
            if at + "mask_p" in masks:
                H = self_attention_layer(layer, H, padding,
                                         {m: masks[at + m] for m in ("mask_p", "mask_a",
                                                                     "mask_r", "mask_o")})
            else:
                H = layer(H, src_key_padding_mask=padding)
        return H

    def scores(self, s_prev, H, keys):
        """e (heads, S, B) of one decoder step: s_prev (B, p), keys from source_keys().
        Head k scores slice k of each vector it reads (MODEL.md, "Multi-head attention")."""
        def split(x):                                  # (..., w) -> (heads, ..., w / heads)
            return torch.stack(x.chunk(self.heads, dim=-1))
        if self.score == "additive":
            return (split(torch.tanh(keys + self.W_a(s_prev))) * split(self.v_a)[:, None, None]).sum(3)
        if self.score == "dot":
            return (split(H) * split(s_prev)[:, None]).sum(3)
        if self.score == "general":
            return (split(keys) * split(s_prev)[:, None]).sum(3)
        q = self.W_q(s_prev)                           # scaled_dot
        return (split(keys) * split(q)[:, None]).sum(3) / (keys.size(2) / self.heads) ** 0.5

    def attend(self, e, H, real_src):
        """The heads' weights (heads, S, B) and the context [c^1 ; ... ; c^H] (B, 2n)."""
        alpha = torch.softmax(e.masked_fill(~real_src, float("-inf")), dim=1)
        values = torch.stack(H.chunk(self.heads, dim=2))            # (heads, S, B, 2n / heads)
        return alpha, torch.cat(list((alpha.unsqueeze(3) * values).sum(1)), dim=1)

    def choose(self, alpha, c, H, real_src, chosen, choosing):
        """Hard attention's step (MODEL.md, "Hard attention") on the rows where choosing
        (B) is true: head k's slice of the context is the annotation slice h_j[k] at its
        given position j = chosen[b, k] (chosen (B, heads)) instead of the expected one in
        c (B, 2n). Also returns, per row, sum_k log alpha^k at its position and the
        heads' summed entropy (each 0 where the row does not choose). The rows that do not
        choose keep c as it is, bit for bit."""
        head = torch.arange(self.heads).unsqueeze(1)
        row = torch.arange(real_src.size(1)).unsqueeze(0)
        # (heads, B); rows without a position (-1) read position 0, always real (</s> at
        # least), so that their discarded log alpha is finite: a NaN or an infinity there
        # would reach the gradient through where's other branch as 0 * inf
        j = chosen.clamp(min=0).T
        values = torch.stack(H.chunk(self.heads, dim=2))            # (heads, S, B, 2n / heads)
        picked = torch.cat(list(values[head, j, row]), dim=1)      # (B, 2n)
        c = torch.where(choosing.unsqueeze(1), picked, c)
        log_path = torch.log(alpha[head, j, row]).sum(0)
        # log alpha where alpha is 0 (padding) would be -inf, and 0 * -inf a NaN in both
        # directions; the padding's terms are 0, as MODEL.md's sum over real positions
        log_alpha = torch.log(torch.where(real_src, alpha, torch.ones_like(alpha)))
        entropy = -(alpha * log_alpha).sum(dim=(0, 1))
        zero = torch.zeros_like(log_path)
        return c, torch.where(choosing, log_path, zero), torch.where(choosing, entropy, zero)

    def initial_state(self, top, H, src_len):
        """s_0 and an LSTM decoder's c_0 (0 for the recurrent encoder), (B, p) each."""
        if self.from_mean:                             # the mean annotation
            init = real_mean(H, src_len)
            s = torch.tanh(self.W_s(init))
            cell = torch.tanh(self.W_c(init)) if self.W_c is not None else torch.zeros_like(s)
        else:
            s = torch.tanh(self.W_s(top[0, :, self.n:]))   # from bwd_h_1
            cell = torch.zeros_like(s)
        return s, cell

    def greedy(self, src, src_len, max_out):
        """s2s's greedy decoding (decode_greedy, s2s translate --beam 1) of a source
        batch with soft contexts: at each step the most probable word other than <pad>
        and <s> (the first of equal ones); sentence b stops at </s> or after max_out[b]
        words. Every sentence of the batch steps until the last stops. Returns the
        words of each (without </s>)."""
        with torch.no_grad():
            H, keys, fixed, real_src, s, cell = self.prepare_decoding(src, src_len)
            B = src.size(1)
            prev = torch.full((B,), BOS, dtype=torch.long)
            out, live = [[] for _ in range(B)], [max_out[b] > 0 for b in range(B)]
            while any(live):
                logits, s, cell = self.step(prev, s, cell, H, keys, fixed, real_src)
                logits[:, PAD] = float("-inf")
                logits[:, BOS] = float("-inf")
                prev = logits.argmax(dim=1)
                for b, y in enumerate(prev.tolist()):
                    if live[b]:
                        if y == EOS:
                            live[b] = False
                        else:
                            out[b].append(y)
                            live[b] = len(out[b]) < max_out[b]
            return out

    def prepare_decoding(self, src, src_len):
        """What step() reads of a padded source batch: the annotations, the keys, score
        none's context, the real positions, and s_0 (and c_0)."""
        real_src = torch.arange(src.size(0)).unsqueeze(1) < src_len.unsqueeze(0)
        top, H = self.encode(src, src_len, {})
        s, cell = self.initial_state(top, H, src_len)
        keys = self.source_keys(H)
        fixed = (self.fixed_context(H if self.from_mean else top, src_len)
                 if self.score == "none" else None)
        return H, keys, fixed, real_src, s, cell

    def step(self, prev, s, cell, H, keys, fixed, real_src):
        """One decoding step of soft attention for a batch of rows (sentences, or beam
        hypotheses): from y_{i-1} = prev (B), s_{i-1} and an LSTM's cell state (B, p),
        over the annotations H (S, B, d_h), their keys (source_keys), score none's fixed
        context (else None) and the real positions real_src (S, B), to the logits o_i
        (B, V_y), s_i and the cell state. What a teacher-forced step of loss() computes."""
        ey = self.E_y(prev)
        c = fixed if fixed is not None else self.attend(self.scores(s, H, keys), H, real_src)[1]
        if self.gate is not None:
            c = torch.sigmoid(self.gate(s)) * c
        x = torch.cat([ey, c], dim=1)
        if self.dec_cell == "lstm":
            s, cell = self.decoder(x, (s, cell))
        else:
            s = self.decoder(x, s)
        t = torch.tanh(self.W_t(torch.cat([s, c, ey], dim=1)))
        return self.W_o(t), s, cell

    def source_keys(self, H):
        """The part of the score that depends on h_j only: once per batch."""
        return {"additive": lambda: self.U_a(H), "general": lambda: self.W_g(H),
                "scaled_dot": lambda: self.W_k(H)}.get(self.score, lambda: None)()

    def fixed_context(self, H, src_len):
        """Score none: [fwd_h at the last real position ; bwd_h at the first] (B, 2n);
        for the attention-only and the image encoder, the mean of H over the real
        positions (an image's: every cell)."""
        if self.from_mean:
            return real_mean(H, src_len)
        last = H[src_len - 1, torch.arange(H.size(1)), :self.n]
        return torch.cat([last, H[0, :, self.n:]], dim=1)

    def loss(self, src, src_len, tgt_in, tgt_out, masks=None, smoothing=0.0, hard=None,
             pixels=None, doubly_stochastic=0.0, supervision=0.0, ground=None):
        """Token-mean cross-entropy over the real target tokens (label-smoothed as
        torch's cross_entropy does it). masks: dropout's masks (draw_training_masks), mask_x
        (S, B, m), mask_y (T, B, m), mask_t (N, l) and the self-attention layers' (see
        encode), each optional. hard: a HardPass, for hard attention's surrogate J on
        the positions it gives instead. pixels: an image model's pictures (B, N, N, 3);
        src then holds a token per cell, src_len S for each. doubly_stochastic: lambda of
        the doubly stochastic term (see doubly_stochastic_term), added to either;
        supervision: lambda of attention supervision on the word cells ground (T, B, S)
        (see attention_supervision_term), added likewise."""
        masks = masks or {}
        real = tgt_out != PAD                          # the loss's positions, (T, B)
        if hard is not None:
            assert self.score != "none", "hard attention chooses by the weights"
            choosing = real & hard.rows.unsqueeze(0)   # (T, B): the steps that choose
            log_paths, entropies = [], []
        S = src.size(0)
        real_src = torch.arange(S).unsqueeze(1) < src_len.unsqueeze(0)   # (S, B)
        top, H = self.encode(src, src_len, masks, pixels)
        s, cell = self.initial_state(top, H, src_len)
        keys = self.source_keys(H)
        fixed = (self.fixed_context(H if self.from_mean else top, src_len)
                 if self.score == "none" else None)
        ey = self.E_y(tgt_in)
        if "mask_y" in masks:
            ey = ey * masks["mask_y"]
        states, contexts, alignments = [], [], []
        for i in range(tgt_in.size(0)):
            if fixed is not None:
                c = fixed
            else:
                alpha, c = self.attend(self.scores(s, H, keys), H, real_src)
                alignments.append(alpha.mean(0))       # the heads' mean, (S, B)
                if hard is not None:
                    c, log_path, entropy = self.choose(alpha, c, H, real_src, hard.chosen[i],
                                                       choosing[i])
                    log_paths.append(log_path)
                    entropies.append(entropy)
            if self.gate is not None:                  # beta_i c_i, beta_i from s_{i-1}
                c = torch.sigmoid(self.gate(s)) * c
            x = torch.cat([ey[i], c], dim=1)
            if self.dec_cell == "lstm":
                s, cell = self.decoder(x, (s, cell))
            else:
                s = self.decoder(x, s)
            states.append(s)
            contexts.append(c)
        ro_in = torch.cat([torch.stack(states)[real], torch.stack(contexts)[real], ey[real]], 1)
        t = torch.tanh(self.W_t(ro_in))
        if "mask_t" in masks:
            t = t * masks["mask_t"]
        if hard is None:
            objective = F.cross_entropy(self.W_o(t), tgt_out[real], label_smoothing=smoothing)
        else:
            objective = hard.surrogate(self.W_o(t), tgt_out, real, torch.stack(log_paths),
                                       torch.stack(entropies), smoothing)
        if doubly_stochastic:
            assert alignments, "the doubly stochastic term sums attention weights"
            objective = objective + doubly_stochastic * doubly_stochastic_term(
                torch.stack(alignments), real, real_src)
        if supervision:
            assert alignments, "attention supervision reads the attention weights"
            objective = objective + supervision * attention_supervision_term(
                torch.stack(alignments), ground, real)
        return objective


def attention_supervision_term(alpha, ground, real):
    """Attention supervision without its lambda (MODEL.md, "Image encoder"; Liu et al.
    2017): (1/N) sum over the words (i, b) with a cell in ground (T, B, S, 0 or 1) of
    -log of alpha's weight on those cells (alpha (T, S, B), the heads' mean; at least
    1e-30), N the real target positions (real (T, B))."""
    cells = ground.permute(0, 2, 1).to(alpha.dtype)                   # (T, S, B)
    mass = (alpha * cells).sum(1).clamp_min(1e-30)                     # (T, B)
    named = (cells.sum(1) > 0) & real
    return -torch.log(mass[named]).sum() / real.sum()


def doubly_stochastic_term(alpha, real, real_src):
    """Xu et al.'s doubly stochastic penalty without its lambda (MODEL.md, "Image
    encoder"): (1/B) sum over the captions b of sum over b's real source positions j of
    (1 - A_jb)^2, where A_jb sums alpha (T, S, B), the heads' mean, over b's real target
    steps (real (T, B), </s> included). real_src (S, B): the real source positions."""
    A = (alpha * real.unsqueeze(1).to(alpha.dtype)).sum(0)             # (S, B)
    gap = torch.where(real_src, 1 - A, torch.zeros_like(A))
    return (gap ** 2).sum() / alpha.size(2)


class HardPass:
    """What a hard pass needs besides the weights and the batch: which sentences chose
    positions, rows (B, bool); each head's position, chosen (T, B, heads), read only
    where a sentence that chose has a real target step; and the surrogate's settings
    (MODEL.md, "Hard attention"): lambda_r, lambda_e, the reward (sentence, or token),
    the baselines b and b_tok."""

    def __init__(self, rows, chosen, reinforce_weight, entropy_weight, token_reward,
                 baseline, token_baseline):
        self.rows, self.chosen = rows, chosen
        self.reinforce_weight, self.entropy_weight = reinforce_weight, entropy_weight
        self.token_reward = token_reward
        self.baseline, self.token_baseline = baseline, token_baseline

    def surrogate(self, logits, tgt_out, real, log_path, entropy, smoothing):
        """J = (1/N) sum_s [ CE_s - lambda_r A_s log p(path_s) - lambda_e H_s ] from the
        logits (N, V) of the real positions real (T, B) in (step, sentence) order, each
        step's log p(path) and entropy (T, B) (0 where no position was chosen). CE_s is
        label-smoothed as trained; the rewards are the unsmoothed log p(y_i), and the
        advantages (R_s - b, or r_i = log p(y_i) - b_tok per token) are constants."""
        y = tgt_out[real]
        ce = F.cross_entropy(logits, y, label_smoothing=smoothing, reduction="sum")
        log_p = torch.zeros(real.shape, dtype=logits.dtype)
        log_p[real] = -F.cross_entropy(logits.detach(), y, reduction="none")
        if self.token_reward:
            advantage = log_p - self.token_baseline
        else:
            advantage = (log_p.sum(0) - self.baseline).expand_as(log_p)
        # log_path is 0 off the choosing steps: the advantage counts only where it is not
        reinforce = (advantage * log_path).sum()
        penalty = self.reinforce_weight * reinforce + self.entropy_weight * entropy.sum()
        return (ce - penalty) / y.numel()


def positions(S, m):
    """The sinusoidal positions (S, m) of Vaswani et al.: PE[j, 2t] = sin(j / 10000^(2t/m)),
    PE[j, 2t+1] = cos(the same), in float64."""
    j = torch.arange(S, dtype=torch.float64).unsqueeze(1)
    rate = 10000.0 ** (torch.arange(0, m, 2, dtype=torch.float64) / m)
    pe = torch.zeros(S, m, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(j / rate)
    pe[:, 1::2] = torch.cos(j / rate)
    return pe


def real_mean(H, src_len):
    """The mean of H (S, B, w) over each sentence's real positions: (B, w)."""
    real = (torch.arange(H.size(0)).unsqueeze(1) < src_len.unsqueeze(0)).to(H.dtype)
    return (H * real.unsqueeze(2)).sum(0) / src_len.to(H.dtype).unsqueeze(1)


def pad_batch(pairs):
    """Sentence pairs of ids (without </s>) -> (src, src_len, tgt_in, tgt_out), time-major,
    as s2s's batches: source + </s>, decoder input <s> + target, output target + </s>."""
    S = 1 + max(len(x) for x, _ in pairs)
    T = 1 + max(len(y) for _, y in pairs)
    src = torch.full((S, len(pairs)), PAD, dtype=torch.long)
    tgt_in = torch.full((T, len(pairs)), PAD, dtype=torch.long)
    tgt_out = torch.full((T, len(pairs)), PAD, dtype=torch.long)
    for b, (x, y) in enumerate(pairs):
        src[:len(x) + 1, b] = torch.tensor(list(x) + [EOS])
        tgt_in[:len(y) + 1, b] = torch.tensor([BOS] + list(y))
        tgt_out[:len(y) + 1, b] = torch.tensor(list(y) + [EOS])
    src_len = torch.tensor([len(x) + 1 for x, _ in pairs])
    return src, src_len, tgt_in, tgt_out


# ---- the word tokenizer (src/text/tokenize.h), for crosscheck.py's comparison --------

SPLIT_OFF = set('!?;:"()¿¡«»…“”')
ELISIONS = {"c", "d", "j", "l", "m", "n", "s", "t", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu"}


def split_apostrophes(word):
    """Cuts a word at its apostrophes: after an elision the apostrophe stays left
    (j'ai -> j' ai), between two other letters or digits it starts the next piece
    (don't -> don 't), anywhere else it is a token of its own."""
    pieces, lead, rest = [], "", word
    while rest:
        k = rest.find("'")
        if k < 0:
            pieces.append(lead + rest)
            break
        left, right = rest[:k], rest[k + 1:]
        if left and right and left[-1].isalnum() and right[0].isalnum():
            if left.lower() in ELISIONS:
                pieces.append(lead + left + "'")
                lead = ""
            else:
                pieces.append(lead + left)
                lead = "'"
        else:
            if left:
                pieces.append(lead + left)
            pieces.append("'")
            lead = ""
        rest = right
    return pieces


def tokenize(line, lowercase=False):
    """One line -> its word tokens, by the rules of src/text/tokenize.h."""
    line = unicodedata.normalize("NFC", line)
    line = line.replace("\u2019", "'").replace("\u2018", "'")
    for gone in ("\u200b", "\u00ad", "\ufeff"):
        line = line.replace(gone, "")
    if lowercase:
        line = line.lower()
    spaced = "".join(" %s " % ch if ch in SPLIT_OFF else ch for ch in line)
    out = []
    for k, ch in enumerate(spaced):
        if ch in ".,":
            between_digits = (0 < k < len(spaced) - 1 and spaced[k - 1].isdecimal() and
                              spaced[k + 1].isdecimal())
            out.append(ch if between_digits else " %s " % ch)
        else:
            out.append(ch)
    return [piece for word in "".join(out).split() for piece in split_apostrophes(word)]


ATTACH_LEFT = {".", ",", "!", "?", ";", ":", ")", "]", "}", "\u2026", "\u201d"}
ATTACH_RIGHT = {"(", "[", "{", "\u201c", "\u00bf", "\u00a1"}


def detokenize(tokens):
    """Word tokens as text, by the rules of detokenize_text (src/text/tokenize.c): what s2s
    translate writes with translate.detokenize true, which tokenize() reads back as the
    same tokens ("i 'm busy ." -> "i'm busy."; the tokens joined by spaces would not:
    tokenize("'m") is ["'", "m"])."""
    out, glue_next, quote_open = [], True, False
    for t in tokens:
        glue = glue_next or t in ATTACH_LEFT or (t[0] == "'" and len(t) > 1)
        glue_next = t in ATTACH_RIGHT or (len(t) > 1 and t[-1] == "'")
        if t == '"':                                   # opening binds right, closing left
            glue = glue_next or quote_open
            glue_next = not quote_open
            quote_open = not quote_open
        out.append(t if glue else " " + t)
    return "".join(out)


# ---- the speed baseline ------------------------------------------------------------

# (m, n, p, a, l, V) of `s2s bench --size`: the sizes make bench compares at.
SIZES = {"S": (64, 64, 128, 64, 128, 1000), "M": (256, 256, 512, 256, 256, 8000),
         "L": (512, 512, 1024, 512, 512, 16000)}


def synthetic_batches(count, batch, vocab, rng, shortest=5, longest=20):
    """Random sentence pairs: each side's length uniform in [shortest, longest] words
    (then </s>), words uniform over the vocabulary's non-special ids."""
    def sentence():
        return [rng.randrange(4, vocab) for _ in range(rng.randint(shortest, longest))]
    return [pad_batch([(sentence(), sentence()) for _ in range(batch)]) for _ in range(count)]


# configs/shapes.yaml's image model, as s2s bench --image has it: 64 x 64 pictures, conv
# blocks of 16, 32 and 64 channels (an 8 x 8 grid), m 64, p 128, a 64, l 128, 21 words
IMAGE = {"size": 64, "channels": (16, 32, 64), "m": 64, "p": 128, "a": 64, "l": 128, "V": 21}
IMAGE_BATCHES = 8                                     # random pictures are large: used in turn


def bench_model(args):
    """The model s2s bench builds for the same options."""
    sa_layers = args.self_attention if args.self_attention is not None else (
        2 if args.attention_only else 0)
    if args.image:
        i = IMAGE
        return Seq2Seq(4, i["V"], i["m"], 0, i["p"], i["a"], i["l"], encoder="image",
                       image_size=i["size"], conv_channels=i["channels"], heads=args.heads,
                       sa_layers=sa_layers, sa_heads=4), i["V"]
    m, n, p, a, l, V = SIZES[args.size]
    return Seq2Seq(V, V, m, n, p, a, l, encoder="attn" if args.attention_only else "birnn",
                   heads=args.heads, sa_layers=sa_layers, sa_heads=4), V


def bench_hard_pass(src_len, tgt_out, heads, rng):
    """A hard step as s2s trains one by default (expected context for half the
    sentences, token reward, lambda_e 0.002). The positions are drawn uniformly over each
    source, not from the weights: the step's work is the same whichever they are."""
    T, B = tgt_out.shape
    rows = torch.tensor([rng.random() < 0.5 for _ in range(B)])
    chosen = torch.tensor([[[rng.randrange(int(src_len[b])) for _ in range(heads)]
                            for b in range(B)] for _ in range(T)])
    return HardPass(rows, chosen, 1.0, 0.002, True, 0.0, 0.0)


def formula_weights(model):
    """s2s bench --translate's weights (src/cli/bench_translate.h): every element of each C
    tensor w = 0.1 sin(0.7 e + phase), phase the name's byte sum / 10, rounded to float."""
    import math
    with torch.no_grad():
        for name, w in model.c_tensors().items():
            phase = sum(name.encode()) / 10.0
            values = [0.1 * math.sin(0.7 * e + phase) for e in range(w.numel())]
            w.copy_(torch.tensor(values, dtype=torch.float64).to(w.dtype).view(w.shape))


def formula_sources(s, batch, vocab):
    """Batch s of s2s bench --translate's sources: sentence k has 5 + (7 k + 3 s) mod 16
    words, word j = 4 + (131 k + 31 j + 17 s) mod (vocab - 4)."""
    return [[4 + (131 * k + 31 * j + 17 * s) % (vocab - 4) for j in range(5 + (7 * k + 3 * s) % 16)]
            for k in range(batch)]


def bench_translate(args):
    """Greedy decoding speed on the formula weights and sources s2s bench --translate uses:
    the same model decodes the same sentences (words_out and fingerprint, a hash of the
    words, say whether to the same words); sentences per second after the warm-up."""
    model, V = bench_model(args)
    formula_weights(model)
    model.eval()
    seconds, sentences, words_out, fingerprint = 0.0, 0, 0, 0
    for s in range(args.warmup + args.steps):
        sources = formula_sources(s, args.batch, V)
        src, src_len, _, _ = pad_batch([(x, []) for x in sources])
        max_out = [int(2 * (len(x) + 1)) + 10 for x in sources]
        start = time.perf_counter()
        out = model.greedy(src, src_len, max_out)
        if s >= args.warmup:
            seconds += time.perf_counter() - start
            sentences += args.batch
            words_out += sum(len(y) for y in out)
            for y in out:                              # as s2s's: the same words, the same number
                for word in y:
                    fingerprint = (fingerprint * 31 + word) % 1000000007
    result = {"size": args.size, "batch": args.batch, "beam": 1,
              "sentences_per_s": sentences / seconds, "words_out": words_out,
              "fingerprint": fingerprint,
              "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    print("torch %s: size %s, greedy, batches of %d: %.1f sentences/s, %d words out, peak RSS "
          "%.0f MiB" % (torch.__version__, args.size, args.batch, result["sentences_per_s"],
                        words_out, result["peak_rss_mib"]))
    if args.json:
        print("RESULT " + json.dumps(result))


def bench(args):
    """Trains with Adam (lr 1e-3) on synthetic batches made before the clock starts;
    times each step after the warm-up; prints tokens per second and peak memory."""
    torch.manual_seed(args.seed)
    model, V = bench_model(args)
    model.init_uniform(0.1)
    adam = torch.optim.Adam(model.parameters(), lr=1e-3)
    rng = random.Random(args.seed)
    total = args.warmup + args.steps
    batches = synthetic_batches(min(total, IMAGE_BATCHES) if args.image else total, args.batch,
                                V, rng)
    pixels = [torch.rand(args.batch, IMAGE["size"], IMAGE["size"], 3) - 0.5
              for _ in batches] if args.image else None
    hard = [bench_hard_pass(b[1], b[3], args.heads, rng) for b in batches] if args.hard else None
    seconds, tokens, losses = 0.0, 0, []
    for step in range(total):
        k = step % len(batches)
        src, src_len, tgt_in, tgt_out = batches[k]
        if args.image:                                 # a token per grid cell
            G = IMAGE["size"] >> len(IMAGE["channels"])
            src = torch.full((G * G, args.batch), UNK, dtype=torch.long)
            src_len = torch.full((args.batch,), G * G)
        start = time.perf_counter()
        adam.zero_grad(set_to_none=True)
        loss = model.loss(src, src_len, tgt_in, tgt_out, hard=hard[k] if hard else None,
                          pixels=pixels[k] if pixels else None)
        loss.backward()
        adam.step()
        losses.append(loss.item())                     # waits for the step to finish
        if step >= args.warmup:
            seconds += time.perf_counter() - start
            tokens += int((tgt_out != PAD).sum())
    result = {"size": "image" if args.image else args.size, "batch": args.batch,
              "steps": args.steps,
              "tgt_tokens_per_s": tokens / seconds,
              "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
              "first_loss": losses[0], "final_loss": losses[-1],
              "torch": torch.__version__, "torch_threads": torch.get_num_threads()}
    print("torch %s: size %s, batch %d: %.0f target tokens/s over %d steps, peak RSS %.0f MiB,"
          " loss %.3f -> %.3f" % (torch.__version__, result["size"], args.batch,
                                  result["tgt_tokens_per_s"], args.steps,
                                  result["peak_rss_mib"], losses[0], losses[-1]))
    if args.json:
        print("RESULT " + json.dumps(result))


# ---- training on real text: the `train` subcommand -----------------------------------

# The config keys the reference implements, with s2s's defaults (`s2s config --doc`). The
# type of each default is the type of the key.
CONFIG_KEYS = {
    "seed": 1,
    "data.train_src": "", "data.train_tgt": "", "data.train_tsv": "",
    "data.valid_src": "", "data.valid_tgt": "", "data.valid_tsv": "",
    "data.test_src": "", "data.test_tgt": "", "data.test_tsv": "",
    "data.tsv_reverse": False, "data.lowercase": False, "data.max_length": 50,
    "data.max_line_bytes": 1048576, "data.src_vocab_size": 0, "data.tgt_vocab_size": 0,
    "data.src_min_freq": 1, "data.tgt_min_freq": 1,
    "model.embedding_size": 64, "model.encoder_size": 64, "model.decoder_size": 128,
    "model.attention_size": 64, "model.readout_size": 128, "model.attention": "additive",
    "model.attention_heads": 1, "model.encoder_cell": "gru", "model.decoder_cell": "gru",
    "model.encoder_layers": 1, "model.context_gate": False, "model.embedding_dropout": 0.0,
    "model.readout_dropout": 0.0, "model.init_range": 0.1, "model.tie_output": False,
    "training.optimizer": "adam", "training.learning_rate": 0.001, "training.warmup_steps": -1,
    "training.adam_beta1": 0.9, "training.adam_beta2": 0.999, "training.adam_eps": 1e-8,
    "training.clip_grad_norm": 5.0, "training.label_smoothing": 0.0, "training.batch_size": 32,
    "training.bucket_batches": 100, "training.shuffle": True, "training.max_steps": 0,
    "training.epochs": 10, "training.max_time": 0.0, "training.scheduling": "plateau",
    "training.patience": 3, "training.decrease_factor": 0.5, "training.learning_rate_min": 1e-6,
    "training.early_stopping": 0, "training.early_stopping_metric": "bleu",
    "training.average_last": 1, "training.valid_every": 1000, "training.log_every": 100,
    "training.max_bad_steps": 5,
    "translate.beam_size": 5, "translate.alpha": 0.6, "translate.max_output_ratio": 2.0,
    "translate.max_output_extra": 10, "translate.attention_mode": "auto",
    "translate.detokenize": True,      # read by beamcheck only: how s2s writes translations
}
# The values a choice key may take here (s2s has more for some: those are refused below).
CONFIG_CHOICES = {
    "model.attention": SCORES, "model.encoder_cell": ("gru", "lstm", "rnn"),
    "model.decoder_cell": ("gru", "lstm", "rnn"), "training.optimizer": ("adam",),
    "training.scheduling": ("none", "plateau"),
    "training.early_stopping_metric": ("bleu", "loss", "exact"),
    "translate.attention_mode": ("auto", "soft"),
}
# Keys of s2s the reference does not implement, with their defaults: any other value is an
# error, since the model or its training would then not be the one s2s trains.
CONFIG_UNSUPPORTED = {
    "data.level": "word", "model.encoder": "text", "model.self_attention_layers": 0,
    "model.attention_mode": "soft", "training.doubly_stochastic": 0.0,
    "training.attention_supervision": 0.0,
}
# Keys that change nothing the reference computes, whatever their value: where the run
# goes, threads and shards (s2s's numbers depend on its shards; the reference has none),
# the attention dumps, s2s translate's source cut (sources over 250 tokens), gold alignments
# and boxes, and the settings of parts this model does not have (pictures, self-attention
# layers, hard attention, Adadelta).
CONFIG_IGNORED = {
    "name", "run_dir", "training.threads", "training.shards", "translate.max_source_length",
    "data.valid_align", "data.test_align", "data.train_ground",
    "data.valid_ground", "data.test_ground", "data.image_size", "data.image_resize",
    "model.conv_channels", "model.grid_positions", "model.self_attention_heads",
    "model.self_attention_ffn", "model.self_attention_dropout", "training.adadelta_rho",
    "training.adadelta_eps", "training.hard_reinforce_weight", "training.hard_entropy_weight",
    "training.hard_expected_prob", "training.hard_baseline_decay", "training.hard_warmup_steps",
    "training.hard_reward",
}
CONFIG_IGNORED_SECTIONS = ("alignments.",)


class ConfigError(Exception):
    pass


def _coerce(key, value, default, where):
    """value (as YAML read it) as the type of default; ConfigError naming where if not."""
    def bad():
        return ConfigError("%s: %s: expected %s, got %r" % (
            where, key, {bool: "true or false", int: "an integer", float: "a number",
                         str: "a string"}[type(default)], value))
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value in ("true", "True", "TRUE", "false", "False", "FALSE"):
            return value.lower() == "true"
        raise bad()
    if isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            return int(str(value))
        except ValueError:
            raise bad() from None
    if isinstance(default, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        try:   # PyYAML reads YAML 1.1, where 1e-8 (no dot) is a string
            return float(str(value))
        except ValueError:
            raise bad() from None
    return "" if value is None else str(value)


def _flatten(tree, prefix=""):
    """{section: {key: value}} -> {"section.key": value} (a dotted key may also be given
    whole at the top)."""
    flat = {}
    for key, value in (tree or {}).items():
        if isinstance(value, dict):
            flat.update(_flatten(value, prefix + str(key) + "."))
        else:
            flat[prefix + str(key)] = value
    return flat


def _known(key):
    return (key in CONFIG_KEYS or key in CONFIG_UNSUPPORTED or key in CONFIG_IGNORED
            or key.startswith(CONFIG_IGNORED_SECTIONS))


def load_config(text, where, overrides=()):
    """An s2s config (YAML text) with --set overrides ("key=value", the value read as a
    YAML scalar) -> {key: value} for every key of CONFIG_KEYS, defaults filled in. Raises
    ConfigError for an unknown key, a bad value, or a key the reference does not
    implement set to anything but its default."""
    import yaml
    try:
        tree = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError("%s: not YAML: %s" % (where, e)) from None
    if tree is not None and not isinstance(tree, dict):
        raise ConfigError("%s: expected a mapping of sections" % where)
    given = [(key, value, where) for key, value in _flatten(tree).items()]
    for assignment in overrides:
        key, eq, text_value = assignment.partition("=")
        if not eq:
            raise ConfigError("--set %s: expected KEY=VALUE" % assignment)
        default = CONFIG_KEYS.get(key, CONFIG_UNSUPPORTED.get(key))
        # a string key takes the text as it is; the others read it as YAML would
        value = text_value if isinstance(default, str) else yaml.safe_load(text_value or "''")
        given.append((key, value, "--set " + assignment))
    cfg, origin = dict(CONFIG_KEYS), {}
    for key, value, at in given:
        if not _known(key):
            raise ConfigError("%s: unknown key `%s`" % (at, key))
        if key in CONFIG_KEYS:
            cfg[key] = _coerce(key, value, CONFIG_KEYS[key], at)
            origin[key] = at
        elif key in CONFIG_UNSUPPORTED:
            if _coerce(key, value, CONFIG_UNSUPPORTED[key], at) != CONFIG_UNSUPPORTED[key]:
                raise ConfigError("%s: %s = %r: the PyTorch reference does not implement it "
                                  "(only %r), so it would not be the same model"
                                  % (at, key, value, CONFIG_UNSUPPORTED[key]))
    for key, choices in CONFIG_CHOICES.items():
        if cfg[key] not in choices:
            raise ConfigError("%s: %s = %s: the PyTorch reference implements only %s"
                              % (origin.get(key, where), key, cfg[key], ", ".join(choices)))
    positive = ("model.embedding_size", "model.encoder_size", "model.decoder_size",
                "model.attention_size", "model.readout_size", "model.attention_heads",
                "training.batch_size", "training.bucket_batches", "training.valid_every",
                "training.log_every", "training.average_last", "translate.beam_size",
                "data.max_length", "training.max_bad_steps")
    for key in positive:
        if cfg[key] < 1:
            raise ConfigError("%s: %s must be at least 1" % (where, key))
    if not 1 <= cfg["model.encoder_layers"] <= 4:
        raise ConfigError("%s: model.encoder_layers must be 1 to 4" % where)
    heads, n, p, a = (cfg["model." + k] for k in ("attention_heads", "encoder_size",
                                                  "decoder_size", "attention_size"))
    if cfg["model.attention"] == "dot" and p != 2 * n:
        raise ConfigError("%s: model.attention dot needs decoder_size = 2 encoder_size" % where)
    if cfg["model.tie_output"] and cfg["model.readout_size"] != cfg["model.embedding_size"]:
        raise ConfigError("%s: model.tie_output needs model.readout_size = model.embedding_size"
                          % where)
    widths = {"model.encoder_size (d_h = 2n)": 2 * n}
    if cfg["model.attention"] in ("additive", "scaled_dot"):
        widths["model.attention_size"] = a
    if cfg["model.attention"] == "general":
        widths["model.decoder_size"] = p
    for name, width in widths.items():
        if cfg["model.attention"] != "none" and width % heads:
            raise ConfigError("%s: model.attention_heads %d does not divide %s"
                              % (where, heads, name))
    return cfg


def config_model(cfg, vx, vy):
    """The Seq2Seq the config describes, for vocabularies of vx and vy words."""
    m, n, p, a, l = (cfg["model." + k] for k in ("embedding_size", "encoder_size",
                                                 "decoder_size", "attention_size",
                                                 "readout_size"))
    return Seq2Seq(vx, vy, m, n, p, a, l, score=cfg["model.attention"],
                   enc_cell=cfg["model.encoder_cell"], dec_cell=cfg["model.decoder_cell"],
                   enc_layers=cfg["model.encoder_layers"], heads=cfg["model.attention_heads"],
                   context_gate=int(cfg["model.context_gate"]),
                   tie_output=int(cfg["model.tie_output"]))


def read_lines(path):
    """The lines of a text file as s2s reads them: cut at \\n only, one \\r before it
    dropped, UTF-8 required."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    out = []
    for k, line in enumerate(lines):
        try:
            out.append(line.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise ConfigError("%s:%d: invalid UTF-8 (%s)" % (path, k + 1, e)) from None
    return out


def read_pairs(cfg, split):
    """The raw text pairs of a split ("train", "valid", "test") as the config names them:
    two files, or one TSV file. Lines over data.max_line_bytes are dropped here, as s2s
    skips them, except the test set's: every test source gets a line of test.hyp. None
    when the split is not configured."""
    src, tgt, tsv = (cfg["data.%s_%s" % (split, side)] for side in ("src", "tgt", "tsv"))
    limit = cfg["data.max_line_bytes"] if split != "test" else float("inf")

    def fits(line):
        return len(line.encode("utf-8")) <= limit
    if tsv:
        pairs = []
        for line in read_lines(tsv):
            if not fits(line):
                continue
            if "\t" not in line:
                raise ConfigError("%s: expected source<TAB>target, found no tab" % tsv)
            first, second = line.split("\t")[:2]
            pairs.append((second, first) if cfg["data.tsv_reverse"] else (first, second))
        return pairs
    if not src:
        return None
    a = read_lines(src)
    b = read_lines(tgt) if tgt else [""] * len(a)
    if len(a) != len(b):
        raise ConfigError("source `%s` has %d lines, target `%s` has %d" % (src, len(a), tgt,
                                                                           len(b)))
    return [(x, y) for x, y in zip(a, b) if fits(x) and fits(y)]


SPECIALS = ("<pad>", "<unk>", "<s>", "</s>")


def build_vocab(sentences, max_size, min_freq):
    """s2s's vocabulary (src/data/vocab.c): the four specials, then the words seen at least
    min_freq times, most frequent first, ties by first occurrence; at most max_size
    entries, specials included (0: no limit). Returns the list of words, id order."""
    counts = {}
    for words in sentences:
        for w in words:
            counts[w] = counts.get(w, 0) + 1
    kept = [w for w, c in counts.items() if c >= min_freq and w not in SPECIALS]
    kept.sort(key=lambda w: -counts[w])                 # stable: ties keep first occurrence
    words = list(SPECIALS) + kept
    return words[:max(max_size, len(SPECIALS))] if max_size > 0 else words


class Batches:
    """s2s's training batches (src/data/epochs.c): each epoch shuffles the pairs, sorts
    them by (source length, target length) within pools of batch_size * pool_batches,
    cuts them into batches of batch_size and shuffles the batch order (Python's random
    here, PCG32 in s2s: the same procedure, other draws)."""

    def __init__(self, pairs, batch_size, pool_batches, shuffle, rng):
        self.pairs, self.batch_size, self.pool = pairs, batch_size, batch_size * pool_batches
        self.shuffle, self.rng = shuffle, rng
        self.n_batches = (len(pairs) + batch_size - 1) // batch_size
        self.epoch = 0
        self.plan()

    def plan(self):
        order = list(range(len(self.pairs)))
        if self.shuffle:
            self.rng.shuffle(order)
        for start in range(0, len(order), self.pool):
            order[start:start + self.pool] = sorted(
                order[start:start + self.pool],
                key=lambda k: (len(self.pairs[k][0]), len(self.pairs[k][1])))
        self.order = order
        self.batch_order = list(range(self.n_batches))
        if self.shuffle:
            self.rng.shuffle(self.batch_order)
        self.next = 0

    def next_batch(self):
        if self.next == self.n_batches:
            self.epoch += 1
            self.plan()
        first = self.batch_order[self.next] * self.batch_size
        self.next += 1
        return [self.pairs[k] for k in self.order[first:first + self.batch_size]]

    def progress(self):
        return self.epoch + self.next / self.n_batches


def output_limit(src_words, cfg):
    """The most words a translation of a source of src_words words may have: ratio times
    its positions (</s> included), truncated, plus extra (decode_output_limit)."""
    return (int(cfg["translate.max_output_ratio"] * (src_words + 1))
            + cfg["translate.max_output_extra"])


def _encoded(model, sources):
    """Encodes a batch of sources (lists of ids, each non-empty or not): what step()
    reads (Seq2Seq.prepare_decoding)."""
    src, src_len, _, _ = pad_batch([(x, []) for x in sources])
    return model.prepare_decoding(src, src_len)


def greedy_batch(model, sources, max_out):
    """s2s's greedy decoding (Seq2Seq.greedy) of a batch of sources (lists of ids)."""
    src, src_len, _, _ = pad_batch([(x, []) for x in sources])
    return model.greedy(src, src_len, max_out)


def length_penalty(length, alpha):
    """Wu et al.'s ((5 + length) / 6)^alpha (1 for alpha 0), as beam.c computes it."""
    return ((5.0 + length) / 6.0) ** alpha if alpha > 0 else 1.0


def beam_batch(model, sources, K, alpha, max_out):
    """s2s's beam search (src/decode/beam.c) over a batch of non-empty sources, K
    hypotheses each side by side in the decoder's rows (sentence b's are rows b K .. b K
    + K - 1). Step t extends every live hypothesis by every word but <pad> and <s>, scored
    by its summed log-probability (the log-softmax in double over the float logits, as
    beam.c); the 2K best extensions of a sentence, best first (ties: lower row, then lower
    word), are taken in order until K live on: an extension by </s> among the first K
    finishes its hypothesis (t words, ranked by sum / ((5 + t + 1) / 6)^alpha, </s>
    counted; at most K kept, a new one replacing the worst if better), one by a word lives
    on. A sentence is done once its best extension of some step was </s> and K have
    finished, or when nothing lives, or after max_out[b] words: there its live hypotheses
    (t + 1 words) finish too, cut, ranked by sum / ((5 + t + 1) / 6)^alpha, no </s> in the
    length. The best finished hypothesis (ties: lower row) is the translation.
    Returns (words, score, ended) for each sentence, or None when none finished."""
    B, V = len(sources), model.W_o.out_features
    rows, inf = B * K, float("-inf")
    with torch.no_grad():
        H, keys, fixed, real_src, s, cell = _encoded(model, sources)

        def per_row(x, dim):
            return None if x is None else x.repeat_interleave(K, dim=dim)
        H, keys, real_src = per_row(H, 1), per_row(keys, 1), per_row(real_src, 1)
        fixed, s, cell = per_row(fixed, 0), per_row(s, 0), per_row(cell, 0)
        score = torch.full((rows,), inf, dtype=torch.float64)
        score[::K] = 0.0                                # one start, not K copies of it
        prev = torch.full((rows,), BOS, dtype=torch.long)
        tokens, parents = [], []                        # (t, rows): chosen after step t
        fin = [[] for _ in range(B)]                    # (score, row, t, ended, logprob)
        done, best_ended = [False] * B, [False] * B
        n_done, T = 0, max(max_out) + 1
        for t in range(T):
            if n_done == B:
                break
            logits, s_next, cell_next = model.step(prev, s, cell, H, keys, fixed, real_src)
            o = logits.double()
            top = o.max(dim=1, keepdim=True).values
            lse = top + torch.log(torch.exp(o - top).sum(dim=1, keepdim=True))
            cand = (score.unsqueeze(1) + o) - lse
            cand[:, PAD] = inf
            cand[:, BOS] = inf
            values, index = cand.view(B, K * V).topk(min(2 * K, K * V), dim=1)
            values, index = values.tolist(), index.tolist()
            next_score, next_token = [inf] * rows, [PAD] * rows
            next_parent = list(range(rows))
            for b in range(B):
                if done[b]:
                    continue
                base = b * K
                # the 2K best by score, ties by (row, word): the flat index's order
                cands = sorted(((v, i) for v, i in zip(values[b], index[b]) if v != inf),
                               key=lambda c: (-c[0], c[1]))
                live = 0
                for c, (v, i) in enumerate(cands):
                    if live >= K:
                        break
                    row, word = base + i // V, i % V
                    if word == EOS:
                        if c < K:
                            keep_finished(fin[b], K, (v / length_penalty(t + 1, alpha), row, t,
                                                      True, v))
                    else:
                        next_score[base + live] = v
                        next_token[base + live] = word
                        next_parent[base + live] = row
                        live += 1
                if cands and cands[0][1] % V == EOS:
                    best_ended[b] = True
                if (best_ended[b] and len(fin[b]) >= K) or t + 1 >= max_out[b] or live == 0:
                    if t + 1 >= max_out[b]:             # cut: the live ones finish too
                        for k in range(live):
                            v = next_score[base + k]
                            fin[b].append((v / length_penalty(t + 1, alpha), base + k, t,
                                           False, v))
                    done[b] = True
                    n_done += 1
            parent = torch.tensor(next_parent)
            s, cell = s_next[parent], cell_next[parent]
            prev = torch.tensor(next_token)
            score = torch.tensor(next_score, dtype=torch.float64)
            tokens.append(next_token)
            parents.append(next_parent)
    out = []
    for b in range(B):
        if not fin[b]:
            out.append(None)
            continue
        best, row, t, ended, _ = min(fin[b], key=lambda f: (-f[0], f[1]))
        last = t - 1 if ended else t                    # the step of its last word
        words = []
        for step in range(last, -1, -1):
            words.append(tokens[step][row])
            row = parents[step][row]
        out.append((words[::-1], best, ended))
    return out


def keep_finished(fin, K, h):
    """beam.c's keep_finished: h joins while fewer than K have finished, else replaces the
    worst (the first of equal ones) if it scores better."""
    if len(fin) < K:
        fin.append(h)
        return
    worst = min(range(len(fin)), key=lambda k: (fin[k][0], k))
    if h[0] > fin[worst][0]:
        fin[worst] = h


def beam_search(model, sources, K, alpha, limits, batch_size=32):
    """Beam search of every source (lists of ids), batch_size sentences at a time in order
    of length; limits: each one's most words. Returns (words, score, ended) per source, None
    for an empty source or one without a finished hypothesis."""
    order = sorted((k for k in range(len(sources)) if sources[k]),
                   key=lambda k: (len(sources[k]), k))
    out = [None] * len(sources)
    for first in range(0, len(order), batch_size):
        chunk = order[first:first + batch_size]
        found = beam_batch(model, [sources[k] for k in chunk], K, alpha, [limits[k] for k in chunk])
        for k, result in zip(chunk, found):
            out[k] = result
    return out


def run_s2s_eval(s2s, hyp, ref):
    """BLEU and exact match of hyp against ref (files of tokens), by `s2s eval` (sacreBLEU's
    numbers)."""
    import subprocess
    text = subprocess.run([s2s, "eval", "--hyp", hyp, "--ref", ref, "--metric", "bleu",
                           "--metric", "exact"], check=True, capture_output=True,
                          text=True).stdout
    scores = {}
    for line in text.splitlines():
        name, eq, rest = line.partition(" = ")
        if eq:
            scores[name.strip().lower()] = float(rest.split()[0])
    return scores["bleu"], scores["exact"]


def validation_scores(net, valid, cfg, tgt_words, s2s, out_dir):
    """s2s's validation (src/train/evaluator.c) of net on the pairs valid (source ids,
    target ids, target tokens): batches of training.batch_size in order of source length;
    the loss, the mean over every target token (</s> included) of -log P; and BLEU and
    exact match, by `s2s eval`, of the greedy translations against the references, both
    written as s2s validates them: detokenized (as s2s translate writes) unless
    translate.detokenize is false, then the tokens joined by spaces. Writes them to
    out_dir/valid.hyp (the last validation's) and valid.ref. Returns (loss, bleu, exact)."""
    written = detokenize if cfg["translate.detokenize"] else " ".join
    order = sorted(range(len(valid)), key=lambda k: (len(valid[k][0]), k))
    loss_sum, tokens, hyps = 0.0, 0, [None] * len(valid)
    B = cfg["training.batch_size"]
    with torch.no_grad():
        for first in range(0, len(order), B):
            chunk = order[first:first + B]
            src, src_len, tgt_in, tgt_out = pad_batch([valid[k][:2] for k in chunk])
            n = int((tgt_out != PAD).sum())
            loss_sum += net.loss(src, src_len, tgt_in, tgt_out).item() * n
            tokens += n
            out = greedy_batch(net, [valid[k][0] for k in chunk],
                               [output_limit(len(valid[k][0]), cfg) for k in chunk])
            for k, words in zip(chunk, out):
                hyps[k] = written([tgt_words[w] for w in words])
    ref_path, hyp_path = os.path.join(out_dir, "valid.ref"), os.path.join(out_dir, "valid.hyp")
    for path, lines in ((ref_path, [written(v[2]) for v in valid]), (hyp_path, hyps)):
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in lines)
    bleu, exact = run_s2s_eval(s2s, hyp_path, ref_path)
    return loss_sum / tokens, bleu, exact


class TrainLog:
    """DIR/train.log, each line also on stdout."""

    def __init__(self, path):
        self.f = open(path, "w", encoding="utf-8")

    def __call__(self, text):
        self.f.write(text + "\n")
        self.f.flush()
        print(text, flush=True)


# The stream of s2s's dropout draws (src/base/rng.h's RNG_STREAM_DROPOUT).
RNG_STREAM_DROPOUT = 3
U64 = (1 << 64) - 1


class Pcg32:
    """PCG32, O'Neill's XSH-RR output on a 64-bit LCG, written from the paper as
    src/base/rng.c is: the cross-check draws the C pass's dropout masks again from the
    seed, so a mask the C side drew wrongly (one mask shared by two layers, draws in
    another order, another scale) is a difference, not something both sides share."""

    def __init__(self, initstate, initseq):
        self.state, self.inc = 0, ((initseq << 1) | 1) & U64
        self.next()
        self.state = (self.state + initstate) & U64
        self.next()

    def next(self):
        old = self.state
        self.state = (old * 6364136223846793005 + self.inc) & U64
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((32 - rot) & 31))) & 0xFFFFFFFF

    def unit(self):
        """Uniform in [0, 1) on a grid of 2^-24: the top 24 bits of a draw."""
        return (self.next() >> 8) / 16777216.0


def drawn_dropout(rng, shape, rate, keep):
    """Inverted dropout's factors, one draw an entry in row-major order: 0 when the draw
    falls below rate, else keep (1 / (1 - rate) in the build's precision)."""
    count = 1
    for size in shape:
        count *= size
    return torch.tensor([0.0 if rng.unit() < rate else keep for _ in range(count)],
                        dtype=torch.float64).view(*shape)


def draw_training_masks(rng, sizes, src_len, tgt_out, rates, keep, text_source=True):
    """Every dropout mask of one training pass, drawn from rng in the order the model
    computes them (MODEL.md, "Dropout"): the source embeddings mask_x (S, B, m) of a text
    encoder; each self-attention layer's weights saL.mask_p (B, H, S, S) over each
    sentence's real (query, key) pairs, then saL.mask_a (S, B, d_h), saL.mask_r
    (S, B, F), saL.mask_o (S, B, d_h); the target embeddings mask_y (T, B, m) of the
    rows the decoder computes (with the batch sorted by target length, step i computes
    the sentences still running; otherwise every row) and 1 elsewhere; the readout
    mask_t (N, l) over the real target tokens, step by step. sizes: S, B, T, m, l, the
    layers, heads, d_h and F; rates: embedding, readout, self_attention; keep(rate):
    1 / (1 - rate) as the build holds it."""
    S, B, T, m, l = (sizes[k] for k in ("S", "B", "T", "m", "l"))
    masks = {}
    emb, ro, sa = rates["embedding"], rates["readout"], rates["self_attention"]
    if emb > 0 and text_source:
        masks["mask_x"] = drawn_dropout(rng, (S, B, m), emb, keep(emb))
    for layer in range(1, sizes["sa_layers"] + 1):
        if sa <= 0:
            break
        at, H, d_h, F_ = "sa%d." % layer, sizes["sa_heads"], sizes["d_h"], sizes["sa_ffn"]
        weights = torch.zeros(B, H, S, S, dtype=torch.float64)
        for b in range(B):
            n = int(src_len[b])
            for k in range(H):
                weights[b, k, :n, :n] = drawn_dropout(rng, (n, n), sa, keep(sa))
        masks[at + "mask_p"] = weights
        masks[at + "mask_a"] = drawn_dropout(rng, (S, B, d_h), sa, keep(sa))
        masks[at + "mask_r"] = drawn_dropout(rng, (S, B, F_), sa, keep(sa))
        masks[at + "mask_o"] = drawn_dropout(rng, (S, B, d_h), sa, keep(sa))
    if emb > 0:
        lengths = (tgt_out != PAD).sum(0).tolist()
        by_length = all(a >= b for a, b in zip(lengths, lengths[1:]))
        mask_y = torch.ones(T, B, m, dtype=torch.float64)
        for i in range(T):
            running = sum(1 for n in lengths if n > i) if by_length else B
            mask_y[i, :running] = drawn_dropout(rng, (running, m), emb, keep(emb))
        masks["mask_y"] = mask_y
    if ro > 0:
        masks["mask_t"] = drawn_dropout(rng, (int((tgt_out != PAD).sum()), l), ro, keep(ro))
    return masks


def dropout_mask(shape, rate):
    """Inverted dropout's mask: 0 with probability rate, else 1 / (1 - rate)."""
    keep = 1.0 - rate
    return torch.empty(shape).bernoulli_(keep).mul_(1.0 / keep)


def train(args):
    """Trains the configured model as `s2s train` does, on the same data, vocabularies,
    batches (other draws), initialisation (in distribution), loss, dropout, Adam, clipping,
    schedule, weight averaging, validation and stopping rules; keeps the best validation's
    weights; decodes the test sources with s2s's beam search. What differs is the random
    draws: torch's and Python's here, PCG32's in s2s."""
    import copy
    try:
        with open(args.config, encoding="utf-8") as f:
            cfg = load_config(f.read(), args.config, args.set or [])
        train_raw = read_pairs(cfg, "train")
        if not train_raw:
            raise ConfigError("%s: no training data (data.train_src or data.train_tsv)"
                              % args.config)
        valid_raw, test_raw = read_pairs(cfg, "valid"), read_pairs(cfg, "test")
    except (ConfigError, OSError) as e:
        print("torch_reference.py train: error: %s" % e, file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    log = TrainLog(os.path.join(args.out, "train.log"))
    lower = cfg["data.lowercase"]
    torch.manual_seed(cfg["seed"])
    rng = random.Random(cfg["seed"])

    def tok(text):
        return tokenize(text, lower)
    # training pairs: both sides non-empty and at most max_length tokens
    max_len, train_tok = cfg["data.max_length"], []
    for x, y in train_raw:
        xs, ys = tok(x), tok(y)
        if xs and ys and len(xs) <= max_len and len(ys) <= max_len:
            train_tok.append((xs, ys))
    src_words = build_vocab((x for x, _ in train_tok), cfg["data.src_vocab_size"],
                            cfg["data.src_min_freq"])
    tgt_words = build_vocab((y for _, y in train_tok), cfg["data.tgt_vocab_size"],
                            cfg["data.tgt_min_freq"])
    src_id = {w: k for k, w in enumerate(src_words)}
    tgt_id = {w: k for k, w in enumerate(tgt_words)}

    def ids(words, vocab):
        return [vocab.get(w, UNK) for w in words]
    train_pairs = [(ids(x, src_id), ids(y, tgt_id)) for x, y in train_tok]
    # validation: every pair with both sides non-empty, however long
    valid = []
    for x, y in valid_raw or []:
        xs, ys = tok(x), tok(y)
        if xs and ys:
            valid.append((ids(xs, src_id), ids(ys, tgt_id), ys))
    log("data: %d training pairs (of %d lines), %d validation pairs, %d test sources; "
        "vocabularies %d source, %d target words" % (len(train_pairs), len(train_raw), len(valid),
                                                     len(test_raw or []), len(src_words),
                                                     len(tgt_words)))
    if not train_pairs:
        print("torch_reference.py train: error: no usable training pairs", file=sys.stderr)
        return 2

    model = config_model(cfg, len(src_words), len(tgt_words))
    model.init_uniform(cfg["model.init_range"])
    params = list(model.parameters())
    log("model: %d parameters, %s score, %s/%s cells, %d encoder layer%s, %d head%s; torch %s, "
        "%d torch threads, OPENBLAS_NUM_THREADS=%s" % (
            sum(w.numel() for w in params), cfg["model.attention"], cfg["model.encoder_cell"],
            cfg["model.decoder_cell"], cfg["model.encoder_layers"],
            "s" if cfg["model.encoder_layers"] > 1 else "", cfg["model.attention_heads"],
            "s" if cfg["model.attention_heads"] > 1 else "", torch.__version__,
            torch.get_num_threads(), os.environ.get("OPENBLAS_NUM_THREADS", "unset")))
    base_lr = cfg["training.learning_rate"]
    adam = torch.optim.Adam(params, lr=base_lr, betas=(cfg["training.adam_beta1"],
                                                       cfg["training.adam_beta2"]),
                            eps=cfg["training.adam_eps"])
    warmup = max(cfg["training.warmup_steps"], 0)      # -1: 0 without self-attention layers
    batches = Batches(train_pairs, cfg["training.batch_size"], cfg["training.bucket_batches"],
                      cfg["training.shuffle"], rng)
    emb_rate, ro_rate = cfg["model.embedding_dropout"], cfg["model.readout_dropout"]
    smoothing, clip = cfg["training.label_smoothing"], cfg["training.clip_grad_norm"]
    m = cfg["model.embedding_size"]
    K_avg = cfg["training.average_last"]
    snapshots = []                                      # the last K_avg validations' weights
    evaluated = copy.deepcopy(model) if K_avg > 1 else model
    metric = cfg["training.early_stopping_metric"]

    state = {"step": 0, "lr": base_lr, "best_score": float("-inf"), "best_step": 0,
             "best": None, "best_scores": None, "stale": 0, "plateau": 0, "validated": 0,
             "seconds": 0.0, "bad": 0}
    logged = {"loss": 0.0, "steps": 0, "tokens": 0, "seconds": 0.0}

    def evaluate(net):
        return validation_scores(net, valid, cfg, tgt_words, args.s2s, args.out)

    def validate():
        start = time.perf_counter()
        state["validated"] = state["step"]
        net = model
        if K_avg > 1:                                   # the mean of the last K weights
            snapshots.append([w.detach().clone() for w in params])
            del snapshots[:-K_avg]
            with torch.no_grad():
                for w, *old in zip(evaluated.parameters(), *snapshots):
                    w.copy_((sum(x.double() for x in old) * (1.0 / len(old))).float())
            net = evaluated
        loss, bleu, exact = evaluate(net)
        score = {"bleu": bleu, "loss": -loss, "exact": exact}[metric]
        improved = score > state["best_score"]
        if improved:
            state.update(best_score=score, best_step=state["step"], stale=0, plateau=0,
                         best={k: v.clone() for k, v in net.state_dict().items()},
                         best_scores=(loss, bleu, exact))
        else:
            state["stale"] += 1
            state["plateau"] += 1
        log("validation step=%d valid_loss=%.4f valid_ppl=%.2f valid_bleu=%.2f valid_exact=%.2f "
            "time=%.1fs%s" % (state["step"], loss, math.exp(min(loss, 700)), bleu, exact,
                              time.perf_counter() - start, " (best so far)" if improved else ""))
        if (not improved and cfg["training.scheduling"] == "plateau"
                and state["plateau"] >= cfg["training.patience"]
                and state["lr"] > cfg["training.learning_rate_min"]):
            state["lr"] = max(state["lr"] * cfg["training.decrease_factor"],
                              cfg["training.learning_rate_min"])
            state["plateau"] = 0
            log("no improvement in %d validation%s: learning rate now %.4g" % (
                cfg["training.patience"], "s" if cfg["training.patience"] > 1 else "", state["lr"]))
        if 0 < cfg["training.early_stopping"] <= state["stale"]:
            log("early stopping: no improvement in %d validations (best at step %d)"
                % (state["stale"], state["best_step"]))

    def stop_reason():
        if 0 < cfg["training.early_stopping"] <= state["stale"]:
            return "early stopping"
        if 0 < cfg["training.max_steps"] <= state["step"]:
            return "reached training.max_steps"
        if cfg["training.epochs"] > 0 and batches.progress() >= cfg["training.epochs"]:
            return "reached training.epochs"
        if 0 < cfg["training.max_time"] <= state["seconds"]:
            return "reached training.max_time"
        return None

    model.train()
    while True:
        reason = stop_reason()
        if reason:
            break
        start = time.perf_counter()
        src, src_len, tgt_in, tgt_out = pad_batch(batches.next_batch())
        masks = {}
        if emb_rate > 0:
            masks["mask_x"] = dropout_mask((src.size(0), src.size(1), m), emb_rate)
            masks["mask_y"] = dropout_mask((tgt_in.size(0), tgt_in.size(1), m), emb_rate)
        n_tokens = int((tgt_out != PAD).sum())
        if ro_rate > 0:
            masks["mask_t"] = dropout_mask((n_tokens, cfg["model.readout_size"]), ro_rate)
        adam.zero_grad(set_to_none=True)
        loss = model.loss(src, src_len, tgt_in, tgt_out, masks, smoothing)
        loss.backward()
        state["step"] += 1
        grads = [w.grad for w in params if w.grad is not None]
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        loss_value, norm_value = loss.item(), norm.item()
        if math.isfinite(loss_value) and math.isfinite(norm_value):
            state["bad"] = 0
            if clip > 0 and norm_value > clip:          # as s2s: the factor max / norm
                torch._foreach_mul_(grads, clip / norm_value)
            k = state["step"]                           # update k of the warm-up's W
            for group in adam.param_groups:
                group["lr"] = state["lr"] * k / warmup if k < warmup else state["lr"]
            adam.step()
            logged["loss"] += loss_value
            logged["steps"] += 1
        else:
            state["bad"] += 1
            log("step=%d skipped: non-finite loss or gradient; %d in a row" % (state["step"],
                                                                               state["bad"]))
            if state["bad"] >= cfg["training.max_bad_steps"]:
                log("training diverged at step %d" % state["step"])
                return 4
        seconds = time.perf_counter() - start
        state["seconds"] += seconds
        logged["seconds"] += seconds
        logged["tokens"] += n_tokens
        if state["step"] % cfg["training.log_every"] == 0:
            mean = logged["loss"] / max(logged["steps"], 1)
            log("step=%d epoch=%.3f loss=%.4f ppl=%.2f tok/s=%.0f steps/s=%.2f lr=%.4g "
                "train_seconds=%.1f" % (state["step"], batches.progress(), mean,
                                        math.exp(min(mean, 700)),
                                        logged["tokens"] / logged["seconds"],
                                        cfg["training.log_every"] / logged["seconds"],
                                        adam.param_groups[0]["lr"], state["seconds"]))
            logged.update(loss=0.0, steps=0, tokens=0, seconds=0.0)
        if valid and state["step"] % cfg["training.valid_every"] == 0:
            validate()
    if valid and state["validated"] != state["step"]:
        validate()
    log("done: %s at step %d, epoch %.3f, %d steps, %.1f s of training (%.2f steps/s)%s" % (
        reason, state["step"], batches.progress(), state["step"], state["seconds"],
        state["step"] / max(state["seconds"], 1e-9),
        "; best validation at step %d" % state["best_step"] if valid else ""))
    if valid and state["best_step"] > 0:
        model.load_state_dict(state["best"])
    model.eval()
    result = {"steps": state["step"], "train_seconds": round(state["seconds"], 3),
              "epochs": round(batches.progress(), 4), "best_step": state["best_step"],
              "valid_bleu": state["best_scores"][1] if state["best_scores"] else None,
              "valid_loss": state["best_scores"][0] if state["best_scores"] else None}
    if test_raw is not None:
        start = time.perf_counter()
        sources = [ids(tok(x), src_id) for x, _ in test_raw]
        found = beam_search(model, sources, cfg["translate.beam_size"], cfg["translate.alpha"],
                            [output_limit(len(x), cfg) for x in sources],
                            cfg["training.batch_size"])
        # test.hyp: the tokens, joined by spaces; test.txt: what s2s translate would write
        # (detokenized unless translate.detokenize is false), for scripts that tokenize it
        hyp = os.path.join(args.out, "test.hyp")
        words = [[tgt_words[w] for w in r[0]] if r else [] for r in found]
        with open(hyp, "w", encoding="utf-8") as f:
            f.writelines(" ".join(w) + "\n" for w in words)
        with open(os.path.join(args.out, "test.txt"), "w", encoding="utf-8") as f:
            f.writelines((detokenize(w) if cfg["translate.detokenize"] else " ".join(w)) + "\n"
                         for w in words)
        text = "test (%s weights, %d sources, beam %d, alpha %g): %s, %.1fs" % (
            "best" if valid and state["best_step"] > 0 else "last", len(sources),
            cfg["translate.beam_size"], cfg["translate.alpha"], hyp, time.perf_counter() - start)
        if any(y for _, y in test_raw):
            ref = os.path.join(args.out, "test.ref")
            with open(ref, "w", encoding="utf-8") as f:
                f.writelines(" ".join(tok(y)) + "\n" for _, y in test_raw)
            bleu, exact = run_s2s_eval(args.s2s, hyp, ref)
            text += "; test_bleu=%.2f test_exact=%.2f against %s" % (bleu, exact, ref)
            result.update(test_bleu=bleu, test_exact=exact)
        log(text)
    print("RESULT " + json.dumps(result), flush=True)
    return 0


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
        H, keys, fixed, real_src, s, cell = _encoded(model, [source])
        prev, total = torch.tensor([BOS]), 0.0
        for y in targets:
            logits, s, cell = model.step(prev, s, cell, H, keys, fixed, real_src)
            o = logits.double()[0]
            total += (o[y] - torch.logsumexp(o, 0)).item()
            prev = torch.tensor([y])
    return total / length_penalty(len(targets), alpha)


# ---- the reference checks itself ---------------------------------------------------

def _fd_worst(model, batch, **extra):
    """The worst relative error of autograd against central finite differences over
    every parameter of model (float64); extra: loss()'s other keywords."""
    with torch.no_grad():
        for w in model.parameters():           # biases too: a general point
            w.uniform_(-0.5, 0.5)
    params = list(model.parameters())
    model.zero_grad()
    model.loss(*batch, smoothing=0.1, **extra).backward()
    worst, h = 0.0, 1e-5  # round-off (1e-11) and truncation (h^2) balance here
    with torch.no_grad():
        for w in params:
            flat = w.view(-1)
            grad = w.grad.view(-1) if w.grad is not None else None
            for k in range(flat.numel()):
                keep = flat[k].item()
                flat[k] = keep + h
                up = model.loss(*batch, smoothing=0.1, **extra).item()
                flat[k] = keep - h
                down = model.loss(*batch, smoothing=0.1, **extra).item()
                flat[k] = keep
                fd = (up - down) / (2 * h)
                g = grad[k].item() if grad is not None else 0.0   # an image's E_x: unread
                err = abs(fd - g) / max(abs(fd), abs(g), 1e-3)
                worst = max(worst, err)
    return worst, sum(w.numel() for w in params)


def selfcheck():
    """Autograd's gradients of every variant's loss against central finite differences
    in float64, on a tiny padded batch: every score with every cell, every score
    with 2 heads, two self-attention layers on a GRU and an LSTM encoder, the
    attention-only encoder with a GRU and an LSTM decoder, the context gate with the
    doubly stochastic term, and the image encoder (on random pictures, with both); exits 1
    on a relative error above 1e-6."""
    rng = random.Random(7)
    torch.manual_seed(7)
    pairs = [([rng.randrange(4, 9) for _ in range(k)], [rng.randrange(4, 8) for _ in range(j)])
             for k, j in ((3, 2), (1, 4), (2, 1))]
    batch = pad_batch(pairs)
    worst_all = 0.0
    for score in SCORES:
        for cell in CELLS:
            model = Seq2Seq(9, 8, 3, 2, 4, 5, 4, score, cell, cell, 2).double()
            worst, n = _fd_worst(model, batch)
            print("selfcheck %-10s %-4s: %d parameters, worst relative error %.1e"
                  % (score, cell, n, worst))
            worst_all = max(worst_all, worst)
    for score in SCORES:
        if score == "none":
            continue
        # a = 4: two heads split d_h = 4, a = 4 and p = 4 evenly
        model = Seq2Seq(9, 8, 3, 2, 4, 4, 4, score, "gru", "gru", 1, heads=2).double()
        worst, n = _fd_worst(model, batch)
        print("selfcheck %-10s 2 heads: %d parameters, worst relative error %.1e"
              % (score, n, worst))
        worst_all = max(worst_all, worst)
    for cell in ("gru", "lstm"):
        # two self-attention layers of 2 heads on d_h = 4, under a 2-head score
        model = Seq2Seq(9, 8, 3, 2, 4, 4, 4, "additive", cell, cell, 1, heads=2,
                        sa_layers=2, sa_heads=2, sa_ffn=6).double()
        worst, n = _fd_worst(model, batch)
        print("selfcheck additive   %-4s, 2 self-attention layers: %d parameters, worst "
              "relative error %.1e" % (cell, n, worst))
        worst_all = max(worst_all, worst)
    for cell in ("gru", "lstm"):
        # the attention-only encoder: m = 4 even, 2 layers of 2 heads, c_0 for an LSTM
        model = Seq2Seq(9, 8, 4, 2, 4, 4, 4, "general", dec_cell=cell, heads=2, sa_layers=2,
                        sa_heads=2, sa_ffn=6, encoder="attn").double()
        worst, n = _fd_worst(model, batch)
        print("selfcheck general    %-4s, attention-only encoder: %d parameters, worst "
              "relative error %.1e" % (cell, n, worst))
        worst_all = max(worst_all, worst)
    # the context gate and the doubly stochastic term on a text model with padding
    model = Seq2Seq(9, 8, 3, 2, 4, 4, 4, "additive", heads=2, context_gate=1).double()
    worst, n = _fd_worst(model, batch, doubly_stochastic=0.7)
    print("selfcheck additive   gru , 2 heads, gate, doubly stochastic: %d parameters, worst "
          "relative error %.1e" % (n, worst))
    worst_all = max(worst_all, worst)
    # the image encoder: two conv blocks (2 and 4 channels) over 8 x 8 pictures, a 2 x 2
    # grid, positions, a self-attention layer, the gate and the doubly stochastic term
    src, _, tgt_in, tgt_out = batch
    cells = torch.full((4, src.size(1)), UNK)
    pictures = torch.rand(src.size(1), 8, 8, 3, dtype=torch.float64) - 0.5
    model = Seq2Seq(9, 8, 3, 2, 4, 4, 4, "general", dec_cell="lstm", heads=2, sa_layers=1,
                    sa_heads=2, sa_ffn=6, encoder="image", conv_channels=(2, 4),
                    context_gate=1).double()
    worst, n = _fd_worst(model, (cells, torch.full((src.size(1),), 4), tgt_in, tgt_out),
                         pixels=pictures, doubly_stochastic=0.5)
    print("selfcheck general    lstm, image encoder, gate, doubly stochastic: %d parameters, "
          "worst relative error %.1e" % (n, worst))
    worst_all = max(worst_all, worst)
    print("selfcheck %s (tolerance 1e-6)" % ("PASSED" if worst_all < 1e-6 else "FAILED"))
    return 0 if worst_all < 1e-6 else 1


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
    b.add_argument("--hard", action="store_true", help="hard attention (positions given)")
    b.add_argument("--image", action="store_true",
                   help="configs/shapes.yaml's image model instead of a size")
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
    t = sub.add_parser("tokenize", help="stdin to tokens, one line a line")
    t.add_argument("--lowercase", action="store_true")
    sub.add_parser("selfcheck", help="the reference's gradients by finite differences")
    args = ap.parse_args()
    if args.mode == "bench":
        (bench_translate if args.translate else bench)(args)
    elif args.mode == "train":
        return train(args)
    elif args.mode == "beamcheck":
        return beamcheck(args)
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
