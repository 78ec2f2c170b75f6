#!/usr/bin/python3
"""make bench: training speed of s2s against the PyTorch baseline, side by side.

For each size and batch, runs `s2s bench` and scripts/torch_reference.py bench on the same
sizes and the same synthetic length distribution (uniform 5..20 words plus </s>),
alternating the two, ROUNDS times, and prints the medians: target tokens per second,
the ratio s2s/torch, the peak resident memory of each, and s2s's share of the sgemm
peak measured in the same run (OpenBLAS's best 2-thread 2048^3 product, between the
rows) at the FLOPs per target token of MODEL.md (forward + backward = 6 x forward
multiply-adds); the nominal limit of issue 7 (190 GFLOP/s) beside it. Each row has issue
29's targets: a ratio to torch, a share of the peak where it names one, and s2s's peak
RSS at most half of torch's. torch runs with its fastest setting here (1 torch thread,
2 OpenBLAS threads); s2s with its defaults (a batch of 32 in 2 shards, one per core).

Then translation: sentences per second of s2s bench --translate (greedy, and beam 5)
against the reference's greedy decoding of the same model (weights and sources from one
formula, src/cli/bench_translate.h), at sizes M and S in batches of 32, with the share
of the peak that the step's weight products reach.

On a CPU with AVX-512 whose environment chose other kernels, every s2s row runs again
under OpenBLAS's SkylakeX kernels (OPENBLAS_CORETYPE=SkylakeX), in the same rounds, and
a second table gives them against torch and against that family's own sgemm peak.

The whole Transformer (--attention-only --decoder-layers 2 --heads 4) has rows of its own:
training at S/32 and M/32, against the reference built of torch's Transformer layers,
and translation (the reference decoding with a key/value cache).

usage: scripts/bench/bench.py [--s2s ./s2s] [--rounds 3]
                              [--only S/32,M/32,variants,image,translate,transformer]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PEAK_FLOPS = 190e9
FLOPS_PER_TOKEN = {"S": 2.16e6, "M": 3.25e7, "L": 1.30e8}
# The whole Transformer's (2 + 2 layers, d = m, FFN 4d, V words) FLOPs per real target
# token, a source token per target token (both lengths uniform 5..20), 6 x the forward
# multiply-adds: encoder layers 2 (4d^2 + 2dF), cross-attention keys and values 2 (2d^2),
# decoder layers 2 (6d^2 + 2dF), output dV, and the attention products over ~13.5
# positions (2 x 2 x 13.5 d a layer and side). M (d 256, F 1024, V 8000): 5.75M
# multiply-adds, S (d 64, F 256, V 1000): 0.30M. Only the real rows count: rows of
# padding computed are work that buys nothing.
TRANSFORMER_FLOPS_PER_TOKEN = {"S": 1.81e6, "M": 3.45e7}
TRANSFORMER = ["--attention-only", "--decoder-layers", "2", "--heads", "4"]
# (size, batch, timed steps, warm-up steps, target: (times torch, share of the measured
# sgemm peak[, "or": either one, the share where the ratio would need more of the peak]),
# the variant's flags to both programs: heads, self-attention layers,
# attention-only, hard attention and the image model beside the default; the FLOP count
# is the default model's, so the variants have no share)
CONFIGS = [
    ("S", 1, 300, 20, (15, 0), []),
    ("S", 32, 100, 10, (5, 0), []),
    ("S", 64, 60, 6, (0, 0), []),
    ("M", 32, 20, 3, (3, 0.6), []),
    ("L", 32, 8, 2, (3, 0.6), []),
    ("S", 32, 100, 10, (3, 0), ["--heads", "4"]),
    ("S", 32, 60, 6, (3, 0), ["--self-attention", "2"]),
    ("S", 32, 100, 10, (3, 0), ["--attention-only"]),
    ("S", 32, 100, 10, (3, 0), ["--hard"]),
    ("image", 32, 40, 4, (3, 0), ["--image"]),
    # the whole Transformer (issue 43): 2 + 2 layers of 4 heads, m wide, against torch's
    # TransformerEncoderLayer and TransformerDecoderLayer of the same sizes
    ("S", 32, 60, 6, (3, 0), TRANSFORMER),
    ("M", 32, 10, 2, (2, 0.75, "or"), TRANSFORMER),
]
# Translation: (size, batch, timed batches, warm-up batches, beam, target times torch's
# greedy decoding of the same model and sentences, the variant's flags); the Transformer's
# reference decodes with a key/value cache, one new row per layer a step, as s2s does
# (issue 46: greedy at M 2x, beam 5 at M half of torch's greedy, greedy at S 5x)
TRANSLATE = [("M", 32, 6, 1, 1, 2, []), ("M", 32, 3, 1, 5, 0.5, []), ("S", 32, 30, 3, 1, 5, []),
             ("M", 32, 6, 1, 1, 3, TRANSFORMER), ("M", 32, 3, 1, 5, 0, TRANSFORMER)]


def run(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    for line in out.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError("no RESULT line from %s" % " ".join(cmd))


def avx512():
    """Whether this CPU has the AVX-512 that OpenBLAS's SkylakeX kernels need."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return False
    return all(" %s" % flag in flags for flag in ("avx512f", "avx512bw", "avx512dq", "avx512vl"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--s2s", default=os.path.join(HERE, "..", "..", "s2s"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated SIZE/BATCH, e.g. S/32,M/32, "
                    "`variants` for the rows with heads and self-attention, `image`, "
                    "`translate`, `transformer` (its training and translation rows)")
    args = ap.parse_args()
    reference = os.path.join(HERE, "..", "torch_reference.py")
    only = set(filter(None, args.only.split(",")))
    peaks = [run([args.s2s, "bench", "--sgemm-peak"])["sgemm_gflops"]]
    # every s2s row again under OpenBLAS's best kernels for the CPU, when the environment
    # chose others (issue 46): SkylakeX's on an AVX-512 CPU
    best_family = ("SkylakeX" if avx512() and os.environ.get("OPENBLAS_CORETYPE") != "SkylakeX"
                   else None)
    best_env = dict(os.environ, OPENBLAS_CORETYPE=best_family) if best_family else None
    best_rows, best_translations = [], []
    rows = []
    for size, batch, steps, warmup, target, flags in CONFIGS:
        name = "%s/%d" % (size, batch)
        group = ("image" if size == "image" else "transformer" if flags == TRANSFORMER
                 else "variants" if flags else name)
        if only and group not in only:
            continue
        name = "image/%d" % batch if size == "image" else (
            name + " " + " ".join(flags) if flags else name)
        ours, theirs, ours_best = [], [], []
        for r in range(args.rounds):
            common = ["--size", "S" if size == "image" else size, "--batch", str(batch),
                      "--steps", str(steps), "--warmup", str(warmup)] + flags
            ours.append(run([args.s2s, "bench"] + common + ["--seed", str(r + 1)]))
            theirs.append(run(["/usr/bin/python3", reference, "bench", "--json", "--seed", str(r + 1)]
                              + common))
            if best_family:
                ours_best.append(run([args.s2s, "bench"] + common + ["--seed", str(r + 1)],
                                     best_env))
            print("  %s round %d: s2s %.0f, torch %.0f target tokens/s" % (
                name, r + 1, ours[-1]["tgt_tokens_per_s"], theirs[-1]["tgt_tokens_per_s"]),
                file=sys.stderr, flush=True)
        o = statistics.median(x["tgt_tokens_per_s"] for x in ours)
        t = statistics.median(x["tgt_tokens_per_s"] for x in theirs)
        o_rss = statistics.median(x["peak_rss_mib"] for x in ours)
        t_rss = statistics.median(x["peak_rss_mib"] for x in theirs)
        flops = (FLOPS_PER_TOKEN[size] if not flags else
                 TRANSFORMER_FLOPS_PER_TOKEN[size] if flags == TRANSFORMER else None)
        limit = PEAK_FLOPS / flops if flops else None
        rows.append((name, o, t, o_rss, t_rss, limit, flops, target))
        if best_family:
            best_rows.append((name, statistics.median(x["tgt_tokens_per_s"] for x in ours_best),
                              t, flops))
        peaks.append(run([args.s2s, "bench", "--sgemm-peak"])["sgemm_gflops"])
    translations = []
    for size, batch, steps, warmup, beam, times, flags in TRANSLATE:
        if only and ("transformer" if flags else "translate") not in only:
            continue
        common = ["--size", size, "--batch", str(batch), "--steps", str(steps), "--warmup",
                  str(warmup), "--translate"] + flags
        ours, theirs, ours_best = [], [], []
        for r in range(args.rounds):
            ours.append(run([args.s2s, "bench"] + common + ["--beam", str(beam)]))
            theirs.append(run(["/usr/bin/python3", reference, "bench", "--json"] + common))
            if best_family:
                ours_best.append(run([args.s2s, "bench"] + common + ["--beam", str(beam)], best_env))
            print("  %s%s translate beam %d round %d: s2s %.1f, torch greedy %.1f sentences/s" % (
                size, " Transformer" if flags else "", beam, r + 1, ours[-1]["sentences_per_s"],
                theirs[-1]["sentences_per_s"]), file=sys.stderr, flush=True)
        o = statistics.median(x["sentences_per_s"] for x in ours)
        t = statistics.median(x["sentences_per_s"] for x in theirs)
        # greedy on the same weights and sentences: the same number of words out (the same
        # words, up to argmax near-ties), so the same work on both sides
        same = beam > 1 or ours[0]["words_out"] == theirs[0]["words_out"]
        translations.append((size + (" Transformer" if flags else ""), batch, beam, o, t, times,
                             same, statistics.median(x["step_gflops"] for x in ours)))
        if best_family:
            best_translations.append((translations[-1][0], batch, beam,
                                      statistics.median(x["sentences_per_s"] for x in ours_best), t,
                                      statistics.median(x["step_gflops"] for x in ours_best)))
    peak = statistics.median(peaks)
    # OpenBLAS's kernels for AVX-512, whatever core type the environment chose: on the
    # bench machine (AMD EPYC, OPENBLAS_CORETYPE=Haswell set) they run 2048^3 at twice
    # the speed of the AVX2 ones, so "OpenBLAS's best" is the larger of the two
    skylake = [run([args.s2s, "bench", "--sgemm-peak"],
                   dict(os.environ, OPENBLAS_CORETYPE="SkylakeX"))["sgemm_gflops"]
               for _ in range(3)] if avx512() else []
    print("sgemm peak measured in this run: %.1f GFLOP/s (median of %d, OpenBLAS's %s kernels; "
          "issue 7's nominal: %.0f)" % (peak, len(peaks), os.environ.get("OPENBLAS_CORETYPE",
                                                                            "own choice of"),
                                        PEAK_FLOPS / 1e9))
    if skylake:
        best = statistics.median(skylake)
        print("with OPENBLAS_CORETYPE=SkylakeX: %.1f GFLOP/s (median of 3): the shares below "
              "would be %.2f times smaller against it" % (best, best / peak))
    print("| size/batch | s2s tok/s | torch tok/s | s2s/torch | s2s RSS MiB | torch RSS MiB | "
          "RSS ratio | s2s % of limit | % of measured peak | target | met |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    bounds = []
    for name, o, t, o_rss, t_rss, limit, flops, target in rows:
        times, frac = target[:2]
        either = len(target) > 2  # the ratio, or the share where the ratio needs more
        goals = []
        ok = o_rss <= t_rss / 2
        shares = "- | -"
        if limit:
            measured = peak * 1e9 / flops
            shares = "%.1f%% | %.1f%%" % (100 * o / limit, 100 * o / measured)
        if either:
            goals.append("%gx torch, or %d%% of measured peak where %gx needs more" % (
                times, 100 * frac, times))
            share_rules = times * t > frac * measured
            ok = ok and (o >= times * t or (share_rules and o >= frac * measured))
        else:
            if times:
                goals.append("%gx torch" % times)
                ok = ok and o >= times * t
            if frac:
                goals.append("%d%% of measured peak" % (100 * frac))
                ok = ok and o >= frac * measured
        print("| %s | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %s | %s | %s |" % (
            name, o, t, o / t, o_rss, t_rss, o_rss / t_rss, shares,
            ", ".join(goals + ["RSS <= torch/2"]), "yes" if ok else "no"))
        if limit and times and o < times * t:
            # what bounds a missed ratio: the share of the peak it would take
            bounds.append("%s: torch runs at %.0f%% of the measured peak, so %gx torch would "
                          "take %.0f%% of it (s2s: %.0f%%)" % (
                              name, 100 * t / measured, times, 100 * times * t / measured,
                              100 * o / measured))
    for line in bounds:
        print("- " + line)
    if translations:
        print()
        print("| translation (batches of 32) | s2s sentences/s | torch greedy sentences/s | "
              "ratio | same words out | s2s % of measured peak (the step's weight products) "
              "| target | met |")
        print("|---|---|---|---|---|---|---|---|")
    notes = []
    for size, batch, beam, o, t, times, same, gflops in translations:
        print("| %s/%d %s | %.1f | %.1f | %.2f | %s | %.1f%% | %s | %s |" % (
            size, batch, "greedy" if beam == 1 else "beam %d" % beam, o, t, o / t,
            "yes" if same else "NO", 100 * gflops / peak, "%gx torch" % times if times else "-",
            ("yes" if o >= times * t and same else "no") if times else "-"))
        if times and o < times * t and same:
            notes.append("- %s/%d %s: both decode the same sentences to the same number of "
                         "words; s2s's rows leave the products when their sentence ends, "
                         "torch's run to the batch's last: what bounds s2s is in "
                         "scripts/README.md, \"Decoding\"" % (
                             size, batch, "greedy" if beam == 1 else "beam %d" % beam))

    for line in notes:
        print(line)
    if best_family and (best_rows or best_translations):
        # the best family's peak: measured above (skylake) when the CPU has AVX-512
        best_peak = statistics.median(skylake)
        print()
        print("Under OpenBLAS's %s kernels (OPENBLAS_CORETYPE=%s, sgemm peak %.1f GFLOP/s; torch "
              "as above):" % (best_family, best_family, best_peak))
        print()
        print("| row | s2s | s2s/torch | %% of the %s peak |" % best_family)
        print("|---|---|---|---|")
        for name, o, t, flops in best_rows:
            print("| %s (tok/s) | %.0f | %.2f | %s |" % (
                name, o, o / t, "%.1f%%" % (100 * o * flops / (best_peak * 1e9)) if flops else "-"))
        for size, batch, beam, o, t, gflops in best_translations:
            print("| %s/%d %s (sentences/s) | %.1f | %.2f | %.1f%% (the step's weight products) |" % (
                size, batch, "greedy" if beam == 1 else "beam %d" % beam, o, o / t,
                100 * gflops / best_peak))


if __name__ == "__main__":
    main()
