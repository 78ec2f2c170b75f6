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
    them by (source length, target length) within pools of pool_batches batches, cuts
    the pools into batches and shuffles the batch order (Python's random here, PCG32 in
    s2s: the same procedure, other draws). A batch holds batch_size pairs, or with a token
    budget (batch_tokens > 0) as many as fit: its pairs times its longest side with the
    end mark at most batch_tokens, at most batch_size pairs; pools then hold pairs until
    their positions reach pool_batches budgets."""

    def __init__(self, pairs, batch_size, pool_batches, shuffle, rng, batch_tokens=0):
        self.pairs, self.batch_size, self.pool_batches = pairs, batch_size, pool_batches
        self.batch_tokens, self.shuffle, self.rng = batch_tokens, shuffle, rng
        self.epoch = 0
        self.plan()

    def positions(self, k):
        return max(len(self.pairs[k][0]), len(self.pairs[k][1])) + 1

    def pools(self, order):
        """The shuffled order cut into pools."""
        if self.batch_tokens <= 0:
            size = self.batch_size * self.pool_batches
            return [order[i:i + size] for i in range(0, len(order), size)]
        pools, pool, used = [], [], 0
        for k in order:
            if pool and used >= self.batch_tokens * self.pool_batches:
                pools.append(pool)
                pool, used = [], 0
            pool.append(k)
            used += self.positions(k)
        return pools + ([pool] if pool else [])

    def cut(self, pool):
        """A sorted pool cut into batches, each closed at batch_size pairs or before a
        pair that would take it past the token budget."""
        batches, batch, longest = [], [], 0
        for k in pool:
            wider = max(longest, self.positions(k))
            full = len(batch) == self.batch_size or (
                self.batch_tokens > 0 and (len(batch) + 1) * wider > self.batch_tokens)
            if batch and full:
                batches.append(batch)
                batch, wider = [], self.positions(k)
            batch.append(k)
            longest = wider
        return batches + ([batch] if batch else [])

    def plan(self):
        order = list(range(len(self.pairs)))
        if self.shuffle:
            self.rng.shuffle(order)
        self.batches = []
        for pool in self.pools(order):
            pool.sort(key=lambda k: (len(self.pairs[k][0]), len(self.pairs[k][1])))
            self.batches += self.cut(pool)
        self.n_batches = len(self.batches)
        self.batch_order = list(range(self.n_batches))
        if self.shuffle:
            self.rng.shuffle(self.batch_order)
        self.next = 0

    def next_batch(self):
        if self.next == self.n_batches:
            self.epoch += 1
            self.plan()
        batch = self.batches[self.batch_order[self.next]]
        self.next += 1
        return [self.pairs[k] for k in batch]

    def progress(self):
        return self.epoch + self.next / self.n_batches
