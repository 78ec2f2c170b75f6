/* encoder_image.c: the image encoder of model/MODEL.md behind encoder.h (model.encoder:
 * image; Show, Attend and Tell, Xu et al. 2015). L conv blocks (conv.h), each
 *
 *     Y = maxpool_2x2(relu(conv_3x3(X) + b))      (B, N, N, C_{l-1}) -> (B, N/2, N/2, C_l)
 *
 * turn the pictures (B, image_size, image_size, 3) into a G x G grid of C_L-wide cells a_j,
 * read row by row; with positions, X_j = a_j + P_j (P learned, or the fixed sines of the
 * cell's row and column: grid_sine), then the self-attention layers (if any): H, S = G^2
 * annotations of width d_h = C_L. Every picture has all S cells. s_0 (and an LSTM
 * decoder's c_0) comes from the mean of H over the cells, and score none's fixed context
 * is that mean too, as for the attention-only encoder. Never allocates. */
#include <string.h>

#include "model/encoder.h"
#include "nn/conv.h"
#include "nn/ops.h"

static int image_width(const EncoderDims *d)
{
    return d->conv_channels[d->conv_layers - 1];
}

/* N_l: the side of block l's input, l from 0 (N_0 = image_size); N_L = G. */
static int block_side(const EncoderDims *d, int l)
{
    return d->image_size >> l;
}

static int block_in_channels(const EncoderDims *d, int l)
{
    return l == 0 ? 3 : d->conv_channels[l - 1];
}

static int grid_cells(const EncoderDims *d)
{
    const int G = block_side(d, d->conv_layers);
    return G * G;
}

double grid_sine(int G, int j, int u, int d_h)
{
    /* the row's sines in the first half of the channels, the column's in the rest */
    const int row_width = d_h / 2;
    return u < row_width ? sinusoid_position(j / G, u, row_width)
                         : sinusoid_position(j % G, u - row_width, d_h - row_width);
}

static void image_carve_params(EncoderParams *p, TensorCarver *c, const EncoderDims *d)
{
    static const char *const names[CONV_MAX_LAYERS][2] = {
        {"conv1.W", "conv1.b"}, {"conv2.W", "conv2.b"}, {"conv3.W", "conv3.b"},
        {"conv4.W", "conv4.b"}, {"conv5.W", "conv5.b"}, {"conv6.W", "conv6.b"}};
    memset(p, 0, sizeof *p);
    for (int l = 0; l < d->conv_layers; l++) {
        const int C = d->conv_channels[l];
        p->conv_W[l] = tensor_carve(c, C, 9 * block_in_channels(d, l), 0, names[l][0]);
        p->conv_b[l] = tensor_carve(c, C, 1, 1, names[l][1]);
    }
    if (d->grid_positions == GRID_POSITIONS_LEARNED)
        p->grid_P = tensor_carve(c, grid_cells(d), image_width(d), 0, "grid_P");
    sa_carve(p->sa, c, &d->sa);
}

static void image_carve_work(EncoderWork *w, Arena *ar, const EncoderDims *d, int B, int S,
                             int with_summary, int with_backward)
{
    const size_t d_h = (size_t)image_width(d), SB = (size_t)S * B;
    size_t most_conv = 0, most_pool = 0, most_cols = 0;
    w->B = B, w->S = S;
    w->ex = w->mask_x = NULL;
    const size_t N0 = (size_t)d->image_size;
    w->input = arena_alloc(ar, B * N0 * N0 * 3, sizeof(real));
    for (int l = 0; l < d->conv_layers; l++) {
        const size_t N = (size_t)block_side(d, l), C = (size_t)d->conv_channels[l];
        const size_t pixels = B * N * N, cols = pixels * 9 * block_in_channels(d, l);
        w->cols[l] = arena_alloc(ar, cols, sizeof(real));
        w->conv[l] = arena_alloc(ar, pixels * C, sizeof(real));
        w->pool[l] = arena_alloc(ar, pixels / 4 * C, sizeof(real));
        w->pool_arg[l] = arena_alloc(ar, pixels / 4 * C, sizeof(int));
        most_cols = cols > most_cols ? cols : most_cols;
        most_conv = pixels * C > most_conv ? pixels * C : most_conv;
        /* d_pool holds a block's output gradient, and then its input's */
        const size_t in = pixels * block_in_channels(d, l), out = pixels / 4 * C;
        most_pool = in > most_pool ? in : most_pool;
        most_pool = out > most_pool ? out : most_pool;
    }
    w->x = arena_alloc(ar, SB * d_h, sizeof(real));
    sa_carve_work(&w->sa, ar, &d->sa, B, S, with_backward);
    w->H = (real *)sa_output(&w->sa, &d->sa, w->x);
    w->mean = arena_alloc(ar, (size_t)B * d_h, sizeof(real));
    w->init = w->mean;
    w->ld_init = (int)d_h;
    w->summary = with_summary ? w->mean : NULL;
    w->d_H = w->d_init = w->d_summary = w->d_top = w->d_below = w->d_carry = NULL;
    w->d_conv = w->d_pool = w->d_cols = NULL;
    if (with_backward) {
        w->d_H = arena_alloc(ar, SB * d_h, sizeof(real));
        w->d_init = arena_alloc(ar, (size_t)B * d_h, sizeof(real));
        if (with_summary)
            w->d_summary = arena_alloc(ar, (size_t)B * d_h, sizeof(real));
        w->d_conv = arena_alloc(ar, most_conv, sizeof(real));
        w->d_pool = arena_alloc(ar, most_pool, sizeof(real));
        w->d_cols = arena_alloc(ar, most_cols, sizeof(real));
    }
}

/* The conv blocks, from the pictures to the last block's pooled grid (B, G, G, C_L). */
static void conv_blocks_forward(EncoderWork *w, const EncoderParams *P, const EncoderDims *d,
                                const real *pixels)
{
    const int B = w->B;
    const real *in = pixels;
    for (int l = 0; l < d->conv_layers; l++) {
        const int N = block_side(d, l), C = d->conv_channels[l];
        conv3x3_forward(w->conv[l], w->cols[l], in, P->conv_W[l], P->conv_b[l], B, N,
                        block_in_channels(d, l), C);
        relu_forward(w->conv[l], w->conv[l], (size_t)B * N * N * C);
        maxpool2x2_forward(w->pool[l], w->pool_arg[l], w->conv[l], B, N, C);
        in = w->pool[l];
    }
}

static void image_forward(EncoderWork *w, const EncoderParams *P, const EncoderDims *d,
                          const EncoderSource *src)
{
    const int S = w->S, B = w->B, d_h = image_width(d);
    const size_t n_in = (size_t)B * d->image_size * d->image_size * 3;
    for (size_t k = 0; k < n_in; k++)
        w->input[k] = (real)src->pixels[k];
    conv_blocks_forward(w, P, d, w->input);
    /* X (S*B, d_h), row j * B + b = cell j of picture b (row b * S + j of the grid),
     * plus its position */
    const real *grid = w->pool[d->conv_layers - 1];
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++) {
            real *x = w->x + ((size_t)j * B + b) * d_h;
            const real *a = grid + ((size_t)b * S + j) * d_h;
            for (int u = 0; u < d_h; u++)
                x[u] = a[u] + (P->grid_P ? P->grid_P[(size_t)j * d_h + u] : 0);
        }
    const int G = block_side(d, d->conv_layers);
    if (d->grid_positions == GRID_POSITIONS_SINES) /* S d_h sines, few beside the convs */
        for (int j = 0; j < S; j++)
            for (int u = 0; u < d_h; u++) {
                const real p = (real)grid_sine(G, j, u, d_h);
                for (int b = 0; b < B; b++)
                    w->x[((size_t)j * B + b) * d_h + u] += p;
            }
    w->sa_in = w->x;
    sa_forward(&w->sa, P->sa, &d->sa, w->x, src->len, S, B, w->sa_dropout, w->rng);
    encoder_mean_forward(w, d_h, src->len); /* every picture has all S cells */
}

/* conv_blocks_forward undone, from the grid's gradient in d_pool (B, G, G, C_L). */
static void conv_blocks_backward(EncoderParams *G, EncoderWork *w, const EncoderParams *P,
                                 const EncoderDims *d)
{
    const int B = w->B;
    for (int l = d->conv_layers - 1; l >= 0; l--) {
        const int N = block_side(d, l), C = d->conv_channels[l];
        /* forward: pool = maxpool(conv), conv = relu(conv_3x3(in) + b) */
        maxpool2x2_backward(w->d_conv, w->d_pool, w->pool_arg[l], B, N, C);
        relu_backward(w->d_conv, w->d_conv, w->conv[l], (size_t)B * N * N * C);
        /* the pictures need no gradient; a lower block's pooled output does, into d_pool,
         * whose gradient maxpool2x2_backward has read */
        conv3x3_backward(l > 0 ? w->d_pool : NULL, G->conv_W[l], G->conv_b[l], w->d_cols,
                         w->d_conv, w->cols[l], P->conv_W[l], B, N, block_in_channels(d, l), C);
    }
}

static void image_backward(EncoderParams *G, EncoderWork *w, const EncoderParams *P,
                           const EncoderDims *d, const EncoderSource *src,
                           const EncoderSourceGrad *gsrc, real *scratch)
{
    (void)gsrc, (void)scratch;
    const int S = w->S, B = w->B, d_h = image_width(d);
    /* the mean is computed from H, the layers' output: its gradient joins d_H first */
    encoder_mean_backward(w, d_h, src->len);
    sa_backward(w->d_H, G->sa, &w->sa, w->d_H, P->sa, &d->sa, S, B);
    /* forward: X_jb = a_jb + P_j, a_jb at row b * S + j of the grid (fixed sines: no
     * gradient but a_jb's) */
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++) {
            const real *dx = w->d_H + ((size_t)j * B + b) * d_h;
            memcpy(w->d_pool + ((size_t)b * S + j) * d_h, dx, sizeof(real) * d_h);
            if (G->grid_P)
                for (int u = 0; u < d_h; u++)
                    G->grid_P[(size_t)j * d_h + u] += dx[u];
        }
    conv_blocks_backward(G, w, P, d);
}

const EncoderOps image_encoder = {
    .name = "image",
    .width = image_width,
    .init_width = image_width,
    .init_cell_state = 1,
    .carve_params = image_carve_params,
    .carve_work = image_carve_work,
    .backward_scratch = encoder_no_scratch,
    .forward = image_forward,
    .annotations_backward = encoder_mean_annotations_backward,
    .backward = image_backward,
};
