/* model_fixture.h: the tiny model and batch shared by the model tests in both
 * precisions, and the bridge from the float tests to the double build. Only
 * precision-free types cross it. */
#ifndef S2S_TEST_MODEL_FIXTURE_H
#define S2S_TEST_MODEL_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "model/batch.h"
#include "model/model.h"

/* The gradient-check sizes: m=3, n=4, p=5, a=5, l=4, V_x=9, V_y=8. */
Dims fixture_dims(void);
/* A variant of the fixture model, named by what differs from the default model:
 * additive attention, the bidirectional GRU encoder of 1 layer, a GRU decoder, 1 head, no
 * self-attention layer, no dropout or label smoothing, soft attention. A field left 0
 * means its default (fixture_variant fills them in), so that an entry of the table reads
 * as its differences: {.name = "dot, 4 heads", .score = SCORE_DOT, .heads = 4}. */
typedef struct {
    const char *name;
    ScoreKind score;
    EncoderKind encoder;     /* ENCODER_ATTN, attention-only: m = 6, no recurrent encoder;
                              * ENCODER_IMAGE: 8 x 8 pictures, conv blocks of 3 and 4
                              * channels, a 2 x 2 grid (d_h = 4) */
    int no_grid_positions;   /* image: without the learned grid positions */
    int grid_sines;          /* image: fixed sines as the grid positions, not learned ones */
    int context_gate;        /* beta_i scales the context */
    int tie_output;          /* W_o is E_y, and l = m = 3 */
    int share_embeddings;    /* E_x is E_y, and V_y = V_x = 9 */
    double doubly_stochastic;/* lambda of the doubly stochastic term */
    double attention_supervision; /* its lambda, on the fixture's word cells (image) */
    CellKind enc_cell, dec_cell;
    int enc_layers;          /* 0: 1 */
    int heads;               /* attention heads; 0: 1 */
    int sa_layers, sa_heads; /* self-attention layers (feed-forward width 6); heads 0: 4 */
    int dec_layers;          /* > 0: the Transformer decoder of that many layers (FFN width
                              * 5, m = 4 or with the attention-only encoder 6; `heads`
                              * its heads) */
    double embedding_dropout, readout_dropout, sa_dropout, label_smoothing;
    /* hard attention (model.attention_mode hard), trained by its surrogate with lambda_r
     * 1 and b_tok = b / 4: */
    int hard, token_reward;
    double expected_prob, entropy_weight, baseline;
} ModelVariant;

/* The variants every whole-model check runs over: the default, each attention score,
 * each cell, deeper encoders, the image encoder, the context gate, the tied output layer,
 * shared embeddings, and training's label smoothing, dropout and doubly stochastic term. The ones from FIXTURE_FIRST_DROPOUT on
 * draw from a stream (dropout's masks, hard attention's samples) in a way that depends
 * on the batch's layout, or (the doubly stochastic term) weigh captions, not tokens, so
 * checks that compare layouts leave them out. */
enum { FIXTURE_N_VARIANTS = 50, FIXTURE_FIRST_DROPOUT = 35, FIXTURE_IMAGE_SIZE = 8 };
/* Variant v (0 to FIXTURE_N_VARIANTS - 1), its defaults filled in. */
ModelVariant fixture_variant(int v);
/* fixture_dims with variant v's architecture (for dot, p = 2n = 8; with heads, a = p = 8,
 * so that 2 and 4 heads split every vector evenly; d_h = 8 for the self-attention
 * layers' heads to split; attention-only, m = d_h = 6, and p = 6 for dot). */
Dims fixture_variant_dims(int v);
/* Variant v's regularization, its masks drawn from a stream of seed. */
Regularization fixture_variant_regularization(int v, uint64_t seed);
/* Variant v's hard-attention training settings (mode CONTEXT_SAMPLE, draws from a stream
 * of seed), or mode CONTEXT_SOFT for a soft variant. */
HardAttention fixture_variant_hard(int v, uint64_t seed);

/* Three pairs whose lengths differ on both sides (so the batch has source and target
 * padding in different places): sources of 4, 1, 3 words, targets of 2, 4, 3; for an
 * image model (d), three pictures of FIXTURE_IMAGE_SIZE pixels with those targets.
 * An image batch has its words' cells too (Batch.ground, for attention supervision):
 * words that name nothing, one cell and two cells, fixed per pair.
 * Allocates the batch (batch_free it). */
void fixture_batch(Batch *bt, const Dims *d);
/* Sentence b of the fixture alone, as a batch of one. */
void fixture_single(Batch *bt, const Dims *d, int b);

/* Computed by the double build: the loss of batch under params (n doubles, in
 * Params tensor order) and its gradient into grads (n doubles). */
double model_loss_and_gradients_f64(const Dims *d, const Batch *bt, const double *params,
                                    double *grads, size_t n);

#endif
