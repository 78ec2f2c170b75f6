/* fuzz_targets.c: the fuzz targets of fuzz_targets.h: the config loader, the corpus
 * reader with its UTF-8 validation and tokenizer, the checkpoint loader, the
 * alignments reader with the heatmaps drawn from it, the picture loader, and the word
 * boxes with the attention correctness computed from them, and SentencePiece models (a
 * .model file of data.subword_src_model, a checkpoint's SPMS section). Each target checks the promises
 * the headers of src/ make about a successful result, not only that nothing crashes.
 * Writes nothing to disk: corpus files are memory files (memfd). */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz/fuzz_targets.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <unistr.h>

#include "data/corpus.h"
#include "data/ground.h"
#include "data/image.h"
#include "data/vocab.h"
#include "report/alignlog.h"
#include "report/grounding.h"
#include "report/heatmap.h"
#include "text/subwords.h"
#include "text/tokenize.h"
#include "train/checkpoint.h"
#include "run/config.h"
#include "run/sectionfile.h"

/* A broken promise: say which and abort (a crash for libFuzzer, a failure for Check). */
static void require(int ok, const char *promise, const char *detail)
{
    if (ok)
        return;
    fprintf(stderr, "fuzz: broken promise: %s%s%s\n", promise, detail ? ": " : "",
            detail ? detail : "");
    abort();
}

/* ---- verdicts ---------------------------------------------------------------------------- */

static char verdict[4096];

const char *fuzz_verdict(void)
{
    return verdict;
}

/* Appends "; what: accepted[ detail]" or "; what: refused: message" to the verdict,
 * with each of the memory files' paths (which vary) replaced by its role. */
static void add_verdict(const char *what, int rc, const Error *err, const char *detail,
                        const char *const *paths, const char *const *roles, int n_paths)
{
    char part[2048];
    if (rc == 0)
        snprintf(part, sizeof part, "%s: accepted%s%s", what, detail ? " " : "", detail ? detail : "");
    else
        snprintf(part, sizeof part, "%s: refused: %s", what, err->msg);
    for (int k = 0; k < n_paths; k++)
        for (char *at; (at = strstr(part, paths[k]));) {
            size_t from = strlen(paths[k]), to = strlen(roles[k]);
            memmove(at + to, at + from, strlen(at + from) + 1);
            memcpy(at, roles[k], to);
        }
    size_t used = strlen(verdict);
    if (used && used + 2 < sizeof verdict) {
        memcpy(verdict + used, "; ", 3);
        used += 2;
    }
    /* one line of ASCII whatever the input held: other bytes as \xHH */
    for (const unsigned char *c = (const unsigned char *)part; *c && used + 5 < sizeof verdict; c++)
        used += (size_t)(*c >= 0x20 && *c < 0x7f ? snprintf(verdict + used, 2, "%c", *c)
                                                 : snprintf(verdict + used, 5, "\\x%02x", *c));
}

static int is_utf8(const char *s, size_t n)
{
    size_t bad_at, bad_len;
    return utf8_validate(s, n, &bad_at, &bad_len) == 0;
}

/* ---- config ------------------------------------------------------------------------------ */

/* config.h: the effective config "config_load reads back to the same values"; s2s
 * stores it in every checkpoint and run directory and reads it again on resume. */
static void config_round_trip(const Config *cfg)
{
    char *yaml = config_to_yaml(cfg);
    Config again;
    Error err;
    config_defaults(&again);
    int rc = config_load_buffer(&again, yaml, strlen(yaml), "effective.yaml", &err);
    if (rc == 0)
        rc = config_validate(&again, &err);
    if (rc < 0)
        fprintf(stderr, "%s", yaml);
    require(rc == 0, "the effective config loads back", err.msg);
    char *yaml_again = config_to_yaml(&again);
    if (strcmp(yaml, yaml_again))
        fprintf(stderr, "%s\n---- loaded back as ----\n%s", yaml, yaml_again);
    require(!strcmp(yaml, yaml_again), "the effective config loads back unchanged", NULL);
    free(yaml);
    free(yaml_again);
}

/* Each line of text as `--set LINE`, over the defaults, then validation. */
static void config_set_lines(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    require(text != NULL, "memory for the input", NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    Config cfg;
    Error err;
    config_defaults(&cfg);
    int rc = 0;
    for (char *line = text; line && rc == 0;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        rc = config_set(&cfg, line, &err);
        line = nl ? nl + 1 : NULL;
    }
    if (rc == 0)
        rc = config_validate(&cfg, &err);
    if (rc == 0)
        config_round_trip(&cfg);
    add_verdict("as --set lines", rc, &err, NULL, NULL, NULL, 0);
    free(text);
}

int fuzz_config_one(const uint8_t *data, size_t size)
{
    verdict[0] = '\0';
    Config cfg;
    Error err;
    config_defaults(&cfg);
    int rc = config_load_buffer(&cfg, (const char *)data, size, "fuzz.yaml", &err);
    if (rc == 0)
        rc = config_validate(&cfg, &err);
    if (rc == 0)
        config_round_trip(&cfg);
    add_verdict("as a file", rc, &err, NULL, NULL, NULL, 0);
    config_set_lines(data, size);
    return 0;
}

/* ---- corpus and tokenizer ------------------------------------------------------------------ */

/* The corpus reader reads 64 KiB blocks (corpus.c); a first line this close to a
 * block puts the input's lines across the block boundary. */
#define READ_BLOCK 65536

/* A corpus input's FLAGS, two bytes, from their lowest bit up. First: character level;
 * lowercase; tsv_reverse; max_length 4 (else none); two bits of max_line_bytes (1 MiB,
 * 64, 16, 1); keep_refs; natural. Second: bit 0; two bits of the source vocabulary's
 * size cap (none, 5, 6, 50); min_freq 2 (else 1); bit 4, which with bit 0 puts a first
 * line of filler before each file; three bits of where the filler ends. */
typedef struct {
    CorpusSpec spec;
    int src_vocab_size, min_freq;
    size_t filler; /* bytes of a first line before the input's own lines; 0: none */
} CorpusCase;

static CorpusCase corpus_case(uint8_t a, uint8_t b)
{
    static const long max_line_bytes[4] = {1L << 20, 64, 16, 1};
    static const int vocab_sizes[4] = {0, 5, 6, 50};
    CorpusCase c = {.spec = {.level = a & 1 ? LEVEL_CHAR : LEVEL_WORD,
                             .lowercase = a >> 1 & 1,
                             .tsv_reverse = a >> 2 & 1,
                             .max_length = a >> 3 & 1 ? 4 : 0,
                             .max_line_bytes = max_line_bytes[a >> 4 & 3],
                             .keep_refs = a >> 6 & 1,
                             .natural = a >> 7 & 1}};
    c.src_vocab_size = vocab_sizes[b >> 1 & 3];
    c.min_freq = b >> 3 & 1 ? 2 : 1;
    if ((b & 0x11) == 0x11) { /* a quarter of the inputs: they are slower */
        c.filler = READ_BLOCK - 1 - (size_t)(8 - (b >> 5)); /* 1 to 8 bytes before the block */
        /* skipped as too long, not tokenized: tokenizing it would take 100 times longer
         * than the rest of the input */
        if (c.spec.max_line_bytes > READ_BLOCK / 2)
            c.spec.max_line_bytes = READ_BLOCK / 2;
    }
    return c;
}

/* A file in memory: filler bytes of a first line (if any), then data; path opens it. */
typedef struct {
    int fd;
    char path[64];
} MemFile;

static void write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        require(w > 0, "writing a memory file", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
}

static void memfile_open(MemFile *m, size_t filler, int tsv, const uint8_t *data, size_t n)
{
    m->fd = memfd_create("s2s-fuzz", 0);
    require(m->fd >= 0, "memfd_create", strerror(errno));
    if (filler) {
        char *line = malloc(filler + 1);
        require(line != NULL, "memory for the filler", NULL);
        memset(line, 'x', filler);
        if (tsv)
            line[1] = '\t';
        line[filler] = '\n';
        write_all(m->fd, line, filler + 1);
        free(line);
    }
    write_all(m->fd, data, n);
    snprintf(m->path, sizeof m->path, "/proc/self/fd/%d", m->fd);
}

static void memfile_close(MemFile *m)
{
    close(m->fd);
}

/* corpus.h's promises about a corpus read without error, whose ids index vocabularies
 * of n_src and n_tgt words. */
static void check_corpus(const Corpus *c, const CorpusSpec *spec, int n_src, int n_tgt)
{
    const CorpusCounts *k = &c->counts;
    require(c->n > 0, "a corpus read without error has pairs", NULL);
    require(c->n + k->empty + k->too_long + k->overlong_line == k->lines,
            "every pair read is kept or counted as skipped", NULL);
    for (int p = 0; p < c->n; p++) {
        int ns = c->src_len[p], nt = c->tgt_len[p];
        require(ns > 0 && nt > 0, "kept pairs have tokens on both sides", NULL);
        require(ns <= c->max_src_len && nt <= c->max_tgt_len, "max_src_len, max_tgt_len", NULL);
        require(!spec->max_length || (ns <= spec->max_length && nt <= spec->max_length),
                "kept pairs are within max_length", NULL);
        require(p == 0 || c->line_no[p] > c->line_no[p - 1], "line numbers increase", NULL);
        for (int j = 0; j < ns; j++) {
            int id = c->ids[c->src_start[p] + j];
            require(id >= 0 && id < n_src, "source ids are in the vocabulary", NULL);
        }
        for (int i = 0; i < nt; i++) {
            int id = c->ids[c->tgt_start[p] + i];
            require(id >= 0 && id < n_tgt, "target ids are in the vocabulary", NULL);
        }
        if (spec->keep_refs)
            require(c->refs[p] && is_utf8(c->refs[p], strlen(c->refs[p])),
                    "references are UTF-8 text", NULL);
    }
}

/* Reads spec's files as training does: counting, building the vocabularies, mapping;
 * then again by looking words up in the built vocabularies (as validation data is
 * read), which must give the same ids. */
static void corpus_train_read(const CorpusCase *cc, const char *what)
{
    Vocab src_counts, tgt_counts, src_vocab = {0}, tgt_vocab = {0};
    vocab_init(&src_counts);
    vocab_init(&tgt_counts);
    Corpus c, again = {0};
    Error err;
    const char *paths[2], *roles[2];
    int n_paths = 0;
    if (cc->spec.tsv_path) {
        paths[n_paths] = cc->spec.tsv_path, roles[n_paths++] = "TSV";
    } else {
        paths[n_paths] = cc->spec.src_path, roles[n_paths++] = "SOURCE";
        paths[n_paths] = cc->spec.tgt_path, roles[n_paths++] = "TARGET";
    }
    if (corpus_read(&c, &cc->spec, &src_counts, &tgt_counts, 1, "fuzz", &err) < 0) {
        require(!strstr(err.msg, "cannot open"), "the memory files open", err.msg);
        add_verdict(what, -1, &err, NULL, paths, roles, n_paths);
        goto done;
    }
    char kept[256];
    corpus_describe(&c, kept, sizeof kept);
    add_verdict(what, 0, &err, kept, paths, roles, n_paths);
    check_corpus(&c, &cc->spec, src_counts.size, tgt_counts.size);
    vocab_build(&src_vocab, &src_counts, cc->src_vocab_size, cc->min_freq);
    vocab_build(&tgt_vocab, &tgt_counts, 0, 1);
    corpus_remap(&c, &src_counts, &src_vocab, &tgt_counts, &tgt_vocab);
    check_corpus(&c, &cc->spec, src_vocab.size, tgt_vocab.size);
    int rc = corpus_read(&again, &cc->spec, &src_vocab, &tgt_vocab, 0, "fuzz", &err);
    require(rc == 0, "a corpus read once reads again", err.msg);
    require(again.n == c.n && again.n_ids == c.n_ids &&
            !memcmp(again.ids, c.ids, sizeof(int) * c.n_ids),
            "looking words up gives the ids that counting and mapping gave", NULL);
done:
    corpus_free(&c);
    corpus_free(&again);
    vocab_free(&src_counts);
    vocab_free(&tgt_counts);
    vocab_free(&src_vocab);
    vocab_free(&tgt_vocab);
}

/* detokenize and detokenize_text work like snprintf: the same length whatever the
 * capacity, and the text cut to fit. */
static void check_detokenize(const Tokens *t, int n, TokenLevel level)
{
    const char **words = malloc(sizeof(char *) * (size_t)(n > 0 ? n : 1));
    require(words != NULL, "memory for the tokens", NULL);
    for (int k = 0; k < n; k++)
        words[k] = tokens_get(t, k);
    for (int natural = 0; natural < 2; natural++) {
        size_t (*join)(char *, size_t, const char *const *, int, TokenLevel) =
            natural ? detokenize_text : detokenize;
        size_t len = join(NULL, 0, words, n, level);
        char *out = malloc(len + 1);
        require(out != NULL, "memory for the text", NULL);
        require(join(out, len + 1, words, n, level) == len && strlen(out) == len,
                "detokenize writes the length it returns", NULL);
        require(is_utf8(out, len), "detokenized text is UTF-8", NULL);
        size_t cap = len / 2 + 1;
        require(join(out, cap, words, n, level) == len && strlen(out) == cap - 1,
                "detokenize cuts to the capacity", NULL);
        free(out);
    }
    free(words);
}

/* tokenize.h's promises about the tokens of one valid line. */
static void check_tokens(const Tokens *t, int n, TokenLevel level)
{
    require(n == t->count && n >= 0, "tokenize_line returns the token count", NULL);
    for (int k = 0; k < n; k++) {
        const char *token = tokens_get(t, k);
        size_t len = strlen(token);
        require(len > 0 && is_utf8(token, len), "tokens are non-empty UTF-8", token);
        size_t chars = 0;
        for (size_t at = 0; at < len; chars++) {
            ucs4_t c;
            at += (size_t)u8_mbtouc(&c, (const uint8_t *)token + at, len - at);
            require(!char_is_space(c), "tokens hold no whitespace", token);
        }
        require(level == LEVEL_WORD || chars == 1, "character tokens are one character", token);
    }
}

/* Every line of data (split at \n and 0xFF) through utf8_validate and, if valid, the
 * tokenizer at both levels. */
static void tokenize_lines(const uint8_t *data, size_t size, int lowercase)
{
    Tokens t = {0};
    for (size_t at = 0; at <= size;) {
        size_t end = at;
        while (end < size && data[end] != '\n' && data[end] != 0xFF)
            end++;
        const char *line = (const char *)data + at;
        size_t n = end - at, bad_at = 0, bad_len = 0;
        if (utf8_validate(line, n, &bad_at, &bad_len) == 0) {
            for (int level = LEVEL_WORD; level <= LEVEL_CHAR; level++) {
                int count = tokenize_line(&t, line, n, (TokenLevel)level, lowercase, 0);
                check_tokens(&t, count, (TokenLevel)level);
                check_detokenize(&t, count, (TokenLevel)level);
            }
        } else {
            require(bad_at < n && bad_len >= 1 && bad_len <= 4 && bad_at + bad_len <= n,
                    "utf8_validate points inside the line", NULL);
        }
        at = end + 1;
    }
    tokens_free(&t);
}

int fuzz_corpus_one(const uint8_t *data, size_t size)
{
    verdict[0] = '\0';
    if (size < 2) {
        snprintf(verdict, sizeof verdict, "no input: shorter than its two flag bytes");
        return 0;
    }
    CorpusCase cc = corpus_case(data[0], data[1]);
    data += 2;
    size -= 2;
    const uint8_t *split = memchr(data, 0xFF, size);
    size_t n_src = split ? (size_t)(split - data) : size;
    /* without a 0xFF, the source is its own target: equal line counts */
    const uint8_t *tgt = split ? split + 1 : data;
    size_t n_tgt = split ? size - n_src - 1 : size;

    MemFile src_file, tgt_file, tsv_file;
    memfile_open(&src_file, cc.filler, 0, data, n_src);
    memfile_open(&tgt_file, cc.filler, 0, tgt, n_tgt);
    memfile_open(&tsv_file, cc.filler, 1, data, n_src);
    cc.spec.src_path = src_file.path;
    cc.spec.tgt_path = tgt_file.path;
    corpus_train_read(&cc, "as two files");
    cc.spec.src_path = cc.spec.tgt_path = NULL;
    cc.spec.tsv_path = tsv_file.path;
    corpus_train_read(&cc, "as TSV");
    memfile_close(&src_file);
    memfile_close(&tgt_file);
    memfile_close(&tsv_file);

    tokenize_lines(data, size, cc.spec.lowercase);
    return 0;
}

/* ---- checkpoint ------------------------------------------------------------------------------ */

/* The container layout of sectionfile.c: a 32-byte header whose bytes 20..23 count the
 * sections and 24..31 give the file size; each section is a 16-byte head (tag,
 * reserved word, length at 8..15), its data, and the CRC-32 of the data. */
#define CKPT_HEADER 32
#define CKPT_SECTION_HEAD 16

/* Makes the header's file size and every section's CRC right, as far as the structure
 * goes. */
static void ckpt_repair(uint8_t *b, size_t size)
{
    if (size < CKPT_HEADER)
        return;
    uint64_t declared = size;
    memcpy(b + 24, &declared, 8);
    uint32_t n_sections;
    memcpy(&n_sections, b + 20, 4);
    size_t at = CKPT_HEADER;
    for (uint32_t s = 0; s < n_sections && s < CKPT_MAX_SECTIONS; s++) {
        if (size - at < CKPT_SECTION_HEAD)
            return;
        uint64_t len;
        memcpy(&len, b + at + 8, 8);
        at += CKPT_SECTION_HEAD;
        if (len > size - at || size - at - len < 4)
            return;
        uint32_t crc = crc32_update(0, b + at, (size_t)len);
        memcpy(b + at + len, &crc, 4);
        at += (size_t)len + 4;
    }
}

/* checkpoint.h's promises about a loaded checkpoint. */
static void check_checkpoint(const Checkpoint *ck, int with_training)
{
    Params p = {0};
    size_t n = params_carve(&p, NULL, &ck->model.dims);
    require(ck->model.params.n == n && ck->model.params.mem,
            "the weights are those of the model sizes", NULL);
    require(ck->model.src_vocab.size == ck->model.dims.src_vocab && ck->model.tgt_vocab.size == ck->model.dims.tgt_vocab,
            "the vocabularies are those of the model sizes", NULL);
    for (size_t k = 0; k < ck->model.params.n; k++)
        require(isfinite(ck->model.params.mem[k]), "every weight is finite", NULL);
    require(!with_training || ck->has_training, "the training state is loaded", NULL);
}

static void ckpt_load(const uint8_t *data, size_t size, const char *what)
{
    for (int with_training = 0; with_training < 2; with_training++) {
        Checkpoint ck;
        Error err;
        int rc = checkpoint_load_bytes(&ck, data, size, "fuzz.ckpt", with_training, &err);
        if (rc == 0)
            check_checkpoint(&ck, with_training);
        char part[128], detail[128] = "";
        snprintf(part, sizeof part, "%s%s", what, with_training ? ", with its training state" : "");
        if (rc == 0)
            snprintf(detail, sizeof detail, "(step %ld, %zu weights)", ck.model.step,
                     ck.model.params.n);
        add_verdict(part, rc, &err, detail, NULL, NULL, 0);
        checkpoint_free(&ck);
        if (rc < 0) /* loading the training state too can only fail as well */
            break;
    }
}

int fuzz_ckpt_one(const uint8_t *data, size_t size)
{
    verdict[0] = '\0';
    ckpt_load(data, size, "as it is");
    uint8_t *repaired = malloc(size ? size : 1);
    require(repaired != NULL, "memory for the copy", NULL);
    memcpy(repaired, data, size);
    ckpt_repair(repaired, size);
    if (memcmp(repaired, data, size))
        ckpt_load(repaired, size, "with sizes and CRCs made right");
    free(repaired);
    return 0;
}

/* ---- alignments ------------------------------------------------------------------------------- */

/* 1 if s[0..n) holds a character that XML 1.0 forbids, even as a character reference:
 * a control character other than tab, line feed and carriage return, U+FFFE, U+FFFF. */
static int has_non_xml_char(const char *s, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)s[k];
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') ||
            (c == 0xEF && k + 2 < n && (unsigned char)s[k + 1] == 0xBF &&
             ((unsigned char)s[k + 2] == 0xBE || (unsigned char)s[k + 2] == 0xBF)))
            return 1;
    }
    return 0;
}

/* One drawing of r into memory, which must be UTF-8; the returned text is malloc'd. */
static char *draw(const AlignRecord *r, int svg, int color, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    require(f != NULL, "open_memstream", strerror(errno));
    if (svg)
        heatmap_svg(f, r, "0", 1);
    else
        heatmap_txt(f, r, color);
    require(fclose(f) == 0, "writing to memory", NULL);
    require(is_utf8(text, *len), "heatmaps are UTF-8 text", NULL);
    return text;
}

/* alignlog.h's promises about a record, and heatmap.h's drawings of it. */
static void check_record(const AlignRecord *r)
{
    require(r->n_src > 0 && r->n_tgt > 0, "records have tokens on both sides", NULL);
    for (size_t k = 0; k < (size_t)r->n_src * (size_t)r->n_tgt; k++)
        require(r->weights[k] >= 0 && r->weights[k] <= 1, "weights are in [0, 1]", NULL);
    size_t len;
    char *svg = draw(r, 1, 0, &len);
    require(!has_non_xml_char(svg, len), "SVG files are XML: no character XML forbids", NULL);
    free(svg);
    free(draw(r, 0, 0, &len));
    free(draw(r, 0, 1, &len));
}

int fuzz_align_one(const uint8_t *data, size_t size)
{
    verdict[0] = '\0';
    AlignLog log;
    Error err;
    int rc = alignlog_parse(&log, (const char *)data, size, "fuzz.jsonl", &err);
    char detail[64];
    snprintf(detail, sizeof detail, "(%d records)", rc == 0 ? log.n : 0);
    if (rc == 0)
        for (int k = 0; k < log.n; k++)
            check_record(&log.records[k]);
    add_verdict("alignments", rc, &err, detail, NULL, NULL, 0);
    alignlog_free(&log);
    return 0;
}

/* ---- images -------------------------------------------------------------------------------- */

/* Pixels decoded at most: a header may claim up to 16384 x 16384 (1 GiB decoded), which
 * the fuzzer's memory limit does not allow; the header's checks are fuzzed at every
 * size, the decoder and the resizing below this one. */
enum { FUZZ_IMAGE_PIXELS = 1 << 20 };

int fuzz_image_one(const uint8_t *data, size_t size)
{
    verdict[0] = '\0';
    MemFile m;
    memfile_open(&m, 0, 0, data, size);
    const char *paths[] = {m.path}, *roles[] = {"image"};
    ImageSize s = {0, 0};
    Error err;
    int rc = image_size_of(m.path, &s, &err);
    char detail[64];
    snprintf(detail, sizeof detail, "(%d x %d)", s.width, s.height);
    add_verdict("header", rc, &err, rc == 0 ? detail : NULL, paths, roles, 1);
    if (rc == 0)
        require(s.width >= 1 && s.height >= 1 && s.width <= IMAGE_MAX_SIDE &&
                    s.height <= IMAGE_MAX_SIDE, "an accepted header's size is in range", detail);
    if (rc == 0 && (size_t)s.width * (size_t)s.height <= FUZZ_IMAGE_PIXELS) {
        float out[3 * 8 * 8];
        ImageSize orig;
        rc = image_load(out, m.path, 8, 1, &orig, &err);
        add_verdict("pixels", rc, &err, NULL, paths, roles, 1);
        if (rc == 0) {
            require(orig.width == s.width && orig.height == s.height,
                    "the pixels are the header's size", detail);
            for (int k = 0; k < 3 * 8 * 8; k++)
                require(out[k] >= 0 && out[k] <= 1, "pixel values are in [0, 1]", detail);
        }
    }
    memfile_close(&m);
    return 0;
}

/* ---- word boxes ------------------------------------------------------------------------------ */

enum { FUZZ_GROUND_LINE_BYTES = 1024 };

/* ground.h's promises about an accepted file: its lines are the input's (ending at "\n",
 * a last one without it counting, one '\r' before the end dropped), each with as many
 * boxes as fields (none on an empty line, else one more than its spaces), in order;
 * every box names nothing or lies within the largest picture, x0 < x1 and y0 < y1. */
static void check_ground_file(const GroundFile *g, const uint8_t *data, size_t size)
{
    long k = 0, boxes = 0;
    for (size_t at = 0; at < size; k++) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        const size_t end = nl ? (size_t)(nl - data) : size;
        size_t n = end - at;
        if (n > 0 && data[at + n - 1] == '\r')
            n--;
        int fields = n > 0;
        for (size_t i = 0; i < n; i++)
            fields += data[at + i] == ' ';
        require(k < g->n_lines, "every line of the input is a line of boxes", NULL);
        require(g->start[k] == boxes && g->count[k] == fields,
                "a line has one box per field, after the line before", NULL);
        boxes += fields;
        at = end + 1;
    }
    require(k == g->n_lines && boxes == g->n_boxes, "the lines are the input's", NULL);
    for (long b = 0; b < g->n_boxes; b++) {
        const GroundBox *x = &g->boxes[b];
        if (ground_names(x))
            require(x->x0 >= 0 && x->x0 < x->x1 && x->x1 <= IMAGE_MAX_SIDE && x->y0 >= 0 &&
                    x->y0 < x->y1 && x->y1 <= IMAGE_MAX_SIDE, "a box is a box of a picture", NULL);
        else
            require(x->x0 == GROUND_NONE && !x->y0 && !x->x1 && !x->y1, "'-' is GROUND_NONE", NULL);
    }
}

/* One line's boxes on a G x G grid over a picture of size orig that holds them all:
 * grounding.h's cells (a box that names something has at least one, as many as the
 * count says), and uniform attention scored as it must be: every cell ties, so a word
 * is a hit when its cells hold cell 0, and its mass is its share of the cells. */
static void check_ground_cells(const GroundBox *boxes, int n, int G, ImageSize orig)
{
    static unsigned char cells[14 * 14];
    static float uniform[14 * 14];
    long named = 0, hits = 0;
    double mass = 0;
    for (int k = 0; k < G * G; k++)
        uniform[k] = 1.0f / (float)(G * G);
    for (int b = 0; b < n; b++) {
        const int count = grounding_cells(cells, G, boxes[b], orig);
        int set = 0;
        for (int k = 0; k < G * G; k++)
            set += cells[k] == 1;
        require(set == count, "grounding_cells returns the cells it sets", NULL);
        if (!ground_names(&boxes[b])) {
            require(count == 0, "a word that names nothing has no cell", NULL);
            continue;
        }
        require(count >= 1, "a box within the picture has a cell", NULL);
        named++;
        hits += cells[0];
        mass += (double)count / (G * G);
    }
    GroundingCounts c = {0};
    grounding_add(&c, uniform, 0, 1, G, boxes, n, orig); /* stride 0: every row the same */
    require(c.words == named && c.hits == hits, "pointing over uniform attention", NULL);
    require(fabs(c.mass - mass) <= 1e-5 * (1 + mass), "mass over uniform attention", NULL);
}

int fuzz_ground_one(const uint8_t *data, size_t size)
{
    verdict[0] = '\0';
    MemFile m;
    memfile_open(&m, 0, 0, data, size);
    const char *paths[] = {m.path}, *roles[] = {"ground"};
    GroundFile g;
    Error err;
    int rc = ground_read(&g, m.path, FUZZ_GROUND_LINE_BYTES, &err);
    char detail[96];
    long named = 0;
    for (long b = 0; rc == 0 && b < g.n_boxes; b++)
        named += ground_names(&g.boxes[b]);
    snprintf(detail, sizeof detail, "(%ld lines, %ld fields, %ld boxes)", rc == 0 ? g.n_lines : 0,
             rc == 0 ? g.n_boxes : 0, named);
    add_verdict("word boxes", rc, &err, rc == 0 ? detail : NULL, paths, roles, 1);
    if (rc < 0)
        require(g.boxes == NULL && g.n_lines == 0, "a refused file keeps nothing", NULL);
    if (rc == 0) {
        check_ground_file(&g, data, size);
        ImageSize orig = {1, 1}; /* the smallest picture that holds every box */
        for (long b = 0; b < g.n_boxes; b++) {
            if (g.boxes[b].x1 > orig.width)
                orig.width = g.boxes[b].x1;
            if (g.boxes[b].y1 > orig.height)
                orig.height = g.boxes[b].y1;
        }
        static const int grids[4] = {1, 3, 7, 14};
        for (long k = 0; k < g.n_lines; k++) {
            const GroundBox *line = g.boxes + g.start[k];
            const int n = g.count[k];
            rc = ground_check_line(line, n, n, orig, "fuzz", k + 1, &err);
            require(rc == 0, "every box lies in the picture that holds them all", err.msg);
            rc = ground_check_line(line, n, n + 1, orig, "fuzz", k + 1, &err);
            require(rc < 0 && strstr(err.msg, "(one per caption word)"),
                    "a line is checked against its caption's length", err.msg);
            for (int G = 0; G < 4; G++)
                check_ground_cells(line, n, grids[G], orig);
        }
    }
    ground_free(&g);
    memfile_close(&m);
    return 0;
}

/* ---- SentencePiece models ---------------------------------------------------------------- */

/* Lines a loaded model splits: ASCII, accents, a ligature NFKC rewrites, spaces only,
 * nothing. */
static const char *const SPM_LINES[] = {"a b c ab", "\xc3\x80 la c\xc3\xb4t\xc3\xa9",
                                        "zwei Hunde", "\xef\xac\x81ne", "   ", ""};

/* line split by sw (alpha 0: the best split; else drawn): the pieces are non-empty
 * UTF-8 and decode into UTF-8. */
static void check_split(const Subwords *sw, Tokens *t, const char *line, double alpha)
{
    Error err;
    const int n = subwords_encode(sw, t, line, strlen(line), alpha, &err);
    require(n >= -1, "subwords_encode returns a count or -1", NULL);
    if (n <= 0)
        return;
    const char **pieces = malloc((size_t)n * sizeof *pieces);
    require(pieces != NULL, "memory", NULL);
    for (int k = 0; k < n; k++) {
        pieces[k] = tokens_get(t, k);
        require(pieces[k][0] != '\0', "a piece is not empty", line);
    }
    const long len = subwords_decode(sw, NULL, 0, pieces, n);
    if (len >= 0) {
        char *text = malloc((size_t)len + 1);
        require(text != NULL, "memory", NULL);
        require(subwords_decode(sw, text, (size_t)len + 1, pieces, n) == len,
                "subwords_decode gives the length it said", line);
        free(text);
    }
    free(pieces);
}

int fuzz_spm_one(const uint8_t *data, size_t size)
{
    verdict[0] = '\0';
    Error err;
    Subwords *sw = subwords_load(data, size, "fuzz.model", &err);
    char detail[64] = "";
    if (sw)
        snprintf(detail, sizeof detail, "(%d pieces)", subwords_vocab_size(sw));
    add_verdict("subword model", sw ? 0 : -1, &err, sw ? detail : NULL, NULL, NULL, 0);
    if (!sw)
        return 0;
    for (int k = 0; k < subwords_vocab_size(sw); k++)
        require(subwords_piece(sw, k) != NULL, "every piece has a text", NULL);
    Tokens t = {0};
    for (size_t k = 0; k < sizeof SPM_LINES / sizeof *SPM_LINES; k++) {
        check_split(sw, &t, SPM_LINES[k], 0);
        check_split(sw, &t, SPM_LINES[k], 0.5);
    }
    tokens_free(&t);
    subwords_free(sw);
    return 0;
}
