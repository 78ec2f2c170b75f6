/* attention.c: every score of nn/MODEL.md behind attention.h's interface: its tensors,
 * its keys, and one step forward and backward over the kernels of attn_kernels.h. The
 * one place that knows which score is which. Never allocates. */
#include "nn/attention.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "nn/attn_kernels.h"
#include "nn/ops.h"

const char *const score_names[N_SCORES + 1] = {"additive", "dot", "general", "scaled_dot", "none",
                                               NULL};

void attn_carve(AttnParams *p, TensorCarver *c, const AttnDims *d)
{
    const int a = d->attn, q = d->query_width, v = d->value_width;
    *p = (AttnParams){0};
    switch (d->score) {
    case SCORE_ADDITIVE:
        p->W_a = tensor_carve(c, a, q, 0, "W_a");
        p->U_a = tensor_carve(c, a, v, 0, "U_a");
        p->b_a = tensor_carve(c, a, 1, 1, "b_a");
        p->v_a = tensor_carve(c, a, 1, 0, "v_a");
        break;
    case SCORE_GENERAL:
        p->W_g = tensor_carve(c, q, v, 0, "W_g");
        break;
    case SCORE_SCALED_DOT:
        p->W_q = tensor_carve(c, a, q, 0, "W_q");
        p->W_k = tensor_carve(c, a, v, 0, "W_k");
        break;
    case SCORE_DOT:
    case SCORE_NONE:
        break;
    }
}

int attn_sizes_fit(const AttnDims *d)
{
    return d->score != SCORE_DOT || d->query_width == d->value_width; /* s_{i-1} . h_j */
}

int attn_has_weights(const AttnDims *d)
{
    return d->score != SCORE_NONE;
}

int attn_key_width(const AttnDims *d)
{
    switch (d->score) {
    case SCORE_ADDITIVE:   /* U_a h_j + b_a */
    case SCORE_SCALED_DOT: /* W_k h_j */
        return d->attn;
    case SCORE_GENERAL:    /* W_g h_j */
        return d->query_width;
    case SCORE_DOT:        /* h_j itself */
    case SCORE_NONE:
        break;
    }
    return 0;
}

int attn_query_width(const AttnDims *d)
{
    return d->score == SCORE_ADDITIVE || d->score == SCORE_SCALED_DOT ? d->attn : 0;
}

int attn_pre_width(const AttnDims *d)
{
    return d->score == SCORE_ADDITIVE ? d->attn : 0;
}

void attn_keys_forward(real *keys, const AttnParams *P, const AttnDims *d, const real *H, int SB)
{
    const int v = d->value_width;
    switch (d->score) {
    case SCORE_ADDITIVE: /* keys = U_a h_j + b_a */
        linear_forward(keys, H, P->U_a, P->b_a, SB, v, d->attn);
        break;
    case SCORE_GENERAL: /* keys = W_g h_j */
        linear_forward(keys, H, P->W_g, NULL, SB, v, d->query_width);
        break;
    case SCORE_SCALED_DOT: /* keys = W_k h_j */
        linear_forward(keys, H, P->W_k, NULL, SB, v, d->attn);
        break;
    case SCORE_DOT:
    case SCORE_NONE:
        break;
    }
}

void attn_keys_backward(real *dH, AttnParams *G, const real *d_keys, const real *H,
                        const AttnParams *P, const AttnDims *d, int SB)
{
    const int v = d->value_width;
    switch (d->score) {
    case SCORE_ADDITIVE: /* forward: keys = H U_a^T + b_a */
        linear_backward(dH, G->U_a, G->b_a, d_keys, H, P->U_a, SB, v, d->attn);
        break;
    case SCORE_GENERAL: /* forward: keys = H W_g^T */
        linear_backward(dH, G->W_g, NULL, d_keys, H, P->W_g, SB, v, d->query_width);
        break;
    case SCORE_SCALED_DOT: /* forward: keys = H W_k^T */
        linear_backward(dH, G->W_k, NULL, d_keys, H, P->W_k, SB, v, d->attn);
        break;
    case SCORE_DOT: /* the keys were H: dH has their gradient already */
    case SCORE_NONE:
        break;
    }
}

/* 1 / sqrt(a) of the scaled dot product. */
static real scaled_dot_scale(const AttnDims *d)
{
    return (real)(1 / sqrt((double)d->attn));
}

void attn_step_forward(AttnStep *out, const AttnParams *P, const AttnDims *d, const AttnInput *in)
{
    const int p = d->query_width, v = d->value_width, a = d->attn;
    const int S = in->S, B = in->B, rows = in->rows;
    assert(rows <= B);
    switch (d->score) {
    case SCORE_ADDITIVE:
        /* q (rows, a) = s_{i-1} (rows, p) . W_a^T (p, a); e_ij = v_a . tanh(q + keys_j) */
        matmul(CblasNoTrans, CblasTrans, rows, a, p, 1, in->s_prev, p, P->W_a, p, 0, out->query, a);
        attn_additive_scores_forward(out->scores, out->pre, out->query, in->keys, P->v_a, in->len,
                                     S, B, a);
        break;
    case SCORE_DOT: /* e_ij = s_{i-1} . h_j */
        attn_dot_scores_forward(out->scores, in->s_prev, in->H, v, 1, in->len, S, B, v);
        break;
    case SCORE_GENERAL: /* e_ij = s_{i-1} . (W_g h_j) */
        attn_dot_scores_forward(out->scores, in->s_prev, in->keys, p, 1, in->len, S, B, p);
        break;
    case SCORE_SCALED_DOT: /* e_ij = (W_q s_{i-1}) . (W_k h_j) / sqrt(a) */
        matmul(CblasNoTrans, CblasTrans, rows, a, p, 1, in->s_prev, p, P->W_q, p, 0, out->query, a);
        attn_dot_scores_forward(out->scores, out->query, in->keys, a, scaled_dot_scale(d), in->len,
                                S, B, a);
        break;
    case SCORE_NONE: /* c_i is the sentence's fixed context; rows of length 0 are left out */
        for (int b = 0; b < B; b++)
            if (in->len[b] > 0)
                memcpy(out->c + (size_t)b * out->ld_c, in->summary + (size_t)b * v,
                       sizeof(real) * v);
        return;
    }
    attn_softmax_forward(out->alpha, out->scores, in->len, S, B);
    attn_context_forward(out->c, out->ld_c, out->alpha, in->H, v, in->len, S, B, v);
}

void attn_step_backward(AttnGrads *g, AttnParams *G, const real *dc, int ld_dc,
                        const AttnStep *step, int pre_kept, const AttnParams *P,
                        const AttnDims *d, const AttnInput *in)
{
    const int p = d->query_width, v = d->value_width, a = d->attn;
    const int S = in->S, B = in->B, rows = in->rows;
    if (d->score == SCORE_NONE) { /* forward: c_i = fixed context, at every step */
        for (int b = 0; b < rows; b++)
            for (int u = 0; u < v; u++)
                g->dsummary[(size_t)b * v + u] += dc[(size_t)b * ld_dc + u];
        return;
    }
    /* forward: c_i = sum_j alpha_ij h_j; alpha_i = softmax(e_i) */
    attn_context_backward(g->dalpha, g->dH, dc, ld_dc, step->alpha, in->H, v, in->len, S, B, v);
    attn_softmax_backward(g->dscores, g->dalpha, step->alpha, in->len, S, B);
    switch (d->score) {
    case SCORE_ADDITIVE:
        if (!pre_kept) /* the same arithmetic as forward: the same numbers */
            attn_additive_scores_forward(step->scores, step->pre, step->query, in->keys, P->v_a,
                                         in->len, S, B, a);
        attn_additive_scores_backward(g->dquery, g->dkeys, G->v_a, g->dscores, step->pre, P->v_a,
                                      in->len, S, B, a);
        /* forward: q = s_{i-1} W_a^T, so ds_{i-1} (rows, p) += dq (rows, a) . W_a (a, p) */
        matmul(CblasNoTrans, CblasNoTrans, rows, p, a, 1, g->dquery, a, P->W_a, p, 1, g->ds_prev, p);
        break;
    case SCORE_DOT: /* forward: e_ij = s_{i-1} . h_j */
        attn_dot_scores_backward(g->ds_prev, g->dH, g->dscores, in->s_prev, in->H, v, 1, in->len,
                                 S, B, v);
        break;
    case SCORE_GENERAL: /* forward: e_ij = s_{i-1} . keys_j, keys = W_g h_j */
        attn_dot_scores_backward(g->ds_prev, g->dkeys, g->dscores, in->s_prev, in->keys, p, 1,
                                 in->len, S, B, p);
        break;
    case SCORE_SCALED_DOT:
        /* forward: e_ij = q . keys_j / sqrt(a), q = W_q s_{i-1}, keys = W_k h_j */
        attn_dot_scores_backward(g->dquery, g->dkeys, g->dscores, step->query, in->keys, a,
                                 scaled_dot_scale(d), in->len, S, B, a);
        /* ds_{i-1} (rows, p) += dq (rows, a) . W_q (a, p) */
        matmul(CblasNoTrans, CblasNoTrans, rows, p, a, 1, g->dquery, a, P->W_q, p, 1, g->ds_prev, p);
        break;
    case SCORE_NONE:
        break;
    }
}

void attn_queries_backward(AttnParams *G, const AttnDims *d, const real *dquery,
                           const real *states, int rows)
{
    const int p = d->query_width, a = d->attn;
    real *dW = d->score == SCORE_ADDITIVE ? G->W_a : d->score == SCORE_SCALED_DOT ? G->W_q : NULL;
    if (dW) /* dW (a, p) += dq^T (a, rows) . s (rows, p) */
        matmul(CblasTrans, CblasNoTrans, a, p, rows, 1, dquery, a, states, p, 1, dW, p);
}
