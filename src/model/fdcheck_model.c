/* fdcheck_model.c: finite-difference check of the whole model (see fdcheck_model.h). */
#include "model/fdcheck_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "nn/fdcheck.h"

typedef struct {
    Params P;
    Workspace ws;
    const Batch *bt;
} Check;

static double check_loss(void *ctx)
{
    Check *c = ctx;
    return model_forward(&c->ws, &c->P, c->bt);
}

/* Which elements of a tensor to check: up to samples with a non-zero gradient and two
 * with a zero one. Returns their number. */
static size_t pick_elements(const real *grad, size_t count, long samples, Pcg32 *rng, size_t *which)
{
    size_t n_nonzero = 0, n_zero = 0;
    size_t *zero = xmalloc_array(count, sizeof(size_t));
    for (size_t k = 0; k < count; k++) {
        if (grad[k] != 0)
            which[n_nonzero++] = k;
        else
            zero[n_zero++] = k;
    }
    size_t take = n_nonzero < (size_t)samples ? n_nonzero : (size_t)samples;
    for (size_t k = 0; k < take; k++) { /* a partial Fisher-Yates shuffle */
        size_t pick = k + pcg32_below(rng, (uint32_t)(n_nonzero - k));
        size_t tmp = which[k];
        which[k] = which[pick];
        which[pick] = tmp;
    }
    for (size_t k = 0; k < n_zero && k < 2; k++)
        which[take++] = zero[pcg32_below(rng, (uint32_t)n_zero)];
    free(zero);
    return take;
}

/* r of the header's comment: the weights' range for a model of these sizes. */
static double fdcheck_model_scale(const Dims *d)
{
    const int widths[] = {d->emb, model_annotation_width(d), d->dec_hidden, d->attn, d->readout};
    int w = 0;
    for (size_t k = 0; k < sizeof widths / sizeof *widths; k++)
        w = widths[k] > w ? widths[k] : w;
    return w <= 64 ? 0.5 : 0.5 * sqrt(64.0 / w);
}

double fdcheck_model_run(const Dims *d, const Batch *bt, uint64_t seed, long samples,
                         const Regularization *reg, const HardAttention *hard)
{
    Check c = {.bt = bt};
    Params G;
    params_alloc(&c.P, d);
    params_alloc(&G, d);
    Pcg32 rng;
    pcg32_seed(&rng, seed, RNG_STREAM_INIT);
    const double scale = fdcheck_model_scale(d);
    fill_uniform(c.P.mem, c.P.n, &rng, -scale, scale);
    model_workspace_init(&c.ws, d, bt->batch_size, bt->src_steps, bt->tgt_steps, 1);
    if (reg) {
        Regularization r = *reg;
        pcg32_seed(&r.rng, seed, RNG_STREAM_DROPOUT);
        model_set_regularization(&c.ws, &r);
    }
    if (hard) {
        HardAttention h = *hard;
        h.mode = CONTEXT_SAMPLE;
        pcg32_seed(&h.rng, seed, RNG_STREAM_HARD);
        model_set_hard(&c.ws, &h);
    }
    double loss = model_forward(&c.ws, &c.P, bt);
    model_backward(&G, &c.ws, &c.P, bt);
    printf("gradient check in double precision: %d sentence pair%s, %s %.6f, %zu parameters\n",
           bt->batch_size, plural(bt->batch_size), hard ? "surrogate J" : "loss", loss, c.P.n);
    if (hard) { /* from here on the paths and the rewards stay as sampled */
        printf("hard attention: %d of %d sentence%s sampled their positions (the others used "
               "the expected context); paths and rewards held fixed\n",
               c.ws.hard_pass.stats.sampled,
               bt->batch_size, plural(bt->batch_size));
        c.ws.hard.mode = CONTEXT_GIVEN;
        c.ws.hard.freeze_rewards = 1;
    }
    double worst = 0;
    size_t *which = xmalloc_array(c.P.n + 2, sizeof(size_t));
    for (int t = 0; t < c.P.n_tensors; t++) {
        const Tensor *x = &c.P.tensors[t];
        size_t count = (size_t)x->rows * x->cols;
        const real *g = G.tensors[t].data;
        double err;
        if (samples <= 0 || count <= (size_t)samples)
            err = fdcheck_tensor(x->name, x->data, g, count, check_loss, &c);
        else
            err = fdcheck_elements(x->name, x->data, g, count, which,
                                     pick_elements(g, count, samples, &rng, which), check_loss, &c);
        worst = fmax(worst, err);
    }
    printf("worst relative error: %.3e (tolerance %.0e): %s\n", worst, GRADCHECK_TOLERANCE,
           worst <= GRADCHECK_TOLERANCE ? "PASSED" : "FAILED");
    free(which);
    model_workspace_free(&c.ws);
    params_free(&c.P);
    params_free(&G);
    return worst;
}
