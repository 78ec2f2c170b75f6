#!/usr/bin/env python3
"""Make the Tatoeba small set from an English<TAB>French pair file.

The rule (written here from the description that came with the team's copy of the
data, the 2017-09-29 export):
  * both sides normalised as the PyTorch seq2seq tutorial does (lowercase, strip,
    accents removed, a space before . ! ?, every run of other characters than
    a-z A-Z ! ? turned into one space);
  * the tutorial's filter: fewer than 10 normalised words on each side and an English
    side starting with one of its twelve prefixes ("i am ", "he s ", ...);
  * groups of pairs that share a normalised English or French sentence are kept
    together, shuffled with splitmix64 (seed 42) and dealt out: 1000 pairs to valid,
    1000 to test, the rest to train, each split in file order.
Writes small-{train,valid,test}.{en,fr} (the original, unnormalised lines), and the
whole corpus dealt out by the same rule (every pair, no filter; groups by the same
normalised keys) as {train,valid,test}.{en,fr}.

usage: tatoeba-split.py eng-fra.tsv OUTDIR
"""
import os
import re
import sys
import unicodedata

PREFIXES = ("i am ", "i m ", "he is", "he s ", "she is", "she s ",
            "you are", "you re ", "we are", "we re ", "they are", "they re ")
HELD_OUT = 1000
SEED = 42
M64 = 2 ** 64 - 1


def tutorial_normal_form(text):
    text = text.strip().lower()
    text = "".join(ch for ch in unicodedata.normalize("NFD", text)
                   if unicodedata.category(ch) != "Mn")
    text = re.sub(r"([.!?])", r" \1", text)
    text = re.sub(r"[^a-zA-Z!?]+", " ", text)
    return text.strip()


def splitmix64(seed):
    """The splitmix64 generator (Steele, Lea and Flood 2014)."""
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        yield z ^ (z >> 31)


def groups(keys):
    """Indices of pairs grouped by shared English or French key, groups in order of
    their first member."""
    owner = {}

    def root(node):
        while owner.setdefault(node, node) != node:
            owner[node] = owner[owner[node]]
            node = owner[node]
        return node

    for en, fr in keys:
        a, b = root(("en", en)), root(("fr", fr))
        if a != b:
            owner[a] = b
    members = {}
    for index, (en, _) in enumerate(keys):
        members.setdefault(root(("en", en)), []).append(index)
    return list(members.values())   # dicts keep insertion order: first member first


def deal(keys):
    parts = groups(keys)
    draw = splitmix64(SEED)
    for i in range(len(parts) - 1, 0, -1):
        j = next(draw) % (i + 1)
        parts[i], parts[j] = parts[j], parts[i]
    valid, test, train = [], [], []
    for part in parts:
        if len(valid) + len(part) <= HELD_OUT:
            valid += part
        elif len(test) + len(part) <= HELD_OUT:
            test += part
        else:
            train += part
    return sorted(train), sorted(valid), sorted(test)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    source, outdir = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8", newline="\n") as f:
        rows = [line.rstrip("\n").split("\t")[:2] for line in f]
    kept, keys, all_keys = [], [], []
    for row in rows:
        if len(row) != 2:
            sys.exit("%s: a line without a tab" % source)
        en, fr = tutorial_normal_form(row[0]), tutorial_normal_form(row[1])
        all_keys.append((en, fr))
        if len(en.split(" ")) < 10 and len(fr.split(" ")) < 10 and en.startswith(PREFIXES):
            kept.append(row)
            keys.append((en, fr))
    os.makedirs(outdir, exist_ok=True)
    for prefix, pairs, pair_keys in (("small-", kept, keys), ("", rows, all_keys)):
        train, valid, test = deal(pair_keys)
        if len(valid) != HELD_OUT or len(test) != HELD_OUT:
            sys.exit("could not deal out %d validation and test pairs" % HELD_OUT)
        for name, part in (("train", train), ("valid", valid), ("test", test)):
            for column, lang in ((0, "en"), (1, "fr")):
                path = os.path.join(outdir, "%s%s.%s" % (prefix, name, lang))
                with open(path, "w", encoding="utf-8", newline="\n") as f:
                    f.writelines(pairs[k][column] + "\n" for k in part)
        print("tatoeba-split: %s%d of %d pairs: train %d, valid %d, test %d"
              % ("the tutorial's filter keeps " if prefix else "the whole corpus, ",
                 len(pairs), len(rows), len(train), len(valid), len(test)))


if __name__ == "__main__":
    main()
