/* model_fixture.c: the fixture batch shared by the model tests (see model_fixture.h). */
#include "support/model_fixture.h"

static const int SRC0[] = {4, 5, 6, 7}, SRC1[] = {8}, SRC2[] = {5, 4, 4};
static const int TGT0[] = {4, 5}, TGT1[] = {6, 7, 4, 6}, TGT2[] = {7, 5, 7};
static const int *const SRCS[] = {SRC0, SRC1, SRC2}, *const TGTS[] = {TGT0, TGT1, TGT2};
static const int SRC_N[] = {4, 1, 3}, TGT_N[] = {2, 4, 3};

Dims fixture_dims(void)
{
    return (Dims){.src_vocab = 9, .tgt_vocab = 8, .emb = 3, .enc_hidden = 4,
                  .dec_hidden = 5, .attn = 5, .readout = 4, .enc_layers = 1};
}

const ModelVariant FIXTURE_VARIANTS[FIXTURE_N_VARIANTS] = {
    {"additive attention, GRU", SCORE_ADDITIVE, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"dot attention", SCORE_DOT, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"general attention", SCORE_GENERAL, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"scaled_dot attention", SCORE_SCALED_DOT, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"no attention", SCORE_NONE, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"LSTM encoder and decoder", SCORE_ADDITIVE, CELL_LSTM, CELL_LSTM, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"tanh RNN encoder and decoder", SCORE_ADDITIVE, CELL_RNN, CELL_RNN, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"2 LSTM encoder layers, GRU decoder", SCORE_ADDITIVE, CELL_LSTM, CELL_GRU, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"3 GRU encoder layers, LSTM decoder, scaled_dot", SCORE_SCALED_DOT, CELL_GRU, CELL_LSTM, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"label smoothing 0.1", SCORE_ADDITIVE, CELL_GRU, CELL_GRU, 1, 0, 0, 0.1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"additive, 2 heads", SCORE_ADDITIVE, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"additive, 4 heads", SCORE_ADDITIVE, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"dot, 4 heads", SCORE_DOT, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"general, 2 heads", SCORE_GENERAL, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"scaled_dot, 4 heads", SCORE_SCALED_DOT, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"2 self-attention layers (2 heads)", SCORE_ADDITIVE, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 1, 2, 2, 0, 0, 0, 0, 0, 0, 0},
    {"1 self-attention layer (4 heads), LSTM, general, 2 heads", SCORE_GENERAL, CELL_LSTM, CELL_LSTM, 1, 0, 0, 0, 2, 1, 4, 0, 0, 0, 0, 0, 0, 0},
    {"attention-only encoder, 2 layers (2 heads)", SCORE_ADDITIVE, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 1, 2, 2, 0, 1, 0, 0, 0, 0, 0},
    {"attention-only encoder, LSTM decoder, dot, 2 heads", SCORE_DOT, CELL_GRU, CELL_LSTM, 1, 0, 0, 0, 2, 1, 2, 0, 1, 0, 0, 0, 0, 0},
    {"attention-only encoder, LSTM decoder, no attention", SCORE_NONE, CELL_GRU, CELL_LSTM, 1, 0, 0, 0, 1, 1, 3, 0, 1, 0, 0, 0, 0, 0},
    {"embedding dropout 0.3, readout dropout 0.4", SCORE_ADDITIVE, CELL_GRU, CELL_GRU, 1, 0.3, 0.4, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"general, RNN/LSTM, 2 layers, dropout, smoothing", SCORE_GENERAL, CELL_RNN, CELL_LSTM, 2, 0.2, 0.3, 0.2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"additive, 4 heads, LSTM, dropout", SCORE_ADDITIVE, CELL_LSTM, CELL_LSTM, 1, 0.2, 0.3, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"2 self-attention layers, LSTM, every dropout", SCORE_SCALED_DOT, CELL_LSTM, CELL_LSTM, 1, 0.2, 0.3, 0, 1, 2, 2, 0.3, 0, 0, 0, 0, 0, 0},
    {"attention-only encoder, LSTM decoder, every dropout", SCORE_GENERAL, CELL_GRU, CELL_LSTM, 1, 0.2, 0.3, 0.1, 1, 2, 2, 0.3, 1, 0, 0, 0, 0, 0},
    {"hard attention, sentence reward, entropy, baseline", SCORE_ADDITIVE, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.5, 0.3, -2.5},
    {"hard attention, every sentence sampled, 2 heads, LSTM", SCORE_ADDITIVE, CELL_LSTM, CELL_LSTM, 1, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0, 0, 0.2, 1.5},
    {"hard attention, token reward, dot, 4 heads", SCORE_DOT, CELL_GRU, CELL_GRU, 1, 0, 0, 0, 4, 0, 0, 0, 0, 1, 1, 0.3, 0.1, -1},
    {"hard attention, self-attention layer, dropout, smoothing", SCORE_SCALED_DOT, CELL_GRU, CELL_LSTM, 1, 0.2, 0.3, 0.1, 2, 1, 2, 0.3, 0, 1, 0, 0.4, 0.05, -3},
};

Dims fixture_variant_dims(int v)
{
    const ModelVariant *x = &FIXTURE_VARIANTS[v];
    Dims d = fixture_dims();
    d.score = x->score;
    d.enc_cell = x->enc_cell;
    d.dec_cell = x->dec_cell;
    d.enc_layers = x->enc_layers;
    d.heads = x->heads > 0 ? x->heads : 1;
    if (x->score == SCORE_DOT)
        d.dec_hidden = 2 * d.enc_hidden;
    if (d.heads > 1)
        d.dec_hidden = d.attn = 2 * d.enc_hidden;
    if (x->attention_only) { /* d_h = m: even, and split by 2 heads */
        d.encoder = ENCODER_ATTN;
        d.emb = 6;
        if (x->score == SCORE_DOT)
            d.dec_hidden = d.emb;
    }
    d.sa_layers = x->sa_layers;
    d.sa_heads = x->sa_heads;
    d.sa_ffn = 6;
    d.hard = x->hard;
    return d;
}

Regularization fixture_variant_regularization(int v, uint64_t seed)
{
    const ModelVariant *x = &FIXTURE_VARIANTS[v];
    Regularization r = {.embedding_dropout = x->embedding_dropout,
                        .readout_dropout = x->readout_dropout,
                        .self_attention_dropout = x->sa_dropout,
                        .label_smoothing = x->label_smoothing};
    pcg32_seed(&r.rng, seed, RNG_STREAM_DROPOUT);
    return r;
}

HardAttention fixture_variant_hard(int v, uint64_t seed)
{
    const ModelVariant *x = &FIXTURE_VARIANTS[v];
    if (!x->hard)
        return (HardAttention){.mode = CONTEXT_SOFT};
    HardAttention h = {.mode = CONTEXT_SAMPLE, .expected_prob = x->expected_prob,
                       .reinforce_weight = 1, .entropy_weight = x->entropy_weight,
                       .token_reward = x->token_reward, .baseline = x->baseline,
                       .token_baseline = x->baseline / 4};
    pcg32_seed(&h.rng, seed, RNG_STREAM_HARD);
    return h;
}

void fixture_batch(Batch *bt)
{
    batch_init(bt, 3, 5, 5);
    batch_fill(bt, 3, (const int *const *)SRCS, SRC_N, (const int *const *)TGTS, TGT_N);
}

void fixture_single(Batch *bt, int b)
{
    batch_init(bt, 1, 5, 5);
    batch_fill(bt, 1, (const int *const *)&SRCS[b], &SRC_N[b], (const int *const *)&TGTS[b],
               &TGT_N[b]);
}
