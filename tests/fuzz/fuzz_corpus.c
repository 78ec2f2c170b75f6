/* fuzz_corpus.c: libFuzzer entry point for the corpus reader, UTF-8 validation and tokenizer;
 * the target itself is fuzz_corpus_one in tests/fuzz/fuzz_targets.c. Built by fuzz.mk. */
#include "fuzz/fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_corpus_one(data, size);
}
