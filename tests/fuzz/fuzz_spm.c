/* fuzz_spm.c: libFuzzer entry point for SentencePiece models (data.subword_src_model's
 * .model files, checkpoints' SPMS and SPMT sections); the target itself is fuzz_spm_one
 * in tests/fuzz/fuzz_targets.c. Built by fuzz.mk. */
#include "fuzz/fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_spm_one(data, size);
}
