/* encoder.c: the list of encoders behind encoder.h. */
#include "nn/encoder.h"

extern const EncoderOps birnn_encoder;

const EncoderOps *encoder_ops(const EncoderDims *d)
{
    static const EncoderOps *const encoders[] = {[ENCODER_BIRNN] = &birnn_encoder};
    return encoders[d->kind];
}
