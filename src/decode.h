/* decode.h: translation with a trained model, step by step with the same equations as
 * training (MODEL.md): y_0 = <s>, and at every step the attention, the decoder GRU and
 * the readout, feeding back the chosen word. Buffers are sized once, at decoder_init. */
#ifndef S2S_DECODE_H
#define S2S_DECODE_H

#include "batch.h"
#include "model.h"

typedef struct {
    Dims dims;
    int max_batch, max_src_steps;
    Workspace enc;      /* forward-only workspace for the encoder */
    Arena arena;
    real *state, *next_state; /* (B, p) s_{i-1}, s_i */
    real *query;        /* (B, a) */
    real *att_pre;      /* (S*B, a) */
    real *scores;       /* (S*B) */
    real *alpha;        /* (S*B) attention of the current step */
    real *dec_in;       /* (B, m + 2n) [ey_{i-1} ; c_i] */
    real *xg;           /* (B, 3p) */
    real *gru_cache;    /* (B, 4p) */
    real *ro_in;        /* (B, p + 2n + m) */
    real *ro_out;       /* (B, l) */
    real *logits;       /* (B, V_y) */
    int *prev;          /* (B) y_{i-1} */
    int *done;          /* (B) */
} Decoder;

/* Sizes a decoder for up to max_batch sentences of up to max_src_steps positions
 * (</s> included). decoder_free on a zeroed Decoder is safe. */
void decoder_init(Decoder *dec, const Dims *d, int max_batch, int max_src_steps);
void decoder_free(Decoder *dec);

/* Greedy decoding of a source-only batch. Writes sentence b's words (without </s>) to
 * out[b * max_out ...] and their number to out_len[b]; a sentence stops at </s> or
 * after max_out words. */
void decode_greedy(Decoder *dec, const Params *P, const Batch *batch, int max_out, int *out,
                   int *out_len);

#endif
