/* crosscheck_dump.c: writes a model's weights, a batch, and the loss and gradients
 * the C core computes for them, as text, for scripts/checks/crosscheck.py to recompute in
 * PyTorch. Built twice: against the float core and against the double core.
 *
 * usage: crosscheck_dump [name=value ...]    e.g. crosscheck_dump score=dot heads=2 p=8
 *        crosscheck_dump mode=conv [ties=1] [B=.. image_size=.. conv_channels=.. seed=..]
 * Each argument sets one field of Setup, by its name (SETTINGS lists them); the rest keep
 * DEFAULTS: the gradient-check sizes V_x=9 V_y=8 m=3 n=4 p=5 a=5 l=4, a batch of B=3
 * pairs, seed=1, and the default model -- additive attention, the bidirectional GRU
 * encoder of one layer, a GRU decoder, one head, no self-attention layer (sa_heads=4
 * once there is one; sa_ffn=0 means 4 d_h), no dropout or smoothing, soft attention
 * (hard=0; a hard pass's lambda_r is reinforce_weight=1, the rest 0). An unknown name,
 * a value out of its range, a setting given twice or settings that do not go together
 * (check_combination) is a one-line error that names the arguments (exit 2). The dump's second line, settings, gives every field name=value as
 * used (sa_ffn resolved), from which the script builds the same model.
 * encoder=attn is the attention-only encoder (d_h = m; n and enc_cell are unused).
 * hard=1 makes it a hard pass (model/MODEL.md, "Hard attention"): the positions sampled
 * (CONTEXT_SAMPLE, from the seed's RNG_STREAM_HARD), the loss and gradients the
 * surrogate J's; the sentences that chose (hard_rows, B) and each head's position
 * (chosen, (T, B, H), -1 where a row did not choose) are written after the batch, so
 * that PyTorch takes the same paths.
 * With dropout, the masks the forward pass drew are written too, in (position, batch)
 * layouts: mask_x (S, B, m), mask_y (T, B, m) and mask_t over the real target
 * positions in (step, sentence) order, as PyTorch indexes them; and per self-attention
 * layer L (from 1) saL.mask_p (B, H, S, S), saL.mask_a (S, B, d_h), saL.mask_r (S, B, F)
 * and saL.mask_o (S, B, d_h).
 * encoder=image is the image encoder (model/MODEL.md, "Image encoder"; n, enc_cell and
 * the source words unused): image_size=8 pixels and conv_channels=3,4 (a list, one
 * block's channels each) unless given, grid_positions=1 (learned; 0 none, 2 the fixed
 * sines: a GridPositions); the batch's pictures are
 * drawn from the seed after the words, uniform in [-0.5, 0.5), and written after the
 * batch as pixels (B, N, N, 3), channels last as the batch holds them. context_gate=1
 * adds the gate, doubly_stochastic=lambda the doubly stochastic term, to any model
 * (neither with score=none); attention_supervision=lambda, to an image model with
 * attention, supervises it on word cells drawn after the pictures (each cell of a real
 * word's step in with probability 1/3), written as ground (T, B, S). tie_output=1 makes
 * W_o the target embeddings E_y (needs l = m; the dump then has no W_o); share_embeddings=1
 * makes E_x the target embeddings E_y (needs V_x = V_y and a text encoder; the dump then
 * has no E_x). mode=conv dumps
 * the conv blocks alone instead (conv_dump,
 * ties=1 its case with ties). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "model/batch.h"
#include "model/model.h"
#include "nn/conv.h"
#include "nn/ops.h"

/* A list of integers, as conv_channels=3,4 gives it. */
typedef struct {
    int n, v[CONV_MAX_LAYERS];
} IntList;

/* Everything a dump depends on, each field named as its argument. */
typedef struct {
    int V_x, V_y, m, n, p, a, l; /* model/MODEL.md's sizes */
    int B, seed;                 /* sentence pairs in the batch; the seed of every stream */
    int score, encoder, enc_cell, dec_cell; /* ScoreKind, EncoderKind, CellKind, CellKind */
    int enc_layers, heads, sa_layers, sa_heads, sa_ffn;
    int dec_layers, dec_ffn;     /* the Transformer decoder's (dec_layers > 0; l = m) */
    double embedding_dropout, readout_dropout, sa_dropout, label_smoothing;
    int hard, token_reward; /* hard attention's surrogate (HardAttention's fields): */
    double expected_prob, reinforce_weight, entropy_weight, baseline, token_baseline;
    int image_size, grid_positions; /* the image encoder's (encoder=image): pictures of */
    IntList conv_channels;          /* image_size pixels, the blocks' channels */
    int context_gate;               /* Dims.context_gate */
    int tie_output;                 /* Dims.tie_output: W_o is E_y (l = m) */
    int share_embeddings;           /* Dims.share_embeddings: E_x is E_y (V_x = V_y) */
    double doubly_stochastic;       /* Regularization.doubly_stochastic: lambda */
    double attention_supervision;   /* Regularization.attention_supervision: lambda */
    int mode, ties;                 /* model or conv (conv_dump); conv's integer case */
} Setup;

static const Setup DEFAULTS = {
    .V_x = 9, .V_y = 8, .m = 3, .n = 4, .p = 5, .a = 5, .l = 4, .B = 3, .seed = 1,
    .score = SCORE_ADDITIVE, .encoder = ENCODER_BIRNN, .enc_cell = CELL_GRU,
    .dec_cell = CELL_GRU, .enc_layers = 1, .heads = 1, .sa_heads = 4, .reinforce_weight = 1,
    .image_size = 8, .grid_positions = 1, .conv_channels = {2, {3, 4}}};

/* By EncoderKind. */
static const char *const encoder_names[] = {"birnn", "attn", "image", NULL};
/* What a run dumps: the model's pass, or the conv blocks alone (conv_dump). */
enum { MODE_MODEL, MODE_CONV };
static const char *const mode_names[] = {"model", "conv", NULL};

typedef enum { SETTING_INT, SETTING_REAL, SETTING_NAME, SETTING_LIST } SettingKind;

/* One name=value argument: the field of Setup it sets and the values it takes. */
typedef struct {
    const char *name;
    SettingKind kind;
    size_t offset;            /* of the field in Setup: an int, a double for SETTING_REAL,
                               * an IntList for SETTING_LIST */
    double min, max;          /* the values accepted (SETTING_LIST: each of them) */
    const char *const *names; /* SETTING_NAME: the values, NULL-terminated; the field
                               * holds the index of the one given */
} Setting;

#define INT_SETTING(field, min, max) {#field, SETTING_INT, offsetof(Setup, field), min, max, NULL}
#define REAL_SETTING(field, min, max) {#field, SETTING_REAL, offsetof(Setup, field), min, max, NULL}
#define NAME_SETTING(field, names) {#field, SETTING_NAME, offsetof(Setup, field), 0, 0, names}
#define LIST_SETTING(field, min, max) {#field, SETTING_LIST, offsetof(Setup, field), min, max, NULL}

static const Setting SETTINGS[] = {
    INT_SETTING(V_x, N_SPECIAL_TOKENS + 1, 100000), /* a word besides the special tokens */
    INT_SETTING(V_y, N_SPECIAL_TOKENS + 1, 100000),
    INT_SETTING(m, 1, 8192), INT_SETTING(n, 1, 8192), INT_SETTING(p, 1, 8192),
    INT_SETTING(a, 1, 8192), INT_SETTING(l, 1, 8192),
    INT_SETTING(B, 1, 4096), INT_SETTING(seed, 0, INT_MAX),
    NAME_SETTING(score, score_names), NAME_SETTING(encoder, encoder_names),
    NAME_SETTING(enc_cell, cell_names), NAME_SETTING(dec_cell, cell_names),
    INT_SETTING(enc_layers, 1, MODEL_MAX_LAYERS), INT_SETTING(heads, 1, ATTN_MAX_HEADS),
    INT_SETTING(sa_layers, 0, SA_MAX_LAYERS), INT_SETTING(sa_heads, 1, ATTN_MAX_HEADS),
    INT_SETTING(sa_ffn, 0, 65536),
    INT_SETTING(dec_layers, 0, DEC_MAX_LAYERS), INT_SETTING(dec_ffn, 0, 65536),
    /* the probabilities as the config takes them */
    REAL_SETTING(embedding_dropout, 0, 0.9), REAL_SETTING(readout_dropout, 0, 0.9),
    REAL_SETTING(sa_dropout, 0, 0.9), REAL_SETTING(label_smoothing, 0, 0.9),
    INT_SETTING(hard, 0, 1), INT_SETTING(token_reward, 0, 1),
    REAL_SETTING(expected_prob, 0, 1), REAL_SETTING(reinforce_weight, 0, 1e6),
    REAL_SETTING(entropy_weight, 0, 1e6), REAL_SETTING(baseline, -1e6, 1e6),
    REAL_SETTING(token_baseline, -1e6, 1e6),
    /* the config's ranges (run/config_schema.c) */
    INT_SETTING(image_size, 2, 1024), LIST_SETTING(conv_channels, 1, 4096),
    INT_SETTING(grid_positions, 0, 2), INT_SETTING(context_gate, 0, 1),
    INT_SETTING(tie_output, 0, 1), INT_SETTING(share_embeddings, 0, 1),
    REAL_SETTING(doubly_stochastic, 0, 1e6),
    REAL_SETTING(attention_supervision, 0, 1e6),
    NAME_SETTING(mode, mode_names), INT_SETTING(ties, 0, 1),
};
enum { N_SETTINGS = sizeof SETTINGS / sizeof SETTINGS[0] };

/* Sets the field of setting x from text, or says why not (on stderr, naming arg). */
static int set_value(Setup *s, const Setting *x, const char *text, const char *arg)
{
    char *end;
    void *field = (char *)s + x->offset;
    errno = 0;
    if (x->kind == SETTING_NAME) {
        for (int k = 0; x->names[k]; k++)
            if (!strcmp(text, x->names[k])) {
                *(int *)field = k;
                return 0;
            }
        fprintf(stderr, "crosscheck_dump: %s: %s is one of", arg, x->name);
        for (int k = 0; x->names[k]; k++)
            fprintf(stderr, " %s", x->names[k]);
        fprintf(stderr, "\n");
        return -1;
    }
    if (x->kind == SETTING_LIST) {
        IntList *list = field, got = {0};
        const char *at = text;
        for (;;) {
            long v = strtol(at, &end, 10);
            if (!isdigit((unsigned char)*at) || errno || v < x->min || v > x->max ||
                got.n == CONV_MAX_LAYERS)
                break;
            got.v[got.n++] = (int)v;
            if (!*end) {
                *list = got;
                return 0;
            }
            if (*end != ',')
                break;
            at = end + 1;
        }
        fprintf(stderr, "crosscheck_dump: %s: %s is 1 to %d integers from %.0f to %.0f, "
                "separated by commas\n", arg, x->name, CONV_MAX_LAYERS, x->min, x->max);
        return -1;
    }
    if (x->kind == SETTING_INT) {
        long v = strtol(text, &end, 10);
        if (*text && !*end && !errno && v >= x->min && v <= x->max) {
            *(int *)field = (int)v;
            return 0;
        }
        fprintf(stderr, "crosscheck_dump: %s: %s is an integer from %.0f to %.0f\n", arg,
                x->name, x->min, x->max);
        return -1;
    }
    double v = strtod(text, &end);
    if (*text && !*end && !errno && isfinite(v) && v >= x->min && v <= x->max) {
        *(double *)field = v;
        return 0;
    }
    fprintf(stderr, "crosscheck_dump: %s: %s is a number from %g to %g\n", arg, x->name,
            x->min, x->max);
    return -1;
}

/* The index in SETTINGS of the one called name[0..len), or N_SETTINGS. */
static int find_setting(const char *name, size_t len)
{
    int k = 0;
    while (k < N_SETTINGS &&
           (strlen(SETTINGS[k].name) != len || strncmp(name, SETTINGS[k].name, len) != 0))
        k++;
    return k;
}

/* conv_channels as the argument gives it, "3,4", into text (of at least 64 bytes). */
static void list_text(char *text, const IntList *list)
{
    text[0] = 0;
    for (int l = 0; l < list->n; l++)
        sprintf(text + strlen(text), "%s%d", l ? "," : "", list->v[l]);
}

/* Settings that are each valid but not together, or -1 after a one-line error that
 * names them as arguments. */
static int check_combination(const Setup *s)
{
    char channels[64];
    list_text(channels, &s->conv_channels);
    const int L = s->conv_channels.n;
    if (s->image_size % (1 << L) != 0) { /* each block halves the picture */
        fprintf(stderr, "crosscheck_dump: image_size=%d conv_channels=%s: image_size is not "
                "divisible by 2^%d\n", s->image_size, channels, L);
        return -1;
    }
    /* score none has no weights: to choose by, to gate the context by (the config drops
     * the gate there), to sum over the caption */
    const char *without = s->hard ? "hard=1" : s->context_gate ? "context_gate=1" : NULL;
    if (s->score == SCORE_NONE && (without || s->doubly_stochastic > 0)) {
        if (without)
            fprintf(stderr, "crosscheck_dump: %s with score=none: no attention weights\n",
                    without);
        else
            fprintf(stderr, "crosscheck_dump: doubly_stochastic=%g with score=none: no "
                    "attention weights\n", s->doubly_stochastic);
        return -1;
    }
    if (s->tie_output && s->l != s->m) {
        fprintf(stderr, "crosscheck_dump: tie_output=1 with l=%d m=%d: W_o (V_y, l) is E_y "
                "(V_y, m)\n", s->l, s->m);
        return -1;
    }
    if (s->share_embeddings && (s->V_x != s->V_y || s->encoder == ENCODER_IMAGE)) {
        fprintf(stderr, "crosscheck_dump: share_embeddings=1 with V_x=%d V_y=%d%s: E_x is E_y, "
                "one vocabulary of both sides' words\n", s->V_x, s->V_y,
                s->encoder == ENCODER_IMAGE ? " and encoder=image" : "");
        return -1;
    }
    if (s->attention_supervision > 0 && s->encoder != ENCODER_IMAGE) {
        fprintf(stderr, "crosscheck_dump: attention_supervision=%g without encoder=image: its "
                "words' cells are on a picture's grid\n", s->attention_supervision);
        return -1;
    }
    if (s->attention_supervision > 0 && s->score == SCORE_NONE) {
        fprintf(stderr, "crosscheck_dump: attention_supervision=%g with encoder=image and "
                "score=none: no attention weights\n", s->attention_supervision);
        return -1;
    }
    if (s->ties && s->mode != MODE_CONV) {
        fprintf(stderr, "crosscheck_dump: ties=1 without mode=conv: only the conv blocks' "
                "check has a case with ties\n");
        return -1;
    }
    return 0;
}

/* DEFAULTS with the arguments' settings, or -1 after a one-line error. */
static int parse_settings(Setup *s, int argc, char **argv)
{
    int given[N_SETTINGS] = {0};
    *s = DEFAULTS;
    for (int i = 1; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "crosscheck_dump: %s: not name=value\n", argv[i]);
            return -1;
        }
        int k = find_setting(argv[i], (size_t)(eq - argv[i]));
        if (k == N_SETTINGS) {
            fprintf(stderr, "crosscheck_dump: %s: no setting %.*s (the settings:", argv[i],
                    (int)(eq - argv[i]), argv[i]);
            for (k = 0; k < N_SETTINGS; k++)
                fprintf(stderr, " %s", SETTINGS[k].name);
            fprintf(stderr, ")\n");
            return -1;
        }
        if (given[k]++) {
            fprintf(stderr, "crosscheck_dump: %s: %s given twice\n", argv[i], SETTINGS[k].name);
            return -1;
        }
        if (set_value(s, &SETTINGS[k], eq + 1, argv[i]) != 0)
            return -1;
    }
    return check_combination(s);
}

/* "settings name=value ..." of every setting, on one line. */
static void print_settings(const Setup *s)
{
    printf("settings");
    for (int k = 0; k < N_SETTINGS; k++) {
        const Setting *x = &SETTINGS[k];
        const void *field = (const char *)s + x->offset;
        char list[64];
        if (x->kind == SETTING_REAL)
            printf(" %s=%.17g", x->name, *(const double *)field);
        else if (x->kind == SETTING_LIST) {
            list_text(list, field);
            printf(" %s=%s", x->name, list);
        }
        else if (x->kind == SETTING_NAME)
            printf(" %s=%s", x->name, x->names[*(const int *)field]);
        else
            printf(" %s=%d", x->name, *(const int *)field);
    }
    printf("\n");
}

enum { MAX_WORDS = 9 };

static void print_ints(const char *name, const int *v, int count)
{
    printf("%s %d\n", name, count);
    for (int k = 0; k < count; k++)
        printf("%d%c", v[k], k + 1 < count ? ' ' : '\n');
}

static void print_reals(const char *name, const real *v, size_t count)
{
    printf("%s %zu\n", name, count);
    for (size_t k = 0; k < count; k++)
        printf("%.17g%c", (double)v[k], k + 1 < count ? ' ' : '\n');
}

/* The target-embedding mask in (T, B, m) layout: the decoder keeps only the rows each
 * step computes (step_row); rows it left out are padding, and get 1. */
static void print_mask_y(const Workspace *ws)
{
    const int T = ws->T, B = ws->B, m = ws->dims.emb;
    real *full = malloc(sizeof(real) * (size_t)T * B * m);
    for (size_t k = 0; k < (size_t)T * B * m; k++)
        full[k] = 1;
    for (int i = 0; i < T; i++)
        for (int b = 0; b < ws->dec.active[i]; b++)
            memcpy(full + ((size_t)i * B + b) * m,
                   ws->dec.mask_y + ((size_t)ws->dec.step_row[i] + b) * m,
                   sizeof(real) * m);
    print_reals("mask_y", full, (size_t)T * B * m);
    free(full);
}

/* Floats as their exact value in %.17g, which a double reads back exactly (%.9g reads
 * back as the same float, but not as the same double: torch reads doubles). */
static void print_floats(const char *name, const float *v, size_t count)
{
    printf("%s %zu\n", name, count);
    for (size_t k = 0; k < count; k++)
        printf("%.17g%c", (double)v[k], k + 1 < count ? ' ' : '\n');
}

static void print_tensors(const char *kind, const Params *p)
{
    for (int t = 0; t < p->n_tensors; t++) {
        const Tensor *x = &p->tensors[t];
        size_t count = (size_t)x->rows * x->cols;
        printf("%s %s %d %d\n", kind, x->name, x->rows, x->cols);
        for (size_t k = 0; k < count; k++)
            printf("%.17g%c", (double)x->data[k], k + 1 < count ? ' ' : '\n');
    }
}

/* The model s describes; sa_ffn 0 becomes 4 d_h, in s too, as the settings line says. */
static Dims setup_dims(Setup *s)
{
    Dims d = {.src_vocab = s->V_x, .tgt_vocab = s->V_y, .emb = s->m, .enc_hidden = s->n,
              .dec_hidden = s->p, .attn = s->a, .readout = s->l, .score = (ScoreKind)s->score,
              .heads = s->heads, .encoder = (EncoderKind)s->encoder,
              .enc_cell = (CellKind)s->enc_cell, .dec_cell = (CellKind)s->dec_cell,
              .enc_layers = s->enc_layers, .sa_layers = s->sa_layers, .sa_heads = s->sa_heads,
              .sa_ffn = s->sa_ffn, .hard = s->hard, .context_gate = s->context_gate,
              .tie_output = s->tie_output, .share_embeddings = s->share_embeddings};
    if (d.encoder == ENCODER_IMAGE) {
        d.image_size = s->image_size;
        d.conv_layers = s->conv_channels.n;
        memcpy(d.conv_channels, s->conv_channels.v, sizeof d.conv_channels);
        d.grid_positions = s->grid_positions;
    }
    if (d.sa_ffn == 0)
        d.sa_ffn = s->sa_ffn = 4 * model_annotation_width(&d);
    if (s->dec_layers > 0) { /* the output layer reads the decoder's m-wide output */
        d.decoder = DECODER_TRANSFORMER;
        d.dec_layers = s->dec_layers;
        d.dec_ffn = s->dec_ffn = s->dec_ffn ? s->dec_ffn : 4 * s->m;
        d.readout = s->l = s->m;
    }
    return d;
}

/* B pairs of sentences of 0..MAX_WORDS-1 words on each side, lengths drawn
 * independently, so the batch has padding on both sides in different places. For an
 * image model the targets are the captions, and the pictures (B, N, N, 3) are drawn
 * after the words, uniform in [-0.5, 0.5) (pictures less their channel means). */
static void random_batch(Batch *bt, const Dims *d, int B, uint64_t seed, int supervised)
{
    Pcg32 rng;
    pcg32_seed(&rng, seed, RNG_STREAM_DATA);
    int *words = malloc(sizeof(int) * (size_t)B * 2 * MAX_WORDS);
    int *src_n = malloc(sizeof(int) * (size_t)B), *tgt_n = malloc(sizeof(int) * (size_t)B);
    const int **src = malloc(sizeof(int *) * (size_t)B), **tgt = malloc(sizeof(int *) * (size_t)B);
    for (int b = 0; b < B; b++) {
        int *s = words + (size_t)b * 2 * MAX_WORDS, *t = s + MAX_WORDS;
        src_n[b] = (int)pcg32_below(&rng, MAX_WORDS);
        tgt_n[b] = (int)pcg32_below(&rng, MAX_WORDS);
        for (int k = 0; k < MAX_WORDS; k++) {
            s[k] = N_SPECIAL_TOKENS + (int)pcg32_below(&rng, (uint32_t)(d->src_vocab - N_SPECIAL_TOKENS));
            t[k] = N_SPECIAL_TOKENS + (int)pcg32_below(&rng, (uint32_t)(d->tgt_vocab - N_SPECIAL_TOKENS));
        }
        src[b] = s;
        tgt[b] = t;
    }
    if (d->encoder == ENCODER_IMAGE) {
        const int G = model_grid_side(d);
        const size_t n_pixels = (size_t)B * d->image_size * d->image_size * 3;
        batch_init(bt, B, G * G, MAX_WORDS + 1);
        batch_init_pictures(bt, d->image_size);
        batch_fill_pictures(bt, B, G * G, tgt, tgt_n);
        for (size_t k = 0; k < n_pixels; k++)
            bt->pixels[k] = pcg32_uniform(&rng, -0.5f, 0.5f);
        if (supervised) { /* each real word's cells: in with probability 1/3 */
            batch_init_ground(bt, G * G);
            for (int i = 0; i < bt->tgt_steps; i++)
                for (int b = 0; b < B; b++)
                    for (int j = 0; j < G * G; j++)
                        bt->ground[((size_t)i * B + b) * G * G + j] =
                            i < tgt_n[b] && pcg32_below(&rng, 3) == 0;
        }
    } else {
        batch_init(bt, B, MAX_WORDS + 1, MAX_WORDS + 1);
        batch_fill(bt, B, src, src_n, tgt, tgt_n);
    }
    free(words);
    free(src_n);
    free(tgt_n);
    free(src);
    free(tgt);
}

/* Weights and biases in [-0.5, 0.5]: a general point where every gradient is well
 * above float's resolution (at the training init the attention's are ~1e-11). */
static void general_point(Params *P, uint64_t seed)
{
    Pcg32 init;
    pcg32_seed(&init, seed, RNG_STREAM_INIT);
    for (size_t k = 0; k < P->n; k++)
        P->mem[k] = (real)pcg32_uniform(&init, -0.5f, 0.5f);
    /* layer norms' gains around 1, where they start: near 0 they would shrink the
     * annotations, and with them the attention's gradients, to rounding noise */
    for (int t = 0; t < P->n_tensors; t++)
        if (P->tensors[t].init == TENSOR_ONES)
            for (int k = 0; k < P->tensors[t].rows; k++)
                P->tensors[t].data[k] += 1;
}

/* The dropout masks the forward pass drew, in the layouts of the top of the file. */
static void print_masks(const Workspace *ws, const Regularization *reg, const Batch *bt)
{
    const Dims *d = &ws->dims;
    const int B = bt->batch_size;
    if (reg->embedding_dropout > 0) {
        if (ws->enc.mask_x) /* a text encoder's: an image has no source embeddings */
            print_reals("mask_x", ws->enc.mask_x, (size_t)bt->src_steps * B * d->emb);
        print_mask_y(ws);
    }
    if (reg->readout_dropout > 0)
        print_reals("mask_t", ws->ro.mask_t, (size_t)ws->N * d->readout);
    for (int l = 0; l < d->dec_layers && model_is_transformer(d) &&
                    reg->self_attention_dropout > 0; l++) {
        const TdecLayerWork *x = &ws->dec.tdec.layer[l];
        const size_t TB = (size_t)bt->tgt_steps * B, T = bt->tgt_steps, S = bt->src_steps;
        const size_t H = d->heads;
        const struct {
            const char *name;
            const real *mask;
            size_t count;
        } dec[] = {{"mask_sp", x->mask_sp, B * H * T * T}, {"mask_sa", x->mask_sa, TB * d->emb},
                   {"mask_cp", x->mask_cp, B * H * T * S}, {"mask_ca", x->mask_ca, TB * d->emb},
                   {"mask_r", x->mask_r, TB * d->dec_ffn}, {"mask_o", x->mask_o, TB * d->emb}};
        for (size_t k = 0; k < sizeof dec / sizeof *dec; k++) {
            char name[32];
            snprintf(name, sizeof name, "dec%d.%s", l + 1, dec[k].name);
            print_reals(name, dec[k].mask, dec[k].count);
        }
    }
    for (int l = 0; l < d->sa_layers && reg->self_attention_dropout > 0; l++) {
        const SelfAttnLayerWork *x = &ws->enc.sa.layer[l];
        const size_t SB = (size_t)bt->src_steps * B, d_h = model_annotation_width(d);
        char name[32];
        snprintf(name, sizeof name, "sa%d.mask_p", l + 1);
        print_reals(name, x->mask_p, (size_t)B * d->sa_heads * bt->src_steps * bt->src_steps);
        snprintf(name, sizeof name, "sa%d.mask_a", l + 1);
        print_reals(name, x->mask_a, SB * d_h);
        snprintf(name, sizeof name, "sa%d.mask_r", l + 1);
        print_reals(name, x->mask_r, SB * d->sa_ffn);
        snprintf(name, sizeof name, "sa%d.mask_o", l + 1);
        print_reals(name, x->mask_o, SB * d_h);
    }
}

/* ---- mode=conv: the conv blocks alone ------------------------------------------- */

/* An integer from lo to hi. */
static real small_int(Pcg32 *rng, int lo, int hi)
{
    return (real)(lo + (int)pcg32_below(rng, (uint32_t)(hi - lo + 1)));
}

/* ties=1's pictures (B, N, N, 3): integers from -2 to 2; in each picture and channel the
 * top left quadrant is one value, the top right one value per column, the bottom left
 * one value per row, the bottom right free. Inside a quadrant, away from its edges, a
 * pooling window of the first block then sees four equal neighbourhoods, two equal rows
 * or two equal columns. */
static void tied_pictures(real *x, int B, int N, Pcg32 *rng)
{
    real *by_row = malloc(sizeof(real) * 2 * (size_t)N), *by_col = by_row + N;
    for (int b = 0; b < B; b++)
        for (int c = 0; c < 3; c++) {
            const real one = small_int(rng, -2, 2);
            for (int k = 0; k < N; k++) {
                by_row[k] = small_int(rng, -2, 2);
                by_col[k] = small_int(rng, -2, 2);
            }
            for (int y = 0; y < N; y++)
                for (int x0 = 0; x0 < N; x0++) {
                    const int top = y < N / 2, left = x0 < N / 2;
                    x[(((size_t)b * N + y) * N + x0) * 3 + c] =
                        top && left ? one : top ? by_col[x0] : left ? by_row[y]
                                                                     : small_int(rng, -2, 2);
                }
        }
    free(by_row);
}

/* The blocks' numbers: per block l, its weights W[l] (C_l, 9 C_{l-1}) and b[l] (C_l). */
typedef struct {
    int B, N, L, C[CONV_MAX_LAYERS + 1]; /* C[0] = 3 */
    real *x, *W[CONV_MAX_LAYERS], *b[CONV_MAX_LAYERS], *cols[CONV_MAX_LAYERS];
    real *relu[CONV_MAX_LAYERS], *pool[CONV_MAX_LAYERS], *R;
    int *argmax[CONV_MAX_LAYERS];
    real *dW[CONV_MAX_LAYERS], *db[CONV_MAX_LAYERS], *drelu[CONV_MAX_LAYERS];
    real *din[CONV_MAX_LAYERS], *dcols; /* din[0]: the pictures' gradient */
} ConvCase;

static size_t side_pixels(const ConvCase *k, int l)
{
    return (size_t)k->B * (k->N >> l) * (k->N >> l);
}

static real *reals(size_t n)
{
    return calloc(n ? n : 1, sizeof(real));
}

/* The case s describes: its buffers, and its numbers drawn from the seed. */
static void conv_case(ConvCase *k, const Setup *s)
{
    Pcg32 rng;
    pcg32_seed(&rng, (uint64_t)s->seed, RNG_STREAM_INIT);
    memset(k, 0, sizeof *k);
    k->B = s->B, k->N = s->image_size, k->L = s->conv_channels.n, k->C[0] = 3;
    size_t most_cols = 0;
    for (int l = 0; l < k->L; l++) {
        const size_t P = side_pixels(k, l), in = (size_t)9 * k->C[l];
        const size_t C = (size_t)(k->C[l + 1] = s->conv_channels.v[l]);
        k->W[l] = reals(C * in), k->b[l] = reals(C), k->cols[l] = reals(P * in);
        k->relu[l] = reals(P * C), k->pool[l] = reals(P / 4 * C);
        k->argmax[l] = calloc(P / 4 * C, sizeof(int));
        k->dW[l] = reals(C * in), k->db[l] = reals(C), k->drelu[l] = reals(P * C);
        k->din[l] = reals(P * k->C[l]);
        most_cols = P * in > most_cols ? P * in : most_cols;
        for (size_t j = 0; j < C * in; j++)
            k->W[l][j] = s->ties ? small_int(&rng, -1, 1) : (real)pcg32_uniform(&rng, -0.5f, 0.5f);
        for (size_t j = 0; j < C; j++)
            k->b[l][j] = s->ties ? small_int(&rng, 0, 2) : (real)pcg32_uniform(&rng, -0.5f, 0.5f);
    }
    k->dcols = reals(most_cols);
    k->x = reals(side_pixels(k, 0) * 3);
    if (s->ties)
        tied_pictures(k->x, k->B, k->N, &rng);
    else
        for (size_t j = 0; j < side_pixels(k, 0) * 3; j++)
            k->x[j] = (real)pcg32_uniform(&rng, -0.5f, 0.5f);
    const size_t n_out = side_pixels(k, k->L) * k->C[k->L];
    k->R = reals(n_out);
    for (size_t j = 0; j < n_out; j++)
        k->R[j] = s->ties ? small_int(&rng, -3, 3) : (real)pcg32_uniform(&rng, -1, 1);
}

static void conv_case_free(ConvCase *k)
{
    for (int l = 0; l < k->L; l++) {
        free(k->W[l]), free(k->b[l]), free(k->cols[l]), free(k->relu[l]), free(k->pool[l]);
        free(k->argmax[l]), free(k->dW[l]), free(k->db[l]), free(k->drelu[l]), free(k->din[l]);
    }
    free(k->dcols), free(k->x), free(k->R);
}

/* The blocks forward, as encoder_image.c runs them, and the loss sum(pool_L * R). */
static double conv_case_forward(ConvCase *k)
{
    const real *in = k->x;
    for (int l = 0; l < k->L; l++) {
        const int N = k->N >> l, C = k->C[l + 1];
        conv3x3_forward(k->relu[l], k->cols[l], in, k->W[l], k->b[l], k->B, N, k->C[l], C);
        relu_forward(k->relu[l], k->relu[l], side_pixels(k, l) * C);
        maxpool2x2_forward(k->pool[l], k->argmax[l], k->relu[l], k->B, N, C);
        in = k->pool[l];
    }
    double loss = 0;
    for (size_t j = 0; j < side_pixels(k, k->L) * k->C[k->L]; j++)
        loss += (double)k->pool[k->L - 1][j] * k->R[j];
    return loss;
}

/* Its gradients, from R down to the pictures. */
static void conv_case_backward(ConvCase *k)
{
    const real *dpool = k->R;
    for (int l = k->L - 1; l >= 0; l--) {
        const int N = k->N >> l, C = k->C[l + 1];
        maxpool2x2_backward(k->drelu[l], dpool, k->argmax[l], k->B, N, C);
        real *dconv = reals(side_pixels(k, l) * C);
        relu_backward(dconv, k->drelu[l], k->relu[l], side_pixels(k, l) * C);
        conv3x3_backward(k->din[l], k->dW[l], k->db[l], k->dcols, dconv, k->cols[l], k->W[l],
                         k->B, N, k->C[l], C);
        free(dconv);
        dpool = k->din[l];
    }
}

static void print_matrix(const char *kind, const char *name, const real *v, size_t rows,
                         size_t cols)
{
    printf("%s %s %zu %zu\n", kind, name, rows, cols);
    for (size_t j = 0; j < rows * cols; j++)
        printf("%.17g%c", (double)v[j], j + 1 < rows * cols ? ' ' : '\n');
}

/* mode=conv: the image encoder's conv blocks alone (nn/conv.h, with ops.h's relu),
 * chained as encoder_image.c chains them, on B pictures of image_size pixels: block l
 * (from 1) turns in_l (B, N_l, N_l, C_{l-1}) into
 *
 *     relu_l = relu(conv3x3(in_l; conv{l}.W, conv{l}.b)),   pool_l = maxpool2x2(relu_l)
 *
 * and in_{l+1} = pool_l. Writes the pictures ("value pixels"), the weights, each block's
 * pool_l and argmax_l (the index into relu_l's (B, N_l, N_l, C_l) of the value each
 * output took), R, the loss sum(pool_L * R) and its gradients: every conv{l}.W and
 * conv{l}.b, each relu_l (which input of a window the gradient reached) and the
 * pictures. ties=0: uniform numbers (pictures and weights in [-0.5, 0.5), R in [-1, 1)).
 * ties=1: small integers everywhere (tied_pictures), so that nothing rounds, in either
 * build: windows whose values are equal are exactly equal, and max-pooling's rule for
 * ties (the first in row-major order) decides where the gradient goes. */
static void conv_dump(Setup *s)
{
    ConvCase k;
    conv_case(&k, s);
    const double loss = conv_case_forward(&k);
    conv_case_backward(&k);
    printf("precision %s\n", REAL_NAME);
    print_settings(s);
    print_matrix("value", "pixels", k.x, side_pixels(&k, 0), 3);
    char name[32];
    for (int l = 0; l < k.L; l++) {
        const size_t C = (size_t)k.C[l + 1];
        snprintf(name, sizeof name, "conv%d.W", l + 1);
        print_matrix("param", name, k.W[l], C, (size_t)9 * k.C[l]);
        snprintf(name, sizeof name, "conv%d.b", l + 1);
        print_matrix("param", name, k.b[l], C, 1);
        snprintf(name, sizeof name, "pool%d", l + 1);
        print_matrix("value", name, k.pool[l], side_pixels(&k, l + 1), C);
        snprintf(name, sizeof name, "argmax%d", l + 1);
        print_ints(name, k.argmax[l], (int)(side_pixels(&k, l + 1) * C));
    }
    print_matrix("value", "R", k.R, side_pixels(&k, k.L), (size_t)k.C[k.L]);
    printf("loss %.17g\n", loss);
    for (int l = 0; l < k.L; l++) {
        const size_t C = (size_t)k.C[l + 1];
        snprintf(name, sizeof name, "conv%d.W", l + 1);
        print_matrix("grad", name, k.dW[l], C, (size_t)9 * k.C[l]);
        snprintf(name, sizeof name, "conv%d.b", l + 1);
        print_matrix("grad", name, k.db[l], C, 1);
        snprintf(name, sizeof name, "relu%d", l + 1);
        print_matrix("grad", name, k.drelu[l], side_pixels(&k, l), C);
    }
    print_matrix("grad", "pixels", k.din[0], side_pixels(&k, 0), 3);
    conv_case_free(&k);
}

int main(int argc, char **argv)
{
    Setup s;
    if (parse_settings(&s, argc, argv) != 0)
        return 2;
    if (s.mode == MODE_CONV) {
        conv_dump(&s);
        return 0;
    }
    const Dims d = setup_dims(&s);
    const uint64_t seed = (uint64_t)s.seed;
    const int B = s.B;
    Regularization reg = {.embedding_dropout = s.embedding_dropout,
                          .readout_dropout = s.readout_dropout,
                          .self_attention_dropout = s.sa_dropout,
                          .label_smoothing = s.label_smoothing,
                          .doubly_stochastic = s.doubly_stochastic,
                          .attention_supervision = s.attention_supervision};
    HardAttention hard = {.mode = CONTEXT_SAMPLE, .expected_prob = s.expected_prob,
                          .reinforce_weight = s.reinforce_weight,
                          .entropy_weight = s.entropy_weight, .token_reward = s.token_reward,
                          .baseline = s.baseline, .token_baseline = s.token_baseline};
    Batch bt;
    random_batch(&bt, &d, B, seed, s.attention_supervision > 0);
    Params P, G;
    params_alloc(&P, &d);
    params_alloc(&G, &d);
    general_point(&P, seed);
    Workspace ws;
    model_workspace_init(&ws, &d, B, bt.src_steps, bt.tgt_steps, 1);
    pcg32_seed(&reg.rng, seed, RNG_STREAM_DROPOUT);
    model_set_regularization(&ws, &reg);
    if (d.hard) {
        pcg32_seed(&hard.rng, seed, RNG_STREAM_HARD);
        model_set_hard(&ws, &hard);
    }
    double loss = model_forward(&ws, &P, &bt);

    printf("precision %s\n", REAL_NAME);
    print_settings(&s);
    printf("batch %d %d %d\n", bt.batch_size, bt.src_steps, bt.tgt_steps);
    print_masks(&ws, &reg, &bt);
    print_ints("src", bt.src, bt.src_steps * B);
    print_ints("src_len", bt.src_len, B);
    print_ints("tgt_in", bt.tgt_in, bt.tgt_steps * B);
    print_ints("tgt_out", bt.tgt_out, bt.tgt_steps * B);
    if (bt.pixels)
        print_floats("pixels", bt.pixels, (size_t)B * s.image_size * s.image_size * 3);
    if (bt.ground) {
        const size_t n_cells = (size_t)bt.tgt_steps * B * bt.ground_cells;
        int *cells = malloc(sizeof(int) * n_cells);
        for (size_t k = 0; k < n_cells; k++)
            cells[k] = bt.ground[k];
        print_ints("ground", cells, (int)n_cells);
        free(cells);
    }
    if (d.hard) {
        int *rows = malloc(sizeof(int) * (size_t)B);
        for (int b = 0; b < B; b++)
            rows[b] = ws.hard_pass.rows[b];
        print_ints("hard_rows", rows, B);
        print_ints("chosen", ws.hard_pass.chosen, bt.tgt_steps * B * d.heads);
        free(rows);
    }
    print_tensors("param", &P);
    printf("loss %.17g\n", loss);
    /* backward reuses the readout's memory, mask_t among it: after the masks are out */
    model_backward(&G, &ws, &P, &bt);
    print_tensors("grad", &G);

    model_workspace_free(&ws);
    params_free(&P);
    params_free(&G);
    batch_free(&bt);
    return 0;
}
