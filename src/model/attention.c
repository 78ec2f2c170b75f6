/* attention.c: every score of model/MODEL.md behind attention.h's interface: its tensors,
 * its keys, and one step forward and backward over the kernels of attn_kernels.h. The
 * one place that knows which score is which. Never allocates. */
#include "model/attention.h"

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

int attn_size_problems(const AttnDims *d)
{
    const int H = d->heads;
    int problems = 0;
    if (d->score == SCORE_NONE)
        return 0;
    if (d->score == SCORE_DOT && d->query_width != d->value_width) /* s_{i-1} . h_j */
        problems |= ATTN_DOT_WIDTHS;
    if (d->value_width % H) /* each head's context is its slice of the annotations */
        problems |= ATTN_SPLIT_VALUES;
    if ((d->score == SCORE_ADDITIVE || d->score == SCORE_SCALED_DOT) && d->attn % H)
        problems |= ATTN_SPLIT_ATTN;
    if (d->score == SCORE_GENERAL && d->query_width % H)
        problems |= ATTN_SPLIT_QUERY;
    return problems;
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

/* 1 / sqrt(a / H) of the scaled dot product: the width of one head's slice. */
static real scaled_dot_scale(const AttnDims *d)
{
    return (real)(1 / sqrt((double)(d->attn / d->heads)));
}

/* Head k's scores e^k (S*B) into out->scores: each score on its own slices of the
 * query-side and key-side vectors (model/MODEL.md, "Multi-head attention"). */
static void head_scores(AttnStep *out, const AttnParams *P, const AttnDims *d,
                        const AttnInput *in, int k)
{
    const int H = d->heads, p = d->query_width, v = d->value_width, a = d->attn;
    const int S = in->S, B = in->B;
    const int ah = a / H, ph = p / H, vh = v / H;
    switch (d->score) {
    case SCORE_ADDITIVE: /* e_ij = v_a[k] . tanh(q[k] + keys_j[k]) */
        (in->query_panels ? attn_additive_scores_by_row : attn_additive_scores_forward)(
            out->scores, out->pre + k * ah, out->query + k * ah, in->keys + k * ah, a,
            P->v_a + k * ah, in->len, S, B, ah);
        break;
    case SCORE_DOT: /* e_ij = s_{i-1}[k] . h_j[k] */
        attn_dot_scores_forward(out->scores, in->s_prev + k * vh, p, in->H + k * vh, v, 1, in->len,
                                S, B, vh);
        break;
    case SCORE_GENERAL: /* e_ij = s_{i-1}[k] . (W_g h_j)[k] */
        attn_dot_scores_forward(out->scores, in->s_prev + k * ph, p, in->keys + k * ph, p, 1,
                                in->len, S, B, ph);
        break;
    case SCORE_SCALED_DOT: /* e_ij = (W_q s_{i-1})[k] . (W_k h_j)[k] / sqrt(a / H) */
        attn_dot_scores_forward(out->scores, out->query + k * ah, a, in->keys + k * ah, a,
                                scaled_dot_scale(d), in->len, S, B, ah);
        break;
    case SCORE_NONE:
        break;
    }
}

/* Hard attention: head k of each choosing row takes one position (sampled, the argmax,
 * or given) and its context slice is that position's annotation slice. */
static void choose_positions(AttnStep *out, const AttnChoice *choice, const real *alpha,
                             const AttnDims *d, const AttnInput *in, int k)
{
    const int H = d->heads, v = d->value_width, vh = v / H;
    for (int b = 0; b < in->B && !choice->given; b++) {
        int pick = -1; /* rows past in->rows have length 0 */
        if (choice->hard[b] && in->len[b] > 0)
            pick = attn_choose(alpha, b, in->B, in->len[b],
                               choice->draw ? choice->draw + (size_t)b * H + k : NULL);
        choice->chosen[(size_t)b * H + k] = pick;
    }
    attn_pick_forward(out->c + k * vh, out->ld_c, choice->chosen + k, H, in->H + k * vh, v,
                      in->B, vh);
}

void attn_step_forward(AttnStep *out, const AttnParams *P, const AttnDims *d, const AttnInput *in)
{
    const int H = d->heads, p = d->query_width, v = d->value_width, a = d->attn;
    const int S = in->S, B = in->B, rows = in->rows, vh = v / H;
    const size_t SB = (size_t)S * B;
    const AttnChoice *choice = in->choice;
    assert(rows <= B);
    switch (d->score) {
    case SCORE_ADDITIVE: /* q (rows, a) = s_{i-1} (rows, p) . W_a^T (p, a), every head's */
    case SCORE_SCALED_DOT: /* q (rows, a) = s_{i-1} . W_q^T */
        if (in->query_panels)
            linear_forward_packed(out->query, in->s_prev, in->query_panels, NULL, rows, p, a);
        else
            matmul(CblasNoTrans, CblasTrans, rows, a, p, 1, in->s_prev, p,
                   d->score == SCORE_ADDITIVE ? P->W_a : P->W_q, p, 0, out->query, a);
        break;
    case SCORE_NONE: /* c_i is the sentence's fixed context; rows of length 0 are left out */
        for (int b = 0; b < B; b++)
            if (in->len[b] > 0)
                memcpy(out->c + (size_t)b * out->ld_c, in->summary + (size_t)b * v,
                       sizeof(real) * v);
        return;
    case SCORE_DOT:
    case SCORE_GENERAL:
        break;
    }
    /* each head: its weights alpha^k, and its slice of the context [c^1 ; ... ; c^H] */
    for (int k = 0; k < H; k++) {
        real *alpha = out->alpha + (size_t)k * SB;
        head_scores(out, P, d, in, k);
        if (out->kept_scores)
            memcpy(out->kept_scores + (size_t)k * SB, out->scores, sizeof(real) * SB);
        attn_softmax_forward(alpha, out->scores, in->len, S, B);
        attn_context_forward(out->c + k * vh, out->ld_c, alpha, in->H + k * vh, v,
                             choice ? choice->soft_len : in->len, S, B, vh);
        if (choice)
            choose_positions(out, choice, alpha, d, in, k);
    }
    /* the alignment: the mean of the heads' weights (torch's average_attn_weights) */
    if (H > 1 && out->mean)
        for (size_t r = 0; r < SB; r++) {
            real sum = 0;
            for (int k = 0; k < H; k++)
                sum += out->alpha[(size_t)k * SB + r];
            out->mean[r] = sum / H;
        }
}

/* Backward of head k's scores: from dscores (de^k) to its slices of the query, the keys,
 * s_{i-1} and v_a. */
static void head_scores_backward(AttnGrads *g, AttnParams *G, const AttnStep *step, int pre_kept,
                                 const AttnParams *P, const AttnDims *d, const AttnInput *in,
                                 int k)
{
    const int H = d->heads, p = d->query_width, v = d->value_width, a = d->attn;
    const int S = in->S, B = in->B;
    const int ah = a / H, ph = p / H, vh = v / H;
    switch (d->score) {
    case SCORE_ADDITIVE:
        if (!pre_kept) /* the same arithmetic as forward: the same numbers */
            attn_additive_scores_forward(step->scores, step->pre + k * ah, step->query + k * ah,
                                         in->keys + k * ah, a, P->v_a + k * ah, in->len, S, B, ah);
        attn_additive_scores_backward(g->dquery + k * ah, g->dkeys + k * ah, G->v_a + k * ah,
                                      g->dscores, step->pre + k * ah, a, P->v_a + k * ah, in->len,
                                      S, B, ah);
        break;
    case SCORE_DOT: /* forward: e_ij = s_{i-1}[k] . h_j[k] */
        attn_dot_scores_backward(g->ds_prev + k * vh, g->dH + k * vh, g->dscores,
                                 in->s_prev + k * vh, p, in->H + k * vh, v, 1, in->len, S, B, vh);
        break;
    case SCORE_GENERAL: /* forward: e_ij = s_{i-1}[k] . keys_j[k], keys = W_g h_j */
        attn_dot_scores_backward(g->ds_prev + k * ph, g->dkeys + k * ph, g->dscores,
                                 in->s_prev + k * ph, p, in->keys + k * ph, p, 1, in->len, S, B,
                                 ph);
        break;
    case SCORE_SCALED_DOT:
        /* forward: e_ij = q[k] . keys_j[k] / sqrt(a / H), q = W_q s_{i-1}, keys = W_k h_j */
        attn_dot_scores_backward(g->dquery + k * ah, g->dkeys + k * ah, g->dscores,
                                 step->query + k * ah, a, in->keys + k * ah, a,
                                 scaled_dot_scale(d), in->len, S, B, ah);
        break;
    case SCORE_NONE:
        break;
    }
}

void attn_step_backward(AttnGrads *g, AttnParams *G, const real *dc, int ld_dc,
                        const AttnStep *step, int pre_kept, const AttnParams *P,
                        const AttnDims *d, const AttnInput *in)
{
    const int H = d->heads, p = d->query_width, v = d->value_width, a = d->attn;
    const int S = in->S, B = in->B, rows = in->rows, vh = v / H;
    const size_t SB = (size_t)S * B;
    const AttnChoice *choice = in->choice;
    if (d->score == SCORE_NONE) { /* forward: c_i = fixed context, at every step */
        for (int b = 0; b < rows; b++)
            for (int u = 0; u < v; u++)
                g->dsummary[(size_t)b * v + u] += dc[(size_t)b * ld_dc + u];
        return;
    }
    for (int k = 0; k < H; k++) {
        const real *alpha = step->alpha + (size_t)k * SB;
        /* forward: c^k_i = sum_j alpha^k_ij h_j[k]; alpha^k_i = softmax(e^k_i) */
        attn_context_backward(g->dalpha, g->dH + k * vh, dc + k * vh, ld_dc, alpha, in->H + k * vh,
                              v, choice ? choice->soft_len : in->len, S, B, vh);
        if (g->dalign) /* forward: the alignment is (1/H) sum_k alpha^k */
            for (size_t x = 0; x < SB; x++)
                g->dalpha[x] += g->dalign[x] / (real)H;
        if (choice) { /* forward: c^k_i = h_{chosen}[k] in the choosing rows */
            attn_pick_backward(g->dH + k * vh, v, dc + k * vh, ld_dc, choice->chosen + k, H, B,
                               vh);
            if (g->entropy)
                attn_entropy_backward(g->dalpha, alpha, g->entropy, in->len, S, B);
        }
        attn_softmax_backward(g->dscores, g->dalpha, alpha, in->len, S, B);
        if (choice && g->reinforce)
            attn_log_prob_backward(g->dscores, alpha, g->reinforce, choice->chosen + k, H, in->len,
                                   S, B);
        head_scores_backward(g, G, step, pre_kept, P, d, in, k);
    }
    /* forward: q = s_{i-1} W^T (W_a or W_q), so ds_{i-1} (rows, p) += dq (rows, a) . W (a, p) */
    if (d->score == SCORE_ADDITIVE)
        matmul(CblasNoTrans, CblasNoTrans, rows, p, a, 1, g->dquery, a, P->W_a, p, 1, g->ds_prev, p);
    else if (d->score == SCORE_SCALED_DOT)
        matmul(CblasNoTrans, CblasNoTrans, rows, p, a, 1, g->dquery, a, P->W_q, p, 1, g->ds_prev, p);
}

void attn_queries_backward(AttnParams *G, const AttnDims *d, const real *dquery,
                           const real *states, int rows)
{
    const int p = d->query_width, a = d->attn;
    real *dW = d->score == SCORE_ADDITIVE ? G->W_a : d->score == SCORE_SCALED_DOT ? G->W_q : NULL;
    if (dW) /* dW (a, p) += dq^T (a, rows) . s (rows, p) */
        matmul(CblasTrans, CblasNoTrans, a, p, rows, 1, dquery, a, states, p, 1, dW, p);
}
