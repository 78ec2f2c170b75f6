/* cmd_translate.c: `s2s translate`: stdin to stdout, one translation per input line in
 * order, greedy or beam search, n-best lists, alignments (Marian's hard and soft
 * formats, JSONL matrices, a terminal heatmap) and <unk> replacement. A bad input line
 * never shifts the output: it gets an empty line and a warning with its number. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fault.h"
#include "base/interrupt.h"
#include "base/mem.h"
#include "base/path.h"
#include "cli/command.h"
#include "data/pictures.h"
#include "decode/chunks.h"
#include "report/heatmap.h"
#include "report/links.h"
#include "text/linereader.h"
#include "text/splitter.h"
#include "text/tokenize.h"
#include "run/saved_model.h"

static const char TRANSLATE_USAGE[] =
    "usage: s2s translate --model CKPT [--beam N] [--alpha A] [--n-best N]\n"
    "                     [--alignment soft|hard|P] [--out-alignments FILE]\n"
    "                     [--show-attention] [--unk-replace] [--attention-mode M]\n"
    "                     < source.txt > translations.txt\n"
    "\n"
    "Translates stdin, one sentence a line, to stdout, one translation a line in the same\n"
    "order (flushed per line when stdin is a terminal); a line that cannot be translated\n"
    "gets an empty line and a warning on stderr. Tokenization, lowercasing and\n"
    "detokenization are the model's (its config's data and translate sections).\n"
    "  --beam N           hypotheses kept (1: greedy; default: translate.beam_size)\n"
    "  --alpha A          length normalisation ((5 + length) / 6)^A (default translate.alpha)\n"
    "  --n-best N         the N best translations: lines `index ||| translation ||| score`\n"
    "                     (index: the 0-based input line; a line that cannot be translated\n"
    "                     -- empty, not UTF-8, too long -- gets no entries)\n"
    "  --alignment hard   append ` ||| j-i ...`: for each target word the source word it\n"
    "                     attends to most (0-based tokens, </s> left out)\n"
    "  --alignment P      the same with every link above weight P (0 < P < 1)\n"
    "  --alignment soft   append ` ||| rows`: per target token (</s> too) its weights over\n"
    "                     the source tokens (</s> too), comma-separated; rows space-separated\n"
    "  --out-alignments F the attention matrices as JSONL (the format of alignments.jsonl)\n"
    "  --show-attention   draw each sentence's attention on stderr (control characters\n"
    "                     in words shown as U+FFFD)\n"
    "  --unk-replace      replace each <unk> by the source word it attends to most\n"
    "  --attention-mode M contexts: soft (the weighted sum), argmax (each head reads its\n"
    "                     most probable position) or auto: argmax for a model trained\n"
    "                     with hard attention, else soft (default: translate.attention_mode)\n"
    "  --max-source-length N  cut sources after N tokens, with a warning (instead of\n"
    "                     translate.max_source_length; a limit whose one sentence would not\n"
    "                     fit in memory is refused, exit 2)\n"
    "SIGINT or SIGTERM: the line being written is finished, stderr says how many lines\n"
    "were translated, and the exit is 130 or 143.\n"
    "An option's value is the next argument: --beam 5, not --beam=5.\n";

typedef struct {
    int beam, n_best, show, unk_replace;
    double alpha;
    int align;          /* 0 none, 1 hard, 2 soft, 3 threshold */
    int attention_mode; /* a ConfigDecodeMode, -1: the model's translate.attention_mode */
    int argmax;         /* decode with argmax contexts (resolved in settle_options) */
    long max_src;       /* source tokens kept (-1: the model's translate.max_source_length) */
    int max_src_given;  /* ... set by --max-source-length */
    float threshold;
    FILE *json;
    const SavedModel *ck;
    const Splitter *src_split;  /* how the model's sides become tokens and back: its */
    const Splitter *tgt_split;  /* data.level, or its SentencePiece models */
} Options;

/* One input line waiting in the batch. */
typedef struct {
    long line_no;
    ChunkSource src;    /* src.ok 0: bad input, an empty output line; src.self kept for
                         * --out-alignments and --show-attention */
    char **words;       /* the source tokens as written (for <unk> replacement); an image
                         * model's: the names of all n + 1 grid cells */
    char *picture;      /* an image model's line: the picture's path */
} Pending;

/* Lines are read BATCH at a time, and decoded in chunks (chunks.h). */
enum { BATCH = CHUNK_MAX_SENTENCES };

static void free_pending(Pending *p)
{
    for (int k = 0; k < p->src.n + (p->picture != NULL); k++)
        free(p->words[k]);
    free(p->words);
    free(p->picture);
    free(p->src.pixels);
    free(p->src.ids);
    free(p->src.self);
    memset(p, 0, sizeof *p);
}

/* Writes " ||| " and the alignment of h in the chosen format. */
static void write_alignment(FILE *out, const Options *o, const Hypothesis *h)
{
    AttnMatrix m = {h->attention, h->len + h->ended, h->src_len, h->src_len, 1,
                    model_reads_pictures(&o->ck->dims)};
    fputs(" ||| ", out);
    if (o->align == 2) {
        for (int i = 0; i < m.rows; i++)
            for (int j = 0; j < m.cols; j++)
                fprintf(out, "%s%.6g", j ? "," : i ? " " : "", (double)attn_at(&m, i, j));
        return;
    }
    int cap = m.rows * m.cols + 1;
    Link *links = xmalloc_array((size_t)cap, sizeof(Link));
    int n = align_hard_links(&m, o->align == 3 ? o->threshold : 0, links, cap);
    for (int k = 0; k < n; k++)
        fprintf(out, "%s%d-%d", k ? " " : "", links[k].j, links[k].i);
    free(links);
}

/* The words of h as text (with <unk> replaced if asked). Returns a malloc'd string. */
static char *hypothesis_text(const Options *o, const Pending *p, const Hypothesis *h,
                             const char **words)
{
    const Vocab *v = &o->ck->tgt_vocab;
    for (int i = 0; i < h->len; i++) {
        words[i] = vocab_word(v, h->tokens[i]);
        if (o->unk_replace && h->tokens[i] == TOK_UNK && p->src.n > 0) {
            const float *row = h->attention + (size_t)i * h->src_len;
            int best = 0;
            for (int j = 1; j < p->src.n; j++) /* the source </s> is not a word */
                best = row[j] > row[best] ? j : best;
            words[i] = p->words[best];
        }
    }
    const int natural = o->ck->config.translate.detokenize;
    size_t len = splitter_join(o->tgt_split, NULL, 0, words, h->len, natural);
    char *text = xmalloc(len + 1);
    splitter_join(o->tgt_split, text, len + 1, words, h->len, natural);
    return text;
}

/* Writes the hypothesis's attention to --out-alignments (with its heads, and the self
 * attention of its source in self[0..n_self)) and draws it with --show-attention. */
static void show(const Options *o, const Pending *p, const Hypothesis *h, const char **tgt_words,
                 const AttnMatrix *self, int n_self)
{
    AlignRecord r = {.step = o->ck->step, .id = p->line_no, .n_src = h->src_len,
                     .n_tgt = h->len + h->ended, .weights = h->attention,
                     .n_chosen = h->n_chosen, .chosen = h->chosen};
    r.src = xmalloc_array((size_t)h->src_len, sizeof(char *));
    r.tgt = xmalloc_array((size_t)r.n_tgt + 1, sizeof(char *));
    for (int j = 0; j < p->src.n; j++)
        r.src[j] = p->words[j];
    r.src[p->src.n] = p->picture ? p->words[p->src.n] : "</s>"; /* a picture's last cell */
    for (int i = 0; i < h->len; i++)
        r.tgt[i] = (char *)tgt_words[i];
    if (h->ended)
        r.tgt[h->len] = "</s>";
    if (o->json) { /* no epoch: the step is the model's */
        AttnMatrix heads[ATTN_MAX_HEADS];
        AlignExtras extra = {.heads = heads, .n_heads = h->n_heads, .self = self, .n_self = n_self,
                             .chosen = h->chosen, .n_chosen = h->n_chosen,
                             .chosen_stride = h->n_chosen, .image = p->picture};
        for (int k = 0; k < h->n_heads; k++) /* at most ATTN_MAX_HEADS (the config's limit) */
            heads[k] = (AttnMatrix){h->heads + (size_t)k * r.n_tgt * h->src_len, r.n_tgt,
                                    h->src_len, h->src_len, 1, p->picture != NULL};
        align_write_json(o->json, r.step, -1, r.id, (const char *const *)r.src,
                         (const char *const *)r.tgt,
                         &(AttnMatrix){h->attention, r.n_tgt, h->src_len, h->src_len, 1,
                                       p->picture != NULL}, &extra);
    }
    if (o->show) {
        char title[96];
        snprintf(title, sizeof title, "stdin line %ld (model of step %ld)", r.id, r.step);
        heatmap_txt_titled(stderr, &r, title, isatty(STDERR_FILENO));
    }
    free(r.src);
    free(r.tgt);
}

/* Bytes of the self-attention maps a line of n tokens keeps for --out-alignments and
 * --show-attention (0 when none are kept). */
static size_t kept_maps_bytes(const Options *o, int n)
{
    const int layers = o->ck->dims.sa_layers;
    if (!(o->show || o->json) || layers == 0)
        return 0;
    return (size_t)layers * (size_t)(n + 1) * (size_t)(n + 1) * sizeof(float);
}

/* Translates the pending lines and writes their output in order, each line whole.
 * Returns how many input lines it answered: all of them, or fewer when a signal came
 * (interrupt.h), which stops it after the line it was writing. */
static int flush_batch(ChunkDecoder *cd, const Options *o, Pending *pend, int n_pend, FILE *out)
{
    NBest results[BATCH];
    ChunkSource *src[BATCH] = {NULL}; /* n_pend of them filled (GCC cannot see that) */
    for (int k = 0; k < n_pend; k++)
        src[k] = &pend[k].src;
    chunk_decode(cd, src, n_pend, results);
    int answered = 0;
    for (int k = 0; k < n_pend; k++) {
        Pending *p = &pend[k];
        if (interrupt_pending()) { /* the lines before are whole: stop here */
            if (p->src.ok)
                nbest_free(&results[k]);
            continue;
        }
        answered++;
        if (!p->src.ok) {
            fault_signal_at("translate", p->line_no);
            if (o->n_best <= 1)
                fputc('\n', out);
            continue;
        }
        NBest *nb = &results[k];
        for (int h = 0; h < nb->n; h++) {
            const Hypothesis *hyp = &nb->hyps[h];
            const char **words = xmalloc_array((size_t)hyp->len + 1, sizeof(char *));
            char *text = hypothesis_text(o, p, hyp, words);
            if (o->n_best > 1)
                fprintf(out, "%ld ||| %s ||| %.6f", p->line_no - 1, text, hyp->score);
            else
                fputs(text, out);
            if (h == 0) /* a signal here lands in the middle of the line */
                fault_signal_at("translate", p->line_no);
            if (o->align)
                write_alignment(out, o, hyp);
            fputc('\n', out);
            if (h == 0 && (o->show || o->json)) {
                const int L = p->src.n + 1, layers = p->src.self ? cd->dims->sa_layers : 0;
                AttnMatrix self[SA_MAX_LAYERS];
                for (int l = 0; l < layers; l++)
                    self[l] = (AttnMatrix){p->src.self + (size_t)l * L * L, L, L, L, 1,
                                           p->picture != NULL};
                show(o, p, hyp, words, self, layers);
            }
            free(text);
            free(words);
            if (o->n_best <= 1)
                break;
        }
        nbest_free(nb);
    }
    return answered;
}

static int parse_options(Options *o, const char **model, const char **json_path, int argc, char **argv)
{
    enum { HELP, SHOW, UNK, MODEL, JSON, BEAM, N_BEST, ALPHA, ALIGN, MODE, MAX_SRC };
    static const CmdOption OPTS[] = {
        [HELP] = {"--help", 0}, [SHOW] = {"--show-attention", 0}, [UNK] = {"--unk-replace", 0},
        [MODEL] = {"--model", 1}, [JSON] = {"--out-alignments", 1}, [BEAM] = {"--beam", 1},
        [N_BEST] = {"--n-best", 1}, [ALPHA] = {"--alpha", 1}, [ALIGN] = {"--alignment", 1},
        [MODE] = {"--attention-mode", 1}, [MAX_SRC] = {"--max-source-length", 1}, {NULL, 0}};
    for (int a = 0; a < argc; a++) {
        const char *value = NULL;
        char *end;
        int opt = cmd_option("translate", OPTS, argc, argv, &a, &value);
        switch (opt) {
        case -2:
            return EXIT_USAGE;
        case -1:
            return cmd_usage_error("translate: unexpected argument `%s`: the input is stdin (see "
                                   "s2s translate --help)", argv[a]);
        case HELP:
            fputs(TRANSLATE_USAGE, stdout);
            return -1;
        case SHOW:
            o->show = 1;
            break;
        case UNK:
            o->unk_replace = 1;
            break;
        case MODEL:
            *model = value;
            break;
        case JSON:
            *json_path = value;
            break;
        case BEAM:
        case N_BEST: {
            int beam = opt == BEAM;
            long v = strtol(value, &end, 10);
            if (*end || end == value || v < 1 || v > 100)
                return cmd_usage_error(beam ? "--beam: expected 1 to 100, got `%s`"
                                            : "--n-best: expected 1 to 100, got `%s`", value);
            *(beam ? &o->beam : &o->n_best) = (int)v;
            break;
        }
        case ALPHA:
            o->alpha = strtod(value, &end);
            if (*end || end == value || !(o->alpha >= 0 && o->alpha <= 10))
                return cmd_usage_error("--alpha: expected a number from 0 to 10, got `%s`", value);
            break;
        case MAX_SRC:
            o->max_src = strtol(value, &end, 10);
            if (*end || end == value || o->max_src < 1 || o->max_src > 100000)
                return cmd_usage_error("--max-source-length: expected 1 to 100000 (tokens), got "
                                       "`%s`", value);
            break;
        case MODE:
            if ((o->attention_mode = cmd_attention_mode(value)) < 0)
                return EXIT_USAGE;
            break;
        case ALIGN:
            if (!strcmp(value, "hard"))
                o->align = 1;
            else if (!strcmp(value, "soft"))
                o->align = 2;
            else {
                o->threshold = strtof(value, &end);
                if (*end || end == value || !(o->threshold > 0 && o->threshold < 1))
                    return cmd_usage_error("--alignment: expected soft, hard or a threshold between "
                                           "0 and 1, got `%s`", value);
                o->align = 3;
            }
            break;
        }
    }
    return 0;
}

/* The options that depend on the model: their defaults from its config, and what a
 * model without attention cannot do. Returns 0, or the exit code after the message. */
static int settle_options(Options *o, const SavedModel *ck, const char *model,
                          const char *json_path)
{
    const Config *cfg = &ck->config;
    Error err;
    if (o->beam < 0)
        o->beam = (int)cfg->translate.beam_size;
    if (o->alpha < 0)
        o->alpha = cfg->translate.alpha;
    if (!model_has_alignments(&ck->dims) && (o->align || o->show || o->unk_replace || json_path)) {
        const char *opt = o->align ? "--alignment" : o->show ? "--show-attention"
                        : o->unk_replace ? "--unk-replace" : "--out-alignments";
        error_set(&err, "%s: the model `%s` has no attention (model.attention: none)", opt, model);
        return cmd_error(&err, EXIT_USAGE);
    }
    if (o->attention_mode == DECODE_ARGMAX && !model_has_alignments(&ck->dims)) {
        error_set(&err, "--attention-mode: argmax chooses from the attention's weights, and the "
                  "model `%s` has none (model.attention: none)", model);
        return cmd_error(&err, EXIT_USAGE);
    }
    o->argmax = config_decodes_argmax(cfg, o->attention_mode);
    if (model_reads_pictures(&ck->dims)) { /* the source is a picture's grid */
        if (o->unk_replace || o->max_src > 0) {
            error_set(&err, "%s: the model `%s` reads pictures, not words",
                      o->unk_replace ? "--unk-replace" : "--max-source-length", model);
            return cmd_error(&err, EXIT_USAGE);
        }
        const int G = model_grid_side(&ck->dims);
        o->max_src = G * G - 1;
    }
    if (o->n_best > o->beam)
        return cmd_usage_error("--n-best: at most --beam hypotheses (got more than %s)",
                               o->beam == 1 ? "1" : "the beam");
    /* the buffers grow with the input up to the limit: one sentence that long must fit */
    const int from_option = o->max_src > 0;
    o->max_src_given = from_option;
    if (!from_option)
        o->max_src = cfg->translate.max_source_length;
    const int steps = (int)o->max_src + 1;
    const int max_out = decode_output_limit(steps, cfg->translate.max_output_ratio,
                                            cfg->translate.max_output_extra);
    const size_t need = beam_search_bytes(&ck->dims, 1, steps, o->beam, max_out) +
                        kept_maps_bytes(o, (int)o->max_src);
    const size_t have = mem_available();
    if (need > have) {
        error_set(&err, "%s %ld: translating one source of that many tokens with beam %d "
                  "would need %.1f GiB, and %.1f GiB of memory is all there is here; lower "
                  "it%s", from_option ? "--max-source-length" : "translate.max_source_length",
                  o->max_src, o->beam, (double)need / (1 << 30), (double)have / (1 << 30),
                  from_option ? "" : " with --max-source-length N");
        return cmd_error(&err, EXIT_USAGE);
    }
    return 0;
}

/* An image model's input line into p: the picture it names (relative to the working
 * directory), as the model reads it, and the names of the grid's cells; or, for a
 * picture that cannot be read, a warning naming the line. */
static void take_picture(Pending *p, const Options *o, const char *line, size_t len, long line_no)
{
    const Config *cfg = &o->ck->config;
    const int size = o->ck->dims.image_size, cells = (int)o->max_src + 1;
    char *path = xmalloc(len + 1);
    memcpy(path, line, len);
    path[len] = '\0';
    float *pixels = xmalloc_array((size_t)3 * size * size, sizeof(float));
    Error err;
    if (len == 0 || memchr(line, '\0', len) ||
        picture_read_input(pixels, path, size, cfg->data.image_resize, o->ck->picture_mean,
                           &err) < 0) {
        fprintf(stderr, "s2s: warning: stdin:%ld: %s; %s\n", line_no,
                len == 0 ? "empty line" : memchr(line, '\0', len) ? "NUL byte" : err.msg,
                o->n_best > 1 ? "no n-best entries for it" : "wrote an empty line");
        free(pixels);
        free(path);
        return;
    }
    p->src.ok = 1;
    p->picture = path_absolute(path); /* the records name it wherever they are read */
    free(path);
    p->src.n = cells - 1;
    p->src.ids = xmalloc_array((size_t)cells, sizeof(int));
    p->src.pixels = pixels;
    p->words = xmalloc_array((size_t)cells, sizeof(char *));
    for (int j = 0; j < cells; j++) {
        char name[16];
        model_cell_name(j, name, sizeof name);
        p->src.ids[j] = TOK_UNK;
        p->words[j] = xstrdup(name);
    }
}

/* Turns one input line into p: its words and ids, or, for a line that cannot be
 * translated (over data.max_line_bytes, not UTF-8, empty), a warning naming it. A source
 * over translate.max_source_length is cut there, with a warning. */
static void take_line(Pending *p, const Options *o, Tokens *tokens, const char *line,
                      size_t len, int too_long, long line_no)
{
    const Config *cfg = &o->ck->config;
    const long max_src = o->max_src;
    /* what a line that cannot be translated gets (flush_batch): the warnings say so */
    const char *skipped = o->n_best > 1 ? "no n-best entries for it" : "wrote an empty line";
    size_t bad_at, bad_len;
    p->line_no = line_no;
    if (!too_long && model_reads_pictures(&o->ck->dims)) {
        take_picture(p, o, line, len, line_no);
        return;
    }
    if (too_long) {
        fprintf(stderr, "s2s: warning: stdin:%ld: line longer than data.max_line_bytes (%ld); "
                "%s\n", line_no, cfg->data.max_line_bytes, skipped);
        return;
    }
    if (utf8_validate(line, len, &bad_at, &bad_len) < 0) {
        fprintf(stderr, "s2s: warning: stdin:%ld:%zu: %s; %s\n", line_no, bad_at + 1,
                line[bad_at] ? "invalid UTF-8" : "NUL byte", skipped);
        return;
    }
    Error split_err;
    int n = splitter_split(o->src_split, tokens, line, len, (int)max_src, &split_err);
    if (n < 0) {
        fprintf(stderr, "s2s: warning: stdin:%ld: %s; %s\n", line_no, split_err.msg, skipped);
        return;
    }
    if (n == 0) {
        fprintf(stderr, "s2s: warning: stdin:%ld: empty line; %s\n", line_no, skipped);
        return;
    }
    if (n > max_src) { /* the tokenizer stops once past max_src */
        fprintf(stderr, "s2s: warning: stdin:%ld: more than %ld token%s, translated the "
                "first %ld (%s)\n", line_no, max_src, plural(max_src), max_src,
                o->max_src_given ? "--max-source-length" : "translate.max_source_length");
        n = (int)max_src;
    }
    p->src.ok = 1;
    p->src.n = n;
    p->src.ids = xmalloc_array((size_t)n, sizeof(int));
    p->words = xmalloc_array((size_t)n, sizeof(char *));
    for (int k = 0; k < n; k++) {
        p->words[k] = xstrdup(tokens_get(tokens, k));
        p->src.ids[k] = vocab_id(&o->ck->src_vocab, p->words[k]);
    }
}

/* Translates the pending lines and frees them; returns how many it answered. */
static int flush_pending(ChunkDecoder *cd, const Options *o, Pending *pend, int *n_pend)
{
    int answered = flush_batch(cd, o, pend, *n_pend, stdout);
    for (int k = 0; k < *n_pend; k++)
        free_pending(&pend[k]);
    *n_pend = 0;
    return answered;
}

int cmd_translate(int argc, char **argv)
{
    Options o = {.beam = -1, .n_best = 1, .alpha = -1, .attention_mode = -1, .max_src = -1};
    const char *model = NULL, *json_path = NULL;
    int rc = parse_options(&o, &model, &json_path, argc, argv);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (!model)
        return cmd_usage_error("%s", "translate needs --model CKPT (see s2s translate --help)");
    SavedModel ck;
    Error err;
    struct stat input;
    if (fstat(STDIN_FILENO, &input) == 0 && S_ISDIR(input.st_mode)) { /* bad input, not a failed read */
        errno = EISDIR;
        error_errno(&err, "cannot read input", "stdin");
        return cmd_error(&err, EXIT_USAGE);
    }
    if (saved_model_load(&ck, model, &err) < 0) {
        saved_model_free(&ck);
        return cmd_error(&err, EXIT_USAGE);
    }
    o.ck = &ck;
    const Splitter src_split = {ck.config.data.level, ck.config.data.lowercase,
                                ck.subwords.model[SIDE_SRC], 0};
    const Splitter tgt_split = {ck.config.data.level, ck.config.data.lowercase,
                                ck.subwords.model[SIDE_TGT], 0};
    o.src_split = &src_split;
    o.tgt_split = &tgt_split;
    if ((rc = settle_options(&o, &ck, model, json_path)) != 0) {
        saved_model_free(&ck);
        return rc;
    }
    if (json_path && !(o.json = fopen(json_path, "w"))) {
        error_errno(&err, "cannot write", json_path);
        saved_model_free(&ck);
        return cmd_error(&err, EXIT_IO);
    }
    const Config *cfg = &ck.config;
    interrupt_install_stop();
    int interactive = isatty(STDIN_FILENO);
    const int batch_size = interactive ? 1 : BATCH;
    ChunkDecoder cd = {.dims = &ck.dims, .params = &ck.params, .beam = o.beam,
                       .n_best = o.n_best, .argmax = o.argmax, .alpha = o.alpha,
                       .max_output_ratio = cfg->translate.max_output_ratio,
                       .max_output_extra = cfg->translate.max_output_extra,
                       .max_steps = (int)o.max_src + 1, .keep_self = kept_maps_bytes(&o, 1) > 0};
    chunk_decoder_init(&cd, batch_size);
    Pending pend[BATCH] = {0};
    int n_pend = 0;
    long answered = 0;
    size_t pend_maps = 0; /* the bytes of self-attention maps the pending lines will keep */
    Tokens tokens = {0};
    /* read(2) by blocks: a line typed on a terminal is translated at once, and a line
     * over data.max_line_bytes is never held in memory */
    LineReader in;
    linereader_fd(&in, STDIN_FILENO, "stdin", "input");
    size_t len;
    int too_long, got = 0;
    while (!interrupt_pending() &&
           (got = linereader_next(&in, (size_t)cfg->data.max_line_bytes, &len, &too_long, &err)) == 1) {
        take_line(&pend[n_pend], &o, &tokens, in.line, len, too_long, in.line_no);
        pend_maps += kept_maps_bytes(&o, pend[n_pend++].src.n);
        /* a full batch, or one whose kept maps would outgrow the decoding budget */
        if (n_pend == batch_size || pend_maps > cd.budget) {
            answered += flush_pending(&cd, &o, pend, &n_pend);
            pend_maps = 0;
            /* a failed stdout (a full disk) stops the translation; main says so */
            if ((interactive && cmd_flush_stdout() < 0) || ferror(stdout))
                break;
        }
    }
    if (n_pend && !interrupt_pending())
        answered += flush_pending(&cd, &o, pend, &n_pend);
    for (int k = 0; k < n_pend; k++) /* read, not answered: a signal came */
        free_pending(&pend[k]);
    linereader_close(&in);
    tokens_free(&tokens);
    chunk_decoder_free(&cd);
    saved_model_free(&ck);
    rc = EXIT_OK;
    if (interrupt_pending()) {
        cmd_flush_stdout();
        fprintf(stderr, "s2s: translate stopped by signal %d: %ld line%s of stdin translated, "
                "the output ends with the last of them\n", interrupt_pending(), answered,
                plural(answered));
        rc = interrupt_exit_code();
    } else if (got < 0) { /* what was read is translated */
        rc = cmd_error(&err, EXIT_FAILED);
    }
    if (o.json && (ferror(o.json) | fclose(o.json))) {
        error_errno(&err, "cannot write", json_path);
        rc = cmd_error(&err, EXIT_IO);
    }
    /* stdout is main's to check, as for every command */
    return rc;
}
