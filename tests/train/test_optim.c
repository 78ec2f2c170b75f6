/* test_optim.c: the float build against the double build, the optimizers, and the
 * end-to-end proof that the model learns: eight pairs overfit and decode exactly. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode.h"
#include "nn/fastmath.h"
#include "model/model.h"
#include "support/model_fixture.h"
#include "support/suites.h"
#include "train/model_grad.h"
#include "train/optim.h"

static void check_float_against_double(float init_scale, uint64_t seed)
{
    Dims d = fixture_dims();
    Batch bt;
    fixture_batch(&bt, &d);
    Params P, G;
    params_alloc(&P, &d);
    params_alloc(&G, &d);
    Pcg32 rng;
    pcg32_seed(&rng, seed, RNG_STREAM_INIT);
    params_init(&P, &rng, init_scale);
    /* biases away from 0 and gains from 1 too, so that their gradients are compared on
     * a general point */
    for (int t = 0; t < P.n_tensors; t++)
        if (P.tensors[t].init != TENSOR_UNIFORM)
            for (int k = 0; k < P.tensors[t].rows; k++)
                P.tensors[t].data[k] += pcg32_uniform(&rng, -init_scale, init_scale);
    Workspace ws;
    model_workspace_init(&ws, &d, 3, 5, 5, 1);
    double loss32 = model_forward(&ws, &P, &bt);
    model_backward(&G, &ws, &P, &bt);

    double *p64 = malloc(sizeof(double) * P.n), *g64 = malloc(sizeof(double) * P.n);
    for (size_t k = 0; k < P.n; k++)
        p64[k] = P.mem[k];
    double loss64 = model_loss_and_gradients_f64(&d, &bt, p64, g64, P.n);
    printf("float vs double (init scale %.2f): loss %.8f vs %.8f\n", init_scale, loss32, loss64);
    ck_assert_double_le(fabs(loss32 - loss64) / loss64, 1e-6);
    size_t offset = 0;
    for (int t = 0; t < G.n_tensors; t++) {
        size_t count = (size_t)G.tensors[t].rows * G.tensors[t].cols;
        double diff = 0, norm = 0;
        for (size_t k = offset; k < offset + count; k++) {
            diff += (G.mem[k] - g64[k]) * (G.mem[k] - g64[k]);
            norm += g64[k] * g64[k];
        }
        double rel = sqrt(diff) / fmax(sqrt(norm), 1e-30);
        printf("  %-16s |g64| %.3e  relative norm of the difference %.3e\n", G.tensors[t].name,
               sqrt(norm), rel);
        ck_assert_double_le(rel, 1e-4);
        offset += count;
    }
    free(p64);
    free(g64);
    model_workspace_free(&ws);
    params_free(&P);
    params_free(&G);
    batch_free(&bt);
}

START_TEST(float_gradients_agree_with_double_build)
{
    /* At a general point (weights and biases in [-0.5, 0.5]). At the training init
     * (0.1, zero biases) attention is near uniform and W_a's gradient is ~5e-11,
     * below what float resolves next to a loss of ~2, so it is compared here. */
    check_float_against_double(0.5f, 52);
    check_float_against_double(0.5f, 53);
}
END_TEST

START_TEST(fast_math_is_within_a_few_ulp_of_libm)
{
    /* Over [-20, 20] (exp: [-87, 88]) in steps that hit every binade the model uses. */
    double worst_exp = 0, worst_tanh = 0, worst_sigmoid = 0;
    for (double x = -87; x <= 88; x += 0.000731) {
        double want = exp(x), got = fast_expf((float)x);
        /* against the exact exp of the float input, relative */
        want = exp((double)(float)x);
        worst_exp = fmax(worst_exp, fabs(got - want) / want);
    }
    for (double x = -20; x <= 20; x += 0.0000731) {
        float xf = (float)x;
        double t = tanh((double)xf);
        worst_tanh = fmax(worst_tanh, fabs(fast_tanhf(xf) - t) / fmax(fabs(t), 1e-30));
        double sg = 1 / (1 + exp(-(double)xf));
        worst_sigmoid = fmax(worst_sigmoid, fabs(fast_sigmoidf(xf) - sg) / sg);
    }
    printf("fast math, worst relative error: exp %.2e, tanh %.2e, sigmoid %.2e (float eps %.2e)\n",
           worst_exp, worst_tanh, worst_sigmoid, (double)FLT_EPSILON);
    ck_assert_double_le(worst_exp, 3 * FLT_EPSILON);
    ck_assert_double_le(worst_tanh, 4 * FLT_EPSILON);
    ck_assert_double_le(worst_sigmoid, 4 * FLT_EPSILON);
    ck_assert(fast_expf(-1000) >= 0 && fast_expf(-1000) < 1e-37f);
    ck_assert(fast_expf(1000) < 3.4e38f && fast_tanhf(1000) == 1 && fast_tanhf(-1000) == -1);
    ck_assert(fast_tanhf(0) == 0);
}
END_TEST

/* fast_exp (double, beam search's log-sum-exp) within 2 ulp of libm's exp over the whole
 * range it keeps, and clamped past it: e^-1000 the smallest normal result's
 * neighbourhood, not 0 or a wrapped exponent. */
START_TEST(fast_exp_is_within_two_ulp_of_libm)
{
    double worst = 0;
    for (double x = -708; x <= 709; x += 0.0013) {
        const double want = exp(x), got = fast_exp(x);
        worst = fmax(worst, fabs(got - want) / want);
    }
    printf("fast_exp: worst relative error %.2e (double eps %.2e)\n", worst, DBL_EPSILON);
    ck_assert_double_le(worst, 2 * DBL_EPSILON);
    ck_assert(fast_exp(0) == 1);
    ck_assert(fast_exp(-1000) > 0 && fast_exp(-1000) < 1e-300 && isnormal(fast_exp(-1000)));
    ck_assert(isfinite(fast_exp(1000)) && fast_exp(1000) > 1e307);
}
END_TEST

START_TEST(adam_first_step_moves_each_weight_by_lr)
{
    /* After one step m_hat = g and v_hat = g^2, so the update is lr * g / (|g| + eps). */
    Optimizer opt;
    optim_init(&opt, OPTIM_ADAM, 3, 0.01f);
    float w[3] = {1, 2, 3};
    const float g[3] = {0.5f, -4, 0};
    optim_step(&opt, w, g);
    ck_assert_float_eq_tol(w[0], 0.99f, 1e-6);
    ck_assert_float_eq_tol(w[1], 2.01f, 1e-6);
    ck_assert_float_eq(w[2], 3);
    optim_free(&opt);
}
END_TEST

START_TEST(adam_matches_hand_computed_second_step)
{
    Optimizer opt;
    optim_init(&opt, OPTIM_ADAM, 1, 0.1f);
    float w = 0;
    const float g1 = 1, g2 = -2;
    optim_step(&opt, &w, &g1);
    optim_step(&opt, &w, &g2);
    /* m = 0.9*0.1 + 0.1*(-2) = -0.11, v = 0.999*0.001 + 0.001*4 = 0.004999;
     * m_hat = -0.11/0.19, v_hat = 0.004999/0.001999 */
    double m_hat = -0.11 / 0.19, v_hat = 0.004999 / 0.001999;
    double expected = -0.1 * 1 / (1 + 1e-8) - 0.1 * m_hat / (sqrt(v_hat) + 1e-8);
    ck_assert_double_eq_tol(w, expected, 1e-6);
    optim_free(&opt);
}
END_TEST

START_TEST(adadelta_matches_hand_computed_steps)
{
    /* Zeiler 2012, Algorithm 1, with rho 0.9, eps 1e-6 and a learning-rate multiplier
     * of 1: E[g^2] = 0.1 g^2, dx = sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) g. */
    Optimizer opt;
    optim_init(&opt, OPTIM_ADADELTA, 1, 1.0f);
    opt.beta2 = 0.9f;
    opt.eps = 1e-6f;
    float w = 0;
    const float g = 2;
    optim_step(&opt, &w, &g);
    double sq_grad = 0.1 * 4, delta = sqrt(1e-6) / sqrt(sq_grad + 1e-6) * 2;
    ck_assert_double_eq_tol(w, -delta, 1e-9);
    double sq_update = 0.1 * delta * delta;
    optim_step(&opt, &w, &g);
    sq_grad = 0.9 * sq_grad + 0.1 * 4;
    double delta2 = sqrt(sq_update + 1e-6) / sqrt(sq_grad + 1e-6) * 2;
    ck_assert_double_eq_tol(w, -delta - delta2, 1e-8);
    optim_free(&opt);
}
END_TEST

START_TEST(clipping_scales_to_the_global_norm)
{
    float g[2] = {3, 4};
    double norm = grad_clip_global_norm(g, 2, 1.0);
    ck_assert_double_eq_tol(norm, 5, 1e-12);
    ck_assert_float_eq_tol(g[0], 0.6f, 1e-7);
    ck_assert_float_eq_tol(g[1], 0.8f, 1e-7);
    float h[2] = {0.3f, 0.4f};
    grad_clip_global_norm(h, 2, 1.0);
    ck_assert(h[0] == 0.3f && h[1] == 0.4f);
}
END_TEST

enum { N_PAIRS = 8, MAX_WORDS = 7, MAX_STEPS = 600 };

START_TEST(model_overfits_eight_pairs_and_decodes_them_exactly)
{
    const Dims d = {.src_vocab = 16, .tgt_vocab = 16, .emb = 16, .enc_hidden = 24,
                    .dec_hidden = 32, .attn = 16, .readout = 32, .enc_layers = 1};
    int src_words[N_PAIRS][MAX_WORDS], tgt_words[N_PAIRS][MAX_WORDS];
    int src_n[N_PAIRS], tgt_n[N_PAIRS];
    const int *src[N_PAIRS], *tgt[N_PAIRS];
    Pcg32 rng;
    pcg32_seed(&rng, 61, RNG_STREAM_DATA);
    for (int b = 0; b < N_PAIRS; b++) {
        src_n[b] = 3 + (int)pcg32_below(&rng, MAX_WORDS - 2);
        tgt_n[b] = 3 + (int)pcg32_below(&rng, MAX_WORDS - 2);
        for (int k = 0; k < MAX_WORDS; k++) {
            src_words[b][k] = N_SPECIAL_TOKENS + (int)pcg32_below(&rng, 12);
            tgt_words[b][k] = N_SPECIAL_TOKENS + (int)pcg32_below(&rng, 12);
        }
        src[b] = src_words[b];
        tgt[b] = tgt_words[b];
    }
    Batch bt;
    batch_init(&bt, N_PAIRS, MAX_WORDS + 1, MAX_WORDS + 1);
    batch_fill(&bt, N_PAIRS, src, src_n, tgt, tgt_n);

    Params P, G;
    params_alloc(&P, &d);
    params_alloc(&G, &d);
    Pcg32 init;
    pcg32_seed(&init, 62, RNG_STREAM_INIT);
    params_init(&P, &init, 0.1f);
    Workspace ws;
    model_workspace_init(&ws, &d, N_PAIRS, MAX_WORDS + 1, MAX_WORDS + 1, 1);
    Optimizer opt;
    optim_init(&opt, OPTIM_ADAM, P.n, 0.01f);
    double loss = 0;
    int step;
    for (step = 1; step <= MAX_STEPS; step++) {
        memset(G.mem, 0, sizeof(float) * G.n);
        loss = model_forward(&ws, &P, &bt);
        model_backward(&G, &ws, &P, &bt);
        optim_step(&opt, P.mem, G.mem);
        if (loss < 0.01)
            break;
    }
    /* a training outcome: scripts/checks/run-checks.py reads this line under each kernel family */
    printf("outcome overfit: loss %.5f after %d of %d Adam steps\n", loss, step, MAX_STEPS);
    ck_assert_double_lt(loss, 0.01);

    Batch sources;
    batch_init(&sources, N_PAIRS, MAX_WORDS + 1, 0);
    batch_fill(&sources, N_PAIRS, src, src_n, NULL, NULL);
    Decoder dec;
    decoder_init(&dec, &d, N_PAIRS, MAX_WORDS + 1, 1);
    int out[N_PAIRS * 2 * MAX_WORDS], out_len[N_PAIRS];
    decode_greedy(&dec, &P, &sources, 2 * MAX_WORDS, out, out_len);
    for (int b = 0; b < N_PAIRS; b++) {
        ck_assert_int_eq(out_len[b], tgt_n[b]);
        for (int k = 0; k < tgt_n[b]; k++)
            ck_assert_int_eq(out[b * 2 * MAX_WORDS + k], tgt[b][k]);
    }
    decoder_free(&dec);
    batch_free(&sources);
    optim_free(&opt);
    model_workspace_free(&ws);
    params_free(&P);
    params_free(&G);
    batch_free(&bt);
}
END_TEST

/* Training with the embedding gradients kept by rows (train/model_grad.h) must be the dense
 * computation exactly: the same parameters and optimizer state, bit for bit, after
 * several clipped steps over batches that leave most embedding rows untouched. With
 * tie_output, E_y (which is W_o) is trained densely by both; with shared embeddings,
 * E_y (which is E_x) too. */
static void check_sparse_steps_equal_dense(OptimKind kind, int tie_output, int share)
{
    Dims d = {.src_vocab = 40, .tgt_vocab = share ? 40 : 30, .emb = 6, .enc_hidden = 5,
              .dec_hidden = 7, .attn = 4, .readout = tie_output ? 6 : 5, .enc_layers = 1,
              .tie_output = tie_output, .share_embeddings = share};
    enum { PAIRS = 4, WORDS = 6, STEPS = 5 };
    Batch batches[2];
    Pcg32 rng;
    pcg32_seed(&rng, 71, RNG_STREAM_DATA);
    for (int k = 0; k < 2; k++) {
        int words[PAIRS][2][WORDS], src_n[PAIRS], tgt_n[PAIRS];
        const int *src[PAIRS], *tgt[PAIRS];
        for (int b = 0; b < PAIRS; b++) {
            src_n[b] = 2 + (int)pcg32_below(&rng, WORDS - 1);
            tgt_n[b] = 2 + (int)pcg32_below(&rng, WORDS - 1);
            for (int w = 0; w < WORDS; w++) { /* a few of the tokens only */
                words[b][0][w] = N_SPECIAL_TOKENS + (int)pcg32_below(&rng, 10);
                words[b][1][w] = N_SPECIAL_TOKENS + (int)pcg32_below(&rng, 10);
            }
            src[b] = words[b][0];
            tgt[b] = words[b][1];
        }
        batch_init(&batches[k], PAIRS, WORDS + 1, WORDS + 1);
        batch_fill(&batches[k], PAIRS, src, src_n, tgt, tgt_n);
        batch_sort_by_target(&batches[k]);
    }
    Params P_dense, P_rows, G;
    params_alloc(&P_dense, &d);
    params_alloc(&P_rows, &d);
    params_alloc(&G, &d);
    Pcg32 init;
    pcg32_seed(&init, 72, RNG_STREAM_INIT);
    params_init(&P_dense, &init, 0.3f);
    memcpy(P_rows.mem, P_dense.mem, sizeof(float) * P_dense.n);
    ModelGrad sparse;
    model_grad_init(&sparse, &d, PAIRS, WORDS + 1, WORDS + 1);
    Workspace ws;
    model_workspace_init(&ws, &d, PAIRS, WORDS + 1, WORDS + 1, 1);
    Optimizer opt_dense, opt_rows;
    optim_init(&opt_dense, kind, P_dense.n, 0.05f);
    optim_init(&opt_rows, kind, P_rows.n, 0.05f);
    const double max_norm = 0.05; /* below the gradients' norms: every step clips */
    for (int step = 0; step < STEPS; step++) {
        const Batch *bt = &batches[step % 2];
        memset(G.mem, 0, sizeof(float) * G.n);
        if (tie_output || share) { /* E_y's gradients added in the fused pass's order */
            model_forward_backward(&G, NULL, NULL, &ws, &P_dense, bt);
        } else {
            model_forward(&ws, &P_dense, bt);
            model_backward(&G, &ws, &P_dense, bt);
        }
        double norm_dense = grad_clip_global_norm(G.mem, G.n, max_norm);
        optim_step(&opt_dense, P_dense.mem, G.mem);

        model_grad_zero(&sparse);
        model_grad_forward_backward(&sparse, &ws, &P_rows, bt);
        if (share) /* E_x's rows are E_y's, in the dense part */
            ck_assert_int_eq(sparse.src_emb.count + sparse.tgt_emb.count, 0);
        else
            ck_assert_int_lt(sparse.src_emb.count, d.src_vocab / 2);
        double norm_rows = model_grad_clip(&sparse, max_norm);
        model_grad_apply(&opt_rows, &P_rows, &sparse);
        ck_assert(norm_rows == norm_dense);
        ck_assert_double_gt(norm_dense, max_norm);
    }
    ck_assert_int_eq(memcmp(P_rows.mem, P_dense.mem, sizeof(float) * P_dense.n), 0);
    if (opt_dense.m) {
        ck_assert_int_eq(memcmp(opt_rows.m, opt_dense.m, sizeof(float) * P_dense.n), 0);
        ck_assert_int_eq(memcmp(opt_rows.v, opt_dense.v, sizeof(float) * P_dense.n), 0);
    }
    optim_free(&opt_dense);
    optim_free(&opt_rows);
    model_workspace_free(&ws);
    model_grad_free(&sparse);
    params_free(&P_dense);
    params_free(&P_rows);
    params_free(&G);
    batch_free(&batches[0]);
    batch_free(&batches[1]);
}

START_TEST(embedding_gradients_by_rows_train_exactly_as_dense_ones)
{
    for (int tie = 0; tie <= 1; tie++)
        for (int share = 0; share <= 1; share++) {
            check_sparse_steps_equal_dense(OPTIM_ADAM, tie, share);
            check_sparse_steps_equal_dense(OPTIM_SGD, tie, share);
            check_sparse_steps_equal_dense(OPTIM_ADADELTA, tie, share);
        }
}
END_TEST

Suite *training_suite(void)
{
    Suite *s = suite_create("training");
    TCase *tc = tcase_create("float");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, float_gradients_agree_with_double_build);
    tcase_add_test(tc, fast_math_is_within_a_few_ulp_of_libm);
    tcase_add_test(tc, fast_exp_is_within_two_ulp_of_libm);
    tcase_add_test(tc, adam_first_step_moves_each_weight_by_lr);
    tcase_add_test(tc, adam_matches_hand_computed_second_step);
    tcase_add_test(tc, adadelta_matches_hand_computed_steps);
    tcase_add_test(tc, clipping_scales_to_the_global_norm);
    tcase_add_test(tc, embedding_gradients_by_rows_train_exactly_as_dense_ones);
    suite_add_tcase(s, tc);
    /* a training outcome, run under each family of OpenBLAS kernels by scripts/checks/run-checks.py */
    TCase *outcome = tcase_create("overfit");
    tcase_set_tags(outcome, "outcome");
    tcase_set_timeout(outcome, 120);
    tcase_add_test(outcome, model_overfits_eight_pairs_and_decodes_them_exactly);
    suite_add_tcase(s, outcome);
    return s;
}
