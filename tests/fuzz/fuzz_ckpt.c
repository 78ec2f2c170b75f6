/* fuzz_ckpt.c: libFuzzer entry point for the checkpoint loader;
 * the target itself is fuzz_ckpt_one in tests/fuzz/fuzz_targets.c. Built by fuzz.mk. */
#include "fuzz/fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_ckpt_one(data, size);
}
