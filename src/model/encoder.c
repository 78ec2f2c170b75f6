/* encoder.c: the list of encoders behind encoder.h. */
#include "model/encoder.h"

extern const EncoderOps birnn_encoder, attention_only_encoder;

const EncoderOps *encoder_ops(const EncoderDims *d)
{
    static const EncoderOps *const encoders[] = {
        [ENCODER_BIRNN] = &birnn_encoder,
        [ENCODER_ATTN] = &attention_only_encoder,
    };
    return encoders[d->kind];
}
