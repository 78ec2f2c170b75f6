"""Greedy decoding and s2s's beam search (src/decode/beam.h), written again."""
import torch

from reference.model import BOS, EOS, PAD, pad_batch


def output_limit(src_words, cfg):
    """The most words a translation of a source of src_words words may have: ratio times
    its positions (</s> included), truncated, plus extra (decode_output_limit)."""
    return (int(cfg["translate.max_output_ratio"] * (src_words + 1))
            + cfg["translate.max_output_extra"])


def greedy_batch(model, sources, max_out):
    """s2s's greedy decoding (Seq2Seq.greedy) of a batch of sources (lists of ids)."""
    src, src_len, _, _ = pad_batch([(x, []) for x in sources])
    return model.greedy(src, src_len, max_out)


def length_penalty(length, alpha):
    """Wu et al.'s ((5 + length) / 6)^alpha (1 for alpha 0), as beam.c computes it."""
    return ((5.0 + length) / 6.0) ** alpha if alpha > 0 else 1.0


def beam_batch(model, sources, K, alpha, max_out, every=None):
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
    Any decoder: the model's decoding() steps the rows (a recurrent decoder's states, or
    a Transformer's key/value caches, reordered with the hypotheses).
    Returns (words, score, ended) for each sentence, or None when none finished; every, a
    list, gets each sentence's list of all its finished hypotheses alike."""
    B, V = len(sources), model.W_o.out_features
    rows, inf = B * K, float("-inf")
    with torch.no_grad():
        src, src_len, _, _ = pad_batch([(x, []) for x in sources])
        steps = model.decoding(src, src_len, max(max_out) + 1)
        steps.repeat(K)
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
            o = steps.step(prev).double()
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
            steps.reorder(torch.tensor(next_parent))
            prev = torch.tensor(next_token)
            score = torch.tensor(next_score, dtype=torch.float64)
            tokens.append(next_token)
            parents.append(next_parent)

    def words_of(row, t, ended):
        """The words of the hypothesis that finished in row at step t, by its parents."""
        last = t - 1 if ended else t                    # the step of its last word
        words = []
        for step in range(last, -1, -1):
            words.append(tokens[step][row])
            row = parents[step][row]
        return words[::-1]
    out = []
    for b in range(B):
        if every is not None:
            every.append([(words_of(row, t, ended), score, ended)
                          for score, row, t, ended, _ in fin[b]])
        if not fin[b]:
            out.append(None)
            continue
        best, row, t, ended, _ = min(fin[b], key=lambda f: (-f[0], f[1]))
        out.append((words_of(row, t, ended), best, ended))
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
