#!/usr/bin/env python3
"""Training speed of make bench's rows by shard count and OpenBLAS kernel family (issue 46).

For every training row of scripts/bench/bench.py (CONFIGS) but batch 1, `s2s bench` with
`--shards 1` and `--shards 2` (one shard: OpenBLAS's threads on each product; two: a
core each, one BLAS thread each), under each kernel family given (OPENBLAS_CORETYPE),
the runs of one row alternating, ROUNDS rounds; prints target tokens per second
(medians), the best shard count of each row and family, and what `training.shards: 0`
chose (the shards the bench header names when --shards is not given) with its loss
against the best. Timed: run it with nothing beside it.

    python3 scripts/bench/shards.py [--rounds 3] [--families Haswell,SkylakeX] [--s2s ./s2s]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import CONFIGS, TRANSFORMER  # noqa: E402


def bench(s2s, args, family):
    env = dict(os.environ, OPENBLAS_CORETYPE=family)
    out = subprocess.run([s2s, "bench"] + args, check=True, capture_output=True, text=True,
                         env=env).stdout
    result = None
    shards = None
    for line in out.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
        m = re.search(r"(\d+) shards?\b", line)
        if m and shards is None:
            shards = int(m.group(1))
    return result, shards


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--s2s", default=os.path.join(HERE, "..", "..", "s2s"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--families", default="Haswell,SkylakeX")
    ap.add_argument("--json", help="also write every measurement here")
    args = ap.parse_args()
    families = args.families.split(",")
    table = []
    raw = []
    for size, batch, steps, warmup, _target, flags in CONFIGS:
        if batch == 1:
            continue
        name = ("image/%d" % batch if size == "image" else
                "%s/%d%s" % (size, batch, " " + " ".join(flags) if flags else ""))
        if flags == TRANSFORMER:
            name = "%s/%d Transformer" % (size, batch)
        common = ["--size", "S" if size == "image" else size, "--batch", str(batch),
                  "--steps", str(steps), "--warmup", str(warmup)] + flags
        for family in families:
            runs = {1: [], 2: [], 0: []}
            chosen = None
            for r in range(args.rounds):
                for k in (1, 2, 0):
                    extra = ["--shards", str(k)] if k else []
                    res, shards = bench(args.s2s, common + extra, family)
                    runs[k].append(res["tgt_tokens_per_s"])
                    if k == 0:
                        chosen = shards
                    raw.append({"row": name, "family": family, "shards": k or "default",
                                "round": r + 1, "tgt_tokens_per_s": res["tgt_tokens_per_s"]})
                print("  %s %s round %d: 1 shard %.0f, 2 shards %.0f, default (%s) %.0f" % (
                    name, family, r + 1, runs[1][-1], runs[2][-1], chosen, runs[0][-1]),
                    file=sys.stderr, flush=True)
            med = {k: statistics.median(v) for k, v in runs.items()}
            best = max(med[1], med[2])
            table.append((name, family, med[1], med[2], chosen, med[0], best))
    print("| row | kernels | 1 shard tok/s | 2 shards tok/s | best | default chose | default tok/s "
          "| default / best |")
    print("|---|---|---|---|---|---|---|---|")
    for name, family, one, two, chosen, default, best in table:
        print("| %s | %s | %.0f | %.0f | %d | %s | %.0f | %.3f |" % (
            name, family, one, two, 1 if one >= two else 2, chosen, default, default / best))
    worst = min(t[5] / t[6] for t in table)
    print("worst default / best: %.3f (the rule's target: >= 0.95)" % worst)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
