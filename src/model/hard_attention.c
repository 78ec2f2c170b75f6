/* hard_attention.c: the model's side of hard attention (model/MODEL.md, "Hard attention"):
 * which sentences of a batch choose positions and the draws they choose with (before the
 * decoder), the rewards, baselines' advantages, statistics and the surrogate J (after
 * the output layer), and each step's surrogate weights for backward. The choosing itself
 * is the attention's (attention.h, AttnChoice). Never allocates. */
#include <math.h>
#include <string.h>

#include "nn/attn_kernels.h"
#include "model/model_pass.h"

/* A uniform double in [0, 1) from 32 bits of the stream. */
static double unit_draw(Pcg32 *rng)
{
    return pcg32_next(rng) * (1.0 / 4294967296.0);
}

int hard_contexts(const Workspace *ws)
{
    /* the Transformer decoder's attention is always soft (its contexts are its layers') */
    return ws->hard.mode != CONTEXT_SOFT && ws->dec.alpha && !model_is_transformer(&ws->dims);
}

/* Whether the pass trains by the surrogate (its REINFORCE and entropy terms). */
static int trains_surrogate(const Workspace *ws)
{
    return ws->hard.mode == CONTEXT_SAMPLE || ws->hard.mode == CONTEXT_GIVEN;
}

void hard_plan(Workspace *ws)
{
    const int B = ws->B, T = ws->T, H = ws->dims.heads;
    Pcg32 rng = ws->hard.rng; /* this pass's draws, the same every time it runs */
    switch (ws->hard.mode) {
    case CONTEXT_SAMPLE:
        /* first each sentence's coin (the expected context with probability
         * expected_prob), then a draw for every step, row and head, used or not: the
         * stream's use depends only on the batch's shape */
        for (int b = 0; b < B; b++)
            ws->hard_pass.rows[b] = !(unit_draw(&rng) < ws->hard.expected_prob);
        for (size_t k = 0; k < (size_t)T * B * H; k++)
            ws->hard_pass.draws[k] = unit_draw(&rng);
        break;
    case CONTEXT_ARGMAX:
        memset(ws->hard_pass.rows, 1, (size_t)B);
        break;
    case CONTEXT_GIVEN: /* hard_pass.rows and chosen as the last pass (or the caller) left them */
    case CONTEXT_SOFT:
        break;
    }
    for (int i = 0; i < T; i++)
        for (int b = 0; b < B; b++)
            ws->hard_pass.soft_len[(size_t)i * B + b] =
                ws->hard_pass.rows[b] ? 0 : ws->dec.step_len[(size_t)i * B + b];
}

AttnChoice hard_step_choice(const Workspace *ws, int i)
{
    const size_t B = (size_t)ws->B, H = (size_t)ws->dims.heads;
    return (AttnChoice){ws->hard_pass.rows, ws->hard_pass.soft_len + i * B,
                        ws->hard.mode == CONTEXT_SAMPLE ? ws->hard_pass.draws + i * B * H : NULL,
                        ws->hard.mode == CONTEXT_GIVEN, ws->hard_pass.chosen + i * B * H};
}

/* Head k's weights at step i: (S*B), row j * B + b. */
static const real *head_weights(const Workspace *ws, int i, int k)
{
    const size_t SB = (size_t)ws->S * ws->B;
    return ws->dec.alpha_heads + ((size_t)i * ws->dims.heads + k) * SB;
}

/* The surrogate's (R_s - b) or r_i for step i of sentence b. */
static double advantage_at(const Workspace *ws, int i, int b)
{
    const double *advantage = ws->hard_pass.advantage;
    return ws->hard.token_reward ? advantage[(size_t)i * ws->B + b] : advantage[b];
}

/* Whether step i of sentence b is one of its real target positions. */
static int real_step(const Workspace *ws, const Batch *bt, int i, int b)
{
    return b < ws->dec.active[i] && i < bt->tgt_len[b];
}

/* The rewards of the sentences that chose: R_s = sum of log p(y_i) over sentence s's
 * real tokens into hard_pass.stats, and with update the advantages the surrogate weighs,
 * R_s - b (sentence reward) or r_i = log p(y_i) - b_tok (token reward). */
static void collect_rewards(Workspace *ws, int update)
{
    const int B = ws->B, T = ws->T, N = ws->N;
    const HardAttention *h = &ws->hard;
    HardStats *st = &ws->hard_pass.stats;
    if (update) {
        if (h->token_reward)
            for (size_t k = 0; k < (size_t)T * B; k++)
                ws->hard_pass.advantage[k] = 0;
        else
            for (int b = 0; b < B; b++)
                ws->hard_pass.advantage[b] = 0;
    }
    for (int k = 0; k < N; k++) {
        const int b = ws->hard_pass.tok_sentence[k], i = ws->hard_pass.tok_step[k];
        const double logp = -ws->hard_pass.tok_nll[k];
        if (!ws->hard_pass.rows[b])
            continue;
        st->reward_sum += logp;
        st->sampled_tokens++;
        if (update) {
            if (h->token_reward)
                ws->hard_pass.advantage[(size_t)i * B + b] = logp - h->token_baseline;
            else
                ws->hard_pass.advantage[b] += logp;
        }
    }
    for (int b = 0; b < B; b++)
        if (ws->hard_pass.rows[b]) {
            st->sampled++;
            if (update && !h->token_reward)
                ws->hard_pass.advantage[b] -= h->baseline;
        }
}

double hard_objective(Workspace *ws, const Batch *bt, double ce_sum)
{
    const int B = ws->B, T = ws->T, H = ws->dims.heads;
    const double N = loss_tokens(ws); /* the loss's tokens: the whole batch's for a shard */
    const HardAttention *h = &ws->hard;
    HardStats *st = &ws->hard_pass.stats;
    const int surrogate = trains_surrogate(ws), freeze = surrogate && h->freeze_rewards;
    *st = (HardStats){.nll = ce_sum / N};
    collect_rewards(ws, !freeze && surrogate);
    /* the attention's entropy over every real step and head; the surrogate's terms on
     * the sentences that chose */
    double reinforce = 0, entropy = 0;
    for (int i = 0; i < T; i++)
        for (int b = 0; b < B; b++) {
            if (!real_step(ws, bt, i, b))
                continue;
            const int L = ws->dec.step_len[(size_t)i * B + b];
            const double adv = advantage_at(ws, i, b);
            for (int k = 0; k < H; k++) {
                const real *alpha = head_weights(ws, i, k);
                const double e = attn_entropy(alpha, b, B, L);
                st->entropy_sum += e;
                st->entropy_terms++;
                if (!surrogate || !ws->hard_pass.rows[b])
                    continue;
                const int j = ws->hard_pass.chosen[((size_t)i * B + b) * H + k];
                reinforce += adv * log((double)alpha[(size_t)j * B + b]);
                entropy += e;
            }
        }
    /* J = (1/N) sum_s [ - R_s - lambda_r (R_s - b) log p(path_s) - lambda_e H_s ] */
    st->surrogate = (ce_sum - h->reinforce_weight * reinforce - h->entropy_weight * entropy) / N;
    return surrogate ? st->surrogate : st->nll;
}

void hard_step_weights(Workspace *ws, const Batch *bt, int i)
{
    const int B = ws->B;
    const HardAttention *h = &ws->hard;
    const int surrogate = trains_surrogate(ws);
    for (int b = 0; b < B; b++) {
        real r = 0, e = 0;
        if (surrogate && ws->hard_pass.rows[b] && real_step(ws, bt, i, b)) {
            const double adv = advantage_at(ws, i, b);
            r = (real)(h->reinforce_weight * adv / loss_tokens(ws));
            e = (real)(h->entropy_weight / loss_tokens(ws));
        }
        ws->hard_pass.step_reinforce[b] = r;
        ws->hard_pass.step_entropy[b] = e;
    }
}
