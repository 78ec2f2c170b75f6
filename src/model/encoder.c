/* encoder.c: the list of encoders behind encoder.h, the text encoders' first stage (the
 * source embeddings), and the mean of the annotations that the encoders without a final
 * recurrent state start the decoder from. */
#include "model/encoder.h"

#include <string.h>

#include "model/batch.h"
#include "nn/ops.h"

extern const EncoderOps birnn_encoder, attention_only_encoder, image_encoder;

const EncoderOps *encoder_ops(const EncoderDims *d)
{
    static const EncoderOps *const encoders[] = {
        [ENCODER_BIRNN] = &birnn_encoder,
        [ENCODER_ATTN] = &attention_only_encoder,
        [ENCODER_IMAGE] = &image_encoder,
    };
    return encoders[d->kind];
}

void encoder_carve_embeddings(EncoderWork *w, Arena *ar, const EncoderDims *d, int B, int S,
                              int with_backward)
{
    const size_t SB = (size_t)S * B, m = (size_t)d->emb;
    w->ex = arena_alloc(ar, SB * m, sizeof(real));
    w->mask_x = with_backward ? arena_alloc(ar, SB * m, sizeof(real)) : NULL;
}

void encoder_embed_forward(EncoderWork *w, const EncoderDims *d, const EncoderSource *src)
{
    const int SB = w->S * w->B, m = d->emb;
    embedding_forward(w->ex, m, src->table, src->ids, SB, m);
    if (w->embedding_dropout > 0) /* set with rng, for training's passes */
        dropout_forward(w->ex, m, w->mask_x, SB, m, w->embedding_dropout, w->rng);
}

void encoder_embed_backward(EncoderWork *w, const EncoderDims *d, const EncoderSource *src,
                            const EncoderSourceGrad *gsrc)
{
    const int SB = w->S * w->B, m = d->emb;
    real *d_ex = w->ex;
    /* forward: ex' = ex * mask (embedding dropout) */
    if (w->embedding_dropout > 0)
        dropout_backward(d_ex, m, w->mask_x, SB, m);
    if (gsrc->rows)
        embedding_grad_add(gsrc->rows, d_ex, m, src->ids, TOK_PAD, SB);
    else
        embedding_backward(gsrc->table, d_ex, m, src->ids, TOK_PAD, SB, m);
}

/* ---- the mean of the annotations: s_0's source (and score none's context) for the
 * encoders without a final recurrent state ----------------------------------------- */

void encoder_mean_forward(EncoderWork *w, int d_h, const int *len)
{
    const int B = w->B;
    memset(w->mean, 0, sizeof(real) * (size_t)B * d_h);
    for (int b = 0; b < B; b++) {
        real *mean = w->mean + (size_t)b * d_h;
        for (int j = 0; j < len[b]; j++)
            for (int u = 0; u < d_h; u++)
                mean[u] += w->H[((size_t)j * B + b) * d_h + u];
        for (int u = 0; u < d_h; u++)
            mean[u] /= (real)len[b];
    }
}

void encoder_mean_annotations_backward(EncoderParams *G, EncoderWork *w, const EncoderParams *P,
                                       const EncoderDims *d, const int *len)
{
    (void)G, (void)P, (void)len;
    const size_t bytes = sizeof(real) * (size_t)w->B * encoder_ops(d)->width(d);
    if (w->d_summary)
        memcpy(w->d_init, w->d_summary, bytes);
    else
        memset(w->d_init, 0, bytes);
}

void encoder_mean_backward(EncoderWork *w, int d_h, const int *len)
{
    const int B = w->B;
    /* forward: mean_b = sum over j < len[b] of H_jb / len[b] */
    for (int b = 0; b < B; b++) {
        const real *dmean = w->d_init + (size_t)b * d_h;
        for (int j = 0; j < len[b]; j++)
            for (int u = 0; u < d_h; u++)
                w->d_H[((size_t)j * B + b) * d_h + u] += dmean[u] / (real)len[b];
    }
}

size_t encoder_no_scratch(const EncoderDims *d, int B, int S)
{
    (void)d, (void)B, (void)S;
    return 0;
}

