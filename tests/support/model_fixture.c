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

static const ModelVariant VARIANTS[] = {
    {.name = "additive attention, GRU"},
    {.name = "dot attention", .score = SCORE_DOT},
    {.name = "general attention", .score = SCORE_GENERAL},
    {.name = "scaled_dot attention", .score = SCORE_SCALED_DOT},
    {.name = "no attention", .score = SCORE_NONE},
    {.name = "LSTM encoder and decoder", .enc_cell = CELL_LSTM, .dec_cell = CELL_LSTM},
    {.name = "tanh RNN encoder and decoder", .enc_cell = CELL_RNN, .dec_cell = CELL_RNN},
    {.name = "2 LSTM encoder layers, GRU decoder", .enc_cell = CELL_LSTM, .enc_layers = 2},
    {.name = "3 GRU encoder layers, LSTM decoder, scaled_dot", .score = SCORE_SCALED_DOT,
     .dec_cell = CELL_LSTM, .enc_layers = 3},
    {.name = "label smoothing 0.1", .label_smoothing = 0.1},
    {.name = "additive, 2 heads", .heads = 2},
    {.name = "additive, 4 heads", .heads = 4},
    {.name = "dot, 4 heads", .score = SCORE_DOT, .heads = 4},
    {.name = "general, 2 heads", .score = SCORE_GENERAL, .heads = 2},
    {.name = "scaled_dot, 4 heads", .score = SCORE_SCALED_DOT, .heads = 4},
    {.name = "2 self-attention layers (2 heads)", .sa_layers = 2, .sa_heads = 2},
    {.name = "1 self-attention layer (4 heads), LSTM, general, 2 heads", .score = SCORE_GENERAL,
     .enc_cell = CELL_LSTM, .dec_cell = CELL_LSTM, .heads = 2, .sa_layers = 1},
    {.name = "attention-only encoder, 2 layers (2 heads)", .encoder = ENCODER_ATTN,
     .sa_layers = 2, .sa_heads = 2},
    {.name = "attention-only encoder, LSTM decoder, dot, 2 heads", .score = SCORE_DOT,
     .encoder = ENCODER_ATTN, .dec_cell = CELL_LSTM, .heads = 2, .sa_layers = 1, .sa_heads = 2},
    {.name = "attention-only encoder, LSTM decoder, no attention", .score = SCORE_NONE,
     .encoder = ENCODER_ATTN, .dec_cell = CELL_LSTM, .sa_layers = 1, .sa_heads = 3},
    {.name = "image encoder (conv blocks 3, 4; grid positions)", .encoder = ENCODER_IMAGE},
    {.name = "image encoder, no grid positions, LSTM decoder, dot, 2 heads", .score = SCORE_DOT,
     .encoder = ENCODER_IMAGE, .no_grid_positions = 1, .dec_cell = CELL_LSTM, .heads = 2},
    {.name = "image encoder, context gate, 1 self-attention layer, general", .encoder = ENCODER_IMAGE,
     .score = SCORE_GENERAL, .context_gate = 1, .sa_layers = 1, .sa_heads = 2},
    {.name = "image encoder, no attention (the mean cell)", .encoder = ENCODER_IMAGE,
     .score = SCORE_NONE, .dec_cell = CELL_LSTM},
    {.name = "context gate, scaled_dot, 2 heads", .score = SCORE_SCALED_DOT, .heads = 2,
     .context_gate = 1},
    {.name = "image encoder, attention supervision 0.8, 2 heads", .encoder = ENCODER_IMAGE,
     .heads = 2, .attention_supervision = 0.8},
    {.name = "output tied to E_y (l = m)", .tie_output = 1},
    {.name = "Transformer decoder, 1 layer, GRU encoder", .dec_layers = 1},
    {.name = "Transformer decoder, 2 layers (2 heads), LSTM encoder, 1 self-attention layer",
     .dec_layers = 2, .heads = 2, .enc_cell = CELL_LSTM, .sa_layers = 1, .sa_heads = 2},
    {.name = "the whole Transformer: attention-only encoder, 2 + 2 layers (3 heads)",
     .encoder = ENCODER_ATTN, .sa_layers = 2, .sa_heads = 2, .dec_layers = 2, .heads = 3},
    {.name = "image encoder, Transformer decoder (2 heads)", .encoder = ENCODER_IMAGE,
     .dec_layers = 1, .heads = 2},
    {.name = "Transformer decoder, output tied to E_y, label smoothing", .dec_layers = 1,
     .tie_output = 1, .label_smoothing = 0.1},
    {.name = "image encoder, fixed grid sines, 1 self-attention layer", .encoder = ENCODER_IMAGE,
     .grid_sines = 1, .sa_layers = 1, .sa_heads = 2},
    {.name = "source embeddings shared with E_y (E_x is E_y, V_x = V_y)", .share_embeddings = 1},
    {.name = "the whole Transformer, 2 + 2 layers (2 heads), E_x and W_o both E_y",
     .encoder = ENCODER_ATTN, .sa_layers = 2, .sa_heads = 2, .dec_layers = 2, .heads = 2,
     .share_embeddings = 1, .tie_output = 1},
    /* FIXTURE_FIRST_DROPOUT: from here on, draws that depend on the batch's layout */
    {.name = "embedding dropout 0.3, readout dropout 0.4", .embedding_dropout = 0.3,
     .readout_dropout = 0.4},
    {.name = "general, RNN/LSTM, 2 layers, dropout, smoothing", .score = SCORE_GENERAL,
     .enc_cell = CELL_RNN, .dec_cell = CELL_LSTM, .enc_layers = 2, .embedding_dropout = 0.2,
     .readout_dropout = 0.3, .label_smoothing = 0.2},
    {.name = "additive, 4 heads, LSTM, dropout", .enc_cell = CELL_LSTM, .dec_cell = CELL_LSTM,
     .heads = 4, .embedding_dropout = 0.2, .readout_dropout = 0.3},
    {.name = "2 self-attention layers, LSTM, every dropout", .score = SCORE_SCALED_DOT,
     .enc_cell = CELL_LSTM, .dec_cell = CELL_LSTM, .sa_layers = 2, .sa_heads = 2,
     .embedding_dropout = 0.2, .readout_dropout = 0.3, .sa_dropout = 0.3},
    {.name = "attention-only encoder, LSTM decoder, every dropout", .score = SCORE_GENERAL,
     .encoder = ENCODER_ATTN, .dec_cell = CELL_LSTM, .sa_layers = 2, .sa_heads = 2,
     .embedding_dropout = 0.2, .readout_dropout = 0.3, .sa_dropout = 0.3,
     .label_smoothing = 0.1},
    {.name = "hard attention, sentence reward, entropy, baseline", .hard = 1,
     .expected_prob = 0.5, .entropy_weight = 0.3, .baseline = -2.5},
    {.name = "hard attention, every sentence sampled, 2 heads, LSTM", .enc_cell = CELL_LSTM,
     .dec_cell = CELL_LSTM, .heads = 2, .hard = 1, .entropy_weight = 0.2, .baseline = 1.5},
    {.name = "hard attention, token reward, dot, 4 heads", .score = SCORE_DOT, .heads = 4,
     .hard = 1, .token_reward = 1, .expected_prob = 0.3, .entropy_weight = 0.1, .baseline = -1},
    {.name = "hard attention, self-attention layer, dropout, smoothing", .score = SCORE_SCALED_DOT,
     .dec_cell = CELL_LSTM, .heads = 2, .sa_layers = 1, .sa_heads = 2, .embedding_dropout = 0.2,
     .readout_dropout = 0.3, .sa_dropout = 0.3, .label_smoothing = 0.1, .hard = 1,
     .expected_prob = 0.4, .entropy_weight = 0.05, .baseline = -3},
    {.name = "doubly stochastic 0.7, additive, 2 heads", .heads = 2, .doubly_stochastic = 0.7},
    {.name = "image encoder, gate, doubly stochastic 1, dropout, smoothing", .encoder = ENCODER_IMAGE,
     .context_gate = 1, .doubly_stochastic = 1, .embedding_dropout = 0.2, .readout_dropout = 0.3,
     .label_smoothing = 0.1},
    {.name = "image encoder, hard attention, doubly stochastic 0.5, supervision 0.6, self-attention dropout",
     .encoder = ENCODER_IMAGE, .sa_layers = 1, .sa_heads = 2, .sa_dropout = 0.3, .hard = 1,
     .expected_prob = 0.4, .entropy_weight = 0.05, .baseline = -3, .doubly_stochastic = 0.5,
     .attention_supervision = 0.6},
    {.name = "output tied to E_y, LSTM, embedding and readout dropout, smoothing",
     .tie_output = 1, .enc_cell = CELL_LSTM, .dec_cell = CELL_LSTM, .embedding_dropout = 0.3,
     .readout_dropout = 0.2, .label_smoothing = 0.1},
    {.name = "the whole Transformer, 2 + 2 layers (2 heads), every dropout, smoothing",
     .encoder = ENCODER_ATTN, .sa_layers = 2, .sa_heads = 2, .dec_layers = 2, .heads = 2,
     .embedding_dropout = 0.2, .readout_dropout = 0.3, .sa_dropout = 0.3,
     .label_smoothing = 0.1},
    {.name = "Transformer decoder, 2 layers, GRU encoder, dropout", .dec_layers = 2,
     .embedding_dropout = 0.3, .sa_dropout = 0.4},
};
_Static_assert(sizeof VARIANTS / sizeof VARIANTS[0] == FIXTURE_N_VARIANTS,
               "FIXTURE_N_VARIANTS counts the table");

ModelVariant fixture_variant(int v)
{
    ModelVariant x = VARIANTS[v];
    /* the defaults whose value is not 0 */
    if (x.enc_layers == 0)
        x.enc_layers = 1;
    if (x.heads == 0)
        x.heads = 1;
    if (x.sa_heads == 0)
        x.sa_heads = 4;
    return x;
}

Dims fixture_variant_dims(int v)
{
    const ModelVariant x = fixture_variant(v);
    Dims d = fixture_dims();
    d.score = x.score;
    d.encoder = x.encoder;
    d.enc_cell = x.enc_cell;
    d.dec_cell = x.dec_cell;
    d.enc_layers = x.enc_layers;
    d.heads = x.heads;
    if (x.score == SCORE_DOT)
        d.dec_hidden = 2 * d.enc_hidden;
    if (d.heads > 1)
        d.dec_hidden = d.attn = 2 * d.enc_hidden;
    if (x.encoder == ENCODER_ATTN) { /* d_h = m: even, and split by 2 heads */
        d.emb = 6;
        if (x.score == SCORE_DOT)
            d.dec_hidden = d.emb;
    }
    if (x.encoder == ENCODER_IMAGE) { /* 8 x 8 pictures, a 2 x 2 grid of d_h = 4 */
        d.image_size = FIXTURE_IMAGE_SIZE;
        d.conv_layers = 2;
        d.conv_channels[0] = 3, d.conv_channels[1] = 4;
        d.grid_positions = x.no_grid_positions ? GRID_POSITIONS_NONE
                           : x.grid_sines      ? GRID_POSITIONS_SINES
                                               : GRID_POSITIONS_LEARNED;
        d.src_vocab = N_SPECIAL_TOKENS;
        if (x.score == SCORE_DOT)
            d.dec_hidden = 4;
    }
    if (x.dec_layers > 0) { /* m = 4 (6 attention-only): even, for the positions' pairs */
        d.decoder = DECODER_TRANSFORMER;
        d.dec_layers = x.dec_layers;
        d.dec_ffn = 5;
        if (x.encoder != ENCODER_ATTN)
            d.emb = 4;
        d.readout = d.emb;
    }
    d.context_gate = x.context_gate;
    d.sa_layers = x.sa_layers;
    d.sa_heads = x.sa_heads;
    d.sa_ffn = 6;
    d.hard = x.hard;
    d.tie_output = x.tie_output;
    if (x.tie_output)
        d.readout = d.emb;
    d.share_embeddings = x.share_embeddings;
    if (x.share_embeddings) /* one vocabulary: the source's, which holds the target's ids */
        d.tgt_vocab = d.src_vocab;
    return d;
}

Regularization fixture_variant_regularization(int v, uint64_t seed)
{
    const ModelVariant x = fixture_variant(v);
    Regularization r = {.embedding_dropout = x.embedding_dropout,
                        .readout_dropout = x.readout_dropout,
                        .self_attention_dropout = x.sa_dropout,
                        .label_smoothing = x.label_smoothing,
                        .doubly_stochastic = x.doubly_stochastic,
                        .attention_supervision = x.attention_supervision};
    pcg32_seed(&r.rng, seed, RNG_STREAM_DROPOUT);
    return r;
}

HardAttention fixture_variant_hard(int v, uint64_t seed)
{
    const ModelVariant x = fixture_variant(v);
    if (!x.hard)
        return (HardAttention){.mode = CONTEXT_SOFT};
    HardAttention h = {.mode = CONTEXT_SAMPLE, .expected_prob = x.expected_prob,
                       .reinforce_weight = 1, .entropy_weight = x.entropy_weight,
                       .token_reward = x.token_reward, .baseline = x.baseline,
                       .token_baseline = x.baseline / 4};
    pcg32_seed(&h.rng, seed, RNG_STREAM_HARD);
    return h;
}

/* The captions' pictures: uniform in [-0.5, 0.5), as pictures less their channel means. */
static void fixture_pictures(Batch *bt, int first, int n)
{
    Pcg32 rng;
    pcg32_seed(&rng, 17, 1);
    const size_t one = (size_t)FIXTURE_IMAGE_SIZE * FIXTURE_IMAGE_SIZE * 3;
    for (int b = 0; b < first + n; b++)
        for (size_t k = 0; k < one; k++) {
            const float v = (float)pcg32_uniform(&rng, -0.5, 0.5);
            if (b >= first)
                bt->pixels[(b - first) * one + k] = v;
        }
}

/* The words' cells of captions first to first + n - 1 on the 2 x 2 grid: word i of
 * caption k names nothing when (k + i) % 3 is 0, else cell (k + 2 i) % 4, and when
 * (k + i) % 3 is 2 cell (k + 2 i + 1) % 4 too; </s> and the padding name nothing. */
static void fixture_ground(Batch *bt, int first, int n)
{
    const int cells = 4;
    batch_init_ground(bt, cells);
    for (int i = 0; i < bt->tgt_steps; i++)
        for (int b = 0; b < n; b++) {
            unsigned char *out = bt->ground + ((size_t)i * n + b) * cells;
            const int k = first + b;
            memset(out, 0, cells);
            if (i >= TGT_N[k] || (k + i) % 3 == 0)
                continue;
            out[(k + 2 * i) % 4] = 1;
            if ((k + i) % 3 == 2)
                out[(k + 2 * i + 1) % 4] = 1;
        }
}

/* Captions first to first + n - 1 of the fixture, for the model of d. */
static void fixture_pairs(Batch *bt, const Dims *d, int first, int n)
{
    if (d->encoder == ENCODER_IMAGE) {
        const int G = model_grid_side(d);
        batch_init(bt, n, 5, 5);
        batch_init_pictures(bt, d->image_size);
        batch_fill_pictures(bt, n, G * G, (const int *const *)&TGTS[first], &TGT_N[first]);
        fixture_pictures(bt, first, n);
        fixture_ground(bt, first, n);
        return;
    }
    batch_init(bt, n, 5, 5);
    batch_fill(bt, n, (const int *const *)&SRCS[first], &SRC_N[first],
               (const int *const *)&TGTS[first], &TGT_N[first]);
}

void fixture_batch(Batch *bt, const Dims *d)
{
    fixture_pairs(bt, d, 0, 3);
}

void fixture_single(Batch *bt, const Dims *d, int b)
{
    fixture_pairs(bt, d, b, 1);
}
