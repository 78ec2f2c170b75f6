#!/usr/bin/python3
"""The report of scripts/experiments/length-experiment.sh: BLEU by source length of each model as a
Markdown table (OUT/table.md) and an SVG line plot (OUT/bleu-by-length.svg), and the
verdict on the drop from the shortest to the longest group (OUT/summary.txt): the
model without attention should lose at least twice what the attention model loses.

usage: length_report.py --out DIR --scores "none additive ..." --width 10 --seconds N
                        --long-line K
Reads DIR/<score>/eval.txt (s2s eval --by-length) and DIR/<score>/train.log.
"""
import argparse
import os
import re
import sys

COLOURS = {"none": "#7f7f7f", "additive": "#1f77b4", "dot": "#d62728", "general": "#2ca02c",
           "scaled_dot": "#9467bd", "additive-4-heads": "#ff7f0e", "self-attention-2": "#8c564b",
           "attention-only": "#e377c2"}


def read_eval(path):
    """(overall BLEU, overall exact, [(lo, hi, n, bleu), ...]) from s2s eval's output."""
    overall = exact = None
    groups = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"length (\d+)-(\d+) \((\d+) sentences?\): BLEU = ([0-9.]+)", line)
            if m:
                groups.append((int(m.group(1)), int(m.group(2)), int(m.group(3)),
                               float(m.group(4))))
            elif line.startswith("BLEU = "):
                overall = float(line.split()[2])
            elif line.startswith("exact = "):
                exact = float(line.split()[2])
    return overall, exact, groups


def read_log(path):
    """Training steps and the test AER (None without attention) from a train.log."""
    steps, aer = None, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.search(r"step=(\d+) ", line)
            if m:
                steps = int(m.group(1))
            m = re.search(r"test_aer=([0-9.]+)", line)
            if m:
                aer = float(m.group(1))
    return steps, aer


def svg_plot(results, scores, path):
    """BLEU (y) against source length (x, the middle of each group), one line a model."""
    w, h, left, right, top, bottom = 640, 400, 60, 150, 20, 50
    groups = results[scores[0]]["groups"]
    x_max = max(g[1] for g in groups)
    plot_w, plot_h = w - left - right, h - top - bottom

    def x(v):
        return left + plot_w * v / x_max

    def y(v):
        return top + plot_h * (1 - v / 100.0)

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>']
    for v in range(0, 101, 20):
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>'
                   % (left, y(v), left + plot_w, y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (left - 6, y(v) + 4, v))
    for lo, hi, _, _ in groups:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d-%d</text>'
                   % (x((lo + hi) / 2.0), top + plot_h + 18, lo, hi))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>'
               % (left, top + plot_h, left + plot_w, top + plot_h))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>'
               % (left, top, left, top + plot_h))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">source sentence length (words)</text>'
               % (left + plot_w / 2.0, h - 8))
    out.append('<text x="16" y="%.1f" text-anchor="middle" transform="rotate(-90 16 %.1f)">'
               'BLEU (test)</text>' % (top + plot_h / 2.0, top + plot_h / 2.0))
    for k, score in enumerate(scores):
        pts = " ".join("%.1f,%.1f" % (x((lo + hi) / 2.0), y(b))
                       for lo, hi, _, b in results[score]["groups"])
        colour = COLOURS.get(score, "black")
        dash = ' stroke-dasharray="6 4"' if score == "none" else ""
        out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>'
                   % (pts, colour, dash))
        for lo, hi, _, b in results[score]["groups"]:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>'
                       % (x((lo + hi) / 2.0), y(b), colour))
        ly = top + 10 + 20 * k
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   % (w - right + 15, ly, w - right + 45, ly, colour, dash))
        out.append('<text x="%d" y="%d">%s</text>' % (w - right + 52, ly + 4, score))
    out.append("</svg>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--scores", required=True)
    ap.add_argument("--width", type=int, required=True)
    ap.add_argument("--seconds", required=True)
    ap.add_argument("--long-line", required=True)
    args = ap.parse_args()
    scores = args.scores.split()
    results = {}
    for score in scores:
        overall, exact, groups = read_eval(os.path.join(args.out, score, "eval.txt"))
        steps, aer = read_log(os.path.join(args.out, score, "train.log"))
        results[score] = dict(overall=overall, exact=exact, groups=groups, steps=steps, aer=aer)

    groups = results[scores[0]]["groups"]
    lines = ["| model | " + " | ".join("%d-%d" % (lo, hi) for lo, hi, _, _ in groups)
             + " | all | drop | exact % | test AER | steps |",
             "| --- |" + " --- |" * (len(groups) + 5)]
    lines.append("| (sentences) | " + " | ".join(str(n) for _, _, n, _ in groups)
                 + " | | | | | |")
    for score in scores:
        r = results[score]
        bleus = [b for _, _, _, b in r["groups"]]
        r["drop"] = bleus[0] - bleus[-1]
        lines.append("| %s | %s | %.2f | %.2f | %.1f | %s | %s |" % (
            score, " | ".join("%.2f" % b for b in bleus), r["overall"], r["drop"], r["exact"],
            "%.3f" % r["aer"] if r["aer"] is not None else "-", r["steps"]))
    table = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "table.md"), "w", encoding="utf-8") as f:
        f.write(table)
    svg_plot(results, scores, os.path.join(args.out, "bleu-by-length.svg"))

    summary = ["BLEU by source length (test set, beam 5, %s s of training each; groups of %d "
               "words; drop = shortest group - longest group):" % (args.seconds, args.width),
               table]
    verdict_ok = True
    if "none" in results and "additive" in results:
        none_drop, att_drop = results["none"]["drop"], results["additive"]["drop"]
        ratio = none_drop / att_drop if att_drop > 0 else float("inf")
        verdict_ok = none_drop >= 2 * max(att_drop, 0) and none_drop > 0
        summary.append("none loses %.2f BLEU from the shortest to the longest sentences, additive "
                       "attention %.2f: %s (%s)" % (
                           none_drop, att_drop,
                           "ratio %.1f" % ratio if ratio != float("inf") else "attention loses nothing",
                           "at least twice: as in Bahdanau et al. 2014, Fig. 2" if verdict_ok
                           else "NOT at least twice"))
    summary.append("the alignment figures are test line %s (alignments/<score>.svg)"
                   % args.long_line)
    text = "\n".join(summary) + "\n"
    with open(os.path.join(args.out, "summary.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0 if verdict_ok else 1


if __name__ == "__main__":
    sys.exit(main())
