/* model_fixture.h: the tiny model and batch shared by the model tests in both
 * precisions, and the bridge from the float tests to the double build. Only
 * precision-free types cross it. */
#ifndef S2S_TEST_MODEL_FIXTURE_H
#define S2S_TEST_MODEL_FIXTURE_H

#include <stddef.h>

#include "batch.h"
#include "model.h"

/* The gradient-check sizes of STYLE.md: m=3, n=4, p=5, a=5, l=4, V_x=9, V_y=8. */
Dims fixture_dims(void);
/* Three pairs whose lengths differ on both sides (so the batch has source and target
 * padding in different places): sources of 4, 1, 3 words, targets of 2, 4, 3.
 * Allocates the batch (batch_free it). */
void fixture_batch(Batch *bt);
/* Sentence b of the fixture alone, as a batch of one. */
void fixture_single(Batch *bt, int b);

/* Computed by the double build: the loss of batch under params (n doubles, in
 * Params tensor order) and its gradient into grads (n doubles). */
double model_loss_and_gradients_f64(const Dims *d, const Batch *bt, const double *params,
                                    double *grads, size_t n);

#endif
