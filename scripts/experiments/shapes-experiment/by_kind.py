#!/usr/bin/python3
"""Pointing by kind of word (size, colour, shape, `it`) from `s2s align --out` records and
the .ground file they were scored against: the share of each kind's grounded words whose
most attended cell is one of their box's (the rule of src/cli/INTERFACE.md, for the 64 x
64 shapes pictures). Prints "0.83, 0.83, 0.02, 0.02", or "-" for a model without
attention (no records).

usage: by_kind.py ALIGN.jsonl TEST.ground
"""
import json
import os
import sys

KINDS = {"small": 0, "big": 0, "red": 1, "green": 1, "blue": 1, "yellow": 1,
         "square": 2, "circle": 2, "triangle": 2, "it": 3}


def cells(box, grid, side=64):
    """The cells a box covers by at least half their area, or the one it overlaps most."""
    x0, y0, x1, y1 = box
    size = side / grid
    best, best_overlap, out = 0, -1.0, []
    for r in range(grid):
        for c in range(grid):
            w = max(0.0, min(x1, (c + 1) * size) - max(x0, c * size))
            h = max(0.0, min(y1, (r + 1) * size) - max(y0, r * size))
            if w * h >= 0.5 * size * size:
                out.append(r * grid + c)
            if w * h > best_overlap:
                best, best_overlap = r * grid + c, w * h
    return out or [best]


def main():
    path, ground_path = sys.argv[1], sys.argv[2]
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        print("-")
        return
    ground = [line.split() for line in open(ground_path)]
    hits, words = [0] * 4, [0] * 4
    for line in open(path):
        r = json.loads(line)
        grid = int(round(len(r["src"]) ** 0.5))
        for i, field in enumerate(ground[r["id"] - 1]):
            kind = KINDS.get(r["tgt"][i])
            if field == "-" or kind is None:
                continue
            row = r["weights"][i]
            most = max(range(len(row)), key=lambda j: (row[j], -j))
            hits[kind] += most in cells([int(v) for v in field.split(",")], grid)
            words[kind] += 1
    print(", ".join("%.2f" % (h / w) if w else "-" for h, w in zip(hits, words)))


main()
