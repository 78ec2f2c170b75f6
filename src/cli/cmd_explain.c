/* cmd_explain.c: `s2s explain`: one attention step of a trained model worked out, every
 * tensor named, shaped and printed (model/explain.h reads them from the model's own
 * pass; report/explain_print.h writes them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/mem.h"
#include "cli/command.h"
#include "data/pictures.h"
#include "decode/decode.h"
#include "model/explain.h"
#include "report/explain_print.h"
#include "text/linereader.h"
#include "text/splitter.h"
#include "text/tokenize.h"
#include "run/saved_model.h"

static const char EXPLAIN_USAGE[] =
    "usage: s2s explain --model CKPT [--tgt \"TARGET\"] [--step I] [--head K] [--self L]\n"
    "                   [--dec-self L]\n"
    "                   [--format text|json|html] [--max-cols N]\n"
    "                   [--attention-mode auto|soft|argmax]\n"
    "                   < source-line\n"
    "       s2s explain --example dot|general|qkv [--format text|json|html]\n"
    "\n"
    "Works out one step of the decoder's attention on the source sentence read from stdin\n"
    "(its first line): in the order the model computes them, the annotations H, the\n"
    "decoder's state s_{i-1}, what the score computes from them, the scores, the weights\n"
    "alpha, each annotation times its weight, the context c_i, and the five most probable\n"
    "next words -- each named as model/MODEL.md names it, with its shape in words, a line\n"
    "on what it is for, and its values: the numbers of the model's own pass.\n"
    "--tgt: the target the decoder is given (teacher forcing); without it, the model's\n"
    "greedy translation. --step I: the target position, from 1 (the default) to the\n"
    "target's words + 1 (the step that emits </s>). --head K: one head's slices (from 1).\n"
    "--self L: the encoder's self-attention layer L (from 1) at source position --step\n"
    "instead: the position's query, the keys, the values, the scores, the weights, what\n"
    "it gathers and the layer's output there (no --tgt: the layer reads the source alone).\n"
    "A Transformer decoder's step (model.decoder_cell none) is its last layer's: the\n"
    "layer's input rows, the step's query, the cached keys and values of the positions so\n"
    "far, the scores, the causal mask, each head's weights and what they gather, then its\n"
    "cross-attention over H (\"alpha\", \"context\" in JSON) and the layer's output.\n"
    "--dec-self L: layer L's masked self-attention at target step --step instead.\n"
    "--format json: one object, every value the shortest text that reads back as the same\n"
    "float. --format html: one page, each tensor drawn with its values in the cells.\n"
    "--max-cols N (default 8): columns past N are counted, not printed (text, html).\n"
    "--attention-mode: as in s2s align (argmax: each head reads its most probable word).\n"
    "--example: the tutorials' worked examples through the same attention kernels, in\n"
    "double precision: dot, the dot score of [5, 1, 20] against four annotations (927,\n"
    "397, 148, 929); qkv (the tutorial calls it general attention), four words through\n"
    "W_Q, W_K and W_V.\n"
    "An option's value is the next argument: --step 2, not --step=2.\n";

typedef struct {
    const char *model, *tgt, *example;
    int step, head, max_cols;
    int json; /* the --format: 0 text, 1 json, 2 html */
    int self; /* --self L (from 1), 0: the decoder's attention */
    int dec_self; /* --dec-self L (from 1): a Transformer decoder's self-attention */
    int attention_mode; /* a ConfigDecodeMode, -1: the model's translate.attention_mode */
} ExplainOptions;

/* A whole positive number of at most `most`, or -1. */
static int positive(const char *value, long most)
{
    char *end;
    long v = strtol(value, &end, 10);
    return *end || end == value || v < 1 || v > most ? -1 : (int)v;
}

static int parse_options(ExplainOptions *o, int argc, char **argv)
{
    enum { HELP, MODEL, TGT, STEP, HEAD, FORMAT, MAX_COLS, MODE, EXAMPLE, SELF, DEC_SELF };
    static const CmdOption OPTS[] = {
        [HELP] = {"--help", 0}, [MODEL] = {"--model", 1}, [TGT] = {"--tgt", 1},
        [STEP] = {"--step", 1}, [HEAD] = {"--head", 1}, [FORMAT] = {"--format", 1},
        [MAX_COLS] = {"--max-cols", 1}, [MODE] = {"--attention-mode", 1},
        [EXAMPLE] = {"--example", 1}, [SELF] = {"--self", 1}, [DEC_SELF] = {"--dec-self", 1},
        {NULL, 0}};
    static const char *const EXAMPLES[] = {"dot", "general", "qkv", NULL};
    static const char *const FORMATS[] = {"text", "json", "html", NULL};
    *o = (ExplainOptions){.step = 1, .head = -1, .max_cols = 8, .attention_mode = -1};
    for (int a = 0; a < argc; a++) {
        const char *value = NULL;
        switch (cmd_option("explain", OPTS, argc, argv, &a, &value)) {
        case -2:
            return EXIT_USAGE;
        case -1:
            return cmd_usage_error("explain: unexpected argument `%s` (see s2s explain --help)", argv[a]);
        case HELP:
            fputs(EXPLAIN_USAGE, stdout);
            return EXIT_OK;
        case MODEL:
            o->model = value;
            break;
        case TGT:
            o->tgt = value;
            break;
        case STEP:
            if ((o->step = positive(value, 1000000)) < 0)
                return cmd_usage_error("--step: expected a target position from 1, got `%s`", value);
            break;
        case HEAD:
            if ((o->head = positive(value, ATTN_MAX_HEADS)) < 0)
                return cmd_usage_error("--head: expected a head from 1, got `%s`", value);
            o->head--;
            break;
        case FORMAT:
            if ((o->json = cmd_choice(FORMATS, value)) < 0)
                return cmd_usage_error("--format: expected text, json or html, got `%s`", value);
            break;
        case MAX_COLS:
            if ((o->max_cols = positive(value, 1000000)) < 0)
                return cmd_usage_error("--max-cols: expected a number from 1, got `%s`", value);
            break;
        case MODE:
            if ((o->attention_mode = cmd_attention_mode(value)) < 0)
                return EXIT_USAGE;
            break;
        case SELF:
            if ((o->self = positive(value, SA_MAX_LAYERS)) < 0)
                return cmd_usage_error("--self: expected a self-attention layer from 1 to "
                                       SA_MAX_LAYERS_TEXT ", got `%s`", value);
            break;
        case DEC_SELF:
            if ((o->dec_self = positive(value, DEC_MAX_LAYERS)) < 0)
                return cmd_usage_error("--dec-self: expected a decoder layer from 1 to "
                                       DEC_MAX_LAYERS_TEXT ", got `%s`", value);
            break;
        case EXAMPLE:
            if (cmd_choice(EXAMPLES, value) < 0)
                return cmd_usage_error("--example: expected dot, general or qkv, got `%s`", value);
            o->example = value;
            break;
        }
    }
    if (o->example && o->model)
        return cmd_usage_error("%s", "explain: --example needs no --model (it explains the "
                               "tutorials' numbers, not a model)");
    if (o->example)
        return -1;
    if (o->self && o->dec_self)
        return cmd_usage_error("%s", "explain: --self and --dec-self each name a layer: give "
                               "one (the encoder's or the decoder's)");
    if (o->self && o->tgt)
        return cmd_usage_error("%s", "explain: --tgt has no use with --self (the encoder's "
                               "layers read the source alone)");
    if (!o->model)
        return cmd_usage_error("%s", "explain needs --model CKPT (see s2s explain --help)");
    return -1;
}

/* A sentence as the model reads it: its words and their ids; an image model's source:
 * its picture (pixels: channels last, less the training means) and the names of the
 * grid's cells, n + 1 of them (the last cell in the place of </s>). */
typedef struct {
    Tokens tokens;
    int n;
    int *ids;
    char **words;
    unsigned char *unk; /* (n + 1) 1 where the vocabulary lacks the word: the model reads <unk> */
    float *pixels;
    char *picture;      /* the picture's path as given */
} Sentence;

static void sentence_free(Sentence *s)
{
    for (int k = 0; k < s->n + (s->pixels != NULL); k++)
        free(s->words[k]);
    free(s->words);
    free(s->ids);
    free(s->unk);
    free(s->pixels);
    free(s->picture);
    tokens_free(&s->tokens);
    *s = (Sentence){0};
}

/* An image model's source: the picture named by text[0..len) (relative to the working
 * directory), as translate reads it. */
static int picture_read(Sentence *s, const char *text, size_t len, const SavedModel *ck,
                        Error *err)
{
    const int size = ck->dims.image_size, G = model_grid_side(&ck->dims), S = G * G;
    *s = (Sentence){0};
    char *path = xmalloc(len + 1);
    memcpy(path, text, len);
    path[len] = '\0';
    float *pixels = xmalloc_array((size_t)3 * size * size, sizeof(float));
    Error why;
    const int rc = picture_read_input(pixels, path, size, ck->config.data.image_resize,
                                      ck->picture_mean, &why);
    if (rc < 0) {
        free(path);
        free(pixels);
        return error_set(err, "stdin:1: %s", why.msg);
    }
    s->n = S - 1;
    s->pixels = pixels;
    s->picture = path;
    s->ids = xmalloc_array((size_t)S, sizeof(int));
    s->words = xmalloc_array((size_t)S, sizeof(char *));
    for (int j = 0; j < S; j++) {
        char name[16];
        model_cell_name(j, name, sizeof name);
        s->ids[j] = TOK_UNK;
        s->words[j] = xstrdup(name);
    }
    return 0;
}

/* The batch of one source (and target, if tgt; S and T positions): its ids, and its
 * picture for an image model. */
static void fill_batch(Batch *bt, const SavedModel *ck, const Sentence *src, const Sentence *tgt,
                       int S, int T)
{
    batch_init(bt, 1, S, T);
    const int *srcs[1] = {src->ids}, *tgts[1] = {tgt ? tgt->ids : NULL};
    batch_fill(bt, 1, srcs, &src->n, tgt ? tgts : NULL, tgt ? &tgt->n : NULL);
    if (src->pixels) {
        const size_t size = (size_t)ck->dims.image_size;
        batch_init_pictures(bt, (int)size);
        memcpy(bt->pixels, src->pixels, sizeof(float) * size * size * 3);
    }
}

/* Tokenizes text[0..len) as the model splits its side's text (side: SIDE_SRC or
 * SIDE_TGT), into ids of vocab. `what` names it in messages ("stdin:1", "--tgt"). */
static int sentence_read(Sentence *s, const char *text, size_t len, const SavedModel *ck,
                         int side, const Vocab *vocab, const char *what, Error *err)
{
    size_t bad_at, bad_len;
    *s = (Sentence){0};
    if (utf8_validate(text, len, &bad_at, &bad_len) < 0)
        return error_set(err, "%s:%zu: %s (expected UTF-8 text)", what, bad_at + 1,
                         text[bad_at] ? "invalid UTF-8" : "NUL byte"), -1;
    const Splitter split = {ck->config.data.level, ck->config.data.lowercase,
                            ck->subwords.model[side], 0};
    s->n = splitter_split(&split, &s->tokens, text, len, 0, err);
    if (s->n < 0)
        return -1;
    s->ids = xmalloc_array((size_t)s->n + 1, sizeof(int));
    s->words = xmalloc_array((size_t)s->n + 1, sizeof(char *));
    s->unk = xcalloc((size_t)s->n + 1, 1);
    for (int k = 0; k < s->n; k++) {
        s->words[k] = xstrdup(tokens_get(&s->tokens, k));
        s->ids[k] = vocab_id(vocab, s->words[k]);
        s->unk[k] = s->ids[k] == TOK_UNK && strcmp(s->words[k], "<unk>") != 0;
    }
    if (s->n == 0)
        return error_set(err, "%s: empty sentence (expected at least one word)", what), -1;
    return 0;
}

/* The first line of stdin, tokenized. */
static int read_source(Sentence *s, const SavedModel *ck, Error *err)
{
    LineReader in;
    size_t len;
    int too_long, got;
    linereader_fd(&in, STDIN_FILENO, "stdin", "input");
    in.refuse_nul = 1;
    got = linereader_next(&in, (size_t)ck->config.data.max_line_bytes, &len, &too_long, err);
    if (got == 0)
        error_set(err, "%s", "stdin: no source sentence (expected one line of text)");
    else if (got > 0 && too_long)
        error_set(err, "stdin:1: line longer than data.max_line_bytes (%ld)",
                  ck->config.data.max_line_bytes);
    int rc = got <= 0 || too_long                ? -1
             : model_reads_pictures(&ck->dims) ? picture_read(s, in.line, len, ck, err)
                                                 : sentence_read(s, in.line, len, ck, SIDE_SRC,
                                                                 &ck->src_vocab, "stdin:1", err);
    linereader_close(&in);
    const long most = ck->config.translate.max_source_length;
    if (rc == 0 && !s->pixels && s->n > most) { /* the pass's memory grows with the square of the length */
        error_set(err, "stdin:1: %d words, more than translate.max_source_length (%ld)", s->n,
                  most);
        rc = -1;
    }
    return rc;
}

/* Without --tgt, the target is the model's greedy translation (ids into tgt). */
static void greedy_target(Sentence *tgt, const SavedModel *ck, const Sentence *src, int argmax)
{
    Decoder dec;
    Batch bt;
    const int S = src->n + 1;
    const int max_out = decode_output_limit(S, ck->config.translate.max_output_ratio,
                                            ck->config.translate.max_output_extra);
    decoder_init(&dec, &ck->dims, 1, S, 1);
    dec.argmax = argmax;
    fill_batch(&bt, ck, src, NULL, S, 0);
    *tgt = (Sentence){0};
    tgt->ids = xmalloc_array((size_t)max_out + 1, sizeof(int));
    decode_greedy(&dec, &ck->params, &bt, max_out, tgt->ids, &tgt->n);
    tgt->words = xmalloc_array((size_t)tgt->n + 1, sizeof(char *));
    for (int k = 0; k < tgt->n; k++)
        tgt->words[k] = xstrdup(vocab_word(&ck->tgt_vocab, tgt->ids[k]));
    batch_free(&bt);
    decoder_free(&dec);
}

/* Words of a sentence with </s> after them, for printing (free the array only). */
static const char **with_end(const Sentence *s, int n)
{
    const char **words = xmalloc_array((size_t)n, sizeof(char *));
    for (int k = 0; k < n; k++) /* a picture's last cell has a name */
        words[k] = k < s->n || s->pixels ? s->words[k] : "</s>";
    return words;
}

static void print_step(const ExplainStep *x, const ExplainWords *words, const ExplainOptions *o)
{
    if (o->json == 1)
        explain_print_json(stdout, x, words);
    else if (o->json == 2)
        explain_print_html(stdout, x, words, o->max_cols);
    else
        explain_print_text(stdout, x, words, o->max_cols);
}

/* --self: the encoder's layer at a source position. */
static void explain_self(const SavedModel *ck, const ExplainOptions *o, const Sentence *src)
{
    const int S = src->n + 1;
    Batch bt;
    Workspace ws;
    fill_batch(&bt, ck, src, NULL, S, 1);
    model_workspace_init(&ws, &ck->dims, 1, S, 1, 0);
    ExplainStep x;
    explain_self_step(&x, &ws, &ck->params, &bt, o->self, o->step, o->head);
    const char **sw = with_end(src, S);
    const ExplainWords words = {sw, S, NULL, 0, NULL, score_names[ck->dims.score],
                                .src_unk = src->unk, .grid = model_grid_side(&ck->dims),
                                .picture = src->picture};
    print_step(&x, &words, o);
    free(sw);
    explain_free(&x);
    model_workspace_free(&ws);
    batch_free(&bt);
}

/* The step through the model and onto stdout. */
static void explain(const SavedModel *ck, const ExplainOptions *o, const Sentence *src,
                    const Sentence *tgt, int argmax)
{
    const int S = src->n + 1, T = tgt->n + 1, step = o->step;
    Batch bt;
    Workspace ws;
    fill_batch(&bt, ck, src, tgt, S, T);
    model_workspace_init(&ws, &ck->dims, 1, S, T, 0);
    model_set_argmax(&ws, argmax);
    ExplainStep x;
    if (o->dec_self)
        explain_transformer_step(&x, &ws, &ck->params, &bt, step, o->head, o->dec_self);
    else
        explain_decoder_step(&x, &ws, &ck->params, &bt, step, o->head);
    const char **sw = with_end(src, S), **tw = with_end(tgt, step);
    const char *next[EXPLAIN_TOP_WORDS];
    for (int r = 0; r < x.n_next; r++)
        next[r] = vocab_word(&ck->tgt_vocab, x.next_word[r]);
    const ExplainWords words = {sw, S, tw, step, next,
                                model_is_transformer(&ck->dims) ? "transformer"
                                                                : score_names[ck->dims.score],
                                .src_unk = src->unk, .tgt_unk = tgt->unk,
                                .grid = model_grid_side(&ck->dims), .picture = src->picture};
    print_step(&x, &words, o);
    free(sw);
    free(tw);
    explain_free(&x);
    model_workspace_free(&ws);
    batch_free(&bt);
}

/* What the model and the sentence allow of the options: exit 2 naming the limit. */
static int check_self_limits(const SavedModel *ck, const ExplainOptions *o, const Sentence *src,
                             Error *err)
{
    const int L = ck->dims.sa_layers, S = src->n + 1;
    if (L == 0)
        return error_set(err, "--self %d: the model has no self-attention layers "
                         "(model.self_attention_layers: 0)", o->self), -1;
    if (o->self > L)
        return error_set(err, "--self %d: the model has %d self-attention layer%s "
                         "(model.self_attention_layers)", o->self, L, plural(L)), -1;
    if (o->head >= ck->dims.sa_heads)
        return error_set(err, "--head %d: the self-attention layers have %d head%s "
                         "(model.self_attention_heads)", o->head + 1, ck->dims.sa_heads,
                         plural(ck->dims.sa_heads)), -1;
    if (o->step > S)
        return error_set(err, "--step %d: the source has %d word%s, so --self positions run "
                         "from 1 to %d (the last is </s>)", o->step, src->n, plural(src->n), S), -1;
    return 0;
}

static int check_limits(const SavedModel *ck, const ExplainOptions *o, const Sentence *tgt,
                        Error *err)
{
    if (!model_has_alignments(&ck->dims))
        return error_set(err, "%s: the model has no attention (model.attention: none): "
                         "nothing to explain", o->model), -1;
    if (o->dec_self && !model_is_transformer(&ck->dims))
        return error_set(err, "--dec-self %d: the model's decoder is recurrent; --dec-self "
                         "explains a Transformer decoder's self-attention "
                         "(model.decoder_cell: none)", o->dec_self), -1;
    if (o->dec_self > ck->dims.dec_layers)
        return error_set(err, "--dec-self %d: the model has %d decoder layer%s "
                         "(model.decoder_layers)", o->dec_self, ck->dims.dec_layers,
                         plural(ck->dims.dec_layers)), -1;
    if (o->head >= ck->dims.heads)
        return error_set(err, "--head %d: the model has %d head%s (model.attention_heads)",
                         o->head + 1, ck->dims.heads, plural(ck->dims.heads)), -1;
    if (o->step > tgt->n + 1)
        return error_set(err, "--step %d: the target has %d word%s, so its steps run from 1 "
                         "to %d (the last emits </s>)", o->step, tgt->n, plural(tgt->n),
                         tgt->n + 1), -1;
    return 0;
}

/* --example: a tutorial's numbers, printed as a model's step is. */
static int explain_example(const ExplainOptions *o)
{
    ExplainStep x;
    if (explain_example_f64(&x, o->example) < 0)
        return EXIT_USAGE; /* parse_options knows the names: not reached */
    const ExplainWords words = {.src = x.words, .S = x.S,
                                .score = !strcmp(o->example, "dot") ? "dot" : "scaled_dot"};
    print_step(&x, &words, o);
    explain_free(&x);
    return cmd_flush_stdout() == 0 ? EXIT_OK : EXIT_IO;
}

int cmd_explain(int argc, char **argv)
{
    ExplainOptions o;
    int rc = parse_options(&o, argc, argv);
    if (rc >= 0)
        return rc;
    if (o.example)
        return explain_example(&o);
    SavedModel ck;
    Sentence src = {0}, tgt = {0};
    Error err;
    rc = EXIT_USAGE;
    if (saved_model_load(&ck, o.model, &err) < 0)
        goto done;
    const int argmax = config_decodes_argmax(&ck.config, o.attention_mode);
    if (read_source(&src, &ck, &err) < 0)
        goto done;
    if (o.self) {
        if (check_self_limits(&ck, &o, &src, &err) < 0)
            goto done;
        explain_self(&ck, &o, &src);
    } else {
        if (o.tgt) {
            if (sentence_read(&tgt, o.tgt, strlen(o.tgt), &ck, SIDE_TGT, &ck.tgt_vocab, "--tgt",
                              &err) < 0)
                goto done;
            const int most = decode_output_limit(src.n + 1, ck.config.translate.max_output_ratio,
                                                 ck.config.translate.max_output_extra);
            if (tgt.n > most) {
                error_set(&err, "--tgt: %d words, more than a translation of this source may "
                          "have (%d: translate.max_output_ratio and max_output_extra)", tgt.n, most);
                goto done;
            }
        } else if (model_has_alignments(&ck.dims)) {
            greedy_target(&tgt, &ck, &src, argmax);
        }
        if (check_limits(&ck, &o, &tgt, &err) < 0)
            goto done;
        explain(&ck, &o, &src, &tgt, argmax);
    }
    rc = cmd_flush_stdout() == 0 ? EXIT_OK : EXIT_IO;
    sentence_free(&src);
    sentence_free(&tgt);
    saved_model_free(&ck);
    return rc;
done:
    sentence_free(&src);
    sentence_free(&tgt);
    saved_model_free(&ck);
    return cmd_error(&err, rc);
}
