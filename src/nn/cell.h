/* cell.h: the recurrent cells of the encoder and the decoder behind one interface --
 * GRU (gru.h), LSTM (lstm.h) and the plain tanh RNN (rnn_tanh.h), each in torch.nn's
 * gate layout -- and masked sequences of any of them, forwards or backwards in time.
 *
 * A cell of H units has G = cell_gates(kind) gate blocks: W_i (G*H, in), W_h (G*H, H),
 * b_i and b_h (G*H), as torch.nn.GRU/LSTM/RNN store them. Input projections
 * xg = x W_i^T + b_i (G*H wide) come precomputed for all positions in one gemm. A step
 * keeps a cache of cell_cache_width(kind) * H per row; the LSTM's cell state lives in
 * it, so steps pass the previous step's cache along with the previous h. Masking: with
 * len, row b takes part in step t only if t < len[b]; other rows get h = 0 and a zero
 * cache, and receive zero gradients. */
#ifndef S2S_CELL_H
#define S2S_CELL_H

#include "nn/real.h"

typedef enum { CELL_GRU, CELL_LSTM, CELL_RNN } CellKind;
#define N_CELLS 3

/* The cells' names in CellKind order, NULL-terminated: "gru", "lstm", "rnn". */
extern const char *const cell_names[N_CELLS + 1];

typedef struct {
    real *W_i; /* (G*H, in) */
    real *W_h; /* (G*H, H) */
    real *b_i; /* (G*H) */
    real *b_h; /* (G*H) */
} CellParams;

/* Gate blocks G: 3 (GRU: r z g), 4 (LSTM: i f g o), 1 (RNN). */
int cell_gates(CellKind kind);
/* Cache floats per unit of one step: 4 (GRU: r z hn g), 6 (LSTM: i f g o c tanh c), 1. */
int cell_cache_width(CellKind kind);
/* Where the LSTM's cell state lies in a step's cache, in units of H (only the LSTM has
 * one). */
int cell_state_offset(CellKind kind);
/* cell_names[kind]. */
const char *cell_name(CellKind kind);

/* One step. xg (B, G*H) row stride ld_xg; h_prev (B, H) row stride ld_h and
 * cache_prev (B, cache width * H), the previous step's, both NULL for the zero state.
 * Writes h (B, H) with row stride ld_h and cache. W_h NULL: the caller has written the
 * hidden projections h_prev W_h^T into cache[:, 0 : G*H) (row stride cache width * H)
 * already (decoding's packed weights, decode/decode.h). */
void cell_step_forward(CellKind kind, real *h, real *cache, const real *xg, int ld_xg,
                       const real *h_prev, int ld_h, const real *cache_prev, const real *W_h,
                       const real *b_h, const int *len, int t, int B, int H);

/* Backward of one step. dh (B, H, stride ld_dh): the whole gradient reaching h. dcell
 * (B, H), LSTM only (NULL for the others): on entry the gradient reaching the cell state
 * from later steps, on return the gradient reaching the previous one. Overwrites dxg
 * (B, G*H, stride ld_dxg) and dhg (B, G*H), the gradient of the hidden projections
 * W_h h + b_h. Accumulates dh_prev (skipped if NULL), and dW_h, db_h unless dW_h is NULL
 * (a caller that keeps every step's dhg takes them in one product afterwards). */
void cell_step_backward(CellKind kind, real *dh_prev, real *dcell, real *dxg, int ld_dxg,
                        real *dhg, real *dW_h, real *db_h, const real *dh, int ld_dh,
                        const real *cache, const real *h_prev, int ld_h, const real *cache_prev,
                        const real *W_h, const int *len, int t, int B, int H);

/* A whole sequence of S steps from the zero state, forwards (t = 0..S-1) or, with
 * reverse, backwards (t = S-1..0). xg (S*B, G*H); writes hs (S*B, H) with row stride
 * ld_h (two directions can share one annotation matrix) and cache (S*B, width * H).
 * Padded positions hold h = 0, so a reverse pass starts from the zero state at each
 * sentence's own last position. */
void cell_sequence_forward(CellKind kind, real *hs, int ld_h, real *cache, const real *xg,
                           const real *W_h, const real *b_h, const int *len, int S, int B,
                           int H, int reverse);

/* Scratch floats that cell_sequence_backward needs for B rows of H units. */
size_t cell_sequence_scratch(CellKind kind, int B, int H);

/* Backward of cell_sequence_forward. dhs (S*B, H, stride ld_h): the gradient reaching
 * each h_t from outside the recurrence. Overwrites dxg (S*B, G*H); accumulates dW_h,
 * db_h (one product over all steps). Scratch: dcarry (cell_sequence_scratch floats),
 * dhg (S*B, G*H). */
void cell_sequence_backward(CellKind kind, real *dxg, real *dW_h, real *db_h, real *dcarry,
                            real *dhg, const real *dhs, const real *hs, int ld_h,
                            const real *cache, const real *W_h, const int *len, int S, int B,
                            int H, int reverse);

#endif
