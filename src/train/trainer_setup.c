/* trainer_setup.c: everything the trainer builds before its first step (see
 * trainer_parts.h): the checkpoint of a resumed run, the data and the vocabularies, the
 * run directory, the model, the optimizer and every buffer a step uses; and their
 * release. */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/interrupt.h"
#include "base/mem.h"
#include "base/ranks.h"
#include "train/trainer_parts.h"

/* How t reads a corpus of its config; an image model's pictures kept up to
 * cache_bytes, their decoding shown on a terminal (by the lead process alone). */
static CorpusSpec corpus_spec(const Trainer *t, const char *src, const char *tgt,
                              const char *tsv, long max_length, int keep_refs,
                              size_t cache_bytes)
{
    const Config *cfg = t->cfg;
    const Dims d = config_model_dims(cfg, 1, 1);
    return (CorpusSpec){.src_path = src[0] ? src : NULL, .tgt_path = tgt[0] ? tgt : NULL,
                        .tsv_path = tsv[0] ? tsv : NULL, .tsv_reverse = cfg->data.tsv_reverse,
                        .level = cfg->data.level,
                        .lowercase = cfg->data.lowercase,
                        .src_subwords = t->data.subwords.model[SIDE_SRC],
                        .tgt_subwords = t->data.subwords.model[SIDE_TGT], .max_length = max_length,
                        .max_line_bytes = cfg->data.max_line_bytes, .keep_refs = keep_refs,
                        .natural = cfg->translate.detokenize,
                        .pictures = model_reads_pictures(&d), .picture_size = d.image_size,
                        .picture_resize = cfg->data.image_resize,
                        .picture_cells = model_grid_side(&d) * model_grid_side(&d),
                        .cache_bytes = cache_bytes,
                        .progress = t->lead && isatty(STDERR_FILENO) ? stderr : NULL};
}

/* Resuming: the settings that shape the model or the training must be the ones the
 * checkpoint was made with; those it has no use for (config_key_unused) may change. The
 * keys that decide what is used are themselves compared. */
static int check_resume_config(const Config *now, const Config *then, const char *path, Error *err)
{
    char diff[ERROR_MSG_MAX] = "";
    int n = 0;
    for (int k = 0; k < config_n_keys(); k++) {
        if (config_key_free_on_resume(k) || config_key_unused(then, k))
            continue;
        char a[CONFIG_STR_MAX + 64], b[CONFIG_STR_MAX + 64];
        config_key_resolved_value(then, k, a, sizeof a);
        config_key_resolved_value(now, k, b, sizeof b);
        if (!strcmp(a, b))
            continue;
        size_t used = strlen(diff);
        snprintf(diff + used, sizeof diff - used, "%s%s (%.200s in the checkpoint, %.200s now)",
                 n++ ? "; " : "", config_key_path(k), a, b);
    }
    if (n)
        return error_set(err, "cannot resume from `%s`: %d setting%s differ%s: %s", path, n,
                         n > 1 ? "s" : "", n > 1 ? "" : "s", diff);
    return 0;
}

/* The probe pairs whose attention is dumped: alignments.lines of the validation
 * files, or its first alignments.probes pairs. */
static int choose_probes(Trainer *t, Error *err)
{
    const Config *cfg = t->cfg;
    const ConfigIntList *lines = &cfg->alignments.lines;
    int want = lines->n ? lines->n : (int)cfg->alignments.probes;
    const Dims arch = config_model_dims(cfg, 1, 1); /* before the vocabularies are known */
    if (!model_has_alignments(&arch)) /* nothing attends: nothing to dump */
        want = 0;
    if (want > t->data.valid->n)
        want = t->data.valid->n;
    t->probes.pairs = xmalloc_array((size_t)want + 1, sizeof(int));
    for (int k = 0; k < want; k++) {
        if (!lines->n) {
            t->probes.pairs[k] = k;
            continue;
        }
        int found = -1;
        for (int pair = 0; pair < t->data.valid->n && found < 0; pair++)
            if (t->data.valid->line_no[pair] == lines->v[k])
                found = pair;
        if (found < 0)
            return error_set(err, "alignments.lines: line %ld of the validation set is not a "
                             "usable pair (it is empty, or past the end)", lines->v[k]);
        t->probes.pairs[k] = found;
    }
    t->probes.n = want;
    return 0;
}

/* data.subwords: sentencepiece: the models that split the text, the checkpoint's (ck),
 * else the given .model files, else learned from the training files (every process
 * learns the same). */
static int take_subword_models(Trainer *t, Checkpoint *ck, Error *err)
{
    const Config *cfg = t->cfg;
    if (!cfg->data.subwords)
        return 0;
    if (ck) {
        t->data.subwords = ck->model.subwords;
        memset(&ck->model.subwords, 0, sizeof ck->model.subwords);
        return 0;
    }
    const Dims d = config_model_dims(cfg, 1, 1);
    if (cfg->data.subword_tgt_model[0])
        return subword_models_read(&t->data.subwords,
                                   model_reads_pictures(&d) ? NULL : cfg->data.subword_src_model,
                                   cfg->data.subword_tgt_model, err);
    return subword_models_learn(&t->data.subwords,
                                model_reads_pictures(&d) ? NULL : cfg->data.train_src,
                                cfg->data.train_tgt, cfg->data.subword_joint,
                                (int)cfg->data.subword_vocab_size,
                                (SubwordType)cfg->data.subword_type, (uint32_t)cfg->seed, err);
}

/* The training pairs, and the vocabularies: the checkpoint's (ck), else built from the
 * pairs' counts. */
static int read_training_pairs(Trainer *t, Checkpoint *ck, Error *err)
{
    const Config *cfg = t->cfg;
    CorpusSpec spec = corpus_spec(t, cfg->data.train_src, cfg->data.train_tgt,
                                  cfg->data.train_tsv, cfg->data.max_length, 0,
                                  PICTURES_CACHE_BYTES);
    spec.keep_text = subword_sampling_on(cfg); /* split anew every epoch */
    if (ck) {
        /* the vocabularies are the checkpoint's */
        t->data.src_vocab = ck->model.src_vocab;
        t->data.tgt_vocab = ck->model.tgt_vocab;
        memset(&ck->model.src_vocab, 0, sizeof ck->model.src_vocab);
        memset(&ck->model.tgt_vocab, 0, sizeof ck->model.tgt_vocab);
        if (corpus_read(&t->data.train, &spec, &t->data.src_vocab, &t->data.tgt_vocab, 0,
                        "training", err) < 0)
            return -1;
        /* the model was trained on pictures less these means: the checkpoint's */
        memcpy(t->data.train.mean, ck->model.picture_mean, sizeof t->data.train.mean);
    } else {
        Vocab src_counts, tgt_counts;
        vocab_init(&src_counts);
        vocab_init(&tgt_counts);
        int rc = corpus_read(&t->data.train, &spec, &src_counts, &tgt_counts, 1, "training", err);
        if (rc == 0 && subword_sampling_on(cfg)) {
            subword_sampling_count_pieces(&src_counts, t->data.subwords.model[SIDE_SRC]);
            subword_sampling_count_pieces(&tgt_counts, t->data.subwords.model[SIDE_TGT]);
        }
        if (rc == 0) /* one table, so one vocabulary (the limits agree, config_validate) */
            vocab_build_sides(&t->data.src_vocab, &t->data.tgt_vocab, &src_counts, &tgt_counts,
                              &(VocabLimits){(int)cfg->data.src_vocab_size,
                                             (int)cfg->data.src_min_freq},
                              &(VocabLimits){(int)cfg->data.tgt_vocab_size,
                                             (int)cfg->data.tgt_min_freq},
                              cfg->model.share_embeddings);
        if (rc == 0)
            corpus_remap(&t->data.train, &src_counts, &t->data.src_vocab, &tgt_counts,
                         &t->data.tgt_vocab);
        vocab_free(&src_counts);
        vocab_free(&tgt_counts);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The files of a held-out set as the config names them ("" for none). */
typedef struct {
    const char *src, *tgt, *tsv, *align, *ground;
} HeldOutFiles;

/* A held-out set (name: "validation" or "test", for messages) in the training
 * vocabularies, and its gold alignments and words' boxes if the config names them
 * (*gold and *ground, else left NULL). Every non-empty pair counts, however long. */
static int read_held_out(Trainer *t, const char *name, HeldOutFiles files, Corpus *pairs,
                         GoldAlignments **gold, GroundFile **ground, Error *err)
{
    const Config *cfg = t->cfg;
    /* kept whole: evaluation never decodes a picture again (corpus_batch) */
    CorpusSpec spec = corpus_spec(t, files.src, files.tgt, files.tsv, 0, 1, SIZE_MAX);
    if (corpus_read(pairs, &spec, &t->data.src_vocab, &t->data.tgt_vocab, 0, name, err) < 0)
        return -1;
    memcpy(pairs->mean, t->data.train.mean, sizeof pairs->mean); /* what the model expects */
    if (files.align[0]) { /* read now: a bad test file must not wait for the end */
        *gold = xcalloc(1, sizeof **gold);
        if (gold_read(*gold, files.align, pairs, 0, (size_t)cfg->data.max_line_bytes, err) < 0)
            return -1;
    }
    if (pairs->pics.n && files.ground[0]) { /* the same for the word boxes */
        *ground = xcalloc(1, sizeof **ground);
        if (ground_read(*ground, files.ground, (size_t)cfg->data.max_line_bytes, err) < 0 ||
            ground_check_corpus(*ground, files.ground, pairs, err) < 0)
            return -1;
    }
    return 0;
}

/* An image model's training boxes are checked when read, so that a bad file is found
 * before training; attention supervision keeps them (each batch's word cells), else
 * nothing reads them. */
static int check_training_ground(Trainer *t, Error *err)
{
    const Config *cfg = t->cfg;
    if (!t->data.train.pics.n || !cfg->data.train_ground[0])
        return 0;
    GroundFile *g = xcalloc(1, sizeof *g);
    int rc = ground_read(g, cfg->data.train_ground, (size_t)cfg->data.max_line_bytes, err);
    if (rc == 0)
        rc = ground_check_corpus(g, cfg->data.train_ground, &t->data.train, err);
    if (rc == 0 && cfg->training.attention_supervision > 0) {
        t->data.train_ground = g;
        return 0;
    }
    ground_free(g);
    free(g);
    return rc;
}

/* The training pairs, the validation and test pairs, their gold alignments, the probes. */
static int read_data(Trainer *t, Checkpoint *ck, Error *err)
{
    const Config *cfg = t->cfg;
    TrainData *d = &t->data;
    if (take_subword_models(t, ck, err) < 0 || read_training_pairs(t, ck, err) < 0 ||
        check_training_ground(t, err) < 0)
        return -1;
    /* gold links join words; subword pieces have none yet (config_usage.c says so) */
    const int gold = !cfg->data.subwords;
    if (cfg->data.valid_src[0] || cfg->data.valid_tsv[0]) {
        const HeldOutFiles files = {cfg->data.valid_src, cfg->data.valid_tgt,
                                    cfg->data.valid_tsv, gold ? cfg->data.valid_align : "",
                                    cfg->data.valid_ground};
        d->valid = xcalloc(1, sizeof *d->valid);
        if (read_held_out(t, "validation", files, d->valid, &d->valid_gold, &d->valid_ground,
                          err) < 0 ||
            choose_probes(t, err) < 0)
            return -1;
    }
    if (cfg->data.test_src[0] || cfg->data.test_tsv[0]) {
        const HeldOutFiles files = {cfg->data.test_src, cfg->data.test_tgt, cfg->data.test_tsv,
                                    gold ? cfg->data.test_align : "", cfg->data.test_ground};
        d->test = xcalloc(1, sizeof *d->test);
        if (read_held_out(t, "test", files, d->test, &d->test_gold, &d->test_ground, err) < 0)
            return -1;
    }
    return 0;
}

/* The weights, the optimizer and the progress: the checkpoint's when resuming (ck), else
 * fresh ones from the seed. */
static void restore_or_start(Trainer *t, Checkpoint *ck)
{
    const Config *cfg = t->cfg;
    if (ck) {
        memcpy(t->model.P.mem, ck->model.params.mem, sizeof(float) * t->model.P.n);
        t->model.opt = ck->optim;
        memset(&ck->optim, 0, sizeof ck->optim);
        t->prog = ck->progress; /* what the next log line averages over included */
    } else {
        Pcg32 init;
        pcg32_seed(&init, (uint64_t)cfg->seed, RNG_STREAM_INIT);
        params_init(&t->model.P, &init, (float)cfg->model.init_range);
        const OptimKind kinds[] = {OPTIM_ADAM, OPTIM_SGD, OPTIM_ADADELTA};
        optim_init(&t->model.opt, kinds[cfg->training.optimizer], t->model.P.n,
                   (float)cfg->training.learning_rate);
        if (cfg->training.optimizer == OPTIMIZER_ADADELTA) {
            t->model.opt.beta2 = (float)cfg->training.adadelta_rho;
            t->model.opt.eps = (float)cfg->training.adadelta_eps;
        } else {
            t->model.opt.beta1 = (float)cfg->training.adam_beta1;
            t->model.opt.beta2 = (float)cfg->training.adam_beta2;
            t->model.opt.eps = (float)cfg->training.adam_eps;
        }
        t->prog = (Progress){.lr = cfg->training.learning_rate, .best_score = -INFINITY};
    }
}

/* The workspace and batch of the alignment dumps, sized for the longest probe pair. */
static void init_probe_buffers(Trainer *t, int argmax)
{
    const Corpus *v = t->data.valid;
    int max_src = 0, max_tgt = 0;
    for (int k = 0; k < t->probes.n; k++) {
        const int pair = t->probes.pairs[k];
        max_src = v->src_len[pair] > max_src ? v->src_len[pair] : max_src;
        max_tgt = v->tgt_len[pair] > max_tgt ? v->tgt_len[pair] : max_tgt;
    }
    model_workspace_init(&t->probes.ws, &t->model.dims, t->probes.n, max_src + 1, max_tgt + 1, 0);
    model_set_argmax(&t->probes.ws, argmax);
    batch_init(&t->probes.batch, t->probes.n, max_src + 1, max_tgt + 1);
    if (t->data.valid->pics.n) {
        batch_init_pictures(&t->probes.batch, t->data.valid->pics.size);
        t->probes.n_cell_names = max_src + 1;
        t->probes.cell_names = xmalloc_array((size_t)max_src + 1, sizeof(char *));
        for (int j = 0; j <= max_src; j++) {
            char name[16];
            model_cell_name(j, name, sizeof name);
            t->probes.cell_names[j] = xstrdup(name);
        }
    }
}

/* The model, the optimizer and the progress, and every buffer that training, validation
 * and the dumps use, sized once for their largest batch. */
static void init_model(Trainer *t, Checkpoint *ck)
{
    const Config *cfg = t->cfg;
    t->model.dims = config_model_dims(cfg, t->data.src_vocab.size, t->data.tgt_vocab.size);
    params_alloc(&t->model.P, &t->model.dims);
    restore_or_start(t, ck);
    int max_batch = (int)cfg->training.batch_size;
    batch_init(&t->data.batch, max_batch, t->data.train.max_src_len + 1,
               t->data.train.max_tgt_len + 1);
    const int picture_size = t->data.train.pics.n ? t->data.train.pics.size : 0;
    if (picture_size)
        batch_init_pictures(&t->data.batch, picture_size);
    int cells = 0;
    if (t->data.train_ground && model_has_alignments(&t->model.dims)) {
        const int G = model_grid_side(&t->model.dims);
        cells = G * G;
        batch_init_ground(&t->data.batch, cells);
    }
    shards_init(&t->model.shards, &t->model.dims, (int)cfg->training.shards,
                t->model.eval_blas_threads, max_batch,
                t->data.train.max_src_len + 1, t->data.train.max_tgt_len + 1, picture_size, cells);
    epochs_init(&t->data.batcher, &t->data.train, max_batch, cfg->training.batch_tokens,
                (int)cfg->training.bucket_batches, cfg->training.shuffle, (uint64_t)cfg->seed);
    if (subword_sampling_on(cfg))
        epochs_set_hook(&t->data.batcher, subword_sampling_epoch, t);
    if (ck)
        epochs_restore(&t->data.batcher, t->prog.epoch, t->prog.next_batch, t->prog.rng_state,
                        t->prog.rng_inc);
    /* validation, dumps and the test read the contexts decoding uses (a hard model's:
     * argmax, unless translate.attention_mode says otherwise) */
    const int argmax = config_decodes_argmax(cfg, -1);
    if (t->data.valid) {
        evaluator_init(&t->val.eval, &t->model.dims, t->data.valid, max_batch,
                       cfg->translate.max_output_ratio,
                       cfg->translate.max_output_extra);
        evaluator_set_argmax(&t->val.eval, argmax);
    }
    if (t->probes.n)
        init_probe_buffers(t, argmax);
    if (t->lead && t->data.valid && cfg->training.average_last > 1) { /* only the lead validates */
        if (ck && ck->average.k == cfg->training.average_last) { /* the resume's snapshots */
            t->val.average = ck->average;
            memset(&ck->average, 0, sizeof ck->average);
            weight_average_make_room(&t->val.average);
        } else {
            weight_average_init(&t->val.average, (int)cfg->training.average_last, t->model.P.n);
        }
        params_alloc(&t->val.averaged, &t->model.dims);
    }
    if (!ck) {
        t->prog.validated_step = 0;
        t->prog.dumped_step = -1;
    }
    t->run.last_saved = ck ? t->prog.step : -1;
}

/* A held-out set, its gold links or its boxes, freed with what they hold (NULL: none). */
static void free_corpus(Corpus *c)
{
    if (c)
        corpus_free(c);
    free(c);
}

static void free_gold(GoldAlignments *g)
{
    if (g)
        gold_free(g);
    free(g);
}

static void free_ground(GroundFile *g)
{
    if (g)
        ground_free(g);
    free(g);
}

void trainer_free(Trainer *t)
{
    free(t->config_yaml);
    vocab_free(&t->data.src_vocab);
    vocab_free(&t->data.tgt_vocab);
    subword_models_free(&t->data.subwords);
    corpus_free(&t->data.train);
    free_ground(t->data.train_ground);
    free_corpus(t->data.valid);
    free_corpus(t->data.test);
    free_gold(t->data.valid_gold);
    free_gold(t->data.test_gold);
    free_ground(t->data.valid_ground);
    free_ground(t->data.test_ground);
    params_free(&t->model.P);
    shards_free(&t->model.shards);
    optim_free(&t->model.opt);
    epochs_free(&t->data.batcher);
    batch_free(&t->data.batch);
    if (t->data.valid)
        evaluator_free(&t->val.eval);
    weight_average_free(&t->val.average);
    params_free(&t->val.averaged);
    for (int j = 0; j < t->probes.n_cell_names; j++)
        free(t->probes.cell_names[j]);
    free(t->probes.cell_names);
    free(t->probes.pairs);
    model_workspace_free(&t->probes.ws);
    batch_free(&t->probes.batch);
    rundir_close(&t->run.dir);
}

/* last.ckpt of resume_dir is damaged (err says how): if best.ckpt is whole, says so,
 * so the user can go on from there instead of starting over. */
static void offer_best_checkpoint(const char *resume_dir, Error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/checkpoints/best.ckpt", resume_dir);
    Checkpoint best;
    Error ignored;
    if (checkpoint_load(&best, path, 1, &ignored) == 0) {
        size_t used = strlen(err->msg);
        snprintf(err->msg + used, sizeof err->msg - used, "; checkpoints/best.ckpt (step %ld) is "
                 "intact: copy it over last.ckpt to resume from there%s", best.progress.step,
                 best.average.k > 1 ? " (from its averaged weights: training.average_last)" : "");
    }
    checkpoint_free(&best);
}

/* Resuming: last.ckpt of resume_dir, whose settings must be cfg's; the run goes on in
 * resume_dir. Returns 0 or -1 (err set). */
static int load_for_resume(Checkpoint *ck, Config *cfg, const char *resume_dir, Error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/checkpoints/last.ckpt", resume_dir);
    if (checkpoint_load(ck, path, 1, err) < 0) {
        offer_best_checkpoint(resume_dir, err);
        return -1;
    }
    if (cfg->training.shards == 0) /* "as many as threads" was resolved when the run began */
        cfg->training.shards = ck->model.config.training.shards;
    if (check_resume_config(cfg, &ck->model.config, path, err) < 0)
        return -1;
    snprintf(cfg->run_dir, sizeof cfg->run_dir, "%s", resume_dir);
    return 0;
}

/* training.threads, resolved: 0 is one thread for batches of up to 4 sentences, whose
 * products are too small to share out (measured: 1.3x faster at one sentence), else
 * one per core. */
static int training_threads(const Config *cfg)
{
    return cfg->training.threads > 0 ? (int)cfg->training.threads
           : cfg->training.batch_size <= 4 ? 1 : openblas_get_num_procs();
}

/* training.shards 0: one per thread of every process, but no more than the batch has
 * sentences or the key allows (so that the saved config loads again), and a multiple of
 * the processes. */
static long resolved_shards(const Config *cfg)
{
    const long ranks = ranks_size();
    long n = training_threads(cfg) * ranks;
    n = n < cfg->training.batch_size ? n : cfg->training.batch_size;
    n = n < CONFIG_MAX_SHARDS ? n : CONFIG_MAX_SHARDS;
    return n / ranks * ranks;
}

/* Under mpirun, each process runs shards / processes of the shards. */
static int check_shards_share(const Config *cfg, Error *err)
{
    const long shards = cfg->training.shards, ranks = ranks_size();
    if (shards >= 1 && shards % ranks == 0)
        return 0;
    if (shards == 0)
        return error_set(err, "%ld processes (mpirun -np %ld) cannot share a batch of %ld "
                         "sentences: each needs at least one (training.batch_size)", ranks,
                         ranks, cfg->training.batch_size);
    return error_set(err, "training.shards is %ld, which %ld processes (mpirun -np %ld) cannot "
                     "share: the number of processes must divide the number of shards", shards,
                     ranks, ranks);
}

/* This process's shards run on up to `threads` threads with one BLAS thread each; one
 * shard in all gets BLAS's threads, and validation and translation always have them
 * all. Decided by the shards of the whole batch, not of this process, so that N
 * processes make the very products one process makes (processes times threads
 * shards keep every core busy). */
static void set_threads(Trainer *t)
{
    const int threads = training_threads(t->cfg);
    t->model.eval_blas_threads = threads;
    t->model.step_blas_threads = t->cfg->training.shards > 1 ? 1 : threads;
    openblas_set_num_threads(threads);
}

int trainer_setup(Trainer *t, const char *resume_dir, Error *err)
{
    Config *cfg = t->cfg;
    Checkpoint ck = {0};
    int rc = TRAIN_BAD_INPUT;
    if (resume_dir && load_for_resume(&ck, cfg, resume_dir, err) < 0)
        goto done;
    if (cfg->training.shards == 0) /* before the config is saved: a resume keeps it */
        cfg->training.shards = resolved_shards(cfg);
    if (check_shards_share(cfg, err) < 0)
        goto done;
    if (read_data(t, resume_dir ? &ck : NULL, err) < 0) {
        if (interrupt_pending()) { /* the readers stop for a signal; nothing is written yet */
            size_t used = strlen(err->msg);
            snprintf(err->msg + used, sizeof err->msg - used, "; nothing was written");
            rc = TRAIN_SIGNALLED;
        }
        goto done;
    }
    t->config_yaml = config_to_yaml(cfg);
    t->run.resuming = resume_dir != NULL;
    t->run.resume_marks = (RunMarks){ck.progress.metrics_bytes, ck.progress.alignments_bytes};
    set_threads(t);
    init_model(t, resume_dir ? &ck : NULL);
    rc = TRAIN_OK;
done:
    checkpoint_free(&ck);
    return rc;
}

int trainer_open_run(Trainer *t, Error *err)
{
    const Config *cfg = t->cfg;
    int opened = 0;
    if (t->lead)
        opened = rundir_open(&t->run.dir, cfg->run_dir,
                             t->run.resuming ? &t->run.resume_marks : NULL, err);
    else
        rundir_open_quiet(&t->run.dir, cfg->run_dir);
    if (opened < 0)
        return opened == -2 ? TRAIN_IO_ERROR : TRAIN_BAD_INPUT;
    if (rundir_write_config(&t->run.dir, t->config_yaml, err) < 0)
        return TRAIN_IO_ERROR;
    return TRAIN_OK;
}
