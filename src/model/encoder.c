/* encoder.c: the list of encoders behind encoder.h, and the text encoders' first stage,
 * the source embeddings. */
#include "model/encoder.h"

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
