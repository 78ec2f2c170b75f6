/* test_model.c: the whole model in double precision: every element of every parameter
 * tensor against finite differences, padding invariance, and the accumulation
 * contract of backward. Also the double side of the float-vs-double comparison. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/fdcheck.h"
#include "model/model.h"
#include "support/model_fixture.h"
#include "support/suites.h"

typedef struct {
    Params params, grads;
    Workspace ws;
    Batch batch;
} ModelCase;

/* Variant v of the fixture model (model_fixture.h) at a general point. */
static void model_case_init_variant(ModelCase *c, uint64_t seed, int v)
{
    Dims d = fixture_variant_dims(v);
    params_alloc(&c->params, &d);
    params_alloc(&c->grads, &d);
    /* Larger weights than the training init, and non-zero biases, so that every term
     * carries a clearly non-zero gradient. */
    Pcg32 rng;
    pcg32_seed(&rng, seed, 1);
    fill_uniform(c->params.mem, c->params.n, &rng, -0.5, 0.5);
    fixture_batch(&c->batch, &d);
    model_workspace_init(&c->ws, &d, 3, 5, 5, 1);
    Regularization reg = fixture_variant_regularization(v, seed);
    model_set_regularization(&c->ws, &reg);
    HardAttention hard = fixture_variant_hard(v, seed);
    model_set_hard(&c->ws, &hard);
}

static void model_case_init(ModelCase *c, uint64_t seed)
{
    model_case_init_variant(c, seed, 0);
}

static void model_case_free(ModelCase *c)
{
    params_free(&c->params);
    params_free(&c->grads);
    model_workspace_free(&c->ws);
    batch_free(&c->batch);
}

static double model_loss(void *ctx)
{
    ModelCase *c = ctx;
    return model_forward(&c->ws, &c->params, &c->batch);
}

/* The point of the finite-difference check below; the sorted-batch test compares its
 * gradients with the unsorted ones at this very point. */
#define FD_CHECKED_SEED 41

/* Every variant (model_fixture.h): dropout with its masks fixed, as the workspace draws
 * the same ones at every forward pass. */
START_TEST(model_backward_matches_finite_differences_for_every_parameter)
{
    const ModelVariant variant = fixture_variant(_i);
    ModelCase c;
    model_case_init_variant(&c, FD_CHECKED_SEED, _i);
    model_forward(&c.ws, &c.params, &c.batch);
    model_backward(&c.grads, &c.ws, &c.params, &c.batch);
    printf("whole model, %s, every element of every tensor (double):\n", variant.name);
    if (variant.hard) {
        /* the surrogate with the sampled paths and the rewards held fixed (model/MODEL.md);
         * the point must have sentences that sampled, and with 0 < expected_prob < 1
         * one that did not */
        const double p = variant.expected_prob;
        printf("  %d of 3 sentences sampled their positions\n", c.ws.hard_pass.stats.sampled);
        ck_assert_int_ge(c.ws.hard_pass.stats.sampled, 1);
        if (p > 0)
            ck_assert_int_le(c.ws.hard_pass.stats.sampled, 2);
        else
            ck_assert_int_eq(c.ws.hard_pass.stats.sampled, 3);
        c.ws.hard.mode = CONTEXT_GIVEN;
        c.ws.hard.freeze_rewards = 1;
    }
    double worst = 0;
    for (int t = 0; t < c.params.n_tensors; t++) {
        const Tensor *x = &c.params.tensors[t];
        double err = fdcheck_tensor(x->name, x->data, c.grads.tensors[t].data,
                                      (size_t)x->rows * x->cols, model_loss, &c);
        worst = fmax(worst, err);
    }
    printf("  worst relative error over the model: %.3e (tolerance %.0e)\n", worst,
           GRADCHECK_TOLERANCE);
    ck_assert_double_le(worst, GRADCHECK_TOLERANCE);
    model_case_free(&c);
}
END_TEST

/* Each variant without dropout, whose masks depend on the layout. */
START_TEST(padded_batch_equals_sentences_one_at_a_time)
{
    ModelCase c;
    model_case_init_variant(&c, 42, _i);
    double batch_loss = model_forward(&c.ws, &c.params, &c.batch);
    model_backward(&c.grads, &c.ws, &c.params, &c.batch);

    /* The token-mean loss of the batch is the token-weighted mean of the sentences'
     * losses; so are the gradients. */
    Dims d = fixture_variant_dims(_i);
    Params single_grads;
    params_alloc(&single_grads, &d);
    double weighted_loss = 0;
    double *expected = calloc(c.params.n, sizeof(double));
    for (int b = 0; b < 3; b++) {
        Batch one;
        fixture_single(&one, &d, b);
        memset(single_grads.mem, 0, sizeof(real) * single_grads.n);
        double loss = model_forward(&c.ws, &c.params, &one);
        model_backward(&single_grads, &c.ws, &c.params, &one);
        double weight = (double)one.n_tgt_tokens / c.batch.n_tgt_tokens;
        weighted_loss += weight * loss;
        for (size_t k = 0; k < c.params.n; k++)
            expected[k] += weight * single_grads.mem[k];
        batch_free(&one);
    }
    ck_assert_double_eq_tol(batch_loss, weighted_loss, 1e-14);
    double worst = 0;
    for (size_t k = 0; k < c.params.n; k++)
        worst = fmax(worst, fabs(c.grads.mem[k] - expected[k]));
    printf("padding invariance: loss %.15f batched vs %.15f one at a time; worst gradient "
           "difference %.2e\n", batch_loss, weighted_loss, worst);
    ck_assert_double_le(worst, 1e-14);
    free(expected);
    params_free(&single_grads);
    model_case_free(&c);
}
END_TEST

/* A batch cut into shards, each pass normalised by the whole batch's counts
 * (model_set_loss_counts), gives the whole batch's loss and gradients as the sums of the
 * shards': what data-parallel training rests on (issue 29's threads, issue 31's
 * processes). Here each sentence of the fixture is a shard. Every variant whose passes
 * draw nothing (dropout's masks and hard attention's samples depend on the layout),
 * the doubly stochastic term's 1/B among them. */
START_TEST(shards_with_the_whole_batch_counts_sum_to_the_whole_batch)
{
    int checked = 0;
    for (int v = 0; v < FIXTURE_N_VARIANTS; v++) {
        const ModelVariant x = fixture_variant(v);
        if (x.hard || x.embedding_dropout > 0 || x.readout_dropout > 0 || x.sa_dropout > 0)
            continue;
        ModelCase c;
        model_case_init_variant(&c, 44, v);
        const double whole = model_forward(&c.ws, &c.params, &c.batch);
        model_backward(&c.grads, &c.ws, &c.params, &c.batch);
        const Dims d = fixture_variant_dims(v);
        Params shards;
        params_alloc(&shards, &d);
        double sum = 0;
        model_set_loss_counts(&c.ws, c.batch.n_tgt_tokens, c.batch.batch_size);
        for (int b = 0; b < 3; b++) {
            Batch one;
            fixture_single(&one, &d, b);
            sum += model_forward(&c.ws, &c.params, &one);
            model_backward(&shards, &c.ws, &c.params, &one); /* accumulates */
            batch_free(&one);
        }
        double largest = 0, worst = 0;
        for (size_t k = 0; k < c.params.n; k++)
            largest = fmax(largest, fabs(c.grads.mem[k]));
        for (size_t k = 0; k < c.params.n; k++)
            worst = fmax(worst, fabs(shards.mem[k] - c.grads.mem[k]));
        ck_assert_msg(fabs(sum - whole) <= 1e-14 * fabs(whole) && worst <= 1e-14 * largest,
                      "%s: loss %.17g from the shards, %.17g whole; worst gradient difference "
                      "%.2e of the largest", x.name, sum, whole, worst / largest);
        checked++;
        params_free(&shards);
        model_case_free(&c);
    }
    printf("shards: %d variants, each the whole batch's loss and gradients from its three "
           "sentences\n", checked);
    ck_assert_int_ge(checked, FIXTURE_FIRST_DROPOUT + 1); /* and a doubly stochastic one */
}
END_TEST

/* A tied model has no W_o of its own: the output layer reads E_y's memory, and the model
 * has V_y l weights fewer than the same model untied, which has W_o after W_t, b_t. */
START_TEST(a_tied_output_layer_is_the_target_embeddings)
{
    int tied = -1;
    for (int v = 0; v < FIXTURE_N_VARIANTS && tied < 0; v++)
        tied = fixture_variant(v).tie_output ? v : -1;
    ck_assert_int_ge(tied, 0);
    Dims d = fixture_variant_dims(tied);
    ck_assert_int_eq(d.readout, d.emb);
    Params P, U;
    params_alloc(&P, &d);
    d.tie_output = 0;
    params_alloc(&U, &d);
    ck_assert_ptr_eq(P.W_o, P.E_y);
    ck_assert_uint_eq(P.n, U.n - (size_t)d.tgt_vocab * d.readout);
    ck_assert_int_eq(P.n_tensors, U.n_tensors - 1);
    for (int t = 0; t < P.n_tensors; t++)
        ck_assert_str_ne(P.tensors[t].name, "W_o");
    ck_assert_str_eq(U.tensors[U.n_tensors - 2].name, "W_o");
    params_free(&P);
    params_free(&U);
}
END_TEST

START_TEST(backward_twice_accumulates_twice_the_gradients)
{
    ModelCase c;
    model_case_init_variant(&c, 43, _i);
    model_forward(&c.ws, &c.params, &c.batch);
    model_backward(&c.grads, &c.ws, &c.params, &c.batch);
    double *once = malloc(sizeof(double) * c.grads.n);
    memcpy(once, c.grads.mem, sizeof(double) * c.grads.n);
    model_forward(&c.ws, &c.params, &c.batch);
    model_backward(&c.grads, &c.ws, &c.params, &c.batch);
    size_t nonzero = 0;
    for (size_t k = 0; k < c.grads.n; k++) {
        ck_assert_double_eq_tol(c.grads.mem[k], 2 * once[k], 1e-14);
        nonzero += once[k] != 0;
    }
    /* Only the embedding rows of words absent from the batch have zero gradients. */
    ck_assert_uint_gt(nonzero, c.grads.n * 3 / 4);
    free(once);
    model_case_free(&c);
}
END_TEST

START_TEST(sorted_batch_skips_ended_rows_with_the_same_gradients)
{
    /* Sorted by target length, the decoder computes only the rows still in their
     * sentence. It must compute the same function: the same loss and gradients as the
     * unsorted batch, up to the rounding of sums taken in another order (1e-14 of the
     * largest gradient; measured: under 4e-16). Those unsorted
     * gradients are checked against finite differences, element by element, at this
     * same point; comparing the two analytic results is the exact check, where a second
     * finite-difference pass would only add its own rounding noise (which sat at 60% of
     * the 1e-6 tolerance for gradients near 1e-7). Each variant without dropout. */
    ModelCase c;
    model_case_init_variant(&c, FD_CHECKED_SEED, _i);
    double unsorted = model_forward(&c.ws, &c.params, &c.batch);
    model_backward(&c.grads, &c.ws, &c.params, &c.batch);
    double *expected = malloc(sizeof(double) * c.grads.n);
    memcpy(expected, c.grads.mem, sizeof(double) * c.grads.n);
    batch_sort_by_target(&c.batch);
    memset(c.grads.mem, 0, sizeof(double) * c.grads.n);
    double sorted = model_forward(&c.ws, &c.params, &c.batch);
    int skipped = 0;
    for (int i = 0; i < c.ws.T; i++)
        skipped += c.ws.B - c.ws.dec.active[i];
    /* targets of 2, 4, 3 words + </s>; the Transformer decoder computes every row (its
     * causal mask keeps real rows from the others) */
    const int transformer = model_is_transformer(&c.ws.dims);
    ck_assert_int_eq(skipped, transformer ? 0 : 3 * 5 - (2 + 4 + 3 + 3));
    model_backward(&c.grads, &c.ws, &c.params, &c.batch);
    ck_assert_double_le(fabs(sorted - unsorted), 1e-14 * fabs(unsorted));
    /* the scale of the terms whose sums the two orders round differently: the model's
     * largest gradient (a tensor's own would not do: W_a's are tiny sums of large terms) */
    double largest = 0, worst = 0;
    for (size_t k = 0; k < c.grads.n; k++)
        largest = fmax(largest, fabs(expected[k]));
    for (int t = 0; t < c.params.n_tensors; t++) {
        const Tensor *g = &c.grads.tensors[t];
        size_t n = (size_t)g->rows * g->cols, at = (size_t)(g->data - c.grads.mem);
        for (size_t k = 0; k < n; k++) {
            double diff = fabs(g->data[k] - expected[at + k]);
            ck_assert_msg(diff <= 1e-14 * largest, "%s[%zu]: sorted %.17g, unsorted %.17g",
                          g->name, k, g->data[k], expected[at + k]);
            worst = fmax(worst, diff / largest);
        }
    }
    printf("sorted batch (%d decoder rows skipped), %s: loss %.17g vs %.17g, worst gradient "
           "difference %.2e of the largest gradient\n", skipped, fixture_variant(_i).name, sorted,
           unsorted, worst);
    free(expected);
    model_case_free(&c);
}
END_TEST

START_TEST(output_layer_in_chunks_matches_one_chunk_and_the_fused_pass)
{
    /* The output layer runs over chunks of rows (the logits of a large vocabulary would
     * be the largest buffer); any chunking gives the same loss and gradients, and the
     * training pass that takes the output layer's gradient during forward gives exactly
     * forward + backward. */
    ModelCase c;
    model_case_init(&c, 45);
    const int whole = c.ws.ro.max_out_chunk_rows;
    double loss_whole = model_forward(&c.ws, &c.params, &c.batch);
    ck_assert_int_eq(c.ws.ro.out_chunk_rows, c.ws.N);
    model_backward(&c.grads, &c.ws, &c.params, &c.batch);
    double *expected = malloc(sizeof(double) * c.grads.n);
    memcpy(expected, c.grads.mem, sizeof(double) * c.grads.n);
    const int chunks[] = {1, 2, 5};
    for (int k = 0; k < 3; k++) {
        c.ws.ro.max_out_chunk_rows = chunks[k];
        memset(c.grads.mem, 0, sizeof(double) * c.grads.n);
        double loss = model_forward(&c.ws, &c.params, &c.batch);
        ck_assert_int_eq(c.ws.ro.out_chunk_rows, chunks[k]);
        ck_assert_int_gt(c.ws.N, chunks[k]);
        model_backward(&c.grads, &c.ws, &c.params, &c.batch);
        ck_assert_double_eq_tol(loss, loss_whole, 1e-14);
        for (size_t j = 0; j < c.grads.n; j++)
            ck_assert_double_eq_tol(c.grads.mem[j], expected[j], 1e-15);
    }
    /* chunks of 2: the fused pass, bit for bit */
    c.ws.ro.max_out_chunk_rows = 2;
    memset(c.grads.mem, 0, sizeof(double) * c.grads.n);
    double loss_separate = model_forward(&c.ws, &c.params, &c.batch);
    model_backward(&c.grads, &c.ws, &c.params, &c.batch);
    memcpy(expected, c.grads.mem, sizeof(double) * c.grads.n);
    memset(c.grads.mem, 0, sizeof(double) * c.grads.n);
    double loss_fused = model_forward_backward(&c.grads, NULL, NULL, &c.ws, &c.params,
                                               &c.batch);
    ck_assert(loss_fused == loss_separate);
    ck_assert_int_eq(memcmp(c.grads.mem, expected, sizeof(double) * c.grads.n), 0);
    /* and the chunked gradients against finite differences */
    double worst_fd = 0;
    for (int t = 0; t < c.params.n_tensors; t++) {
        const Tensor *x = &c.params.tensors[t];
        worst_fd = fmax(worst_fd, fdcheck_tensor(x->name, x->data, c.grads.tensors[t].data,
                                                   (size_t)x->rows * x->cols, model_loss, &c));
    }
    ck_assert_double_le(worst_fd, GRADCHECK_TOLERANCE);
    c.ws.ro.max_out_chunk_rows = whole;
    free(expected);
    model_case_free(&c);
}
END_TEST

START_TEST(attention_layer_computed_again_in_backward_gives_the_same_gradients)
{
    /* Large workspaces keep one step's tanh(W_a s + U_a h + b_a) and backward computes
     * each step's again: the same arithmetic, so the very same gradients -- on every
     * OpenBLAS core type (make test runs this one under each: a kernel whose sums depend on
     * the alignment of their input broke it once, workspace.c's att_pre_stride). */
    ModelCase c;
    model_case_init(&c, 46);
    ck_assert_int_eq(c.ws.dec.keep_att_pre, 1);
    model_forward(&c.ws, &c.params, &c.batch);
    model_backward(&c.grads, &c.ws, &c.params, &c.batch);
    double *kept = malloc(sizeof(double) * c.grads.n);
    memcpy(kept, c.grads.mem, sizeof(double) * c.grads.n);
    c.ws.dec.keep_att_pre = 0;
    memset(c.grads.mem, 0, sizeof(double) * c.grads.n);
    model_forward(&c.ws, &c.params, &c.batch);
    model_backward(&c.grads, &c.ws, &c.params, &c.batch);
    for (int t = 0; t < c.grads.n_tensors; t++) {
        const Tensor *x = &c.grads.tensors[t];
        const double *was = kept + (x->data - c.grads.mem);
        double most = 0;
        for (size_t k = 0; k < (size_t)x->rows * x->cols; k++)
            most = fmax(most, fabs(x->data[k] - was[k]));
        if (most > 0) /* say where, before the verdict */
            printf("  kept and computed again, %s's gradients differ by up to %.3e\n", x->name,
                   most);
    }
    ck_assert_int_eq(memcmp(c.grads.mem, kept, sizeof(double) * c.grads.n), 0);
    ck_assert_double_ne(c.params.att.v_a[0] * c.grads.att.v_a[0], 0);
    free(kept);
    model_case_free(&c);
}
END_TEST

double model_loss_and_gradients_f64(const Dims *d, const Batch *bt, const double *params,
                                    double *grads, size_t n)
{
    Params P, G;
    Workspace ws;
    params_alloc(&P, d);
    params_alloc(&G, d);
    ck_assert_uint_eq(P.n, n);
    memcpy(P.mem, params, sizeof(double) * n);
    model_workspace_init(&ws, d, bt->batch_size, bt->src_steps, bt->tgt_steps, 1);
    double loss = model_forward(&ws, &P, bt);
    model_backward(&G, &ws, &P, bt);
    memcpy(grads, G.mem, sizeof(double) * n);
    model_workspace_free(&ws);
    params_free(&P);
    params_free(&G);
    return loss;
}

Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("gradients");
    /* the arithmetic of each OpenBLAS core type: scripts/checks/run-checks.py runs it under each family */
    tcase_set_tags(tc, "cores");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, model_backward_matches_finite_differences_for_every_parameter, 0,
                        FIXTURE_N_VARIANTS);
    tcase_add_loop_test(tc, padded_batch_equals_sentences_one_at_a_time, 0, FIXTURE_FIRST_DROPOUT);
    tcase_add_loop_test(tc, backward_twice_accumulates_twice_the_gradients, 0, FIXTURE_N_VARIANTS);
    tcase_add_test(tc, shards_with_the_whole_batch_counts_sum_to_the_whole_batch);
    tcase_add_test(tc, a_tied_output_layer_is_the_target_embeddings);
    tcase_add_loop_test(tc, sorted_batch_skips_ended_rows_with_the_same_gradients, 0,
                        FIXTURE_FIRST_DROPOUT);
    tcase_add_test(tc, output_layer_in_chunks_matches_one_chunk_and_the_fused_pass);
    tcase_add_test(tc, attention_layer_computed_again_in_backward_gives_the_same_gradients);
    suite_add_tcase(s, tc);
    return s;
}
