/* cell.c: one interface over the GRU, LSTM and tanh RNN steps, and masked sequences of
 * any of them (see cell.h). Borrowed buffers only. */
#include "nn/cell.h"

#include <assert.h>
#include <string.h>

#include "nn/gru.h"
#include "nn/lstm.h"
#include "nn/ops.h"
#include "nn/rnn_tanh.h"

int cell_gates(CellKind kind)
{
    return kind == CELL_GRU ? 3 : kind == CELL_LSTM ? 4 : 1;
}

int cell_cache_width(CellKind kind)
{
    return kind == CELL_GRU ? 4 : kind == CELL_LSTM ? 6 : 1;
}

int cell_state_offset(CellKind kind)
{
    assert(kind == CELL_LSTM);
    return 4; /* lstm.c's cache: i f g o c tanh(c) */
}

const char *const cell_names[N_CELLS + 1] = {"gru", "lstm", "rnn", NULL};

const char *cell_name(CellKind kind)
{
    return cell_names[kind];
}

void cell_step_forward(CellKind kind, real *h, real *cache, const real *xg, int ld_xg,
                       const real *h_prev, int ld_h, const real *cache_prev, const real *W_h,
                       const real *b_h, const int *len, int t, int B, int H)
{
    switch (kind) {
    case CELL_GRU:
        gru_step_forward(h, cache, xg, ld_xg, h_prev, ld_h, W_h, b_h, len, t, B, H);
        break;
    case CELL_LSTM:
        lstm_step_forward(h, cache, xg, ld_xg, h_prev, ld_h, cache_prev, W_h, b_h, len, t, B, H);
        break;
    case CELL_RNN:
        rnn_tanh_step_forward(h, cache, xg, ld_xg, h_prev, ld_h, W_h, b_h, len, t, B, H);
        break;
    }
}

void cell_step_backward(CellKind kind, real *dh_prev, real *dcell, real *dxg, int ld_dxg,
                        real *dhg, real *dW_h, real *db_h, const real *dh, int ld_dh,
                        const real *cache, const real *h_prev, int ld_h, const real *cache_prev,
                        const real *W_h, const int *len, int t, int B, int H)
{
    switch (kind) {
    case CELL_GRU:
        gru_step_backward(dh_prev, dxg, ld_dxg, dhg, dW_h, db_h, dh, ld_dh, cache, h_prev, ld_h,
                          W_h, len, t, B, H);
        break;
    case CELL_LSTM:
        lstm_step_backward(dh_prev, dcell, dxg, ld_dxg, dhg, dW_h, db_h, dh, ld_dh, cache,
                           h_prev, ld_h, cache_prev, W_h, len, t, B, H);
        break;
    case CELL_RNN:
        rnn_tanh_step_backward(dh_prev, dxg, ld_dxg, dhg, dW_h, db_h, dh, ld_dh, cache, h_prev,
                               ld_h, W_h, len, t, B, H);
        break;
    }
}

/* Row offset of position t in a (S*B, width) time-major matrix. */
static size_t at(int t, int B, int width)
{
    return (size_t)t * B * width;
}

void cell_sequence_forward(CellKind kind, real *hs, int ld_h, real *cache, const real *xg,
                           const real *W_h, const real *b_h, const int *len, int S, int B,
                           int H, int reverse)
{
    const int G = cell_gates(kind) * H, C = cell_cache_width(kind) * H;
    for (int step = 0; step < S; step++) {
        int t = reverse ? S - 1 - step : step;
        int t_prev = reverse ? t + 1 : t - 1;
        const real *h_prev = step == 0 ? NULL : hs + at(t_prev, B, ld_h);
        const real *cache_prev = step == 0 ? NULL : cache + at(t_prev, B, C);
        cell_step_forward(kind, hs + at(t, B, ld_h), cache + at(t, B, C), xg + at(t, B, G), G,
                          h_prev, ld_h, cache_prev, W_h, b_h, len, t, B, H);
    }
}

size_t cell_sequence_scratch(CellKind kind, int B, int H)
{
    /* the gradient reaching h now and the one for the step before; the LSTM's cell too */
    return (size_t)(kind == CELL_LSTM ? 3 : 2) * B * H;
}

void cell_sequence_backward(CellKind kind, real *dxg, real *dW_h, real *db_h, real *dcarry,
                            real *dhg, const real *dhs, const real *hs, int ld_h,
                            const real *cache, const real *W_h, const int *len, int S, int B,
                            int H, int reverse)
{
    const int G = cell_gates(kind) * H, C = cell_cache_width(kind) * H;
    /* dh_now: gradient reaching h_t through the recurrence (from the step after it);
     * dh_before: what this step sends to h_{t-1}; dcell: the LSTM's cell state, updated
     * in place from c_t to c_{t-1}. */
    real *dh_now = dcarry, *dh_before = dcarry + (size_t)B * H;
    real *dcell = kind == CELL_LSTM ? dcarry + (size_t)2 * B * H : NULL;
    memset(dh_now, 0, sizeof(real) * (size_t)B * H);
    if (dcell)
        memset(dcell, 0, sizeof(real) * (size_t)B * H);
    for (int step = S - 1; step >= 0; step--) {
        int t = reverse ? S - 1 - step : step;
        int t_prev = reverse ? t + 1 : t - 1;
        const real *from_above = dhs + at(t, B, ld_h);
        for (int b = 0; b < B; b++)
            for (int k = 0; k < H; k++)
                dh_now[(size_t)b * H + k] += from_above[(size_t)b * ld_h + k];
        const real *h_prev = step == 0 ? NULL : hs + at(t_prev, B, ld_h);
        const real *cache_prev = step == 0 ? NULL : cache + at(t_prev, B, C);
        memset(dh_before, 0, sizeof(real) * (size_t)B * H);
        cell_step_backward(kind, step == 0 ? NULL : dh_before, dcell, dxg + at(t, B, G), G,
                           dhg + at(t, B, G), NULL, NULL, dh_now, H, cache + at(t, B, C), h_prev,
                           ld_h, cache_prev, W_h, len, t, B, H);
        real *swap = dh_now;
        dh_now = dh_before;
        dh_before = swap;
    }
    /* The weight gradients of all steps in one product, K = (S-1)*B instead of S
     * products of K = B: forward: hg_t = h_{t-1} W_h^T + b_h, so
     * dW_h (G*H, H) += sum_t dhg_t^T h_{t-1}; the first step's h is the zero state. */
    column_sums_add(db_h, dhg, S * B, G, G);
    if (S > 1) {
        const real *dhg_later = reverse ? dhg : dhg + at(1, B, G);   /* steps with a previous state */
        const real *h_earlier = reverse ? hs + at(1, B, ld_h) : hs;  /* ... and that state */
        matmul(CblasTrans, CblasNoTrans, G, H, (S - 1) * B, 1, dhg_later, G, h_earlier, ld_h, 1,
               dW_h, H);
    }
}
