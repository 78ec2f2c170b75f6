/* fuzz_align.c: libFuzzer entry point for the alignments.jsonl reader and the heatmaps;
 * the target itself is fuzz_align_one in tests/fuzz/fuzz_targets.c. Built by fuzz.mk. */
#include "fuzz/fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_align_one(data, size);
}
