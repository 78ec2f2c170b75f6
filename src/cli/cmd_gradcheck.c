/* cmd_gradcheck.c: `s2s gradcheck`: the configured model's gradients against finite
 * differences, in double precision, on its first training pairs. */
#include <stdio.h>

#include "cli/command.h"
#include "data/corpus.h"
#include "data/ground.h"
#include "data/vocab.h"
#include "model/batch.h"
#include "model/fdcheck_model.h"
#include "report/grounding.h"
#include "text/number.h"

static const char GRADCHECK_USAGE[] =
    "usage: s2s gradcheck CONFIG.yaml [--set SECTION.KEY=VALUE]... [--samples N]\n"
    "\n"
    "Builds the model CONFIG.yaml describes (vocabularies from its training data) in\n"
    "double precision and checks its gradients by finite differences on the first three\n"
    "training pairs (cut to 10 tokens a side; an image model's pictures whole). Every\n"
    "tensor is checked: all of its elements when it has at most N (default 20; 0: all),\n"
    "else N elements with non-zero gradients and two with zero ones. Prints the worst\n"
    "relative error per tensor; exits 0 if every error is at most 1e-6, 1 otherwise. A\n"
    "hard-attention model is checked on its surrogate objective with the sampled\n"
    "positions and the rewards held fixed (src/model/MODEL.md).\n";

enum { GRADCHECK_PAIRS = 3, GRADCHECK_MAX_WORDS = 10 };

/* Attention supervision's word cells for the batch, from data.train_ground (checked as
 * training checks it), on the G x G grid. Returns 0, or -1 with err set. */
static int fill_ground(Batch *bt, const Config *cfg, const Corpus *c, int G, Error *err)
{
    GroundFile g;
    int rc = ground_read(&g, cfg->data.train_ground, (size_t)cfg->data.max_line_bytes, err);
    if (rc == 0)
        rc = ground_check_corpus(&g, cfg->data.train_ground, c, err);
    if (rc == 0) { /* the batch holds the corpus's first pairs, their captions cut */
        batch_init_ground(bt, G * G);
        grounding_fill_batch(bt, G, &g, c);
    }
    ground_free(&g);
    return rc;
}

/* Prints the model and its regularization, then checks its gradients on bt (samples
 * elements per tensor; 0: every one). Returns EXIT_OK if every error is at most 1e-6. */
static int check(const Dims *d, const Batch *bt, const Config *cfg, long samples,
                 const Regularization *reg)
{
    char model[160];
    model_describe(d, model, sizeof model);
    char drop_e[32], drop_r[32], smooth[32];
    printf("model: %s; embedding dropout %s, readout dropout %s, label smoothing %s\n", model,
           number_shortest(drop_e, sizeof drop_e, reg->embedding_dropout),
           number_shortest(drop_r, sizeof drop_r, reg->readout_dropout),
           number_shortest(smooth, sizeof smooth, reg->label_smoothing));
    if (reg->attention_supervision > 0)
        printf("attention supervision %s on the words' boxes in %s\n",
               number_shortest(smooth, sizeof smooth, reg->attention_supervision),
               cfg->data.train_ground);
    const HardAttention hard = {.expected_prob = cfg->training.hard_expected_prob,
                                .reinforce_weight = cfg->training.hard_reinforce_weight,
                                .entropy_weight = cfg->training.hard_entropy_weight,
                                .token_reward = cfg->training.hard_reward == HARD_REWARD_TOKEN};
    double worst = fdcheck_model_run(d, bt, (uint64_t)cfg->seed, samples, reg,
                                     d->hard ? &hard : NULL);
    return worst <= 1e-6 ? EXIT_OK : EXIT_FAILED;
}

int cmd_gradcheck(int argc, char **argv)
{
    Config cfg;
    long samples = 20;
    int rc = cmd_load_config(&cfg, argc, argv, GRADCHECK_USAGE, NULL, &samples);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    CorpusSpec spec = {
        .src_path = cfg.data.train_src[0] ? cfg.data.train_src : NULL,
        .tgt_path = cfg.data.train_tgt[0] ? cfg.data.train_tgt : NULL,
        .tsv_path = cfg.data.train_tsv[0] ? cfg.data.train_tsv : NULL,
        .tsv_reverse = cfg.data.tsv_reverse,
        .level = cfg.data.level,
        .lowercase = cfg.data.lowercase, .max_length = cfg.data.max_length,
        .max_line_bytes = cfg.data.max_line_bytes};
    const Dims arch = config_model_dims(&cfg, 1, 1);
    if (model_reads_pictures(&arch)) { /* the first pictures, as training reads them */
        const int G = model_grid_side(&arch);
        spec.pictures = 1, spec.picture_size = arch.image_size;
        spec.picture_resize = cfg.data.image_resize, spec.picture_cells = G * G;
        spec.cache_bytes = sizeof(float) * 3 * (size_t)arch.image_size * arch.image_size *
                           GRADCHECK_PAIRS;
    }
    Vocab src_counts, tgt_counts, src_vocab, tgt_vocab;
    vocab_init(&src_counts);
    vocab_init(&tgt_counts);
    Corpus corpus;
    Error err;
    if (corpus_read(&corpus, &spec, &src_counts, &tgt_counts, 1, "training", &err) < 0) {
        corpus_free(&corpus);
        vocab_free(&src_counts);
        vocab_free(&tgt_counts);
        return cmd_error(&err, EXIT_USAGE);
    }
    vocab_build_sides(&src_vocab, &tgt_vocab, &src_counts, &tgt_counts,
                      &(VocabLimits){(int)cfg.data.src_vocab_size, (int)cfg.data.src_min_freq},
                      &(VocabLimits){(int)cfg.data.tgt_vocab_size, (int)cfg.data.tgt_min_freq},
                      cfg.model.share_embeddings);
    corpus_remap(&corpus, &src_counts, &src_vocab, &tgt_counts, &tgt_vocab);
    int n = corpus.n < GRADCHECK_PAIRS ? corpus.n : GRADCHECK_PAIRS;
    const int *src[GRADCHECK_PAIRS], *tgt[GRADCHECK_PAIRS];
    int src_n[GRADCHECK_PAIRS], tgt_n[GRADCHECK_PAIRS];
    for (int k = 0; k < n; k++) {
        src[k] = corpus.ids + corpus.src_start[k];
        tgt[k] = corpus.ids + corpus.tgt_start[k];
        src_n[k] = corpus.src_len[k] < GRADCHECK_MAX_WORDS ? corpus.src_len[k] : GRADCHECK_MAX_WORDS;
        tgt_n[k] = corpus.tgt_len[k] < GRADCHECK_MAX_WORDS ? corpus.tgt_len[k] : GRADCHECK_MAX_WORDS;
    }
    Batch bt;
    if (corpus.pics.n) { /* a picture's every cell: its source is not cut */
        batch_init(&bt, n, corpus.max_src_len + 1, GRADCHECK_MAX_WORDS + 1);
        batch_init_pictures(&bt, corpus.pics.size);
        for (int k = 0; k < n; k++)
            src_n[k] = corpus.src_len[k];
        batch_fill(&bt, n, src, src_n, tgt, tgt_n);
        const size_t one = (size_t)corpus.pics.size * corpus.pics.size * 3;
        for (int k = 0; k < n; k++) /* cached: the first ones are */
            pictures_get(&corpus.pics, k, corpus.mean, bt.pixels + one * k, &err);
    } else {
        batch_init(&bt, n, GRADCHECK_MAX_WORDS + 1, GRADCHECK_MAX_WORDS + 1);
        batch_fill(&bt, n, src, src_n, tgt, tgt_n);
    }
    Dims d = config_model_dims(&cfg, src_vocab.size, tgt_vocab.size);
    Regularization reg = {.embedding_dropout = cfg.model.embedding_dropout,
                          .readout_dropout = cfg.model.readout_dropout,
                          .self_attention_dropout = cfg.model.self_attention_dropout,
                          .label_smoothing = cfg.training.label_smoothing,
                          .doubly_stochastic = cfg.training.doubly_stochastic};
    int refused = 0; /* the training boxes, when the check needs them */
    if (corpus.pics.n && cfg.training.attention_supervision > 0 && model_has_alignments(&d)) {
        refused = fill_ground(&bt, &cfg, &corpus, model_grid_side(&d), &err) < 0;
        reg.attention_supervision = cfg.training.attention_supervision;
    }
    if (refused)
        rc = cmd_error(&err, EXIT_USAGE);
    else
        rc = check(&d, &bt, &cfg, samples, &reg);
    batch_free(&bt);
    corpus_free(&corpus);
    vocab_free(&src_counts);
    vocab_free(&tgt_counts);
    vocab_free(&src_vocab);
    vocab_free(&tgt_vocab);
    return rc;
}
