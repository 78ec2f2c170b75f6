/* cmd_align.c: `s2s align`: teacher-forced attention of given sentence pairs as JSONL
 * matrices, Pharaoh links, and AER against gold links. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/mem.h"
#include "cli/command.h"
#include "data/corpus.h"
#include "model/model.h"
#include "data/ground.h"
#include "report/grounding.h"
#include "report/links.h"
#include "run/saved_model.h"

static const char ALIGN_USAGE[] =
    "usage: s2s align --model CKPT --src FILE --tgt FILE [--gold FILE | --ground FILE]\n"
    "                 [--out FILE] [--threshold P] [--attention-mode auto|soft|argmax]\n"
    "                 [--words]\n"
    "\n"
    "Runs the model over the given sentence pairs with teacher forcing and reads its\n"
    "attention as a word alignment. stdout: one line per pair, Pharaoh links j-i (0-based\n"
    "source and target tokens): for each target word the source word it attends to most,\n"
    "or with --threshold every source word with a weight above P; </s> is left out.\n"
    "--out FILE writes the attention matrices as JSONL (the format of alignments.jsonl).\n"
    "--gold FILE (links j-i sure, j?i possible; one line per line of the corpus files)\n"
    "prints AER, precision and recall on stderr.\n"
    "--words: the links (and AER) are between words, not tokens: a subword model's\n"
    "pieces are merged into the space-separated words of the line (a piece that starts\n"
    "with \"\u2581\" starts a word), two words linked when any of their pieces are, as\n"
    "word-level gold alignments need; --out still writes the pieces' matrices.\n"
    "An image model's --src lists pictures (paths relative to that file); its sources are\n"
    "the cells of a grid over the picture, numbered row by row from 0. --ground FILE (per\n"
    "caption word `-` or its box x0,y0,x1,y1 in the picture) prints on stderr\n"
    "attention_correctness: pointing=P mass=M words=N (Liu et al. 2017): the share of the\n"
    "words naming a box whose most attended cell is one of the box's, and their mean\n"
    "weight on those cells.\n"
    "--attention-mode: the contexts of the pass (default: the model's\n"
    "translate.attention_mode; auto is argmax for a model trained with hard attention,\n"
    "whose records then carry the positions each head chose, \"chosen\").\n"
    "Tokenization, lowercasing and data.max_line_bytes are the model's. An option's value\n"
    "is the next argument: --out FILE, not --out=FILE.\n";

enum { ALIGN_BATCH = 32 };

typedef struct {
    const char *model, *src, *tgt, *gold, *ground, *out;
    float threshold; /* 0: the argmax of each row */
    int attention_mode; /* a ConfigDecodeMode, -1: the model's translate.attention_mode */
    int words;          /* links between words, not tokens */
} AlignOptions;

/* Reads the options into o. Returns -1 to go on, or the exit code (--help, an error). */
static int parse_options(AlignOptions *o, int argc, char **argv)
{
    enum { HELP, MODEL, SRC, TGT, GOLD, GROUND, OUT, THRESHOLD, MODE, WORDS };
    static const CmdOption OPTS[] = {
        [HELP] = {"--help", 0}, [MODEL] = {"--model", 1}, [SRC] = {"--src", 1},
        [TGT] = {"--tgt", 1}, [GOLD] = {"--gold", 1}, [GROUND] = {"--ground", 1}, [OUT] = {"--out", 1},
        [THRESHOLD] = {"--threshold", 1}, [MODE] = {"--attention-mode", 1}, [WORDS] = {"--words", 0},
        {NULL, 0}};
    *o = (AlignOptions){.attention_mode = -1};
    for (int a = 0; a < argc; a++) {
        const char *value = NULL;
        char *end;
        switch (cmd_option("align", OPTS, argc, argv, &a, &value)) {
        case -2:
            return EXIT_USAGE;
        case -1:
            return cmd_usage_error("align: unexpected argument `%s` (see s2s align --help)", argv[a]);
        case HELP:
            fputs(ALIGN_USAGE, stdout);
            return EXIT_OK;
        case MODEL:
            o->model = value;
            break;
        case SRC:
            o->src = value;
            break;
        case TGT:
            o->tgt = value;
            break;
        case GOLD:
            o->gold = value;
            break;
        case GROUND:
            o->ground = value;
            break;
        case OUT:
            o->out = value;
            break;
        case WORDS:
            o->words = 1;
            break;
        case MODE:
            if ((o->attention_mode = cmd_attention_mode(value)) < 0)
                return EXIT_USAGE;
            break;
        case THRESHOLD:
            o->threshold = strtof(value, &end);
            if (*end || end == value || !(o->threshold > 0 && o->threshold < 1))
                return cmd_usage_error("--threshold: expected a number between 0 and 1, got `%s`", value);
            break;
        }
    }
    if (!o->model || !o->src || !o->tgt)
        return cmd_usage_error("%s", "align needs --model, --src and --tgt (see s2s align --help)");
    return -1;
}

/* What the pass is scored against: gold links (AER) or, for an image model, the caption
 * words' boxes (attention correctness); either may be NULL. */
typedef struct {
    const GoldAlignments *gold;
    AerCounts aer;
    const GroundFile *ground;
    GroundingCounts grounding;
} AlignScores;

/* The names of an image model's S grid cells, "0" to "S-1", into names (S), their text
 * in text (S * 12 bytes). */
static void grid_cell_names(const char **names, char *text, int S)
{
    for (int j = 0; j < S; j++) {
        model_cell_name(j, text + (size_t)j * 12, 12);
        names[j] = text + (size_t)j * 12;
    }
}

/* Every pair of c through the model, ALIGN_BATCH at a time: its links on stdout (an
 * empty line for each line the corpus skipped), scored into sc, and its matrix to out
 * (if any). Returns 0, or -1 with err set (a picture that no longer decodes). */
static int align_corpus(const SavedModel *ck, const Corpus *c, AlignScores *sc, float threshold,
                        int argmax, int words, FILE *out, Error *err)
{
    Workspace ws;
    Batch bt;
    const int S = c->max_src_len + 1, picture = c->pics.n > 0;
    model_workspace_init(&ws, &ck->dims, ALIGN_BATCH, S, c->max_tgt_len + 1, 0);
    model_set_argmax(&ws, argmax);
    batch_init(&bt, ALIGN_BATCH, S, c->max_tgt_len + 1);
    if (picture)
        batch_init_pictures(&bt, c->pics.size);
    const char **cell = xmalloc_array((size_t)S, sizeof(char *));
    char *cell_text = xmalloc((size_t)S * 12);
    grid_cell_names(cell, cell_text, S);
    int rc = 0;
    int max_links = (c->max_src_len + 1) * (c->max_tgt_len + 1);
    Link *links = xmalloc_array((size_t)max_links, sizeof(Link));
    char *text = xmalloc((size_t)max_links * 16 + 1);
    const char **sw = xmalloc_array((size_t)c->max_src_len + 1, sizeof(char *));
    const char **tw = xmalloc_array((size_t)c->max_tgt_len + 1, sizeof(char *));
    long next_line = 1; /* empty pairs were skipped: they get empty lines */
    AlignExtraRoom room;
    for (int first = 0; first < c->n && rc == 0; first += ALIGN_BATCH) {
        int count = c->n - first < ALIGN_BATCH ? c->n - first : ALIGN_BATCH;
        if ((rc = corpus_batch(c, NULL, first, count, 1, &bt, err)) < 0)
            break;
        model_forward(&ws, &ck->params, &bt);
        for (int k = 0; k < count; k++) {
            int pair = first + k;
            for (; next_line < c->line_no[pair]; next_line++)
                putchar('\n');
            next_line++;
            const AttnMatrix m = align_of_pass(&ws, k, bt.tgt_len[k], bt.src_len[k]);
            int n = align_hard_links(&m, threshold, links, max_links);
            if (words)
                n = align_links_to_words(links, n, c->word_of + c->src_start[pair],
                                         c->word_of + c->tgt_start[pair]);
            align_format_links(links, n, text, (size_t)max_links * 16 + 1);
            puts(text);
            if (sc->gold)
                aer_add(&sc->aer, links, n, sc->gold->links + sc->gold->start[pair],
                        sc->gold->count[pair]);
            if (sc->ground) {
                int n_boxes;
                const GroundBox *boxes = ground_line(sc->ground, c->line_no[pair], &n_boxes);
                grounding_add(&sc->grounding, m.w, m.row_stride, m.col_stride,
                              model_grid_side(&ck->dims), boxes, n_boxes,
                              c->pics.orig[pair]);
            }
            if (out) {
                for (int j = 0; j < m.cols; j++)
                    sw[j] = picture ? cell[j] : vocab_word(&ck->src_vocab, bt.src[j * count + k]);
                for (int i = 0; i < m.rows; i++)
                    tw[i] = vocab_word(&ck->tgt_vocab, bt.tgt_out[i * count + k]);
                AlignExtras extra = align_extras_of_pass(&ws, k, m.rows, m.cols, &room);
                extra.image = picture ? c->pics.paths[pair] : NULL;
                if (align_write_json(out, ck->step, -1, c->line_no[pair], sw, tw, &m, &extra) < 0)
                    out = NULL; /* the error stays on the stream: reported at its close */
            }
        }
    }
    free(links);
    free(text);
    free(sw);
    free(tw);
    free(cell);
    free(cell_text);
    model_workspace_free(&ws);
    batch_free(&bt);
    return rc;
}

int cmd_align(int argc, char **argv)
{
    AlignOptions o;
    int rc = parse_options(&o, argc, argv);
    if (rc >= 0)
        return rc;
    SavedModel ck;
    Corpus c;
    GoldAlignments gold = {0};
    GroundFile ground = {0};
    FILE *out = NULL;
    Error err;
    int stdout_said = 0;
    rc = EXIT_USAGE;
    memset(&c, 0, sizeof c);
    if (saved_model_load(&ck, o.model, &err) < 0)
        goto done;
    if (!model_has_alignments(&ck.dims)) {
        error_set(&err, "%s: the model has no attention (model.attention: none), so no "
                  "alignments", o.model);
        goto done;
    }
    const int picture = model_reads_pictures(&ck.dims);
    if (o.words && picture) {
        error_set(&err, "--words: the model `%s` reads pictures: its sources are grid cells, "
                  "not words", o.model);
        goto done;
    }
    if ((o.gold && picture) || (o.ground && !picture)) {
        error_set(&err, "%s: the model `%s` reads %s", o.gold ? "--gold" : "--ground", o.model,
                  picture ? "pictures: score its attention with --ground" : "words: --ground is for "
                  "an image model");
        goto done;
    }
    const int G = model_grid_side(&ck.dims);
    CorpusSpec spec = {.src_path = o.src, .tgt_path = o.tgt, .level = ck.config.data.level,
                       .lowercase = ck.config.data.lowercase,
                       .src_subwords = ck.subwords.model[SIDE_SRC],
                       .tgt_subwords = ck.subwords.model[SIDE_TGT], .max_length = 0,
                       .max_line_bytes = ck.config.data.max_line_bytes, .pictures = picture,
                       .keep_words = o.words,
                       .picture_size = ck.dims.image_size,
                       .picture_resize = ck.config.data.image_resize, .picture_cells = G * G,
                       .cache_bytes = PICTURES_CACHE_BYTES,
                       .progress = isatty(STDERR_FILENO) ? stderr : NULL};
    if (corpus_read(&c, &spec, &ck.src_vocab, &ck.tgt_vocab, 0, "alignment", &err) < 0)
        goto done;
    memcpy(c.mean, ck.picture_mean, sizeof c.mean); /* what the model was trained on */
    if (o.gold && gold_read(&gold, o.gold, &c, o.words, (size_t)ck.config.data.max_line_bytes, &err) < 0)
        goto done;
    if (o.ground && (ground_read(&ground, o.ground, (size_t)ck.config.data.max_line_bytes, &err) < 0 ||
                     ground_check_corpus(&ground, o.ground, &c, &err) < 0))
        goto done;
    if (o.out && !(out = fopen(o.out, "w"))) {
        error_errno(&err, "cannot write", o.out);
        rc = EXIT_IO;
        goto done;
    }
    AlignScores sc = {.gold = o.gold ? &gold : NULL, .ground = o.ground ? &ground : NULL};
    if (align_corpus(&ck, &c, &sc, o.threshold, config_decodes_argmax(&ck.config, o.attention_mode),
                     o.words, out, &err) < 0) {
        rc = EXIT_FAILED;
        goto done;
    }
    if (out && (ferror(out) || fclose(out) != 0)) {
        out = NULL;
        error_errno(&err, "cannot write", o.out);
        rc = EXIT_IO;
        goto done;
    }
    out = NULL;
    const AerCounts *aer = &sc.aer;
    if (o.gold)
        fprintf(stderr, "AER = %.4f (precision %.4f, recall %.4f; %d pair%s, %ld link%s, %ld sure "
                "gold link%s)\n", aer_rate(aer), aer_precision(aer), aer_recall(aer), c.n,
                plural(c.n), aer->hyp, plural(aer->hyp), aer->sure, plural(aer->sure));
    if (o.ground) {
        char line[160];
        grounding_format(&sc.grounding, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    }
    rc = cmd_flush_stdout() == 0 ? EXIT_OK : EXIT_IO;
    stdout_said = rc != EXIT_OK; /* cmd_flush_stdout printed the message */
done:
    if (out)
        fclose(out);
    gold_free(&gold);
    ground_free(&ground);
    corpus_free(&c);
    saved_model_free(&ck);
    return rc == EXIT_OK || stdout_said ? rc : cmd_error(&err, rc);
}
