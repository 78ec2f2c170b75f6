/* fuzz_targets.h: the fuzz targets, one per reader of untrusted input. Each runs the
 * code on one input, checks what the code promises about its result, and frees
 * everything. The libFuzzer binaries of tests/fuzz/ call them, and the regress suite
 * (test_regress.c) replays every seed and every crash ever found through them.
 *
 * Every target returns 0 (libFuzzer's convention). Bad input is expected and fine; a
 * broken promise aborts with a message, which libFuzzer reports as a crash and Check
 * as a failed test. */
#ifndef S2S_TEST_FUZZ_TARGETS_H
#define S2S_TEST_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* What the last target call made of its input, one line, for the regress suite to hold
 * it to (tests/regress/verdicts.txt): each reading it did, "accepted" (with what it
 * kept) or "refused: " and the error message, separated by "; ". */
const char *fuzz_verdict(void);

/* data is a YAML config: loaded over the defaults and validated; a config that passes
 * must survive config_to_yaml and loading back unchanged. Each line of the input is
 * also tried as a --set assignment. */
int fuzz_config_one(const uint8_t *data, size_t size);

/* data is FLAGS (2 bytes, see fuzz_targets.c) then SOURCE 0xFF TARGET (0xFF never
 * occurs in UTF-8): read as two line-aligned files and SOURCE as one TSV file through
 * corpus_read, with vocabularies built and looked up as training does. Every line is
 * also validated and tokenized directly at both levels, and detokenized back. */
int fuzz_corpus_one(const uint8_t *data, size_t size);

/* data is a checkpoint file: loaded model-only and with its training state, as it is
 * and again with its header's size and its sections' CRCs made right (so that
 * mutations reach the sections' contents instead of stopping at a CRC mismatch). */
int fuzz_ckpt_one(const uint8_t *data, size_t size);

/* data is an alignments.jsonl file: parsed, and every record drawn as SVG and as text
 * (s2s heatmap), whose output must be valid UTF-8. */
int fuzz_align_one(const uint8_t *data, size_t size);

/* data is a picture file (data/image.h): its header read, and, when it claims at most a
 * million pixels, its pixels decoded and resized to 8 x 8, every value in [0, 1]. */
int fuzz_image_one(const uint8_t *data, size_t size);

/* data is a SPLIT.ground file of word boxes (data/ground.h), read with lines of at most
 * 1024 bytes: an accepted file has the input's lines and fields, and boxes within the
 * largest picture; each line passes ground_check_line against its own count and the
 * smallest picture that holds every box; and every box gets cells on 1, 3, 7 and 14
 * grids (report/grounding.h), which uniform attention scores as it must. */
int fuzz_ground_one(const uint8_t *data, size_t size);

/* data is a SentencePiece model (a .model file, a checkpoint's SPMS section): loaded,
 * and if it loads, lines split by it (best and drawn splits) and joined back. */
int fuzz_spm_one(const uint8_t *data, size_t size);

#endif
