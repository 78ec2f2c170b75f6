"""Real text as s2s reads it: the pairs of a split, the vocabularies and the batches."""
from reference.config import ConfigError


def read_lines(path):
    """The lines of a text file as s2s reads them: cut at \\n only, one \\r before it
    dropped, UTF-8 required."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    out = []
    for k, line in enumerate(lines):
        try:
            out.append(line.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise ConfigError("%s:%d: invalid UTF-8 (%s)" % (path, k + 1, e)) from None
    return out


def read_pairs(cfg, split):
    """The raw text pairs of a split ("train", "valid", "test") as the config names them:
    two files, or one TSV file. Lines over data.max_line_bytes are dropped here, as s2s
    skips them, except the test set's: every test source gets a line of test.hyp. None
    when the split is not configured."""
    src, tgt, tsv = (cfg["data.%s_%s" % (split, side)] for side in ("src", "tgt", "tsv"))
    limit = cfg["data.max_line_bytes"] if split != "test" else float("inf")

    def fits(line):
        return len(line.encode("utf-8")) <= limit
    if tsv:
        pairs = []
        for line in read_lines(tsv):
            if not fits(line):
                continue
            if "\t" not in line:
                raise ConfigError("%s: expected source<TAB>target, found no tab" % tsv)
            first, second = line.split("\t")[:2]
            pairs.append((second, first) if cfg["data.tsv_reverse"] else (first, second))
        return pairs
    if not src:
        return None
    a = read_lines(src)
    b = read_lines(tgt) if tgt else [""] * len(a)
    if len(a) != len(b):
        raise ConfigError("source `%s` has %d lines, target `%s` has %d" % (src, len(a), tgt,
                                                                           len(b)))
    return [(x, y) for x, y in zip(a, b) if fits(x) and fits(y)]


SPECIALS = ("<pad>", "<unk>", "<s>", "</s>")


def build_vocab(sentences, max_size, min_freq):
    """s2s's vocabulary (src/data/vocab.c): the four specials, then the words seen at least
    min_freq times, most frequent first, ties by first occurrence; at most max_size
    entries, specials included (0: no limit). Returns the list of words, id order."""
    counts = {}
    for words in sentences:
        for w in words:
            counts[w] = counts.get(w, 0) + 1
    kept = [w for w, c in counts.items() if c >= min_freq and w not in SPECIALS]
    kept.sort(key=lambda w: -counts[w])                 # stable: ties keep first occurrence
    words = list(SPECIALS) + kept
    return words[:max(max_size, len(SPECIALS))] if max_size > 0 else words


class Batches:
    """s2s's training batches (src/data/epochs.c): each epoch shuffles the pairs, sorts
    them by (source length, target length) within pools of batch_size * pool_batches,
    cuts them into batches of batch_size and shuffles the batch order (Python's random
    here, PCG32 in s2s: the same procedure, other draws)."""

    def __init__(self, pairs, batch_size, pool_batches, shuffle, rng):
        self.pairs, self.batch_size, self.pool = pairs, batch_size, batch_size * pool_batches
        self.shuffle, self.rng = shuffle, rng
        self.n_batches = (len(pairs) + batch_size - 1) // batch_size
        self.epoch = 0
        self.plan()

    def plan(self):
        order = list(range(len(self.pairs)))
        if self.shuffle:
            self.rng.shuffle(order)
        for start in range(0, len(order), self.pool):
            order[start:start + self.pool] = sorted(
                order[start:start + self.pool],
                key=lambda k: (len(self.pairs[k][0]), len(self.pairs[k][1])))
        self.order = order
        self.batch_order = list(range(self.n_batches))
        if self.shuffle:
            self.rng.shuffle(self.batch_order)
        self.next = 0

    def next_batch(self):
        if self.next == self.n_batches:
            self.epoch += 1
            self.plan()
        first = self.batch_order[self.next] * self.batch_size
        self.next += 1
        return [self.pairs[k] for k in self.order[first:first + self.batch_size]]

    def progress(self):
        return self.epoch + self.next / self.n_batches
