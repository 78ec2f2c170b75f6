/* fuzz_ground.c: libFuzzer entry point for the word boxes of a captioning corpus and
 * the attention correctness scored from them; the target itself is fuzz_ground_one in
 * tests/fuzz/fuzz_targets.c. Built by fuzz.mk. */
#include "fuzz/fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_ground_one(data, size);
}
