#!/usr/bin/python3
"""Where each kind of word's attention looks, from `s2s align --out` records (or the
reference's test-align.jsonl) and the .ground file they were scored against: for size,
colour and shape words and `it`, pointing and mass (src/cli/INTERFACE.md's rule), and
where the most attended cell lies when it misses -- on a cell the box touches but covers
less than half of, one or two cells off the box, on another object, or further -- and
pointing and mass over size, colour and shape words alone (without `it`, which the
corpus has given no box since issue 45; a .ground file of before then gives it one).

usage: where_it_looks.py ALIGN.jsonl TEST.ground [SIDE]
(the pictures' side in pixels: the first record's picture's, as s2s align names it, or
else SIDE, default 64: the reference's records name none)
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from reference.pictures import ground_cells  # noqa: E402  (INTERFACE.md's rule, exactly)
from PIL import Image  # noqa: E402

COLOURS = "red green blue yellow purple orange cyan white".split()   # s2s corpus shapes'
SHAPES = "square circle triangle diamond cross".split()
KINDS = dict([("small", "size"), ("big", "size"), ("it", "it")] + [(w, "colour") for w in COLOURS]
             + [(w, "shape") for w in SHAPES])


def touched(box, grid, side):
    """The cells a box overlaps at all, as (row, col)."""
    x0, y0, x1, y1 = box
    size = side / grid
    return {(r, c) for r in range(grid) for c in range(grid)
            if min(x1, (c + 1) * size) > max(x0, c * size)
            and min(y1, (r + 1) * size) > max(y0, r * size)}


def main():
    align, ground_path = sys.argv[1], sys.argv[2]
    side = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    with open(align) as f:
        first = json.loads(f.readline())
    if "image" in first:
        with Image.open(first["image"]) as picture:
            side = picture.size[0]                     # s2s corpus shapes' are square
    ground = [line.split() for line in open(ground_path)]
    where = collections.defaultdict(collections.Counter)
    hits, mass, words = collections.Counter(), collections.Counter(), collections.Counter()
    by_word = collections.defaultdict(lambda: [0, 0])
    for line in open(align):
        r = json.loads(line)
        grid = int(round(len(r["src"]) ** 0.5))
        fields = ground[r["id"] - 1]
        boxes = {tuple(map(int, f.split(","))) for f in fields if f != "-"}
        for i, field in enumerate(fields):
            kind = KINDS.get(r["tgt"][i])
            if field == "-" or kind is None:
                continue
            box = tuple(map(int, field.split(",")))
            row = r["weights"][i]
            most = divmod(max(range(len(row)), key=lambda j: (row[j], -j)), grid)
            own = [divmod(j, grid) for j in ground_cells(grid, box, side, side)]
            near = touched(box, grid, side)
            others = set().union(*(touched(b, grid, side) for b in boxes if b != box))
            words[kind] += 1
            hits[kind] += most in own
            by_word[r["tgt"][i]][0] += 1
            by_word[r["tgt"][i]][1] += most in own
            mass[kind] += sum(row[r_ * grid + c] for r_, c in own)
            if most in own:
                at = "box"
            elif most in near:
                at = "touches"
            elif most in others:
                at = "other object"
            else:
                off = min(max(abs(most[0] - r_), abs(most[1] - c)) for r_, c in near)
                at = "%d off" % off if off <= 2 else "further"
            where[kind][at] += 1
    for kind in ("size", "colour", "shape", "it"):
        n = words[kind]
        if n == 0:
            continue
        print("%-6s %4d words: pointing %.2f, mass %.2f; most attended cell: %s" % (
            kind, n, hits[kind] / n, mass[kind] / n,
            ", ".join("%s %.2f" % (k, v / n) for k, v in where[kind].most_common())))
    print("pointing by size word: " + ", ".join(
        "%s %.2f" % (w, by_word[w][1] / by_word[w][0]) for w in ("small", "big") if by_word[w][0]))
    n = sum(words.values())
    print("every word with a box: pointing %.3f, mass %.3f" % (sum(hits.values()) / n,
                                                               sum(mass.values()) / n))
    kinds = ("size", "colour", "shape")
    n = sum(words[k] for k in kinds)
    print("without it: pointing %.3f, mass %.3f" % (sum(hits[k] for k in kinds) / n,
                                                   sum(mass[k] for k in kinds) / n))


if __name__ == "__main__":
    main()
