/* decode.h: translation with a trained model, step by step with the same equations as
 * training (model/MODEL.md): y_0 = <s>, and at every step the attention, the decoder's cell
 * and the readout, feeding back the chosen word. Buffers are sized once, at decoder_init,
 * for max_batch sentences of max_beam hypotheses each. Greedy decoding is here;
 * beam search (beam.h) drives decoder_step. */
#ifndef S2S_DECODE_H
#define S2S_DECODE_H

#include "model/batch.h"
#include "model/model.h"

/* The decoder's weights laid out for decoding's products, in panels (nn/ops.h
 * pack_panels, linear_forward_packed): a Transformer decoder's step weights of each layer
 * (nn/transformer_decoder.h); a recurrent decoder's attention query (W_a or W_q), input
 * and hidden projections (W_i, W_h), readout (W_t); and every decoder's output layer W_o.
 * Made once for weights that then stay as they are while decoders read them (s2s
 * translate's, bench's); a decoder without them multiplies by the Params' own through
 * BLAS (validation's, whose weights change between runs). The same products either way,
 * to float rounding; the packed ones sum each output in one order whatever the rows
 * beside it, as does the attention step they go with (model/attention.h
 * query_panels), so that rows may leave (decoder_rows_may_leave), and BLAS's copies of
 * W on every call are gone. */
typedef struct {
    TdecStepWeights layer[DEC_MAX_LAYERS];
    real *W_query, *W_i, *W_h, *W_t; /* a recurrent decoder's (W_query NULL without a query) */
    real *W_o;
    real *mem;
    size_t floats; /* in mem: every weight one row of a step multiplies by, once */
} DecodeWeights;

/* Makes them for the model of d. */
void decode_weights_make(DecodeWeights *w, const Dims *d, const Params *P);
void decode_weights_free(DecodeWeights *w); /* safe on a zeroed one */

typedef struct {
    Dims dims;
    const DecodeWeights *weights; /* NULL (decoder_init's): the Params' own */
    int max_batch, max_src_steps, max_rows; /* rows: hypotheses decoded side by side */
    Workspace enc;      /* forward-only workspace for the encoder */
    Arena arena;
    real *H_rows;       /* (S*rows, d_h) the encoder's annotations, per row */
    real *keys_rows;    /* (S*rows, K) the attention's keys per row (NULL when K = 0) */
    real *summary_rows; /* (rows, d_h) the fixed context of a model without attention
                         * weights (NULL otherwise) */
    int *src_len_rows;  /* (rows) */
    real *state, *next_state; /* (rows, p) s_{i-1}, s_i */
    real *cache, *next_cache; /* (rows, C p) the cell's caches (the LSTM's cell state) */
    real *query;        /* (rows, attention query width) */
    real *att_pre;      /* (S*rows, attention pre width) */
    real *scores;       /* (S*rows) */
    real *alpha_heads;  /* (H, S*rows) each head's attention at the current step; alpha
                         * itself with one head */
    real *alpha;        /* (S*rows) attention of the current step, alpha[j * rows + r]
                         * (all 0 for score none) */
    real *dec_in;       /* (rows, m + d_h) [ey_{i-1} ; c_i] */
    real *xg;           /* (rows, G p) */
    real *ro_in;        /* (rows, p + d_h + m) */
    real *ro_out;       /* (rows, l) */
    real *logits;       /* (rows, V_y) */
    int *prev;          /* (rows) y_{i-1} */
    int *done;          /* (rows) */
    /* argmax contexts (model/MODEL.md, "Hard attention"): each head reads its most probable
     * position instead of the weighted sum. 0 (soft) after decoder_init. */
    int argmax;
    unsigned char *every_row; /* (rows) all 1: every row chooses */
    int *no_len;        /* (rows) all 0: no row reads the weighted sum */
    int *chosen;        /* (rows, H) each head's position at the current step (argmax only) */
    real *gate;         /* (rows) the context gate's beta_i (NULL without the gate) */
    /* the Transformer decoder's: each layer's keys and values so far (positions 0 to
     * step - 1 of every row) and one step's buffers, in tcache_mem of its own (it grows
     * with the longest output asked for, decoder_reserve_steps); its input x (rows, m) */
    int step;
    TdecCache tcache;
    real *tcache_mem;
    real *x;
    double row_flops; /* decoder_row_flops of its model */
    double flops; /* the weight products' floating-point operations of every step taken
                   * (rows times row_flops; s2s bench --translate's share of the peak). 0
                   * after decoder_init. */
} Decoder;

/* The floating-point operations of one row's weight products in a decoder step (2 per
 * multiply-add): the products decoding cannot do without, whatever else it spends. */
double decoder_row_flops(const Dims *d);

/* Sizes a decoder for up to max_batch sentences of up to max_src_steps positions
 * (</s> included) and up to max_beam hypotheses each. decoder_free on a zeroed Decoder
 * is safe. */
void decoder_init(Decoder *dec, const Dims *d, int max_batch, int max_src_steps, int max_beam);
void decoder_free(Decoder *dec);
/* The bytes decoder_init would allocate for these sizes (its encoder's workspace
 * included), without allocating them. */
size_t decoder_bytes(const Dims *d, int max_batch, int max_src_steps, int max_beam);

/* Room for outputs of up to `steps` words (a Transformer decoder caches every position's
 * keys and values; a recurrent one needs no room). Outside the step loop: it may
 * allocate. decode_greedy and beam search call it with their limits. */
void decoder_reserve_steps(Decoder *dec, int steps);

/* Row r of the decoder's rows gets the encoder's output of sentence r / per_sentence
 * of the batch last encoded (dec->enc): annotations, keys, fixed context, source
 * length, s_0 and a zero cell state. Then y_0 = <s> for every row. */
void decoder_start(Decoder *dec, const Batch *batch, int per_sentence);

/* One decoder step for `rows` hypotheses over what decoder_start laid out: from s_{i-1}
 * (dec->state) and y_{i-1} (dec->prev) to s_i (dec->next_state), alpha_i (dec->alpha)
 * and the logits o_i (dec->logits); with dec->argmax, also dec->chosen. */
void decoder_step(Decoder *dec, const Params *P, int S, int rows);

/* Row r continues from row from[r] of the step just taken: next_state and next_cache
 * become state and cache, reordered (from NULL: every row from itself). */
void decoder_advance(Decoder *dec, const int *from, int rows);

/* Whether rows may leave the decoder's products (decoder_keep_rows) without changing
 * what the others compute: with packed weights (DecodeWeights), each row's every number
 * is a sum in a fixed order whatever the rows beside it. (BLAS's products are not: one
 * row takes its matrix-vector path, and a few rows its small-matrix kernels.) */
int decoder_rows_may_leave(const Decoder *dec);

/* Keeps rows keep[0..n) of the `rows` of the step just advanced (keep rising), as rows
 * 0..n): their sources, states, caches and last words; the others' sentences have ended. */
void decoder_keep_rows(Decoder *dec, const int *keep, int n, int rows, int S);

/* The most words a translation of a source of src_steps positions (</s> included) may
 * have: ratio * src_steps + extra (translate.max_output_ratio and max_output_extra). */
int decode_output_limit(int src_steps, double ratio, long extra);

/* Greedy decoding of a source-only batch. Writes sentence b's words (without </s>) to
 * out[b * max_out ...] and their number to out_len[b]; a sentence stops at </s> or
 * after max_out words. */
void decode_greedy(Decoder *dec, const Params *P, const Batch *batch, int max_out, int *out,
                   int *out_len);

#endif
