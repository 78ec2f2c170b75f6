#!/usr/bin/python3
"""Cross-check of the C model against the same model in PyTorch.

For each size, the C core (float build, then double build) writes its weights, a
padded batch, its loss and every gradient (tests/crosscheck/crosscheck_dump.c). This
script loads the weights by name into the PyTorch model of scripts/reference/model.py
(torch.nn's GRU, LSTM and RNN and their cells, cross_entropy) in float64, recomputes
loss and gradients with autograd and compares; the same for each model variant: every
attention score, other cells, deeper encoders, dropout (with masks the reference draws
itself from the seed, equal to the C pass's) and label smoothing; hard attention's
surrogate J, on the sentences and positions the C pass sampled (which it writes out),
with both rewards, baselines and the entropy term;
the context gate and the doubly stochastic term, on text models (padding left out of
the term's sum) and image models; and the image encoder on the pictures the C pass
drew (which it writes out): torch.nn.Conv2d, ReLU and MaxPool2d blocks (2 and 3 blocks,
2 x 2 and 4 x 4 grids), the grid read row by row, with and without grid positions, with
GRU and LSTM decoders (c_0 from the mean cell), 1 to 4 heads, every score (none: the
mean cell), self-attention layers, dropout, label smoothing and hard attention.
Each size and variant is a dict of what differs from the dumper's defaults, passed to it
as name=value; the dumper must refuse an unknown name, a bad value or settings that do
not go together.
The conv blocks alone are checked too (the dumper's mode=conv): nn/conv.h's kernels
with ops.h's relu against torch.nn.Conv2d, ReLU and MaxPool2d, each block's output, the
input each pooled value took (against torch's return_indices), and the gradients of the
weights, of each block's relu output and of the pictures; on uniform numbers and on
small integers, where nothing rounds and windows tie exactly, so that the tie rule
(the first in row-major order, torch's on CPU) decides where the gradient goes.
Tolerances:
  float build:  loss to 1e-5 relative, each gradient tensor to 1e-4 relative norm;
  double build: loss to 1e-14 relative, each gradient tensor to 1e-13 relative norm;
  a gradient whose norm is below 1e-2 is measured as if it were 1e-2 (GRAD_NORM_FLOOR);
  the conv blocks: 1e-12 relative per tensor in the double build and with ties in
  both, 1e-5 on the float build's uniform numbers; pooling's choices all equal.
With --s2s, it also checks the reference's reading of image corpora and its attention
scores (pointing and mass) against s2s align's on a small trained image model
(check_grounding); it runs s2s bench --translate and the reference's at size S, which must
decode the same words from the weights and sources both make by one formula; and it
tokenizes the texts of tests/fixtures/sacrebleu (English and French,
with and without lowercasing) -- and the Tatoeba valid and test files, when
scripts/get-tatoeba.sh has fetched them -- with `s2s tokenize` and with the reference's
tokenize(), and requires identical tokens. Exits 1 if any comparison fails.

usage: crosscheck.py --dump build/crosscheck_dump --dump build/crosscheck_dump_f64 --s2s ./s2s
"""
import argparse
import glob
import json
import os
import struct
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path.insert(0, SCRIPTS)  # the reference package, scripts/reference/
from reference import dropout as ref_dropout  # noqa: E402
from reference import model as ref_model  # noqa: E402
from reference import tokenizer as ref_tokenizer  # noqa: E402
TORCH_REFERENCE = os.path.join(SCRIPTS, "torch_reference.py")

# Every run is named by what differs from crosscheck_dump's defaults (the gradient-check
# size V_x=9 V_y=8 m=3 n=4 p=5 a=5 l=4, B=3 pairs, seed=1, and the default model: additive
# attention, a bidirectional GRU encoder of 1 layer, a GRU decoder, 1 head, no
# self-attention layer, no dropout or smoothing, soft attention), in its settings' names;
# the dumper gets them as name=value, and the PyTorch model is built from the settings
# it reports having used. The sizes: the default, one with every dimension different,
# and larger batches.
SIZES = [
    {},
    {"V_x": 50, "V_y": 60, "m": 16, "n": 24, "p": 32, "a": 20, "l": 28, "B": 6, "seed": 2},
    {"V_x": 120, "V_y": 90, "m": 32, "n": 48, "p": 64, "a": 40, "l": 56, "B": 16, "seed": 3},
]
TOLERANCES = {"float": (1e-5, 1e-4), "double": (1e-14, 1e-13)}
GRAD_NORM_FLOOR = 1e-2

# The variants, each at one size where p = 2n (so dot is valid) and a = p (so 2, 4 and 8
# heads split every vector evenly; encoder attn, the attention-only encoder, has d_h = m =
# 16). sa_ffn 0 (the default) is 4 d_h.
VARIANT_SIZE = {"V_x": 50, "V_y": 60, "m": 16, "n": 12, "p": 24, "a": 24, "l": 28, "B": 6,
                "seed": 4}
VARIANTS = [
    {"score": "dot"},
    {"score": "general"},
    {"score": "scaled_dot"},
    {"score": "none"},
    {"enc_cell": "lstm", "dec_cell": "lstm"},
    {"enc_cell": "rnn", "dec_cell": "rnn"},
    {"score": "scaled_dot", "enc_cell": "lstm", "enc_layers": 3},
    {"embedding_dropout": 0.3, "readout_dropout": 0.4, "label_smoothing": 0.1},
    {"score": "general", "enc_cell": "rnn", "dec_cell": "lstm", "enc_layers": 2,
     "embedding_dropout": 0.2, "readout_dropout": 0.3, "label_smoothing": 0.2},
    {"heads": 4},
    {"score": "dot", "heads": 8},
    {"score": "general", "heads": 2},
    {"score": "scaled_dot", "heads": 4},
    {"enc_cell": "lstm", "dec_cell": "lstm", "enc_layers": 2, "heads": 4,
     "embedding_dropout": 0.2, "readout_dropout": 0.3, "label_smoothing": 0.1},
    {"sa_layers": 1},
    {"score": "scaled_dot", "heads": 4, "sa_layers": 2, "sa_heads": 8, "sa_ffn": 40},
    {"score": "general", "enc_cell": "lstm", "dec_cell": "lstm", "enc_layers": 2, "heads": 2,
     "sa_layers": 2, "sa_heads": 2, "sa_ffn": 16},
    {"sa_layers": 2, "sa_dropout": 0.3},
    {"score": "scaled_dot", "enc_cell": "lstm", "heads": 2, "sa_layers": 3, "sa_heads": 6,
     "sa_ffn": 20, "embedding_dropout": 0.2, "readout_dropout": 0.3, "sa_dropout": 0.25,
     "label_smoothing": 0.1},
    {"encoder": "attn", "sa_layers": 2},
    # the output layer's W_o is E_y (l = m)
    {"tie_output": 1, "l": 16},
    {"tie_output": 1, "l": 16, "enc_cell": "lstm", "dec_cell": "lstm", "embedding_dropout": 0.2,
     "readout_dropout": 0.3, "label_smoothing": 0.1},
    # the source embeddings E_x are E_y (one vocabulary), alone and with W_o tied too
    {"share_embeddings": 1, "V_y": 50},
    {"share_embeddings": 1, "tie_output": 1, "V_y": 50, "l": 16, "embedding_dropout": 0.2,
     "label_smoothing": 0.1},
    {"score": "scaled_dot", "encoder": "attn", "dec_cell": "lstm", "heads": 4, "sa_layers": 1,
     "sa_heads": 2, "sa_ffn": 32},
    {"score": "none", "encoder": "attn", "dec_cell": "lstm", "sa_layers": 1},
    {"score": "general", "encoder": "attn", "dec_cell": "lstm", "heads": 2, "sa_layers": 2,
     "sa_ffn": 24, "embedding_dropout": 0.2, "readout_dropout": 0.3, "sa_dropout": 0.2,
     "label_smoothing": 0.1},
    # Hard attention (hard 1; reinforce_weight, lambda_r, is 1 unless given, the other
    # settings 0). The loss and gradients are the surrogate J's on the positions the C
    # pass sampled; at this size's seed, 2 of the 6 sentences choose when expected_prob
    # is 0.5 or 0.3.
    {"hard": 1, "expected_prob": 0.5, "entropy_weight": 0.3, "baseline": -2.5},
    {"score": "scaled_dot", "enc_cell": "lstm", "dec_cell": "lstm", "heads": 2, "hard": 1,
     "entropy_weight": 0.1, "baseline": 1.5},
    {"score": "dot", "heads": 4, "label_smoothing": 0.1, "hard": 1, "expected_prob": 0.5,
     "reinforce_weight": 0.7, "entropy_weight": 0.05, "token_reward": 1, "baseline": -1,
     "token_baseline": -0.25},
    {"score": "general", "enc_cell": "rnn", "dec_cell": "lstm", "enc_layers": 2, "heads": 2,
     "embedding_dropout": 0.2, "readout_dropout": 0.3, "label_smoothing": 0.1, "hard": 1,
     "expected_prob": 0.3, "entropy_weight": 0.2, "token_reward": 1, "baseline": -2,
     "token_baseline": -0.5},
    {"enc_cell": "lstm", "heads": 2, "sa_layers": 1, "hard": 1, "expected_prob": 0.5,
     "entropy_weight": 0.2, "baseline": -3},
    # b between the rewards of the two sentences that choose (-36.7, -42.7): advantages
    # of both signs, as a baseline that tracks R_s gives. (b = -2 made them ~-40 and the
    # gradients ~10: the exactly-0 key biases' rounding noise grew with them to 7e-14
    # of the GRAD_NORM_FLOOR, too near the double tolerance.)
    {"score": "scaled_dot", "dec_cell": "lstm", "heads": 4, "sa_layers": 2, "sa_heads": 2,
     "sa_ffn": 20, "embedding_dropout": 0.2, "readout_dropout": 0.3, "sa_dropout": 0.25,
     "label_smoothing": 0.1, "hard": 1, "expected_prob": 0.5, "entropy_weight": 0.1,
     "baseline": -40},
    {"score": "general", "encoder": "attn", "dec_cell": "lstm", "heads": 2, "sa_layers": 2,
     "sa_ffn": 24, "hard": 1, "expected_prob": 0.5, "reinforce_weight": 0.5,
     "entropy_weight": 0.1, "token_reward": 1, "baseline": -1, "token_baseline": -0.5},
    # The context gate and the doubly stochastic term on text models: lambda's sum over
    # each sentence's real source positions leaves padding out.
    {"context_gate": 1},
    {"score": "scaled_dot", "enc_cell": "lstm", "dec_cell": "lstm", "heads": 2,
     "context_gate": 1},
    {"score": "general", "encoder": "attn", "sa_layers": 1, "context_gate": 1},
    {"doubly_stochastic": 0.7},
    {"score": "general", "heads": 2, "doubly_stochastic": 0.7},
    {"hard": 1, "expected_prob": 0.5, "entropy_weight": 0.3, "baseline": -2.5,
     "context_gate": 1, "doubly_stochastic": 0.5},
    {"enc_cell": "lstm", "sa_layers": 1, "embedding_dropout": 0.2, "readout_dropout": 0.3,
     "sa_dropout": 0.2, "label_smoothing": 0.1, "context_gate": 1, "doubly_stochastic": 0.3},
    # The image encoder: the dumper's pictures are 8 x 8 pixels and conv_channels 3,4 (a
    # 2 x 2 grid of d_h = 4 cells) with grid positions unless given; 16 pixels with 2
    # blocks make a 4 x 4 grid. Its pictures are random, uniform in [-0.5, 0.5).
    {"encoder": "image"},
    {"encoder": "image", "image_size": 16, "conv_channels": (4, 6, 8)},
    {"encoder": "image", "image_size": 16, "conv_channels": (3, 5), "score": "general"},
    {"encoder": "image", "grid_positions": 0},
    {"encoder": "image", "image_size": 16, "conv_channels": (3, 6), "grid_positions": 2,
     "sa_layers": 1, "sa_heads": 2},
    {"encoder": "image", "image_size": 16, "conv_channels": (4, 5), "grid_positions": 2,
     "hard": 1, "expected_prob": 0.5, "entropy_weight": 0.2, "baseline": -3},
    {"encoder": "image", "dec_cell": "lstm"},
    {"encoder": "image", "heads": 2},
    {"encoder": "image", "score": "dot", "heads": 4, "conv_channels": (6, 24)},
    {"encoder": "image", "score": "scaled_dot", "sa_layers": 1, "sa_heads": 2},
    {"encoder": "image", "image_size": 16, "conv_channels": (4, 8), "dec_cell": "lstm",
     "heads": 2, "sa_layers": 2, "sa_heads": 4, "sa_ffn": 12},
    {"encoder": "image", "score": "none"},
    {"encoder": "image", "image_size": 16, "conv_channels": (4, 6, 8), "score": "none",
     "dec_cell": "lstm", "grid_positions": 0},
    {"encoder": "image", "context_gate": 1},
    {"encoder": "image", "doubly_stochastic": 1},
    {"encoder": "image", "image_size": 16, "conv_channels": (3, 6), "dec_cell": "lstm",
     "heads": 2, "context_gate": 1, "doubly_stochastic": 0.5},
    {"encoder": "image", "embedding_dropout": 0.2, "readout_dropout": 0.3,
     "label_smoothing": 0.1},
    {"encoder": "image", "score": "scaled_dot", "sa_layers": 1, "sa_heads": 2,
     "embedding_dropout": 0.2, "readout_dropout": 0.3, "sa_dropout": 0.3,
     "label_smoothing": 0.1, "context_gate": 1, "doubly_stochastic": 0.4},
    {"encoder": "image", "hard": 1, "expected_prob": 0.5, "entropy_weight": 0.2,
     "baseline": -3},
    {"encoder": "image", "image_size": 16, "conv_channels": (3, 6), "score": "general",
     "dec_cell": "lstm", "heads": 2, "sa_layers": 1, "sa_heads": 3, "embedding_dropout": 0.2,
     "readout_dropout": 0.3, "sa_dropout": 0.25, "label_smoothing": 0.1, "hard": 1,
     "expected_prob": 0.5, "entropy_weight": 0.1, "token_reward": 1, "baseline": -1,
     "token_baseline": -0.5, "context_gate": 1, "doubly_stochastic": 0.5},
    # Attention supervision on random word cells (a third of the cells of each real word)
    {"encoder": "image", "attention_supervision": 1},
    {"encoder": "image", "image_size": 16, "conv_channels": (3, 6), "score": "general",
     "heads": 2, "attention_supervision": 0.7, "doubly_stochastic": 0.5},
    {"encoder": "image", "hard": 1, "expected_prob": 0.5, "entropy_weight": 0.2,
     "baseline": -3, "attention_supervision": 0.5},
    # The Transformer decoder (l = m: the output layer reads its output), against
    # torch.nn.TransformerDecoder; over the bi-RNN's and the image's annotations its
    # cross-attention is MultiheadAttention(kdim = vdim = d_h); with the attention-only
    # encoder it is the whole torch Transformer (without nn.Transformer's extra final
    # norms, which post-norm layers do not need)
    {"dec_layers": 1, "l": 16},
    {"dec_layers": 2, "heads": 4, "l": 16, "enc_cell": "lstm", "sa_layers": 1},
    {"encoder": "attn", "sa_layers": 2, "dec_layers": 2, "heads": 2, "l": 16},
    {"encoder": "attn", "sa_layers": 2, "sa_heads": 2, "dec_layers": 3, "heads": 4,
     "dec_ffn": 24, "l": 16, "embedding_dropout": 0.2, "readout_dropout": 0.3,
     "sa_dropout": 0.3, "label_smoothing": 0.1},
    {"dec_layers": 2, "heads": 2, "l": 16, "tie_output": 1, "embedding_dropout": 0.2,
     "sa_dropout": 0.25},
    {"encoder": "attn", "sa_layers": 2, "dec_layers": 2, "heads": 2, "l": 16, "tie_output": 1,
     "share_embeddings": 1, "V_y": 50, "embedding_dropout": 0.2, "sa_dropout": 0.25},
    {"encoder": "image", "dec_layers": 1, "heads": 2, "l": 16},
]
# The settings Seq2Seq takes: its sizes, in its order, then its keywords; and HardPass's.
SIZE_SETTINGS = ("V_x", "V_y", "m", "n", "p", "a", "l")
MODEL_SETTINGS = ("score", "encoder", "enc_cell", "dec_cell", "enc_layers", "heads",
                  "sa_layers", "sa_heads", "sa_ffn", "image_size", "conv_channels",
                  "grid_positions", "context_gate", "tie_output", "dec_layers", "dec_ffn",
                  "share_embeddings")
HARD_SETTINGS = ("reinforce_weight", "entropy_weight", "token_reward", "baseline",
                 "token_baseline")
# Arguments crosscheck_dump must refuse after a valid seed=7, each with one line that
# names it (a tuple: settings each valid but not together, every one named): an unknown
# name, values not of their kind or out of range, no value, a setting given twice; a
# list of channels that is empty, has an empty or a 0 entry, or more than 6 blocks; a
# picture not divisible by 2^blocks (8 with 4 blocks, 6 with the default 2); the gate or
# the doubly stochastic term without attention weights; attention supervision on a text
# model or without attention weights; ties outside mode=conv; tie_output with l != m;
# share_embeddings with V_x != V_y, or on an image model.
REFUSED_ARGUMENTS = ("scor=dot", "score=dott", "heads=two", "heads=0", "readout_dropout=1",
                     "sa_layers", "seed=8", "encoder=imag", "image_size=1", "image_size=6",
                     "conv_channels=", "conv_channels=3,,4", "conv_channels=3,0",
                     "conv_channels=3,4,", "conv_channels=1,2,3,4,5,6,7",
                     "conv_channels=3,4,5,6", "grid_positions=3", "context_gate=yes",
                     "doubly_stochastic=-0.5", "mode=convolution", "ties=1", "tie_output=1",
                     "share_embeddings=1", ("encoder=image", "V_y=9", "share_embeddings=1"),
                     ("score=none", "context_gate=1"), ("score=none", "doubly_stochastic=0.5"),
                     "attention_supervision=1", ("encoder=image", "score=none",
                                                 "attention_supervision=1"))
# The conv blocks alone (crosscheck_dump mode=conv), against torch.nn.Conv2d, ReLU and
# MaxPool2d: uniform numbers, where only rounding differs (float build 1e-5), and small
# integers (ties=1), where nothing rounds, so that windows hold exactly equal values in
# either build and the tie rule alone decides where the gradient goes (1e-12, and the
# same choices, in both builds).
CONV_CASES = [
    {"B": 3, "image_size": 8, "conv_channels": (3, 4), "seed": 5},
    {"B": 2, "image_size": 16, "conv_channels": (2, 5, 3), "seed": 6},
    {"B": 2, "image_size": 16, "conv_channels": (4, 3), "ties": 1, "seed": 7},
    # seed 10: a seed whose third block has ties that pass a gradient on (8 of 10)
    {"B": 2, "image_size": 32, "conv_channels": (3, 4, 5), "ties": 1, "seed": 10},
]
CONV_TOLERANCES = {"float": 1e-5, "double": 1e-12, "ties": 1e-12}
SA_MASKS = ("mask_p", "mask_a", "mask_r", "mask_o")
WORST = {}  # (precision, "soft" or "hard"): the worst loss and gradient errors measured


def check_layer_form():
    """ref_model.self_attention_layer, which takes its dropout masks as given,
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
               else ref_model.self_attention_layer(layer, x, padding, ones))
        (out * R * real).sum().backward()
        results.append([out * real, x.grad] + [w.grad.clone() for w in layer.parameters()])
    worst = max(rel_norm(a, b) for a, b in zip(results[1], results[0]))
    ok = worst <= 1e-14
    print("self-attention layer written out vs torch.nn.TransformerEncoderLayer (padding, "
          "masks 1): output and every gradient within %.2e (tolerance 1e-14)%s"
          % (worst, "" if ok else "  FAIL"))
    return check_decoder_layer_form() and ok


def check_decoder_layer_form():
    """ref_model.decoder_layer against torch.nn.TransformerDecoderLayer itself with every
    mask 1, over a memory as wide as the layer (in_proj) and a wider one (kdim = vdim):
    the same output and gradients, causal and padding masks included (float64)."""
    torch.manual_seed(6)
    T, S, B, d, H, F_ = 5, 6, 4, 12, 3, 20
    ok = True
    for d_h in (d, 8):
        layer = torch.nn.TransformerDecoderLayer(d, H, F_, dropout=0.0).double()
        if d_h != d:
            layer.multihead_attn = torch.nn.MultiheadAttention(d, H, dropout=0.0, kdim=d_h,
                                                               vdim=d_h).double()
        with torch.no_grad():
            for w in layer.parameters():
                w.uniform_(-0.5, 0.5)
        lens = torch.tensor([6, 3, 1, 5])
        padding = torch.arange(S).unsqueeze(0) >= lens.unsqueeze(1)
        causal = torch.nn.Transformer.generate_square_subsequent_mask(T).double()
        x = torch.randn(T, B, d, dtype=torch.float64, requires_grad=True)
        mem = torch.randn(S, B, d_h, dtype=torch.float64, requires_grad=True)
        R = torch.randn(T, B, d, dtype=torch.float64)
        ones = {name: torch.ones(*shape, dtype=torch.float64) for name, shape in (
            ("mask_sp", (B, H, T, T)), ("mask_sa", (T, B, d)), ("mask_cp", (B, H, T, S)),
            ("mask_ca", (T, B, d)), ("mask_r", (T, B, F_)), ("mask_o", (T, B, d)))}
        results = []
        for form in ("module", "written out"):
            layer.zero_grad()
            x.grad = mem.grad = None
            out = (layer(x, mem, tgt_mask=causal, memory_key_padding_mask=padding)
                   if form == "module"
                   else ref_model.decoder_layer(layer, x, mem, causal, padding, ones))
            (out * R).sum().backward()
            results.append([out, x.grad, mem.grad] + [w.grad.clone() for w in layer.parameters()])
        worst = max(rel_norm(a, b) for a, b in zip(results[1], results[0]))
        ok = ok and worst <= 1e-14
        print("Transformer decoder layer written out vs torch.nn.TransformerDecoderLayer (d_h "
              "%d, causal and padding masks, dropout masks 1): output and every gradient "
              "within %.2e (tolerance 1e-14)%s" % (d_h, worst, "" if worst <= 1e-14 else "  FAIL"))
    return ok


def parse_dump(text):
    """crosscheck_dump's output as a dict: each line's first word its key, the values
    on the line after it (see crosscheck_dump.c); tensors under "param", "grad" and
    (mode=conv) "value", by name."""
    lines = iter(text.splitlines())
    dump = {"param": {}, "grad": {}, "value": {}}
    for line in lines:
        head = line.split()
        key = head[0]
        if key == "precision":
            dump["precision"] = head[1]
        elif key == "batch":
            dump[key] = [int(x) for x in head[1:]]
        elif key == "settings":  # name=value of every setting the dump used
            dump[key] = dict((name, setting_value(value))
                             for name, value in (word.split("=", 1) for word in head[1:]))
            # a list, even of one block
            dump[key]["conv_channels"] = tuple(
                int(x) for x in str(dump[key]["conv_channels"]).split(","))
        elif key in ("mask_x", "mask_y", "mask_t", "pixels") or key.split(".")[-1] in SA_MASKS \
                + ref_model.DECODER_MASKS:
            dump[key] = [float(x) for x in next(lines).split()]
        elif key in ("src", "src_len", "tgt_in", "tgt_out", "hard_rows", "chosen", "ground") or \
                key.startswith("argmax"):
            dump[key] = [int(x) for x in next(lines).split()]
        elif key in ("param", "grad", "value"):
            name, rows, cols = head[1], int(head[2]), int(head[3])
            values = [float(x) for x in next(lines).split()]
            assert len(values) == rows * cols, name
            dump[key][name] = values
        elif key == "loss":
            dump["loss"] = float(head[1])
    return dump


def setting_value(text):
    """A value of the settings line, read as what it is: an int, a float, or a name."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def arguments(settings):
    """A run's settings as crosscheck_dump's arguments, name=value (a list's values
    separated by commas)."""
    return ["%s=%s" % (name, ",".join(map(str, value)) if isinstance(value, tuple) else value)
            for name, value in settings.items()]


def check_refusals(dump_binary):
    """That crosscheck_dump refuses each of REFUSED_ARGUMENTS: exit 2, nothing on stdout,
    and one line on stderr that names the argument (each of a tuple's)."""
    ok = True
    for arg in REFUSED_ARGUMENTS:
        args = arg if isinstance(arg, tuple) else (arg,)
        arg = " ".join(args)
        run = subprocess.run([dump_binary, "seed=7"] + list(args), capture_output=True,
                             text=True)
        lines = run.stderr.splitlines()
        refused = (run.returncode == 2 and not run.stdout and len(lines) == 1
                   and all(a in lines[0] for a in args))
        ok = ok and refused
        print("%s %s: %s" % (os.path.basename(dump_binary), arg, "refused: " + lines[0]
                             if refused else "FAIL: exit %d, stderr %r" % (run.returncode,
                                                                          run.stderr)))
    return ok


def rel_norm(a, b):
    return (torch.linalg.norm(a - b) / max(torch.linalg.norm(b).item(), 1e-300)).item()


def check(dump_binary, size, variant=None):
    """One run of dump_binary at size (a dict of SIZES) with variant (a dict of
    VARIANTS): the C pass against the PyTorch model of the settings the dump reports."""
    variant = variant or {}
    given = {**size, **variant}
    text = subprocess.run([dump_binary] + arguments(given), check=True, capture_output=True,
                          text=True).stdout
    dump = parse_dump(text)
    settings = dump["settings"]
    # what was asked, exactly: a setting the dumper took otherwise would check another model
    taken = all(settings.get(name) == value for name, value in given.items())
    m, n, l, sa_layers, sa_heads, sa_ffn, heads = (settings[k] for k in (
        "m", "n", "l", "sa_layers", "sa_heads", "sa_ffn", "heads"))
    B, S, T = dump["batch"]
    model = ref_model.Seq2Seq(*(settings[k] for k in SIZE_SETTINGS),
                                    **{k: settings[k] for k in MODEL_SETTINGS}).double()
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
    image = settings["encoder"] == "image"
    d_h = {"attn": m, "image": settings["conv_channels"][-1]}.get(settings["encoder"], 2 * n)
    pixels, cells_ok = None, True
    if image:
        N = settings["image_size"]
        pixels = torch.tensor(dump["pixels"], dtype=torch.float64).view(B, N, N, 3)
        G = N >> len(settings["conv_channels"])
        # every picture has all G^2 cells, and no source embeddings (no mask_x)
        cells_ok = S == G * G and bool((src_len == S).all()) and "mask_x" not in dump
    for k in range(sa_layers):
        shapes.update({"sa%d.mask_p" % (k + 1): (B, sa_heads, S, S),
                       "sa%d.mask_a" % (k + 1): (S, B, d_h),
                       "sa%d.mask_r" % (k + 1): (S, B, sa_ffn),
                       "sa%d.mask_o" % (k + 1): (S, B, d_h)})
    for k in range(settings["dec_layers"]):
        at, F_ = "dec%d." % (k + 1), settings["dec_ffn"]
        shapes.update({at + "mask_sp": (B, heads, T, T), at + "mask_sa": (T, B, m),
                       at + "mask_cp": (B, heads, T, S), at + "mask_ca": (T, B, m),
                       at + "mask_r": (T, B, F_), at + "mask_o": (T, B, m)})
    masks, masks_ok, masks_line = own_masks(dump, shapes, d_h, image)
    hard, paths_ok = None, True
    if settings["hard"]:
        hard_rows = torch.tensor(dump["hard_rows"]) == 1
        chosen = torch.tensor(dump["chosen"]).view(T, B, heads)
        hard = ref_model.HardPass(hard_rows, chosen,
                                        **{k: settings[k] for k in HARD_SETTINGS})
        paths_ok, paths = check_paths(hard_rows, chosen, src_len, tgt_out,
                                      settings["expected_prob"])
    ground = (torch.tensor(dump["ground"]).view(T, B, S) if settings["attention_supervision"]
              else None)
    loss = model.loss(src, src_len, tgt_in, tgt_out, masks, settings["label_smoothing"], hard,
                      pixels=pixels, doubly_stochastic=settings["doubly_stochastic"],
                      supervision=settings["attention_supervision"], ground=ground)
    loss.backward()

    precision = dump["precision"]
    loss_tol, grad_tol = TOLERANCES[precision]
    loss_err = abs(dump["loss"] - loss.item()) / abs(loss.item())
    ok = loss_err <= loss_tol and paths_ok and masks_ok and taken and cells_ok
    print("crosscheck %s build, %s, at %s (S=%d T=%d): loss C %.10f torch %.10f, "
          "relative error %.2e%s"
          % (precision, " ".join(arguments(variant)) or "the default model",
             " ".join(arguments({k: settings[k] for k in SIZE_SETTINGS + ("B", "seed")})),
             S, T, dump["loss"], loss.item(), loss_err,
             "" if loss_err <= loss_tol else "  FAIL"))
    if masks_line:
        print(masks_line)
    if image:
        print("  image encoder: %d pictures of %d x %d pixels, conv blocks %s, a %d x %d grid "
              "of d_h = %d cells%s%s" % (B, N, N, ",".join(map(str, settings["conv_channels"])),
                                         G, G, d_h, {1: ", grid positions", 2: ", grid sines"}
                                         .get(settings["grid_positions"], ""),
                                         "" if cells_ok else ": not every picture has S = "
                                         "%d source positions  FAIL" % (G * G)))
    if not taken:
        print("  the dump's settings are not those given: %s  FAIL"
              % ", ".join("%s=%s became %s" % (k, v, settings.get(k, "unknown"))
                          for k, v in given.items() if settings.get(k) != v))
    if hard is not None:
        print("  hard attention, the surrogate J: expected context with probability %g, "
              "lambda_r %g, lambda_e %g, %s reward against baseline %g; %s%s"
              % (settings["expected_prob"], settings["reinforce_weight"],
                 settings["entropy_weight"], "token" if settings["token_reward"] else "sentence",
                 settings["token_baseline" if settings["token_reward"] else "baseline"], paths,
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
    groups = ["%s %s" % ("image" if image else "text", "hard" if hard is not None else "soft")]
    if settings["context_gate"] or settings["doubly_stochastic"]:
        groups.append("gated or doubly stochastic")
    if settings["attention_supervision"]:
        groups.append("attention supervision")
    if settings["dec_layers"]:
        groups.append("Transformer decoder")
    for group in groups:
        was = WORST.get((precision, group), (0.0, 0.0))
        WORST[precision, group] = (max(was[0], loss_err), max(was[1], worst))
    return ok


def check_conv(dump_binary, case):
    """One case of CONV_CASES: the C kernels' conv blocks (crosscheck_dump mode=conv)
    against torch.nn.Conv2d(3 x 3, padding 1), ReLU and MaxPool2d(2, 2) in float64, on
    the pictures and weights the dump gives, NCHW inside torch: each block's pooled
    output, the input each output took (C's index into (B, N, N, C) against torch's
    return_indices), the loss sum(pool_L * R), and the gradients of every weight, of
    each block's relu output (where max-pooling sent the gradient) and of the
    pictures."""
    text = subprocess.run([dump_binary, "mode=conv"] + arguments(case), check=True,
                          capture_output=True, text=True).stdout
    dump = parse_dump(text)
    settings, precision = dump["settings"], dump["precision"]
    B, N, channels = settings["B"], settings["image_size"], (3,) + settings["conv_channels"]
    tol = CONV_TOLERANCES["ties" if settings["ties"] else precision]

    def real(values):                               # float64: torch's default is float32
        return torch.tensor(values, dtype=torch.float64)

    def nchw(values, side, width):                  # s2s's (B, side, side, width), as NCHW
        return real(values).view(B, side, side, width).permute(
            0, 3, 1, 2).contiguous()

    def nhwc(t):                                    # back, one row per pixel
        return t.permute(0, 2, 3, 1).reshape(-1, t.size(1))

    x = nchw(dump["value"]["pixels"], N, 3).requires_grad_()
    pool = torch.nn.MaxPool2d(2, 2, return_indices=True)
    h, convs, relus, errors, wrong_choices = x, [], [], {}, 0
    for l, (c_in, c_out) in enumerate(zip(channels, channels[1:])):
        conv = torch.nn.Conv2d(c_in, c_out, 3, stride=1, padding=1).double()
        with torch.no_grad():
            conv.weight.copy_(real(dump["param"]["conv%d.W" % (l + 1)]).view_as(conv.weight))
            conv.bias.copy_(real(dump["param"]["conv%d.b" % (l + 1)]))
        r = torch.nn.ReLU()(conv(h))
        r.retain_grad()
        h, index = pool(r)
        side = N >> l
        errors["pool%d" % (l + 1)] = rel_norm(
            real(dump["value"]["pool%d" % (l + 1)]).view(-1, c_out), nhwc(h.detach()))
        # torch's index is y * side + x within its (picture, channel) plane; s2s's
        # ((b side + y) side + x) C + c
        b = torch.arange(B).view(B, 1, 1, 1)
        c = torch.arange(c_out).view(1, c_out, 1, 1)
        expected = nhwc((b * side * side + index) * c_out + c).view(-1)
        wrong_choices += int((torch.tensor(dump["argmax%d" % (l + 1)]) != expected).sum())
        convs.append(conv)
        relus.append(r)
    R = nchw(dump["value"]["R"], N >> len(convs), channels[-1])
    loss = (h * R).sum()
    loss.backward()
    ties = [tied_windows(r) for r in relus]
    loss_err = abs(dump["loss"] - loss.item()) / (abs(loss.item()) or 1)  # integers: 0 can be
    grads = {"pixels": nhwc(x.grad)}
    for l, (conv, r) in enumerate(zip(convs, relus)):
        grads.update({"conv%d.W" % (l + 1): conv.weight.grad.flatten(1),
                      "conv%d.b" % (l + 1): conv.bias.grad, "relu%d" % (l + 1): nhwc(r.grad)})
    for name, g in grads.items():
        errors["d " + name] = rel_norm(real(dump["grad"][name]).view_as(g), g)
    worst = max(max(errors.values()), loss_err)
    # the tie case must have ties the gradient goes through, in every block
    tied = all(routed > 0 for _, routed in ties) if settings["ties"] else True
    ok = worst <= tol and wrong_choices == 0 and tied
    print("conv blocks %s build, %s: %d pictures of %d x %d, channels %s: loss relative error "
          "%.2e, worst output or gradient tensor %.2e (%s; tolerance %.0e); pooling's choices: "
          "%d differ from torch's%s"
          % (precision, "small integers (ties)" if settings["ties"] else "uniform numbers", B, N,
             N, ",".join(map(str, channels[1:])), loss_err, worst,
             max(errors, key=errors.get) if worst else "every one exactly equal", tol, wrong_choices, "" if ok else "  FAIL"))
    for l, (windows, routed) in enumerate(ties if settings["ties"] else ()):
        print("  block %d: %d windows whose largest value is there 2 to 4 times and positive, "
              "%d of them passing a gradient on%s" % (l + 1, windows, routed,
                                                     "" if tied or routed else "  FAIL"))
    was = WORST.get((precision, "conv"), (0.0, 0.0))
    WORST[precision, "conv"] = (max(was[0], loss_err), max(was[1], worst))
    return ok


def tied_windows(r):
    """In r (B, C, N, N), relu's output after backward: the 2 x 2 windows whose largest
    value is positive and held by 2 to 4 of their inputs -- ties whose rule decides where
    the gradient goes -- and how many of them pass a non-zero gradient on."""
    def windows(t):
        B, C, N, _ = t.shape
        return t.reshape(B, C, N // 2, 2, N // 2, 2).permute(0, 1, 2, 4, 3, 5).reshape(-1, 4)
    values, grads = windows(r.detach()), windows(r.grad)
    largest = values.max(dim=1).values
    tie = ((values == largest.unsqueeze(1)).sum(dim=1) > 1) & (largest > 0)
    return int(tie.sum()), int((tie & (grads != 0).any(dim=1)).sum())


def in_precision(x, precision):
    """x as the build computes it: a double, or rounded to the nearest float."""
    return x if precision == "double" else struct.unpack("f", struct.pack("f", x))[0]


def own_masks(dump, shapes, d_h, image):
    """The dropout masks of the pass, drawn by the reference itself (draw_training_masks
    of scripts/reference/dropout.py: its own PCG32 from the dump's seed, its own view of inverted
    dropout: 0, or 1 / (1 - p) in the build's precision), and whether they are the C
    pass's, entry for entry: a mask the C side shares between two layers, draws in
    another order or scales otherwise is a difference here, and the PyTorch loss, which
    reads the reference's masks, then differs too."""
    settings = dump["settings"]
    B, S, T = dump["batch"]
    rates = {"embedding": settings["embedding_dropout"], "readout": settings["readout_dropout"],
             "self_attention": settings["sa_dropout"]}
    sizes = {"S": S, "B": B, "T": T, "m": settings["m"], "l": settings["l"], "d_h": d_h,
             "sa_layers": settings["sa_layers"], "sa_heads": settings["sa_heads"],
             "sa_ffn": settings["sa_ffn"], "dec_layers": settings["dec_layers"],
             "heads": settings["heads"], "dec_ffn": settings["dec_ffn"]}
    rng = ref_dropout.Pcg32(settings["seed"], ref_dropout.RNG_STREAM_DROPOUT)
    masks = ref_dropout.draw_training_masks(
        rng, sizes, torch.tensor(dump["src_len"]), torch.tensor(dump["tgt_out"]).view(T, B),
        rates, lambda p: in_precision(1.0 / (1.0 - p), dump["precision"]), not image)
    theirs = {k: torch.tensor(dump[k], dtype=torch.float64).view(*shapes[k])
              for k in shapes if k in dump}
    if not masks and not theirs:
        return masks, True, None
    differ = sorted(k for k in set(masks) | set(theirs)
                    if k not in masks or k not in theirs or not torch.equal(masks[k], theirs[k]))
    entries = sum(m.numel() for m in masks.values())
    zeros = sum(int((m == 0).sum()) for m in masks.values())
    line = ("  dropout: the reference drew its own %d masks (%d entries, %d of them 0) from "
            "PCG32 seed %d; the C pass's are %s" % (len(masks), entries, zeros, settings["seed"],
                                                    "the same, entry for entry" if not differ
                                                    else "other in %s  FAIL" % ", ".join(differ)))
    return masks, not differ, line


def check_paths(hard_rows, chosen, src_len, tgt_out, expected_prob):
    """Whether the C pass's choices are what the surrogate reads and the variant means
    to test: a real source position at every real step of each sentence that chose,
    none (-1) in the sentences that did not; at least one sentence that chose, and,
    when the expected context has a chance (0 < expected_prob < 1), one that did not.
    Also the words that say so."""
    choosing = (tgt_out != ref_model.PAD) & hard_rows.unsqueeze(0)   # (T, B)
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
    root = os.path.join(SCRIPTS, "..")
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
        name = os.path.relpath(path, os.path.join(SCRIPTS, ".."))
        for lowercase in (False, True):
            args = [s2s, "tokenize"] + (["--lowercase"] if lowercase else [])
            ours = subprocess.run(args, input=data, check=True,
                                  capture_output=True).stdout.decode("utf-8").split("\n")[:-1]
            theirs = [" ".join(ref_tokenizer.tokenize(line, lowercase)) for line in lines]
            diff = [k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b]
            same = len(ours) == len(theirs) and not diff
            ok = ok and same
            print("tokenizer %s lowercase=%d: %d lines, %s" % (
                name, lowercase, len(lines), "identical to the reference's" if same else
                "FAIL: line %d: %r vs %r" % (diff[0] + 1, ours[diff[0]], theirs[diff[0]])
                if diff else "FAIL: %d lines vs %d" % (len(ours), len(theirs))))
    return ok


def check_translate_bench(s2s):
    """make bench's translation rows compare s2s and the reference decoding the same model:
    the weights and sources both make from one formula. At size S the two must decode
    the same words (at M, near-ties of 8,000 words may flip an argmax: there make bench
    asks only for the same number of words)."""
    common = ["--size", "S", "--translate", "--batch", "16", "--steps", "2", "--warmup", "0"]
    outputs = []
    for cmd in ([s2s, "bench"], [sys.executable, TORCH_REFERENCE, "bench", "--json"]):
        out = subprocess.run(cmd + common, check=True, capture_output=True, text=True).stdout
        outputs.append(json.loads(out.split("RESULT ", 1)[1]))
    ours, theirs = outputs
    same = (ours["words_out"], ours["fingerprint"]) == (theirs["words_out"], theirs["fingerprint"])
    print("translate bench on formula weights: s2s %d words (fingerprint %d), reference %d (%d): "
          "%s" % (ours["words_out"], ours["fingerprint"], theirs["words_out"],
                  theirs["fingerprint"], "the same words" if same else "FAIL: other words"))
    return same


GROUNDCHECK_CONFIG = """\
data: {train_src: c/train.src, train_tgt: c/train.tgt, valid_src: c/valid.src,
       valid_tgt: c/valid.tgt, image_size: 32}
model: {encoder: image, conv_channels: [4, 8], embedding_size: 8, decoder_size: 12,
        attention_size: 6, readout_size: 10, self_attention_layers: %d,
        self_attention_heads: 2}
training: {max_steps: 300, epochs: 0, batch_size: 8, valid_every: 300, learning_rate: 0.01}
alignments: {every: 0}
"""


def check_grounding(s2s):
    """An image model's attention and its pointing and mass against word boxes, computed by
    the reference (`torch_reference.py groundcheck`: pictures read with PIL, resized from
    64 to 32 pixels by s2s's bilinear rule, less the checkpoint's channel means; the boxes'
    cells by INTERFACE.md's rule) and by `s2s align --ground`, on a small shapes corpus and
    a model trained 300 steps, with and without a self-attention layer on the grid."""
    import tempfile
    ok, s2s = True, os.path.abspath(s2s)               # it runs in the corpus's folder
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([s2s, "corpus", "shapes", "--out", os.path.join(tmp, "c"), "--size", "64"],
                       check=True, capture_output=True)
        for layers in (0, 1):
            config = os.path.join(tmp, "image%d.yaml" % layers)
            with open(config, "w") as f:
                f.write(GROUNDCHECK_CONFIG % layers)
            run = os.path.join(tmp, "run%d" % layers)
            subprocess.run([s2s, "train", config, "--set", "run_dir=" + run], cwd=tmp, check=True,
                           capture_output=True)
            c = os.path.join(tmp, "c")
            done = subprocess.run(
                [sys.executable, TORCH_REFERENCE, "groundcheck",
                 os.path.join(run, "checkpoints", "last.ckpt"), os.path.join(c, "valid.src"),
                 os.path.join(c, "valid.tgt"), os.path.join(c, "valid.ground"), "--s2s", s2s],
                capture_output=True, text=True)
            print("image model, %d self-attention layer%s: %s" % (
                layers, "" if layers == 1 else "s", (done.stdout + done.stderr).strip()))
            ok = ok and done.returncode == 0
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
        ok = check_translate_bench(args.s2s) and ok
        ok = check_grounding(args.s2s) and ok
    ok = check_layer_form() and ok
    for binary in args.dump:
        ok = check_refusals(binary) and ok
        for case in CONV_CASES:
            ok = check_conv(binary, case) and ok
        for size in SIZES:
            ok = check(binary, size) and ok
        for variant in VARIANTS:
            ok = check(binary, VARIANT_SIZE, variant) and ok
    for (precision, kind), (loss_err, grad_err) in sorted(WORST.items()):
        print("worst over the %s build's %s: loss %.2e, %s tensor %.2e"
              % (precision, "conv blocks" if kind == "conv" else kind + " variants", loss_err,
                 "output or gradient" if kind == "conv" else "gradient", grad_err))
    print("CROSSCHECK %s" % ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
