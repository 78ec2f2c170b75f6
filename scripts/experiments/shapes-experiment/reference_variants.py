#!/usr/bin/python3
"""The PyTorch reference's `train` (scripts/torch_reference.py) on an image config with one
design choice of the model changed, for the rows of the design table in this folder's
README that s2s has no setting for. VARIANT (the environment) lists them, comma-separated:

  s0zero     the decoder starts from s_0 = 0 (and c_0 = 0), not tanh(W_s mean cell)
  noctxin    the decoder's cell reads ey_{i-1} alone: the context's columns of its input
             read as 0, so c_i reaches the readout but not the recurrence
  torchinit  the conv blocks keep torch.nn.Conv2d's own initialisation (uniform in
             +-1/sqrt(fan-in)) instead of s2s's uniform +-init_range
  lastunpooled  one more conv block than model.conv_channels lists, of 32 channels,
             before the last, and the last not pooled: conv_channels [16, 64] gives
             blocks of 16, 32 and 64 channels on a 16 x 16 grid (the grid of two
             blocks) whose cells see 18 x 18 pixels (those of three)
  localkeys  the attention scores the cells by their keys before the self-attention
             layers (U_a of the conv grid plus positions: where a cell is, what it shows
             itself), while the context still reads the layers' output H (what the
             object is, all of it); with no layer, the same as without the flag

Everything else is torch_reference.py train's, arguments included:
  VARIANT=noctxin python3 reference_variants.py configs/shapes.yaml --set ... --out DIR
"""
import os
import sys

if __name__ == "__main__":                             # as torch_reference.py train
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))    # scripts/, the reference package
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from reference import config as ref_config  # noqa: E402
from reference import training as ref_training  # noqa: E402
from reference.model import Seq2Seq  # noqa: E402

KNOWN = {"s0zero", "noctxin", "torchinit", "localkeys", "lastunpooled"}
FLAGS = set(filter(None, os.environ.get("VARIANT", "").split(",")))
if FLAGS - KNOWN:
    sys.exit("reference_variants.py: unknown VARIANT %s (known: %s)"
             % (",".join(sorted(FLAGS - KNOWN)), ", ".join(sorted(KNOWN))))


class ZeroColumns(nn.Module):
    """A layer whose input's columns [lo, hi) read as 0 (their weights then learn nothing)."""

    def __init__(self, inner, lo, hi):
        super().__init__()
        self.inner, self.lo, self.hi = inner, lo, hi

    def forward(self, x, *rest):
        x = x.clone()
        x[:, self.lo:self.hi] = 0
        return self.inner(x, *rest)


class Variant(Seq2Seq):
    def encode(self, src, src_len, masks, pixels=None):
        top, H = super().encode(src, src_len, masks, pixels)
        self.below_layers = top                        # what source_keys reads next
        return top, H

    def source_keys(self, H):
        if "localkeys" in FLAGS:
            assert self.score == "additive", "localkeys is written for additive scores"
            return self.U_a(self.below_layers)
        return super().source_keys(H)

    def initial_state(self, top, H, src_len):
        s, cell = super().initial_state(top, H, src_len)
        if "s0zero" in FLAGS:
            return torch.zeros_like(s), torch.zeros_like(cell)
        return s, cell

    def init_uniform(self, scale=0.1):
        if "lastunpooled" in FLAGS:                    # before init: c_tensors names them
            last = self.convs[-1]
            self.convs[-1] = nn.Conv2d(last.in_channels, 32, 3, stride=1, padding=1)
            self.convs.append(nn.Conv2d(32, last.out_channels, 3, stride=1, padding=1))
        super().init_uniform(scale)
        if "torchinit" in FLAGS:
            for conv in self.convs:
                conv.reset_parameters()
        if "noctxin" in FLAGS:                         # after init: c_tensors names the cell
            m, d_h = self.E_y.embedding_dim, self.W_s.in_features
            self.decoder = ZeroColumns(self.decoder, m, m + d_h)


    def grid_cells(self, pixels):
        if "lastunpooled" not in FLAGS:
            return super().grid_cells(pixels)
        x = pixels.permute(0, 3, 1, 2).contiguous()
        for k, conv in enumerate(self.convs):
            x = torch.relu(conv(x))
            x = x if k == len(self.convs) - 1 else self.pool(x)
        B, d_h, G, _ = x.shape
        cells = x.permute(2, 3, 0, 1).reshape(G * G, B, d_h)
        return cells if self.grid_P is None else cells + self.grid_P.unsqueeze(1)


def config_model(cfg, vx, vy):
    model = ref_config.config_model(cfg, vx, vy)
    assert model.transformer is None, "the variants are of the recurrent decoder"
    model.__class__ = Variant
    return model


if __name__ == "__main__":
    import argparse
    ref_training.config_model = config_model
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config")
    ap.add_argument("--set", action="append")
    ap.add_argument("--s2s", default="./s2s")
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=2, help="ignored: OPENBLAS_NUM_THREADS")
    sys.exit(ref_training.train(ap.parse_args()))
