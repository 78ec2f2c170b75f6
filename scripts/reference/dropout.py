"""s2s's dropout masks drawn again: PCG32 (src/base/rng.c) and the order in which a
training pass draws its masks (src/model/MODEL.md, "Dropout")."""
import torch

from reference.model import PAD


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
    mask_t (N, l) over the real target tokens, step by step. With a Transformer decoder
    (sizes["dec_layers"] > 0) mask_y covers every row, and each decoder layer's six masks
    (DECODER_MASKS of model.py) come between it and mask_t. sizes: S, B, T, m, l, the
    layers, heads, d_h and F (and dec_layers, heads, dec_ffn); rates: embedding, readout, self_attention; keep(rate):
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
        # the Transformer decoder computes every row, sorted or not
        by_length = (all(a >= b for a, b in zip(lengths, lengths[1:]))
                     and not sizes.get("dec_layers"))
        mask_y = torch.ones(T, B, m, dtype=torch.float64)
        for i in range(T):
            running = sum(1 for n in lengths if n > i) if by_length else B
            mask_y[i, :running] = drawn_dropout(rng, (running, m), emb, keep(emb))
        masks["mask_y"] = mask_y
    for layer in range(1, sizes.get("dec_layers", 0) + 1):
        if sa <= 0:
            break
        at, H, m_, F_ = "dec%d." % layer, sizes["heads"], m, sizes["dec_ffn"]
        lengths = (tgt_out != PAD).sum(0).tolist()
        for name, cols in (("mask_sp", T), ("mask_cp", S)):
            weights = torch.zeros(B, H, T, cols, dtype=torch.float64)
            for b in range(B):
                for k in range(H):
                    for i in range(lengths[b]):   # the keys a real query sees
                        seen = i + 1 if name == "mask_sp" else int(src_len[b])
                        weights[b, k, i, :seen] = drawn_dropout(rng, (seen,), sa, keep(sa))
            masks[at + name] = weights
            masks[at + ("mask_sa" if name == "mask_sp" else "mask_ca")] = drawn_dropout(
                rng, (T, B, m_), sa, keep(sa))
        masks[at + "mask_r"] = drawn_dropout(rng, (T, B, F_), sa, keep(sa))
        masks[at + "mask_o"] = drawn_dropout(rng, (T, B, m_), sa, keep(sa))
    if ro > 0:
        masks["mask_t"] = drawn_dropout(rng, (int((tgt_out != PAD).sum()), l), ro, keep(ro))
    return masks
