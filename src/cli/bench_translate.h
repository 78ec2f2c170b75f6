/* bench_translate.h: s2s bench --translate: decoding speed, on weights and sources that
 * scripts/torch_reference.py bench --translate makes the same way, so that the two
 * decode the same sentences to the same words and their speeds compare. */
#ifndef S2S_BENCH_TRANSLATE_H
#define S2S_BENCH_TRANSLATE_H

#include "model/model.h"

/* Fills every weight of P from a formula of its tensor's name and the element's index:
 * w = 0.1 sin(0.7 e + phase(name)), computed in double, phase the name's byte sum / 10.
 * Not a trained model, but one both programs can build without a file between them. */
void bench_formula_weights(Params *P);

/* Decodes `batches` batches of `batch` formula sources (batch s, sentence k: 5 + (7 k +
 * 3 s) mod 16 words, word j = 4 + (131 k + 31 j + 17 s) mod (V_x - 4)) with beam search
 * of `beam` (1: greedy) as s2s translate does (translate.max_output_ratio 2 and
 * max_output_extra 10, alpha 0.6); the first `warmup` batches untimed. Prints the
 * summary and the RESULT line; returns the exit code. */
int bench_translate(const Dims *d, const char *size, int batch, int batches, int warmup,
                    int beam);

#endif
