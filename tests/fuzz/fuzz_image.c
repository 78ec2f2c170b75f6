/* fuzz_image.c: libFuzzer entry point for the picture loader; the target itself is
 * fuzz_image_one in tests/fuzz/fuzz_targets.c. Built by fuzz.mk. */
#include "fuzz/fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_image_one(data, size);
}
