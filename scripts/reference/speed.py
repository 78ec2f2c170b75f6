"""The speed baseline of `make bench`: what a user would train instead of s2s, timed
on the same synthetic batches as `s2s bench` (the `bench` subcommand)."""
import json
import random
import resource
import time

import torch

from reference.model import HardPass, PAD, Seq2Seq, UNK, pad_batch


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


# s2s bench --image's model (configs/shapes.yaml's until issue 45): 64 x 64 pictures, conv
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
    dec_layers = getattr(args, "decoder_layers", None) or 0
    return Seq2Seq(V, V, m, n, p, a, m if dec_layers else l,
                   encoder="attn" if args.attention_only else "birnn", heads=args.heads,
                   sa_layers=sa_layers, sa_heads=4, dec_layers=dec_layers), V


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
