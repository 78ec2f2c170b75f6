/* test_self_attention.c: the self-attention layers in double: every element of every
 * tensor of one and two layers against finite differences (padding, several heads, and
 * dropout with its masks held fixed); the worked example of tests/fixtures/README.md
 * through the layer's in-projection and attention; permutation equivariance of a layer;
 * what padding may and may not change; the attention-only encoder's positions. PyTorch's own TransformerEncoderLayer is
 * scripts/checks/crosscheck.py's (make crosscheck). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/encoder.h"
#include "nn/fdcheck.h"
#include "nn/ops.h"
#include "nn/self_attention.h"
#include "support/qkv_example.h"
#include "support/suites.h"

enum { B = 3, S = 4, WIDTH = 6, MAX_PARAMS = 2 * 400 };

typedef struct {
    SelfAttnDims d;
    SelfAttnParams P[SA_MAX_LAYERS], G[SA_MAX_LAYERS];
    Tensor tensors[2 * 16];
    int n_tensors;
    real p[MAX_PARAMS], g[MAX_PARAMS];
    real x[S * B * WIDTH], R[S * B * WIDTH];
    int len[B];
    double rate;
    uint64_t mask_seed;
    Arena arena;
    SelfAttnWork w;
} Case;

/* The loss of a layer test: sum of out * R over every row, padded ones included (their
 * outputs are a function of the inputs too, so their gradients are checked as well). */
static double case_loss(void *ctx)
{
    Case *c = ctx;
    Pcg32 rng; /* the same masks at every call */
    pcg32_seed(&rng, c->mask_seed, 5);
    sa_forward(&c->w, c->P, &c->d, c->x, c->len, S, B, c->rate, &rng);
    return weighted_sum(sa_output(&c->w, &c->d, c->x), c->R, S * B * WIDTH);
}

static void case_init(Case *c, int layers, int heads, int ffn, double rate, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->d = (SelfAttnDims){WIDTH, heads, ffn, layers};
    c->len[0] = 4, c->len[1] = 2, c->len[2] = 1;
    c->rate = rate;
    c->mask_seed = seed + 100;
    TensorCarver carver = {.base = c->p, .list = c->tensors, .cap = 2 * 16};
    sa_carve(c->P, &carver, &c->d);
    ck_assert_uint_le(carver.offset, MAX_PARAMS);
    c->n_tensors = carver.n;
    Tensor unused[2 * 16];
    TensorCarver gc = {.base = c->g, .list = unused, .cap = 2 * 16};
    sa_carve(c->G, &gc, &c->d);
    Pcg32 rng;
    pcg32_seed(&rng, seed, 1);
    /* a general point: gains near 1, biases away from 0 */
    for (int t = 0; t < c->n_tensors; t++) {
        Tensor *x = &c->tensors[t];
        size_t n = (size_t)x->rows * x->cols;
        fill_uniform(x->data, n, &rng, -0.5, 0.5);
        if (x->init == TENSOR_ONES)
            for (size_t k = 0; k < n; k++)
                x->data[k] += 1;
    }
    fill_uniform(c->x, S * B * WIDTH, &rng, -1, 1);
    /* small weights keep the loss near 1, and with it the rounding error of the
     * differences: the gradient of b_K is exactly 0 (a softmax ignores a shift common
     * to all keys), so what they measure there is that error */
    fill_uniform(c->R, S * B * WIDTH, &rng, -0.2, 0.2);
    Arena count = {0};
    sa_carve_work(&c->w, &count, &c->d, B, S, 1);
    arena_init(&c->arena, count.used);
    sa_carve_work(&c->w, &c->arena, &c->d, B, S, 1);
}

static double check_case(Case *c, const char *what)
{
    real dx[S * B * WIDTH], dout[S * B * WIDTH];
    case_loss(c);
    memcpy(dout, c->R, sizeof dout);
    memset(c->g, 0, sizeof c->g);
    sa_backward(dx, c->G, &c->w, dout, c->P, &c->d, S, B);
    printf("%s, every element of every tensor (double):\n", what);
    double worst = fdcheck_tensor("x", c->x, dx, S * B * WIDTH, case_loss, c);
    for (int t = 0; t < c->n_tensors; t++) {
        const Tensor *x = &c->tensors[t];
        const real *grad = c->g + (x->data - c->p);
        double e = fdcheck_tensor(x->name, x->data, grad, (size_t)x->rows * x->cols, case_loss, c);
        worst = e > worst ? e : worst;
    }
    printf("  worst relative error: %.3e (tolerance %.0e)\n", worst, GRADCHECK_TOLERANCE);
    arena_free(&c->arena);
    return worst;
}

static const struct {
    const char *what;
    int layers, heads, ffn;
    double rate;
} CASES[] = {
    {"self-attention, 1 layer, 2 heads", 1, 2, 8, 0},
    {"self-attention, 2 layers, 3 heads", 2, 3, 5, 0},
    {"self-attention, 1 layer, 1 head", 1, 1, 4, 0},
    {"self-attention, 2 layers, 2 heads, dropout 0.3", 2, 2, 8, 0.3},
};

START_TEST(self_attention_layers_match_finite_differences)
{
    Case *c = malloc(sizeof *c);
    case_init(c, CASES[_i].layers, CASES[_i].heads, CASES[_i].ffn, CASES[_i].rate, 40 + _i);
    if (CASES[_i].rate > 0) { /* the masks are drawn, and some weights dropped */
        case_loss(c);
        int zeros = 0;
        for (int k = 0; k < S * B * WIDTH; k++)
            zeros += c->w.layer[0].mask_a[k] == 0;
        ck_assert_int_gt(zeros, 0);
        ck_assert(c->w.layer[0].dropped);
    }
    ck_assert_double_le(check_case(c, CASES[_i].what), GRADCHECK_TOLERANCE);
    free(c);
}
END_TEST

/* Whether n values of a and b differ somewhere. */
static int differ(const real *a, const real *b, size_t n)
{
    return memcmp(a, b, n * sizeof(real)) != 0;
}

/* Dropout draws its own masks at each of the four sites of each layer, one after the
 * other from the step's generator (issue 41: two layers sharing one mask passed every
 * test, the reference being given the C masks): layer 2's masks are not layer 1's, nor
 * is one site's mask another's of the same shape. */
START_TEST(each_layer_and_site_draws_its_own_dropout_masks)
{
    Case *c = malloc(sizeof *c);
    case_init(c, 2, 2, 8, 0.3, 77);
    case_loss(c);
    const SelfAttnLayerWork *one = &c->w.layer[0], *two = &c->w.layer[1];
    ck_assert(one->dropped && two->dropped);
    const size_t weights = (size_t)B * 2 * S * S, rows = (size_t)S * B;
    ck_assert_msg(differ(one->mask_p, two->mask_p, weights), "the layers share the weights' mask");
    ck_assert_msg(differ(one->mask_a, two->mask_a, rows * WIDTH), "the layers share A's mask");
    ck_assert_msg(differ(one->mask_r, two->mask_r, rows * 8), "the layers share the FFN's mask");
    ck_assert_msg(differ(one->mask_o, two->mask_o, rows * WIDTH), "the layers share the output's mask");
    for (int l = 0; l < 2; l++)
        ck_assert_msg(differ(c->w.layer[l].mask_a, c->w.layer[l].mask_o, rows * WIDTH),
                      "layer %d: A and the FFN's output share a mask", l + 1);
    arena_free(&c->arena);
    free(c);
}
END_TEST

/* tests/fixtures/README.md, example 1, through the layer's own in-projection (in torch's
 * convention, W_in = [W_Q^T ; W_K^T ; W_V^T] of the example's x W) and attention, in a
 * batch with a shorter sentence beside it, over the real rows of the two: its weights and
 * values to 1e-14. */
START_TEST(worked_example_through_the_self_attention_layer)
{
    enum { n = 4, d = 3, BB = 2 };
    real W_in[3 * d * d], x[n * BB * d], x_rows[n * BB * d], qkv[n * BB * 3 * d];
    real z[n * BB * d], probs[BB * n * n], mean[BB * n * n], scratch[n * n];
    int start[BB], padded[n * BB];
    for (int m = 0; m < 3; m++) /* torch's in_proj holds the transposes */
        for (int o = 0; o < d; o++)
            for (int i = 0; i < d; i++)
                W_in[(m * d + o) * d + i] = (real)QKV_W[m][i][o];
    /* sentence 0: the four words; sentence 1: two other words, padded */
    for (int j = 0; j < n; j++)
        for (int u = 0; u < d; u++) {
            x[(j * BB + 0) * d + u] = (real)QKV_WORDS[j][u];
            x[(j * BB + 1) * d + u] = j < 2 ? (real)(u + j) : 7;
        }
    const int len[BB] = {4, 2};
    RealRows rr = {.start = start, .padded = padded};
    real_rows_set(&rr, len, n, BB);
    ck_assert_int_eq(rr.n, 6);
    ck_assert_int_eq(start[1], 4); /* sentence 1's rows follow sentence 0's */
    real_rows_gather(x_rows, x, &rr, d);
    linear_forward(qkv, x_rows, W_in, NULL, rr.n, d, 3 * d);
    sa_attend_forward(z, probs, mean, NULL, scratch, qkv, &rr, 1, d);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            ck_assert_double_eq_tol(probs[i * n + j] / QKV_WEIGHTS[i][j], 1, 1e-14);
            ck_assert_double_eq_tol(mean[i * n + j] / QKV_WEIGHTS[i][j], 1, 1e-14);
        }
        for (int u = 0; u < d; u++)
            ck_assert_double_eq_tol(z[i * d + u] / QKV_ATTENTION[i][u], 1, 1e-14);
    }
    /* the padded sentence: weights only over its two real keys, zero rows past them */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i >= 2 || j >= 2)
                ck_assert(probs[n * n + i * n + j] == 0);
    ck_assert_double_eq_tol(probs[n * n] + probs[n * n + 1], 1, 1e-15);
}
END_TEST

/* A layer has no notion of order: permuting the positions of a sentence permutes its
 * outputs (rows), to 1e-12. */
START_TEST(a_layer_is_permutation_equivariant)
{
    Case *c = malloc(sizeof *c);
    case_init(c, 2, 2, 8, 0, 77);
    const int perm[S] = {2, 0, 3, 1}; /* position j of the permuted input is perm[j] */
    real before[S * B * WIDTH], x0[S * B * WIDTH];
    case_loss(c);
    memcpy(before, sa_output(&c->w, &c->d, c->x), sizeof before);
    memcpy(x0, c->x, sizeof x0);
    /* sentence 0 is the one with every position real */
    for (int j = 0; j < S; j++)
        memcpy(c->x + (j * B) * WIDTH, x0 + (perm[j] * B) * WIDTH, sizeof(real) * WIDTH);
    case_loss(c);
    const real *after = sa_output(&c->w, &c->d, c->x);
    double worst = 0;
    for (int j = 0; j < S; j++)
        for (int u = 0; u < WIDTH; u++) {
            double a = after[(j * B) * WIDTH + u], e = before[(perm[j] * B) * WIDTH + u];
            worst = fmax(worst, fabs(a - e) / fmax(fabs(e), 1e-300));
        }
    printf("permutation equivariance of 2 layers: worst relative difference %.2e\n", worst);
    ck_assert_double_le(worst, 1e-12);
    /* and the order did matter to something: the rows moved */
    ck_assert_double_gt(fabs(after[0] - before[0]), 1e-3);
    arena_free(&c->arena);
    free(c);
}
END_TEST

/* What lies past a sentence's end changes nothing within it: another padding value
 * gives bit-identical real rows (the keys are masked, every other product is per row). */
START_TEST(padding_changes_no_real_row)
{
    Case *c = malloc(sizeof *c);
    case_init(c, 2, 3, 5, 0, 91);
    real before[S * B * WIDTH];
    case_loss(c);
    memcpy(before, sa_output(&c->w, &c->d, c->x), sizeof before);
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++)
            if (j >= c->len[b])
                for (int u = 0; u < WIDTH; u++)
                    c->x[(j * B + b) * WIDTH + u] = 1e3 * (u + 1);
    case_loss(c);
    const real *after = sa_output(&c->w, &c->d, c->x);
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++)
            if (j < c->len[b])
                for (int u = 0; u < WIDTH; u++)
                    ck_assert(after[(j * B + b) * WIDTH + u] == before[(j * B + b) * WIDTH + u]);
    arena_free(&c->arena);
    free(c);
}
END_TEST

/* Each row of the heads' mean is a distribution over the real keys. */
START_TEST(the_mean_of_the_heads_is_a_distribution)
{
    Case *c = malloc(sizeof *c);
    case_init(c, 1, 3, 5, 0, 13);
    case_loss(c);
    const real *mean = c->w.layer[0].mean;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < c->len[b]; i++) {
            double sum = 0;
            for (int j = 0; j < S; j++) {
                const real v = mean[((size_t)b * S + i) * S + j];
                if (j >= c->len[b])
                    ck_assert(v == 0);
                sum += v;
            }
            ck_assert_double_eq_tol(sum, 1, 1e-14);
        }
    arena_free(&c->arena);
    free(c);
}
END_TEST

/* The sinusoidal positions of Vaswani et al. (2017) at width 4, written out: PE_{j,2t} =
 * sin(j / 10000^(2t/4)), PE_{j,2t+1} = cos(the same), j from 0 (values to 17 digits). */
static const double PE[4][4] = {
    {0, 1, 0, 1},
    {0.8414709848078965, 0.5403023058681398, 0.009999833334166664, 0.9999500004166653},
    {0.9092974268256817, -0.4161468365471424, 0.01999866669333308, 0.9998000066665778},
    {0.1411200080598672, -0.9899924966004454, 0.02999550020249566, 0.9995500337489875}};

/* An encoder's parameters carved into weights (n of them, all zero) and its forward
 * workspace for `batch` sources of `positions` positions into a fresh arena (arena_free it
 * after). */
static void carve_encoder(const EncoderDims *d, EncoderParams *P, real *weights, size_t n,
                          EncoderWork *w, Arena *arena, int batch, int positions)
{
    static Tensor tensors[16];
    const EncoderOps *ops = encoder_ops(d);
    TensorCarver carver = {.base = weights, .list = tensors, .cap = 16};
    ops->carve_params(P, &carver, d);
    ck_assert_uint_le(carver.offset, n);
    Arena count = {0};
    *w = (EncoderWork){0};
    ops->carve_work(w, &count, d, batch, positions, 0, 0);
    arena_init(arena, count.used);
    ops->carve_work(w, arena, d, batch, positions, 0, 0);
}

/* The attention-only encoder's input X_j = sqrt(m) ex_j + PE_j against the sinusoidal
 * positions of Vaswani et al. (2017) at m = 4, written out: PE_{j,2t} = sin(j /
 * 10000^(2t/m)), PE_{j,2t+1} = cos(the same), j from 0 (values of sin and cos to 17
 * digits). A swap of sin and cos, a position counted from 1 or a missing sqrt(m) fails. */
START_TEST(the_attention_only_encoder_adds_the_published_positions)
{
    enum { M = 4, NB = 2 };
    const EncoderDims d = {.kind = ENCODER_ATTN, .emb = M, .layers = 1,
                           .sa = {.width = M, .heads = 2, .ffn = 4, .layers = 1}};
    const EncoderOps *ops = encoder_ops(&d);
    ck_assert_int_eq(ops->width(&d), M);
    EncoderParams P;
    real weights[400] = {0};
    EncoderWork w;
    Arena arena;
    carve_encoder(&d, &P, weights, sizeof weights / sizeof *weights, &w, &arena, NB, S);
    /* the source: position k's id is k, whose embedding row holds ex's values there */
    real ex[S * NB * M];
    int ids[S * NB];
    for (int k = 0; k < S * NB * M; k++)
        ex[k] = (real)(0.01 * (k % 7) - 0.03);
    for (int k = 0; k < S * NB; k++)
        ids[k] = k;
    const int len[NB] = {S, 2};
    const EncoderSource src = {ids, ex, len, NULL};
    ops->forward(&w, &P, &d, &src);
    for (int j = 0; j < S; j++)
        for (int b = 0; b < NB; b++)
            for (int u = 0; u < M; u++) {
                const size_t at = ((size_t)j * NB + b) * M + u;
                ck_assert_double_eq_tol(w.x[at], 2 * ex[at] + PE[j][u], 1e-15);
            }
    arena_free(&arena);
}
END_TEST

/* The image encoder's fixed grid positions (model.grid_position_sines) on a 4 x 4 grid of
 * d_h = 8: cell j's first 4 entries are the sinusoidal position of its row at width 4,
 * the last 4 its column's, against the same written-out values as above, added to the
 * cells: zero conv weights leave each cell its last block's biases, relu(b_u). A row
 * and column swapped, the positions overwriting the cells, or a width of 8 for each axis
 * fails. */
START_TEST(the_image_encoder_adds_the_sines_of_row_and_column)
{
    enum { N = 16, G = 4, CELLS = G * G, D = 8, NB = 2 };
    const EncoderDims d = {.kind = ENCODER_IMAGE, .image_size = N, .conv_layers = 2,
                           .conv_channels = {3, D}, .grid_positions = GRID_POSITIONS_SINES};
    const EncoderOps *ops = encoder_ops(&d);
    ck_assert_int_eq(ops->width(&d), D);
    EncoderParams P;
    real weights[1000] = {0};
    EncoderWork w;
    Arena arena;
    carve_encoder(&d, &P, weights, sizeof weights / sizeof *weights, &w, &arena, NB, CELLS);
    ck_assert_ptr_null(P.grid_P); /* nothing learned */
    for (int u = 0; u < D; u++)
        P.conv_b[1][u] = (real)(0.125 * (u + 1));
    static float pixels[NB * N * N * 3];
    const int len[NB] = {CELLS, CELLS};
    const EncoderSource src = {.len = len, .pixels = pixels};
    ops->forward(&w, &P, &d, &src);
    for (int j = 0; j < CELLS; j++)
        for (int b = 0; b < NB; b++)
            for (int u = 0; u < D; u++) {
                const double pe = u < D / 2 ? PE[j / G][u] : PE[j % G][u - D / 2];
                ck_assert_double_eq_tol(w.x[((size_t)j * NB + b) * D + u], 0.125 * (u + 1) + pe,
                                        1e-15);
                ck_assert_double_eq_tol(grid_sine(G, j, u, D), pe, 1e-15);
            }
    arena_free(&arena);
}
END_TEST

Suite *self_attention_suite(void)
{
    Suite *s = suite_create("self_attention");
    TCase *tc = tcase_create("layer");
    /* the arithmetic of each OpenBLAS core type: scripts/checks/run-checks.py runs it under each family */
    tcase_set_tags(tc, "cores");
    tcase_add_test(tc, each_layer_and_site_draws_its_own_dropout_masks);
    tcase_add_loop_test(tc, self_attention_layers_match_finite_differences, 0,
                        sizeof CASES / sizeof *CASES);
    tcase_add_test(tc, worked_example_through_the_self_attention_layer);
    tcase_add_test(tc, a_layer_is_permutation_equivariant);
    tcase_add_test(tc, padding_changes_no_real_row);
    tcase_add_test(tc, the_mean_of_the_heads_is_a_distribution);
    tcase_add_test(tc, the_attention_only_encoder_adds_the_published_positions);
    tcase_add_test(tc, the_image_encoder_adds_the_sines_of_row_and_column);
    suite_add_tcase(s, tc);
    return s;
}
