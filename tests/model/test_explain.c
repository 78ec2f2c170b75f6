/* test_explain.c: what `s2s explain` shows of a step is what the model computes (model/
 * explain.h): for every fixture variant with attention, soft and with argmax contexts,
 * every head and every step of each fixture pair, the weights and the context explain
 * reads are, bit for bit, those a plain pass of the model keeps for that step (keeping
 * the step's scratch changes nothing), and they are those of the step it names; the
 * tensors come in the order the step computes them (INTERFACE.md's lists), with the
 * shapes they say. --self likewise, against a plain encoder pass. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "model/explain.h"
#include "support/model_fixture.h"
#include "support/suites.h"

/* The named tensor of x, or NULL. */
static const ExplainTensor *tensor(const ExplainStep *x, const char *name)
{
    for (int k = 0; k < x->n; k++)
        if (!strcmp(x->tensors[k].name, name))
            return &x->tensors[k];
    return NULL;
}

/* Step `step` of pair b of variant v, explained with `head`, against the whole pass. */
static void check_step(const Dims *d, const Params *P, const Batch *whole, const Workspace *full,
                       int argmax, int step, int head)
{
    Workspace ws;
    ExplainStep x;
    model_workspace_init(&ws, d, 1, whole->src_steps, whole->tgt_steps, 0);
    model_set_argmax(&ws, argmax);
    explain_decoder_step(&x, &ws, P, whole, step, head);
    const int S = whole->src_steps, H = d->heads, i = step - 1;
    const int d_h = model_annotation_width(d), in_width = d->emb + d_h;
    const int k0 = head < 0 ? 0 : head, nk = head < 0 ? H : 1;
    const int c0 = head < 0 ? 0 : head * (d_h / H), nc = head < 0 ? d_h : d_h / H;
    ck_assert_int_eq(x.step, step);
    const ExplainTensor *alpha = tensor(&x, "alpha"), *c = tensor(&x, "context");
    ck_assert_ptr_nonnull(alpha);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(alpha->rows * alpha->cols, nk * S);
    ck_assert_int_eq(c->cols, nc);
    /* the model's floats, exactly (== on each: a float converts to double exactly) */
    const real *want_alpha = full->dec.alpha_heads + ((size_t)i * H + k0) * S;
    for (int e = 0; e < nk * S; e++)
        ck_assert(alpha->values[e] == (double)want_alpha[e]);
    const real *want_c = full->dec.in + (size_t)full->dec.step_row[i] * in_width + d->emb + c0;
    for (int u = 0; u < nc; u++)
        ck_assert(c->values[u] == (double)want_c[u]);
    /* the scores kept are the step's: their softmax is its alpha, head by head */
    const ExplainTensor *e = tensor(&x, "scores");
    ck_assert_ptr_nonnull(e);
    for (int k = 0; k < nk; k++) {
        double z = 0;
        for (int j = 0; j < whole->src_len[0]; j++)
            z += exp(e->values[k * S + j]);
        for (int j = 0; j < whole->src_len[0]; j++)
            ck_assert_double_eq_tol(alpha->values[k * S + j], exp(e->values[k * S + j]) / z, 1e-6);
    }
    /* the tensors shown compute each other, head by head (issue 41: --head K of the
     * general score showed the whole decoder state, and a head's values could come from
     * another head's columns, and every test passed): each head's scores from its slices
     * of the query and the keys shown, and the context from its weights and values */
    const ExplainTensor *s_prev = tensor(&x, "s_prev"), *ann = tensor(&x, "H");
    const ExplainTensor *keys = d->score == SCORE_GENERAL    ? tensor(&x, "W_g h")
                                : d->score == SCORE_SCALED_DOT ? tensor(&x, "W_k h")
                                                               : ann;
    const ExplainTensor *query = d->score == SCORE_SCALED_DOT ? tensor(&x, "W_q s") : s_prev;
    ck_assert_ptr_nonnull(ann);
    ck_assert_ptr_nonnull(keys);
    ck_assert_ptr_nonnull(query);
    ck_assert_int_eq(ann->cols, nc); /* the values: the head's columns of H */
    double gate = -1;
    for (int k = 0; k < nk; k++) {
        if (d->score != SCORE_ADDITIVE) {
            const int width = query->cols / nk; /* one head's slice of the query */
            ck_assert_int_eq(keys->cols, query->cols);
            const double scale = d->score == SCORE_SCALED_DOT ? 1 / sqrt((double)width) : 1;
            for (int j = 0; j < whole->src_len[0]; j++) {
                double dot = 0;
                for (int u = 0; u < width; u++)
                    dot += query->values[k * width + u] * keys->values[(size_t)j * keys->cols + k * width + u];
                ck_assert_msg(fabs(e->values[k * S + j] - dot * scale) <= 1e-4 * (1 + fabs(dot * scale)),
                              "step %d head %d position %d: the score %g, the slices shown give %g",
                              step, head, j, e->values[k * S + j], dot * scale);
            }
        }
        if (argmax)
            continue;
        const int width = nc / nk; /* one head's columns of the values */
        for (int u = 0; u < width; u++) {
            double sum = 0;
            for (int j = 0; j < S; j++)
                sum += alpha->values[k * S + j] * ann->values[(size_t)j * nc + k * width + u];
            /* a context gate scales the whole context by the step's beta_i in (0, 1) */
            if (d->context_gate && gate < 0 && fabs(sum) > 1e-3)
                gate = c->values[k * width + u] / sum;
            const double want = d->context_gate ? (gate < 0 ? c->values[k * width + u] : gate * sum)
                                                : sum;
            ck_assert_msg(fabs(c->values[k * width + u] - want) <= 1e-5 * (1 + fabs(want)),
                          "step %d head %d: context %d is %g, its weights and values give %g",
                          step, head, u, c->values[k * width + u], want);
        }
    }
    ck_assert(!d->context_gate || argmax || (gate > 0 && gate < 1));
    /* the order the step computes them in, as src/cli/INTERFACE.md lists it per score
     * (argmax contexts read one annotation: no alpha h) */
    static const char *const ORDER[N_SCORES][11] = {
        [SCORE_ADDITIVE] = {"H", "s_prev", "W_a s", "U_a h + b_a", "sum", "tanh", "scores",
                            "alpha", "alpha h", "context"},
        [SCORE_DOT] = {"H", "s_prev", "scores", "alpha", "alpha h", "context"},
        [SCORE_GENERAL] = {"H", "s_prev", "W_g h", "scores", "alpha", "alpha h", "context"},
        [SCORE_SCALED_DOT] = {"H", "s_prev", "W_q s", "W_k h", "scores", "alpha", "alpha h",
                              "context"}};
    int n = 0;
    for (int k = 0; ORDER[d->score][k]; k++) {
        if (argmax && !strcmp(ORDER[d->score][k], "alpha h"))
            continue;
        ck_assert_int_lt(n, x.n);
        ck_assert_str_eq(x.tensors[n++].name, ORDER[d->score][k]);
    }
    ck_assert_int_eq(n, x.n);
    ck_assert_int_eq(x.chosen[0] >= 0, argmax);
    /* the next words' probabilities fall and stay below 1 */
    ck_assert_int_eq(x.n_next, EXPLAIN_TOP_WORDS);
    for (int r = 1; r < x.n_next; r++)
        ck_assert(x.next_prob[r] <= x.next_prob[r - 1]);
    explain_free(&x);
    model_workspace_free(&ws);
}

START_TEST(explain_reads_what_the_whole_pass_computes)
{
    const int v = _i;
    const Dims d = fixture_variant_dims(v);
    if (!model_has_alignments(&d) || model_is_transformer(&d))
        return; /* score none: nothing to explain (the command refuses it); the Transformer
                 * decoder's step: the test below */
    Params P;
    Pcg32 rng;
    params_alloc(&P, &d);
    pcg32_seed(&rng, 27, (uint64_t)v);
    params_init(&P, &rng, 0.5f);
    int checked = 0;
    for (int argmax = 0; argmax <= 1; argmax++)
        for (int b = 0; b < 3; b++) {
            Batch whole;
            Workspace full;
            fixture_single(&whole, &d, b);
            model_workspace_init(&full, &d, 1, whole.src_steps, whole.tgt_steps, 0);
            model_set_argmax(&full, argmax);
            model_forward(&full, &P, &whole);
            for (int step = 1; step <= whole.tgt_len[0]; step++)
                for (int head = -1; head < d.heads; head++) {
                    check_step(&d, &P, &whole, &full, argmax, step, head);
                    checked++;
                }
            model_workspace_free(&full);
            batch_free(&whole);
        }
    ck_assert_int_gt(checked, 0);
    params_free(&P);
}
END_TEST

/* The additive score's tensors say what they hold: the tanh layer is the tanh of the
 * sum explain forms, and alpha is the softmax of the scores. */
START_TEST(the_additive_step_shows_its_sum_tanh_and_softmax)
{
    const Dims d = fixture_variant_dims(0);
    Params P;
    Pcg32 rng;
    Batch whole;
    Workspace ws;
    ExplainStep x;
    params_alloc(&P, &d);
    pcg32_seed(&rng, 27, 0);
    params_init(&P, &rng, 0.5f);
    fixture_single(&whole, &d, 0);
    model_workspace_init(&ws, &d, 1, whole.src_steps, whole.tgt_steps, 0);
    explain_decoder_step(&x, &ws, &P, &whole, 2, -1);
    const char *order[] = {"H", "s_prev", "W_a s", "U_a h + b_a", "sum", "tanh", "scores",
                           "alpha", "alpha h", "context"};
    ck_assert_int_eq(x.n, 10);
    for (int k = 0; k < x.n; k++)
        ck_assert_str_eq(x.tensors[k].name, order[k]);
    const ExplainTensor *sum = tensor(&x, "sum"), *th = tensor(&x, "tanh");
    const ExplainTensor *e = tensor(&x, "scores"), *alpha = tensor(&x, "alpha");
    const int S = whole.src_steps;
    ck_assert_int_eq(sum->rows, S);
    ck_assert_int_eq(sum->cols, d.attn);
    for (int r = 0; r < S * d.attn; r++)
        ck_assert_float_eq_tol(th->values[r], tanhf(sum->values[r]), 1e-6);
    double z = 0;
    for (int j = 0; j < S; j++)
        z += exp(e->values[j]);
    for (int j = 0; j < S; j++)
        ck_assert_double_eq_tol(alpha->values[j], exp(e->values[j]) / z, 1e-6);
    explain_free(&x);
    model_workspace_free(&ws);
    batch_free(&whole);
    params_free(&P);
}
END_TEST

/* The softmax of each of n rows of scores (nk rows, n wide) is the first n columns of
 * each row of alpha (nk rows, width wide), the rest 0. */
static void assert_softmax(const ExplainTensor *scores, const ExplainTensor *alpha, int nk, int n,
                           int width)
{
    ck_assert_int_eq(scores->rows * scores->cols, nk * n);
    ck_assert_int_eq(alpha->rows * alpha->cols, nk * width);
    for (int k = 0; k < nk; k++) {
        double z = 0;
        for (int j = 0; j < n; j++)
            z += exp(scores->values[k * n + j]);
        for (int j = 0; j < width; j++)
            ck_assert_double_eq_tol(alpha->values[k * width + j],
                                    j < n ? exp(scores->values[k * n + j]) / z : 0, 1e-6);
    }
}

/* Each head's context from its weights (nk rows, n wide) and its slice of the values
 * (n rows of nk * hd): the context (nk * hd) they give, to float rounding. */
static void assert_gathers(const ExplainTensor *alpha, const ExplainTensor *values,
                           const ExplainTensor *context, int nk, int n)
{
    const int hd = context->cols / nk, width = alpha->cols;
    ck_assert_int_eq(values->cols, context->cols);
    for (int k = 0; k < nk; k++)
        for (int u = 0; u < hd; u++) {
            double sum = 0;
            for (int j = 0; j < n; j++)
                sum += alpha->values[k * width + j] * values->values[(size_t)j * values->cols + k * hd + u];
            ck_assert_msg(fabs(context->values[k * hd + u] - sum) <= 1e-5 * (1 + fabs(sum)),
                          "head %d column %d: the context %g, its weights and values give %g", k,
                          u, context->values[k * hd + u], sum);
        }
}

/* A Transformer decoder's step (and --dec-self of each layer), each head: the weights and
 * context are the pass's own floats (a plain model_forward's, exactly); the scores give the
 * weights by softmax, 0 past the step in the self-attention; the weights and values shown
 * give the contexts; the tensors come in INTERFACE.md's order. */
static void check_transformer_step(const Dims *d, const Params *P, const Batch *whole,
                                   const Workspace *full, int step, int head, int dec_self)
{
    static const char *const STEP[] = {"X", "self q", "self K", "self V", "self scores",
                                       "causal mask", "self alpha", "self context", "y1", "H",
                                       "cross q", "cross K", "cross V", "scores", "alpha",
                                       "alpha mean", "context", "out", NULL};
    static const char *const SELF[] = {"X", "q", "K", "V", "scores", "mask", "alpha",
                                       "alpha mean", "context", "out", NULL};
    const TdecDims td = model_tdec_dims(d);
    const int S = whole->src_steps, T = whole->tgt_steps, m = d->emb, i = step - 1;
    const int H = td.heads, nk = head < 0 ? H : 1, k0 = head < 0 ? 0 : head;
    const int l = dec_self ? dec_self - 1 : td.layers - 1;
    const TdecLayerWork *lw = &full->dec.tdec.layer[l];
    Workspace ws;
    ExplainStep x;
    model_workspace_init(&ws, d, 1, S, T, 0);
    explain_transformer_step(&x, &ws, P, whole, step, head, dec_self);
    int n = 0;
    for (const char *const *name = dec_self ? SELF : STEP; *name; name++) {
        if (!strcmp(*name, "alpha mean") && !dec_self && (H == 1 || head >= 0))
            continue; /* the step shows the heads' mean when there are several */
        ck_assert_int_lt(n, x.n);
        ck_assert_str_eq(x.tensors[n++].name, *name);
    }
    ck_assert_int_eq(n, x.n);
    const ExplainTensor *alpha = tensor(&x, "alpha"), *c = tensor(&x, "context");
    const real *probs = dec_self ? lw->self_probs : lw->cross_probs;
    const real *z = dec_self ? lw->self_z : lw->cross_z;
    const int width = dec_self ? T : S;
    for (int k = 0; k < nk; k++) /* the model's floats, exactly */
        for (int j = 0; j < width; j++)
            ck_assert(alpha->values[k * width + j] ==
                      (double)probs[((size_t)(k0 + k) * T + i) * width + j]);
    for (int u = 0; u < c->cols; u++)
        ck_assert(c->values[u] == (double)z[(size_t)i * m + k0 * (m / H) + u]);
    const char *self_scores = dec_self ? "scores" : "self scores";
    const char *self_alpha = dec_self ? "alpha" : "self alpha";
    assert_softmax(tensor(&x, self_scores), tensor(&x, self_alpha), nk, step, T);
    assert_gathers(tensor(&x, self_alpha), tensor(&x, dec_self ? "V" : "self V"),
                   tensor(&x, dec_self ? "context" : "self context"), nk, step);
    if (!dec_self) {
        assert_softmax(tensor(&x, "scores"), alpha, nk, whole->src_len[0], S);
        assert_gathers(alpha, tensor(&x, "cross V"), c, nk, S);
    }
    explain_free(&x);
    model_workspace_free(&ws);
}

START_TEST(explain_reads_what_the_transformer_decoder_computes)
{
    const int v = _i;
    const Dims d = fixture_variant_dims(v);
    if (!model_is_transformer(&d))
        return;
    Params P;
    Pcg32 rng;
    params_alloc(&P, &d);
    pcg32_seed(&rng, 29, (uint64_t)v);
    params_init(&P, &rng, 0.5f);
    int checked = 0;
    for (int b = 0; b < 3; b++) {
        Batch whole;
        Workspace full;
        fixture_single(&whole, &d, b);
        model_workspace_init(&full, &d, 1, whole.src_steps, whole.tgt_steps, 0);
        model_forward(&full, &P, &whole);
        for (int step = 1; step <= whole.tgt_len[0]; step++)
            for (int head = -1; head < d.heads; head++)
                for (int dec_self = 0; dec_self <= d.dec_layers; dec_self++) {
                    check_transformer_step(&d, &P, &whole, &full, step, head, dec_self);
                    checked++;
                }
        model_workspace_free(&full);
        batch_free(&whole);
    }
    ck_assert_int_gt(checked, 0);
    params_free(&P);
}
END_TEST

/* --self: every fixture variant with self-attention layers, each layer, position and
 * head: the weights are the layer's (a plain encoder pass's, exactly), their mean is the
 * map alignments.jsonl holds, and the scores explain forms give the weights by softmax. */
START_TEST(explain_self_reads_what_the_layer_computes)
{
    const int v = _i;
    const Dims d = fixture_variant_dims(v);
    if (d.sa_layers == 0)
        return;
    Params P;
    Pcg32 rng;
    params_alloc(&P, &d);
    pcg32_seed(&rng, 28, (uint64_t)v);
    params_init(&P, &rng, 0.5f);
    static const char *const ORDER[] = {"X", "q", "K", "V", "scores", "mask", "alpha",
                                        "alpha mean", "context", "out"};
    for (int b = 0; b < 3; b++) {
        Batch bt;
        Workspace plain, ws;
        fixture_single(&bt, &d, b);
        model_workspace_init(&plain, &d, 1, bt.src_steps, bt.tgt_steps, 0);
        model_encode(&plain, &P, &bt);
        const int S = bt.src_steps, H = d.sa_heads;
        for (int layer = 1; layer <= d.sa_layers; layer++)
            for (int pos = 1; pos <= S; pos++)
                for (int head = -1; head < H; head++) {
                    ExplainStep x;
                    model_workspace_init(&ws, &d, 1, bt.src_steps, bt.tgt_steps, 0);
                    explain_self_step(&x, &ws, &P, &bt, layer, pos, head);
                    ck_assert_int_eq(x.n, 10);
                    for (int k = 0; k < x.n; k++)
                        ck_assert_str_eq(x.tensors[k].name, ORDER[k]);
                    const SelfAttnLayerWork *lw = &plain.enc.sa.layer[layer - 1];
                    const ExplainTensor *alpha = tensor(&x, "alpha"), *e = tensor(&x, "scores");
                    const ExplainTensor *mean = tensor(&x, "alpha mean");
                    const int k0 = head < 0 ? 0 : head, nk = head < 0 ? H : 1;
                    for (int r = 0; r < nk; r++) {
                        double z = 0;
                        for (int j = 0; j < S; j++)
                            z += exp(e->values[r * S + j]);
                        for (int j = 0; j < S; j++) {
                            const real want = lw->probs[((size_t)(k0 + r) * S + (pos - 1)) * S + j];
                            ck_assert(alpha->values[r * S + j] == (double)want);
                            ck_assert_double_eq_tol(want, exp(e->values[r * S + j]) / z, 1e-6);
                        }
                    }
                    /* what the layer reads is the layer below's output (issue 41: q, K
                     * and V from the layer's own output passed), and the tensors shown
                     * compute each other head by head */
                    const ExplainTensor *X = tensor(&x, "X"), *q = tensor(&x, "q");
                    const ExplainTensor *K = tensor(&x, "K"), *V = tensor(&x, "V");
                    const ExplainTensor *z = tensor(&x, "context");
                    /* with --head, every tensor is the head's slice of the layer's width */
                    const int W = head < 0 ? X->cols : X->cols * H, hd = W / H;
                    const int off = head < 0 ? 0 : head * hd;
                    if (layer > 1) {
                        const real *below = plain.enc.sa.layer[layer - 2].out;
                        for (int j = 0; j < S; j++)
                            for (int u = 0; u < X->cols; u++)
                                ck_assert(X->values[(size_t)j * X->cols + u] ==
                                          (double)below[(size_t)j * W + off + u]);
                    }
                    ck_assert_int_eq(q->cols, nk * hd);
                    ck_assert_int_eq(K->cols, nk * hd);
                    ck_assert_int_eq(V->cols, nk * hd);
                    ck_assert_int_eq(z->cols, nk * hd);
                    for (int r = 0; r < nk; r++) {
                        for (int j = 0; j < S; j++) {
                            double dot = 0;
                            for (int u = 0; u < hd; u++)
                                dot += q->values[r * hd + u] * K->values[(size_t)j * K->cols + r * hd + u];
                            dot /= sqrt((double)hd);
                            ck_assert_msg(fabs(e->values[r * S + j] - dot) <= 1e-4 * (1 + fabs(dot)),
                                          "layer %d position %d head %d: score %g, q and K give %g",
                                          layer, pos, head, e->values[r * S + j], dot);
                        }
                        for (int u = 0; u < hd; u++) {
                            double sum = 0;
                            for (int j = 0; j < S; j++)
                                sum += alpha->values[r * S + j] * V->values[(size_t)j * V->cols + r * hd + u];
                            const double got = z->values[r * hd + u];
                            ck_assert_msg(fabs(got - sum) <= 1e-5 * (1 + fabs(sum)),
                                          "layer %d position %d head %d: context %g, alpha and V "
                                          "give %g", layer, pos, k0 + r, got, sum);
                        }
                    }
                    const real *map = model_self_weights(&plain, layer - 1) + (size_t)(pos - 1) * S;
                    for (int j = 0; j < S; j++)
                        ck_assert(mean->values[j] == (double)map[j]);
                    explain_free(&x);
                    model_workspace_free(&ws);
                }
        model_workspace_free(&plain);
        batch_free(&bt);
    }
    params_free(&P);
}
END_TEST

Suite *explain_suite(void)
{
    Suite *s = suite_create("explain");
    TCase *tc = tcase_create("explain");
    tcase_add_loop_test(tc, explain_reads_what_the_whole_pass_computes, 0, FIXTURE_N_VARIANTS);
    tcase_add_test(tc, the_additive_step_shows_its_sum_tanh_and_softmax);
    tcase_add_loop_test(tc, explain_self_reads_what_the_layer_computes, 0, FIXTURE_N_VARIANTS);
    tcase_add_loop_test(tc, explain_reads_what_the_transformer_decoder_computes, 0,
                        FIXTURE_N_VARIANTS);
    suite_add_tcase(s, tc);
    return s;
}
