"""The reference checks itself: autograd against finite differences in double, its
decoding (greedy, beam search) against its own loss, and its batches under a token
budget against the rule s2s's follow (src/data/epochs.c)."""
import random

import torch

from reference.data import Batches
from reference.model import CELLS, PAD, SCORES, Seq2Seq, UNK, pad_batch
from reference.search import beam_batch, length_penalty


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
    ok = worst_all < 1e-6
    print("selfcheck %s (tolerance 1e-6)" % ("PASSED" if ok else "FAILED"))
    decoded = decoding_check()                         # run and reported either way
    batched = batches_check()
    return 0 if ok and decoded and batched else 1


def _full_pass_log_probability(model, source, words, ended):
    """The summed log-probability of words (and </s> when ended) given source, from the
    teacher-forced pass of the loss (no cache, no decoding state carried between steps)."""
    src, src_len, tgt_in, tgt_out = pad_batch([(source, words)])
    if not ended:
        tgt_out[len(words), 0] = PAD                   # a cut hypothesis: no </s> to score
    n = int((tgt_out != PAD).sum())
    return -model.loss(src, src_len, tgt_in, tgt_out).item() * n


def decoding_check():
    """The reference's decoding (model.decoding(): a recurrent decoder's states, a
    Transformer's key/value caches, reordered with a beam's hypotheses) against the loss's
    teacher-forced pass: on tiny random models in float64 (a Transformer decoder, an LSTM
    decoder), every finished hypothesis of a beam of 3 (not only the best, which tends to
    stay in the first row) has the summed log-probability that the loss gives its words
    (to 1e-10), and a beam of 1 writes greedy decoding's words. A state or cache left
    unordered, or a position off by one, fails it."""
    torch.manual_seed(11)
    rng = random.Random(11)
    models = {
        "Transformer": Seq2Seq(12, 10, 4, 2, 4, 4, 4, heads=2, sa_layers=1, sa_heads=2,
                               sa_ffn=6, encoder="attn", dec_layers=2, dec_ffn=6),
        "lstm": Seq2Seq(12, 10, 3, 2, 4, 5, 4, "additive", "lstm", "lstm")}
    sources = [[rng.randrange(4, 12) for _ in range(n)] for n in (3, 1, 5, 2, 4, 6)]
    max_out = [7, 2, 7, 7, 3, 7]                       # two cut short: hypotheses without </s>
    ok_all = True
    for name, model in models.items():
        model = model.double()
        with torch.no_grad():
            for w in model.parameters():
                w.uniform_(-1.0, 1.0)
        model.eval()
        worst, same, every = 0.0, True, []
        beam_batch(model, sources, 3, 0.6, max_out, every)
        for source, finished in zip(sources, every):
            for words, score, ended in finished:
                length = len(words) + 1 if ended else len(words)
                full = _full_pass_log_probability(model, source, words, ended)
                worst = max(worst, abs(full - score * length_penalty(length, 0.6)))
        for k, source in enumerate(sources):
            src, src_len, _, _ = pad_batch([(source, [])])
            greedy = model.greedy(src, src_len, [max_out[k]])[0]
            same = same and beam_batch(model, [source], 1, 0.0, [max_out[k]])[0][0] == greedy
        ok = worst < 1e-10 and same
        ok_all = ok_all and ok
        print("selfcheck decoding, %s: every finished hypothesis of beam 3 against the loss's "
              "pass, worst log-probability difference %.1e (tolerance 1e-10); beam 1 %s "
              "greedy: %s" % (name, worst, "equals" if same else "DIFFERS FROM",
                              "PASSED" if ok else "FAILED"))
    return ok_all


def batches_check():
    """One epoch of batches under a token budget, as src/data/epochs.c cuts them: every
    pair once, no batch over the budget (pairs times the longest side with the end
    mark) unless one pair alone, none over the cap of pairs, and in one pool (the whole
    corpus) each batch full: the next pair in the pool's order would break a limit."""
    pairs = [([4] * (k % 9 + 1), [5] * (k % 5 + 1)) for k in range(1000)]
    ok = True
    for cap, budget in ((16, 40), (6, 40), (16, 5)):
        b = Batches(pairs, cap, 1000, True, random.Random(3), budget)
        seen = sorted(k for batch in b.batches for k in batch)
        ok = ok and seen == list(range(len(pairs)))
        for n, batch in enumerate(b.batches):
            longest = max(b.positions(k) for k in batch)
            ok = ok and len(batch) <= cap and (len(batch) == 1 or len(batch) * longest <= budget)
            if n + 1 < len(b.batches):
                more = batch + b.batches[n + 1][:1]
                ok = ok and (len(more) > cap or len(more) * max(map(b.positions, more)) > budget)
    print("selfcheck batches under a token budget: every pair once, within the budget and "
          "the cap, each full: %s" % ("PASSED" if ok else "FAILED"))
    return ok
