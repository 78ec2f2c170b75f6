/* model_fixture.c: the fixture batch shared by the model tests (see model_fixture.h). */
#include "model_fixture.h"

static const int SRC0[] = {4, 5, 6, 7}, SRC1[] = {8}, SRC2[] = {5, 4, 4};
static const int TGT0[] = {4, 5}, TGT1[] = {6, 7, 4, 6}, TGT2[] = {7, 5, 7};
static const int *const SRCS[] = {SRC0, SRC1, SRC2}, *const TGTS[] = {TGT0, TGT1, TGT2};
static const int SRC_N[] = {4, 1, 3}, TGT_N[] = {2, 4, 3};

Dims fixture_dims(void)
{
    return (Dims){.src_vocab = 9, .tgt_vocab = 8, .emb = 3, .enc_hidden = 4,
                  .dec_hidden = 5, .attn = 5, .readout = 4};
}

void fixture_batch(Batch *bt)
{
    batch_init(bt, 3, 5, 5);
    batch_fill(bt, 3, (const int *const *)SRCS, SRC_N, (const int *const *)TGTS, TGT_N);
}

void fixture_single(Batch *bt, int b)
{
    batch_init(bt, 1, 5, 5);
    batch_fill(bt, 1, (const int *const *)&SRCS[b], &SRC_N[b], (const int *const *)&TGTS[b],
               &TGT_N[b]);
}
