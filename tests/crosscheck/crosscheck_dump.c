/* crosscheck_dump.c: writes a model's weights, a batch, and the loss and gradients
 * the C core computes for them, as text, for scripts/crosscheck.py to recompute in
 * PyTorch. Built twice: against the float core and against the double core.
 *
 * usage: crosscheck_dump V_x V_y m n p a l B seed
 *                        [score enc_cell dec_cell layers emb_dropout readout_dropout smoothing
 *                         [heads [sa_layers sa_heads sa_ffn sa_dropout
 *                          [hard expected_prob lambda_r lambda_e token_reward baseline
 *                           token_baseline]]]]
 * enc_cell none is the attention-only encoder (d_h = m; n is unused).
 * hard 1 makes it a hard pass (model/MODEL.md, "Hard attention"): the positions sampled
 * (CONTEXT_SAMPLE, from the seed's RNG_STREAM_HARD), the loss and gradients the
 * surrogate J's; the sentences that chose (hard_rows, B) and each head's position
 * (chosen, (T, B, H), -1 where a row did not choose) are written after the batch, so
 * that PyTorch takes the same paths.
 * With dropout, the masks the forward pass drew are written too, in (position, batch)
 * layouts: mask_x (S, B, m), mask_y (T, B, m) and mask_t over the real target
 * positions in (step, sentence) order, as PyTorch indexes them; and per self-attention
 * layer L (from 1) saL.mask_p (B, H, S, S), saL.mask_a (S, B, d_h), saL.mask_r (S, B, F)
 * and saL.mask_o (S, B, d_h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "model/batch.h"
#include "model/model.h"

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

/* The index of word in names[0..n), or -1. */
static int lookup(const char *word, const char *const *names, int n)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(word, names[k]))
            return k;
    return -1;
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

int main(int argc, char **argv)
{
    if (argc != 10 && argc != 17 && argc != 18 && argc != 22 && argc != 29) {
        fprintf(stderr, "usage: crosscheck_dump V_x V_y m n p a l B seed [score enc_cell dec_cell "
                "layers emb_dropout readout_dropout smoothing [heads [sa_layers sa_heads sa_ffn "
                "sa_dropout [hard expected_prob lambda_r lambda_e token_reward baseline "
                "token_baseline]]]]\n");
        return 2;
    }
    Dims d = {atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]),
              atoi(argv[6]), atoi(argv[7]), .enc_layers = 1};
    Regularization reg = {0};
    if (argc >= 17) {
        /* enc_cell none: the attention-only encoder */
        const int attention_only = strcmp(argv[11], "none") == 0;
        int score = lookup(argv[10], score_names, N_SCORES);
        int enc = attention_only ? CELL_GRU : lookup(argv[11], cell_names, N_CELLS);
        int dec = lookup(argv[12], cell_names, N_CELLS);
        d.enc_layers = atoi(argv[13]);
        if (score < 0 || enc < 0 || dec < 0 || d.enc_layers < 1 || d.enc_layers > MODEL_MAX_LAYERS) {
            fprintf(stderr, "crosscheck_dump: bad variant\n");
            return 2;
        }
        d.score = (ScoreKind)score;
        d.enc_cell = (CellKind)enc;
        d.encoder = attention_only ? ENCODER_ATTN : ENCODER_BIRNN;
        d.dec_cell = (CellKind)dec;
        reg.embedding_dropout = atof(argv[14]);
        reg.readout_dropout = atof(argv[15]);
        reg.label_smoothing = atof(argv[16]);
        d.heads = argc >= 18 ? atoi(argv[17]) : 1;
    }
    if (argc >= 22) {
        d.sa_layers = atoi(argv[18]);
        d.sa_heads = atoi(argv[19]);
        d.sa_ffn = atoi(argv[20]);
        reg.self_attention_dropout = atof(argv[21]);
        if (d.sa_ffn == 0)
            d.sa_ffn = 4 * model_annotation_width(&d);
    }
    int B = atoi(argv[8]);
    uint64_t seed = strtoull(argv[9], NULL, 10);
    HardAttention hard = {.mode = CONTEXT_SAMPLE};
    if (argc == 29) {
        d.hard = atoi(argv[22]);
        hard.expected_prob = atof(argv[23]);
        hard.reinforce_weight = atof(argv[24]);
        hard.entropy_weight = atof(argv[25]);
        hard.token_reward = atoi(argv[26]);
        hard.baseline = atof(argv[27]);
        hard.token_baseline = atof(argv[28]);
        if (d.hard && d.score == SCORE_NONE) { /* no weights to choose by */
            fprintf(stderr, "crosscheck_dump: hard attention needs a score\n");
            return 2;
        }
    }

    /* Sentences of 0..MAX_WORDS-1 words on each side, lengths drawn independently, so
     * the batch has padding on both sides in different places. */
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
            s[k] = N_SPECIAL_TOKENS + (int)pcg32_below(&rng, (uint32_t)(d.src_vocab - N_SPECIAL_TOKENS));
            t[k] = N_SPECIAL_TOKENS + (int)pcg32_below(&rng, (uint32_t)(d.tgt_vocab - N_SPECIAL_TOKENS));
        }
        src[b] = s;
        tgt[b] = t;
    }
    Batch bt;
    batch_init(&bt, B, MAX_WORDS + 1, MAX_WORDS + 1);
    batch_fill(&bt, B, src, src_n, tgt, tgt_n);

    /* Weights and biases in [-0.5, 0.5]: a general point where every gradient is well
     * above float's resolution (at the training init the attention's are ~1e-11). */
    Params P, G;
    params_alloc(&P, &d);
    params_alloc(&G, &d);
    Pcg32 init;
    pcg32_seed(&init, seed, RNG_STREAM_INIT);
    for (size_t k = 0; k < P.n; k++)
        P.mem[k] = (real)pcg32_uniform(&init, -0.5f, 0.5f);
    /* layer norms' gains around 1, where they start: near 0 they would shrink the
     * annotations, and with them the attention's gradients, to rounding noise */
    for (int t = 0; t < P.n_tensors; t++)
        if (P.tensors[t].init == TENSOR_ONES)
            for (int k = 0; k < P.tensors[t].rows; k++)
                P.tensors[t].data[k] += 1;
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
    printf("dims %d %d %d %d %d %d %d\n", d.src_vocab, d.tgt_vocab, d.emb, d.enc_hidden,
           d.dec_hidden, d.attn, d.readout);
    printf("variant %s %s %s %d %.17g %.17g %.17g %d %d %d %d %.17g %d %.17g %.17g %.17g %d %.17g "
           "%.17g\n", score_names[d.score],
           d.encoder == ENCODER_ATTN ? "none" : cell_name(d.enc_cell), cell_name(d.dec_cell), d.enc_layers, reg.embedding_dropout,
           reg.readout_dropout, reg.label_smoothing, d.heads > 1 ? d.heads : 1, d.sa_layers,
           d.sa_heads, d.sa_ffn, reg.self_attention_dropout, d.hard, hard.expected_prob,
           hard.reinforce_weight, hard.entropy_weight, hard.token_reward, hard.baseline,
           hard.token_baseline);
    printf("batch %d %d %d\n", bt.batch_size, bt.src_steps, bt.tgt_steps);
    if (reg.embedding_dropout > 0) {
        print_reals("mask_x", ws.mask_x, (size_t)bt.src_steps * B * d.emb);
        print_mask_y(&ws);
    }
    if (reg.readout_dropout > 0)
        print_reals("mask_t", ws.mask_t, (size_t)ws.N * d.readout);
    for (int l = 0; l < d.sa_layers && reg.self_attention_dropout > 0; l++) {
        const SelfAttnLayerWork *x = &ws.enc.sa.layer[l];
        const size_t SB = (size_t)bt.src_steps * B, d_h = model_annotation_width(&d);
        char name[32];
        snprintf(name, sizeof name, "sa%d.mask_p", l + 1);
        print_reals(name, x->mask_p, (size_t)B * d.sa_heads * bt.src_steps * bt.src_steps);
        snprintf(name, sizeof name, "sa%d.mask_a", l + 1);
        print_reals(name, x->mask_a, SB * d_h);
        snprintf(name, sizeof name, "sa%d.mask_r", l + 1);
        print_reals(name, x->mask_r, SB * d.sa_ffn);
        snprintf(name, sizeof name, "sa%d.mask_o", l + 1);
        print_reals(name, x->mask_o, SB * d_h);
    }
    print_ints("src", bt.src, bt.src_steps * B);
    print_ints("src_len", bt.src_len, B);
    print_ints("tgt_in", bt.tgt_in, bt.tgt_steps * B);
    print_ints("tgt_out", bt.tgt_out, bt.tgt_steps * B);
    if (d.hard) {
        int *rows = malloc(sizeof(int) * (size_t)B);
        for (int b = 0; b < B; b++)
            rows[b] = ws.hard_rows[b];
        print_ints("hard_rows", rows, B);
        print_ints("chosen", ws.chosen, bt.tgt_steps * B * (d.heads > 1 ? d.heads : 1));
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
    free(words);
    free(src_n);
    free(tgt_n);
    free(src);
    free(tgt);
    return 0;
}
