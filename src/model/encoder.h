/* encoder.h: the seam between the source and the rest of the model. An encoder turns a
 * batch's source as it is (EncoderSource: token ids and their embedding table; an
 * image encoder's pixels) into annotations H (S x B x d_h, row j * B + b), says what
 * the decoder's first state s_0 is computed from, and gives the fixed context that
 * score none uses; backward takes the gradients of those back to its weights and to
 * the source's (the embedding table's). The decoder, the attention, beam search,
 * alignments, heatmaps and checkpoints see only this interface and d_h.
 *
 * An encoder is an EncoderOps table (encoder_birnn.c, encoder_attn.c, encoder_image.c);
 * encoder.c lists
 * them. A new one brings its file, its tensors and buffers (members of EncoderParams
 * and EncoderWork below) and one line in that list. Self-attention layers
 * (self_attention.h) are a part any encoder may put on top of what it computes. */
#ifndef S2S_ENCODER_H
#define S2S_ENCODER_H

#include <stddef.h>

#include "base/mem.h"
#include "base/rng.h"
#include "nn/cell.h"
#include "nn/embedding_grad.h"
#include "nn/real.h"
#include "nn/self_attention.h"
#include "nn/tensor.h"

/* Stacked bidirectional encoder layers at most, and the image encoder's conv blocks. */
#define MODEL_MAX_LAYERS 4
#define CONV_MAX_LAYERS 6

/* The image encoder's grid positions (model.grid_positions, model.grid_position_sines). */
typedef enum {
    GRID_POSITIONS_NONE,    /* h_j = a_j */
    GRID_POSITIONS_LEARNED, /* h_j = a_j + P_j, P learned (grid_P) */
    GRID_POSITIONS_SINES    /* h_j = a_j + the fixed sines of cell j's row and column */
} GridPositions;

typedef enum {
    ENCODER_BIRNN, /* the bidirectional recurrent encoder (encoder_birnn.c) */
    ENCODER_ATTN,  /* attention-only: positions and self-attention layers (encoder_attn.c) */
    ENCODER_IMAGE  /* pictures: conv blocks, a grid of cells (encoder_image.c) */
} EncoderKind;

/* What an encoder needs to know of the model's sizes. */
typedef struct {
    EncoderKind kind;
    int emb;    /* m: the source embeddings' width */
    int hidden; /* n: units per direction (bi-RNN) */
    int layers; /* stacked layers, 1 to MODEL_MAX_LAYERS */
    CellKind cell;
    SelfAttnDims sa; /* self-attention layers on top (sa.layers 0: none); sa.width is d_h */
    /* image: image_size x image_size pictures, conv_layers blocks of conv_channels[l]
     * channels each, and the grid cells' positions (a GridPositions) */
    int image_size, conv_layers, conv_channels[CONV_MAX_LAYERS], grid_positions;
} EncoderDims;

/* The batch's source as an encoder reads it: a text encoder's token ids and their
 * embedding table (it embeds them itself, encoder_embed_forward), an image encoder's
 * pixels. */
typedef struct {
    const int *ids;    /* (S*B) token ids, row j * B + b; TOK_PAD past a sentence's end */
    const real *table; /* (V_x, m) the source embeddings E_x */
    const int *len;    /* (B) each sentence's real positions (an image's: all S cells) */
    const float *pixels;/* (B, N, N, 3) the pictures as the batch holds them, channels
                         * last, channel means subtracted (NULL for text) */
} EncoderSource;

/* Where backward puts the source's gradient: E_x's, by rows (rows not NULL) or into the
 * dense table (accumulated). */
typedef struct {
    real *table;         /* (V_x, m) */
    EmbeddingGrad *rows;
} EncoderSourceGrad;

/* Every encoder's tensors; an encoder uses its own members, the rest stay NULL. */
typedef struct {
    /* bi-RNN: W_i (Gn, m; 2n above layer 0), W_h (Gn, n), b_i, b_h (Gn) per direction */
    CellParams fwd[MODEL_MAX_LAYERS], bwd[MODEL_MAX_LAYERS];
    /* image: each block's conv W (C_l, 9 C_{l-1}) and b (C_l); the grid positions P
     * (S, d_h), NULL without them */
    real *conv_W[CONV_MAX_LAYERS], *conv_b[CONV_MAX_LAYERS], *grid_P;
    SelfAttnParams sa[SA_MAX_LAYERS]; /* the self-attention layers, after the rest */
} EncoderParams;

/* An encoder's activations over one batch, carved from the model's arena. The first
 * block is what the rest of the model reads and writes; the others are the encoders'
 * own. */
typedef struct {
    int B, S;
    real *H;          /* (S*B, d_h) the annotations */
    const real *init; /* (B, init width), row stride ld_init: what s_0 is computed from */
    int ld_init;
    real *summary;    /* (B, d_h) the fixed context of score none (NULL unless asked) */
    /* backward: the model accumulates into these, the encoder takes them back */
    real *d_H;        /* (S*B, d_h) */
    real *d_init;     /* (B, init width), row stride ld_init (it may lie inside d_H) */
    real *d_summary;  /* (B, d_h) */
    /* what training adds: dropout on the source embeddings and in the self-attention
     * layers, masks drawn from rng (NULL: none) */
    Pcg32 *rng;
    double embedding_dropout, sa_dropout;
    /* a text encoder's first stage: the source embeddings after dropout ex (S*B, m),
     * dropout's factors mask_x (S*B, m; training only); backward writes the embeddings'
     * gradient over ex */
    real *ex, *mask_x;
    SelfAttnWork sa;  /* the self-attention layers' activations */
    const real *sa_in;/* (S*B, d_h) what the first self-attention layer reads (set by the
                       * encoder's forward; s2s explain shows it) */

    /* bi-RNN: per layer, each direction's input projections (S*B, G n) and cell caches
     * (S*B, C n), and [fwd_h ; bwd_h] (S*B, 2n); backward scratch */
    real *xg_fwd[MODEL_MAX_LAYERS], *xg_bwd[MODEL_MAX_LAYERS];
    real *cache_fwd[MODEL_MAX_LAYERS], *cache_bwd[MODEL_MAX_LAYERS];
    real *out[MODEL_MAX_LAYERS];
    real *d_top;      /* the top layer's gradient: d_H, or below self-attention its own */
    real *d_below, *d_carry;
    /* attention-only: X = sqrt(m) ex + PE (S*B, m); image: X = a + P (S*B, d_h); both:
     * the mean of H (B, d_h) */
    real *x, *mean;
    /* image, per block l over N_l x N_l pixels: its neighbourhoods cols (B N_l^2, 9
     * C_{l-1}), conv and relu out (B N_l^2, C_l), pooled (B N_l^2 / 4, C_l) and the pool's
     * choices; backward's scratch d_conv, d_pool and d_cols, each as large as the
     * largest of its kind */
    real *input;      /* (B, N, N, 3) the pictures in the core's precision */
    real *cols[CONV_MAX_LAYERS], *conv[CONV_MAX_LAYERS], *pool[CONV_MAX_LAYERS];
    int *pool_arg[CONV_MAX_LAYERS];
    real *d_conv, *d_pool, *d_cols;
} EncoderWork;

typedef struct {
    const char *name;
    /* d_h, and the width of what s_0 is computed from */
    int (*width)(const EncoderDims *d);
    int (*init_width)(const EncoderDims *d);
    /* 1: an LSTM decoder's cell state starts at c_0 = tanh(W_c init + b_c) (the model
     * then has W_c and b_c); 0: at 0 */
    int init_cell_state;
    void (*carve_params)(EncoderParams *p, TensorCarver *c, const EncoderDims *d);
    /* Carves w's buffers for (B, S) from ar (a counting arena measures); the summary
     * only with with_summary, backward's buffers only with with_backward. */
    void (*carve_work)(EncoderWork *w, Arena *ar, const EncoderDims *d, int B, int S,
                       int with_summary, int with_backward);
    /* Floats of the scratch backward borrows from the model (shared with the decoder's
     * recurrence: only one runs at a time). */
    size_t (*backward_scratch)(const EncoderDims *d, int B, int S);
    /* From the batch's source to the annotations H, init and the summary. */
    void (*forward)(EncoderWork *w, const EncoderParams *P, const EncoderDims *d,
                    const EncoderSource *src);
    /* Once the attention's gradient is in d_H and d_summary and before anything
     * accumulates into d_init: takes them back as far as d_init lies (through the
     * self-attention layers, whose weights' gradients go to G). */
    void (*annotations_backward)(EncoderParams *G, EncoderWork *w, const EncoderParams *P,
                                 const EncoderDims *d, const int *len);
    /* From d_H (d_init included) to the weights' gradients (accumulated into G) and to
     * the source's (into gsrc). */
    void (*backward)(EncoderParams *G, EncoderWork *w, const EncoderParams *P,
                     const EncoderDims *d, const EncoderSource *src,
                     const EncoderSourceGrad *gsrc, real *scratch);
} EncoderOps;

/* The encoder of kind d->kind. */
const EncoderOps *encoder_ops(const EncoderDims *d);

/* The image encoder's fixed position of cell j of a G x G grid (row j / G, column j % G),
 * entry u of d_h: the first d_h / 2 entries are the Transformer's sinusoidal position of
 * the row (sinusoid_position at width d_h / 2), the others the column's (at the width
 * left). */
double grid_sine(int G, int j, int u, int d_h);

/* The text encoders' first stage (encoder.c): carving ex and mask_x (first, so that the
 * arena's layout is the one the model had), ex = the ids' embeddings with dropout
 * (w->rng, w->embedding_dropout), and back: d_ex (S*B, m, in ex's memory, overwritten)
 * through the dropout into gsrc. */
void encoder_carve_embeddings(EncoderWork *w, Arena *ar, const EncoderDims *d, int B, int S,
                              int with_backward);
void encoder_embed_forward(EncoderWork *w, const EncoderDims *d, const EncoderSource *src);
void encoder_embed_backward(EncoderWork *w, const EncoderDims *d, const EncoderSource *src,
                            const EncoderSourceGrad *gsrc);

/* For the encoders whose s_0 comes from the mean of the annotations (attention-only,
 * image): w->mean (B, d_h) = the mean of H's rows over each sentence's len[b] real
 * positions; the EncoderOps annotations_backward that starts d_init from the fixed
 * context's gradient (the same mean); and d_H += the mean's gradient, taken from d_init,
 * before the layers' backward. */
void encoder_mean_forward(EncoderWork *w, int d_h, const int *len);
void encoder_mean_annotations_backward(EncoderParams *G, EncoderWork *w, const EncoderParams *P,
                                       const EncoderDims *d, const int *len);
void encoder_mean_backward(EncoderWork *w, int d_h, const int *len);
/* backward_scratch of an encoder that borrows none. */
size_t encoder_no_scratch(const EncoderDims *d, int B, int S);

#endif
