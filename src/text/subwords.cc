// subwords.cc: the SentencePiece seam (see subwords.h), the one C++ file of s2s: the
// library's classes behind plain C functions, every exception and status turned into
// an Error.
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

extern "C" {
#include "text/subwords.h"
}

const char *const subword_type_names[3] = {"unigram", "bpe", nullptr};

struct Subwords {
    sentencepiece::SentencePieceProcessor sp;
};

extern "C" int subwords_train(const SubwordTraining *t, char **model, size_t *size, Error *err)
{
    std::string inputs;
    for (int k = 0; k < t->n_paths; k++)
        inputs += (k ? "," : "") + std::string(t->paths[k]);
    // one thread and a seeded generator: the same text gives the same model
    sentencepiece::SetRandomGeneratorSeed(t->seed);
    const std::unordered_map<std::string, std::string> args = {
        {"input", inputs},
        {"model_type", subword_type_names[t->type]},
        {"vocab_size", std::to_string(t->vocab_size)},
        {"character_coverage", "1.0"},
        {"num_threads", "1"},
        {"minloglevel", "2"}, // its progress lines would flood a training log
    };
    std::string proto;
    try {
        const auto status = sentencepiece::SentencePieceTrainer::Train(args, nullptr, &proto);
        if (!status.ok())
            return error_set(err, "SentencePiece could not learn a model from %s: %s",
                             inputs.c_str(), status.message());
    } catch (const std::exception &e) {
        return error_set(err, "SentencePiece could not learn a model from %s: %s",
                         inputs.c_str(), e.what());
    }
    *model = static_cast<char *>(std::malloc(proto.size() ? proto.size() : 1));
    if (!*model)
        return error_set(err, "out of memory for a SentencePiece model of %zu bytes",
                         proto.size());
    std::memcpy(*model, proto.data(), proto.size());
    *size = proto.size();
    return 0;
}

extern "C" Subwords *subwords_load(const void *model, size_t size, const char *name, Error *err)
{
    Subwords *s = nullptr;
    try {
        s = new Subwords;
        const auto status = s->sp.LoadFromSerializedProto(
            absl::string_view(static_cast<const char *>(model), size));
        if (status.ok())
            return s;
        // the library's message for bytes that do not parse names its own source line
        // ("./src/...cc(232) [model_proto->ParseFromArray(...)]"): said in our words
        const std::string why = status.message();
        error_set(err, "%s: not a SentencePiece model (%s)", name,
                  why.find("ParseFromArray") != std::string::npos
                      ? "its bytes are not a model's protocol buffer"
                      : why.c_str());
    } catch (const std::exception &e) {
        error_set(err, "%s: not a SentencePiece model (%s)", name, e.what());
    }
    delete s;
    return nullptr;
}

extern "C" void subwords_free(Subwords *s)
{
    delete s;
}

extern "C" int subwords_encode(const Subwords *s, Tokens *out, const char *line, size_t n,
                               double alpha, Error *err)
{
    tokens_clear(out);
    std::vector<std::string> pieces;
    try {
        const absl::string_view text(line, n);
        // nbest -1: a split drawn from the whole lattice, smoothed by alpha
        const auto status = alpha > 0 ? s->sp.SampleEncode(text, -1, (float)alpha, &pieces)
                                      : s->sp.Encode(text, &pieces);
        if (!status.ok())
            return error_set(err, "SentencePiece could not split a line: %s", status.message());
    } catch (const std::exception &e) {
        return error_set(err, "SentencePiece could not split a line: %s", e.what());
    }
    for (const auto &piece : pieces)
        tokens_add(out, piece.data(), piece.size());
    return out->count;
}

extern "C" long subwords_decode(const Subwords *s, char *out, size_t cap,
                                const char *const *pieces, int n)
{
    std::string text;
    try {
        const std::vector<std::string> list(pieces, pieces + n);
        if (!s->sp.Decode(list, &text).ok())
            return -1;
    } catch (const std::exception &) {
        return -1;
    }
    if (cap) {
        const size_t k = text.size() < cap - 1 ? text.size() : cap - 1;
        std::memcpy(out, text.data(), k);
        out[k] = '\0';
    }
    return static_cast<long>(text.size());
}

extern "C" int subwords_vocab_size(const Subwords *s)
{
    return s->sp.GetPieceSize();
}

extern "C" const char *subwords_piece(const Subwords *s, int k)
{
    return s->sp.IdToPiece(k).c_str();
}

extern "C" void subwords_seed(uint32_t seed)
{
    sentencepiece::SetRandomGeneratorSeed(seed);
}

extern "C" void subwords_with_generator(uint32_t seed, void (*fn)(void *), void *arg)
{
    sentencepiece::SetRandomGeneratorSeed(seed);
    try {
        std::thread worker(fn, arg);
        worker.join();
    } catch (const std::system_error &) {
        fn(arg); // no thread to be had: drawn all the same, from where this thread's draws are
    }
}
