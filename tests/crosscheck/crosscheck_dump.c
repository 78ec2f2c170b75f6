/* crosscheck_dump.c: writes a model's weights, a batch, and the loss and gradients
 * the C core computes for them, as text, for scripts/crosscheck.py to recompute in
 * PyTorch. Built twice: against the float core and against the double core.
 *
 * usage: crosscheck_dump [name=value ...]    e.g. crosscheck_dump score=dot heads=2 p=8
 * Each argument sets one field of Setup, by its name (SETTINGS lists them); the rest keep
 * DEFAULTS: the gradient-check sizes V_x=9 V_y=8 m=3 n=4 p=5 a=5 l=4, a batch of B=3
 * pairs, seed=1, and the default model -- additive attention, the bidirectional GRU
 * encoder of one layer, a GRU decoder, one head, no self-attention layer (sa_heads=4
 * once there is one; sa_ffn=0 means 4 d_h), no dropout or smoothing, soft attention
 * (hard=0; a hard pass's lambda_r is reinforce_weight=1, the rest 0). An unknown name,
 * a value out of its range or a setting given twice is a one-line error that names the
 * argument (exit 2). The dump's second line, settings, gives every field name=value as
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
 * and saL.mask_o (S, B, d_h). */
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

/* Everything a dump depends on, each field named as its argument. */
typedef struct {
    int V_x, V_y, m, n, p, a, l; /* model/MODEL.md's sizes */
    int B, seed;                 /* sentence pairs in the batch; the seed of every stream */
    int score, encoder, enc_cell, dec_cell; /* ScoreKind, EncoderKind, CellKind, CellKind */
    int enc_layers, heads, sa_layers, sa_heads, sa_ffn;
    double embedding_dropout, readout_dropout, sa_dropout, label_smoothing;
    int hard, token_reward; /* hard attention's surrogate (HardAttention's fields): */
    double expected_prob, reinforce_weight, entropy_weight, baseline, token_baseline;
} Setup;

static const Setup DEFAULTS = {
    .V_x = 9, .V_y = 8, .m = 3, .n = 4, .p = 5, .a = 5, .l = 4, .B = 3, .seed = 1,
    .score = SCORE_ADDITIVE, .encoder = ENCODER_BIRNN, .enc_cell = CELL_GRU,
    .dec_cell = CELL_GRU, .enc_layers = 1, .heads = 1, .sa_heads = 4, .reinforce_weight = 1};

/* By EncoderKind. */
static const char *const encoder_names[] = {"birnn", "attn", NULL};

typedef enum { SETTING_INT, SETTING_REAL, SETTING_NAME } SettingKind;

/* One name=value argument: the field of Setup it sets and the values it takes. */
typedef struct {
    const char *name;
    SettingKind kind;
    size_t offset;            /* of the field in Setup: an int, or a double for SETTING_REAL */
    double min, max;          /* SETTING_INT and SETTING_REAL: the values accepted */
    const char *const *names; /* SETTING_NAME: the values, NULL-terminated; the field
                               * holds the index of the one given */
} Setting;

#define INT_SETTING(field, min, max) {#field, SETTING_INT, offsetof(Setup, field), min, max, NULL}
#define REAL_SETTING(field, min, max) {#field, SETTING_REAL, offsetof(Setup, field), min, max, NULL}
#define NAME_SETTING(field, names) {#field, SETTING_NAME, offsetof(Setup, field), 0, 0, names}

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
    /* the probabilities as the config takes them */
    REAL_SETTING(embedding_dropout, 0, 0.9), REAL_SETTING(readout_dropout, 0, 0.9),
    REAL_SETTING(sa_dropout, 0, 0.9), REAL_SETTING(label_smoothing, 0, 0.9),
    INT_SETTING(hard, 0, 1), INT_SETTING(token_reward, 0, 1),
    REAL_SETTING(expected_prob, 0, 1), REAL_SETTING(reinforce_weight, 0, 1e6),
    REAL_SETTING(entropy_weight, 0, 1e6), REAL_SETTING(baseline, -1e6, 1e6),
    REAL_SETTING(token_baseline, -1e6, 1e6),
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
    if (s->hard && s->score == SCORE_NONE) { /* no weights to choose by */
        fprintf(stderr, "crosscheck_dump: hard=1 with score=none: hard attention chooses by "
                "the score's weights\n");
        return -1;
    }
    return 0;
}

/* "settings name=value ..." of every setting, on one line. */
static void print_settings(const Setup *s)
{
    printf("settings");
    for (int k = 0; k < N_SETTINGS; k++) {
        const Setting *x = &SETTINGS[k];
        const void *field = (const char *)s + x->offset;
        if (x->kind == SETTING_REAL)
            printf(" %s=%.17g", x->name, *(const double *)field);
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
        for (int b = 0; b < ws->active[i]; b++)
            memcpy(full + ((size_t)i * B + b) * m, ws->mask_y + ((size_t)ws->step_row[i] + b) * m,
                   sizeof(real) * m);
    print_reals("mask_y", full, (size_t)T * B * m);
    free(full);
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
              .sa_ffn = s->sa_ffn, .hard = s->hard};
    if (d.sa_ffn == 0)
        d.sa_ffn = s->sa_ffn = 4 * model_annotation_width(&d);
    return d;
}

/* B pairs of sentences of 0..MAX_WORDS-1 words on each side, lengths drawn
 * independently, so the batch has padding on both sides in different places. */
static void random_batch(Batch *bt, const Dims *d, int B, uint64_t seed)
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
    batch_init(bt, B, MAX_WORDS + 1, MAX_WORDS + 1);
    batch_fill(bt, B, src, src_n, tgt, tgt_n);
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
        print_reals("mask_x", ws->enc.mask_x, (size_t)bt->src_steps * B * d->emb);
        print_mask_y(ws);
    }
    if (reg->readout_dropout > 0)
        print_reals("mask_t", ws->mask_t, (size_t)ws->N * d->readout);
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

int main(int argc, char **argv)
{
    Setup s;
    if (parse_settings(&s, argc, argv) != 0)
        return 2;
    const Dims d = setup_dims(&s);
    const uint64_t seed = (uint64_t)s.seed;
    const int B = s.B;
    Regularization reg = {.embedding_dropout = s.embedding_dropout,
                          .readout_dropout = s.readout_dropout,
                          .self_attention_dropout = s.sa_dropout,
                          .label_smoothing = s.label_smoothing};
    HardAttention hard = {.mode = CONTEXT_SAMPLE, .expected_prob = s.expected_prob,
                          .reinforce_weight = s.reinforce_weight,
                          .entropy_weight = s.entropy_weight, .token_reward = s.token_reward,
                          .baseline = s.baseline, .token_baseline = s.token_baseline};
    Batch bt;
    random_batch(&bt, &d, B, seed);
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
    if (d.hard) {
        int *rows = malloc(sizeof(int) * (size_t)B);
        for (int b = 0; b < B; b++)
            rows[b] = ws.hard_rows[b];
        print_ints("hard_rows", rows, B);
        print_ints("chosen", ws.chosen, bt.tgt_steps * B * d.heads);
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
