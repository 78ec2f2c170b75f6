/* cmd_bench.c: `s2s bench`: training speed on synthetic data, the same sizes and
 * length distribution as scripts/torch_reference.py bench (lengths uniform 5..20 words plus
 * </s> on each side, tokens uniform over the non-special vocabulary), so `make bench`
 * can compare the two side by side. A step is what a training step is: zero the
 * gradients, forward, backward, clip-free Adam update. */
#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/mem.h"
#include "base/ranks.h"
#include "base/rng.h"
#include "cli/bench_translate.h"
#include "cli/command.h"
#include "model/batch.h"
#include "model/model.h"
#include "nn/small_gemm.h"
#include "train/model_grad.h"
#include "train/shards.h"
#include "train/optim.h"

static const char BENCH_USAGE[] =
    "usage: s2s bench [--size S|M|L] [--batch B] [--steps N] [--warmup W] [--threads T]\n"
    "                 [--shards K] [--seed S] [--heads H] [--self-attention L]\n"
    "                 [--attention-only] [--decoder-layers L] [--hard] [--image]\n"
    "                 [--translate [--beam K]] [--no-overlap]\n"
    "       s2s bench --sgemm-peak [--threads T]\n"
    "\n"
    "Times training steps on synthetic batches (lengths uniform 5..20 plus </s>, as\n"
    "the PyTorch baseline draws them) and prints target tokens per second, the\n"
    "seconds per step and the peak resident memory, then a `RESULT {json}` line.\n"
    "Sizes (m, n, p, a, l, V): S 64,64,128,64,128,1000; M 256,256,512,256,256,8000;\n"
    "L 512,512,1024,512,512,16000. Defaults: S, batch 32, 200 steps after 20 warm-up\n"
    "steps; threads: one up to batch 4, else one per core; shards (training.shards):\n"
    "as many as threads. --heads: attention heads\n"
    "(default 1); --self-attention: that many self-attention layers (4 heads, ffn 4 d_h)\n"
    "on the encoder; --attention-only: no recurrent encoder (model.encoder_cell none,\n"
    "2 layers unless --self-attention says); --decoder-layers L: the Transformer decoder\n"
    "(model.decoder_cell none) of L layers, m wide, --heads heads, ffn 4 m (with\n"
    "--attention-only, the whole Transformer); --hard: hard attention, trained by sampling\n"
    "(training's defaults); --image: an image model instead of a size (64 x 64\n"
    "pictures, conv blocks 16, 32, 64, configs/shapes.yaml's until issue 45; m 64, p 128,\n"
    "a 64, l 128; 21 words),\n"
    "on 8 batches of random pictures used in turn. --translate times decoding instead\n"
    "(greedy, or beam search of --beam K) of --steps batches of --batch sentences, on\n"
    "weights and sources made by a formula scripts/torch_reference.py shares, in\n"
    "sentences per second. Under mpirun, each process runs its share of the shards, and\n"
    "rank 0 also reports the exchange; --no-overlap sends the output layer's gradient\n"
    "after the backward pass instead of during it. --sgemm-peak measures the\n"
    "machine's matrix-product speed instead: the best of five 2048 x 2048 x 2048 sgemm,\n"
    "in GFLOP/s. An option's value is the next argument: --steps 50, not --steps=50.\n";

/* The best of five large products: what the hardware does at its best right now. */
static int sgemm_peak(void)
{
    const int n = 2048;
    float *a = xmalloc_array((size_t)n * n, sizeof(float)), *b = xmalloc_array((size_t)n * n, sizeof(float));
    float *c = xcalloc((size_t)n * n, sizeof(float));
    for (size_t k = 0; k < (size_t)n * n; k++) {
        a[k] = 1e-3f * (float)(k % 7);
        b[k] = 1e-3f * (float)(k % 5);
    }
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now_seconds();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
        double dt = now_seconds() - t0;
        best = dt < best ? dt : best;
    }
    printf("RESULT {\"sgemm_gflops\": %.2f}\n", 2.0 * n * n * n / best / 1e9);
    free(a);
    free(b);
    free(c);
    return EXIT_OK;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    const char *size;
    long batch, steps, warmup, threads, shards, seed;
    long heads, sa_layers; /* --heads, --self-attention (-1: not given) */
    long dec_layers;       /* --decoder-layers (0: the recurrent decoder) */
    int peak;              /* --sgemm-peak */
    int attention_only;    /* --attention-only */
    int hard, image;       /* --hard, --image */
    int no_overlap;        /* --no-overlap */
    int translate;         /* --translate */
    long beam;             /* --beam */
} BenchOptions;

/* Reads the options into o. Returns -1 to go on, or the exit code (--help, an error). */
static int parse_options(BenchOptions *o, int argc, char **argv)
{
    enum { HELP, PEAK, SIZE, BATCH, STEPS, WARMUP, THREADS, SHARDS, SEED, HEADS, SA, ONLY, HARD,
           IMAGE, TRANSLATE, BEAM, NO_OVERLAP, DEC };
    static const CmdOption OPTS[] = {
        [HELP] = {"--help", 0}, [PEAK] = {"--sgemm-peak", 0}, [SIZE] = {"--size", 1},
        [BATCH] = {"--batch", 1}, [STEPS] = {"--steps", 1}, [WARMUP] = {"--warmup", 1},
        [THREADS] = {"--threads", 1}, [SHARDS] = {"--shards", 1}, [SEED] = {"--seed", 1}, [HEADS] = {"--heads", 1},
        [SA] = {"--self-attention", 1}, [ONLY] = {"--attention-only", 0}, [HARD] = {"--hard", 0},
        [IMAGE] = {"--image", 0}, [TRANSLATE] = {"--translate", 0}, [BEAM] = {"--beam", 1},
        [NO_OVERLAP] = {"--no-overlap", 0}, [DEC] = {"--decoder-layers", 1}, {NULL, 0}};
    *o = (BenchOptions){.size = "S", .batch = 32, .steps = 200, .warmup = 20, .seed = 1,
                        .heads = 1, .sa_layers = -1, .beam = 1};
    for (int a = 0; a < argc; a++) {
        const char *value = NULL;
        int opt = cmd_option("bench", OPTS, argc, argv, &a, &value);
        if (opt == -2)
            return EXIT_USAGE;
        if (opt == -1)
            return cmd_usage_error("bench: unexpected argument `%s` (see s2s bench --help)", argv[a]);
        if (opt == HELP) {
            fputs(BENCH_USAGE, stdout);
            return EXIT_OK;
        }
        if (opt == PEAK) {
            o->peak = 1;
            continue;
        }
        if (opt == ONLY || opt == HARD || opt == IMAGE || opt == TRANSLATE || opt == NO_OVERLAP) {
            *(opt == ONLY ? &o->attention_only : opt == HARD ? &o->hard : opt == IMAGE ? &o->image
              : opt == TRANSLATE ? &o->translate : &o->no_overlap) = 1;
            continue;
        }
        if (opt == SIZE) {
            o->size = value;
            continue;
        }
        /* each count's range, as the config's keys have them where there is one */
        static const long RANGE[][2] = {[BATCH] = {1, 65536}, [STEPS] = {1, 100000},
                                        [WARMUP] = {0, 100000}, [THREADS] = {0, 1024},
                                        [SHARDS] = {0, 64},
                                        [SEED] = {0, 4294967295L}, [HEADS] = {1, ATTN_MAX_HEADS},
                                        [SA] = {0, SA_MAX_LAYERS}, [BEAM] = {1, 100},
                                        [DEC] = {1, DEC_MAX_LAYERS}};
        char *end;
        errno = 0;
        long v = strtol(value, &end, 10);
        if (*end || !*value || errno || v < RANGE[opt][0] || v > RANGE[opt][1]) {
            char what[160];
            snprintf(what, sizeof what, "%s: expected %ld to %ld, got `%%s`", OPTS[opt].name,
                     RANGE[opt][0], RANGE[opt][1]);
            return cmd_usage_error(what, value);
        }
        long *field[] = {[BATCH] = &o->batch, [STEPS] = &o->steps, [WARMUP] = &o->warmup,
                         [THREADS] = &o->threads, [SHARDS] = &o->shards, [SEED] = &o->seed, [HEADS] = &o->heads,
                         [SA] = &o->sa_layers, [BEAM] = &o->beam, [DEC] = &o->dec_layers};
        *field[opt] = v;
    }
    return -1;
}

enum { MIN_LEN = 5, MAX_LEN = 20, IMAGE_BATCHES = 8 };

/* An image model's pictures for bt's captions: uniform in [-0.5, 0.5), as pictures less
 * their channel means. */
static void synthetic_pictures(Batch *bt, const Dims *d, int n, Pcg32 *rng)
{
    const int G = model_grid_side(d);
    batch_fill_pictures(bt, n, G * G, bt->pair_tgt, bt->pair_tgt_n);
    for (size_t x = 0; x < (size_t)n * d->image_size * d->image_size * 3; x++)
        bt->pixels[x] = pcg32_uniform(rng, -0.5f, 0.5f);
}

/* count batches of `batch` random pairs: each side's length uniform in MIN_LEN..MAX_LEN
 * words (then </s>), words uniform over the non-special vocabulary (an image model's
 * sources random pictures); sorted by target length, as training sorts them. Returns a
 * malloc'd array. */
static Batch *synthetic_batches(const Dims *d, long count, long batch, uint64_t seed)
{
    const int image = model_reads_pictures(d), G = model_grid_side(d);
    Batch *batches = xmalloc_array((size_t)count, sizeof(Batch));
    int (*words)[2][MAX_LEN] = xmalloc_array((size_t)batch, sizeof *words);
    Pcg32 rng;
    pcg32_seed(&rng, seed, RNG_STREAM_DATA);
    for (long s = 0; s < count; s++) {
        Batch *bt = &batches[s];
        batch_init(bt, (int)batch, image ? G * G : MAX_LEN + 1, MAX_LEN + 1);
        if (image)
            batch_init_pictures(bt, d->image_size);
        for (long b = 0; b < batch; b++) {
            bt->pair_src_n[b] = MIN_LEN + (int)pcg32_below(&rng, MAX_LEN - MIN_LEN + 1);
            bt->pair_tgt_n[b] = MIN_LEN + (int)pcg32_below(&rng, MAX_LEN - MIN_LEN + 1);
            for (int k = 0; k < MAX_LEN; k++) {
                words[b][0][k] = image ? TOK_UNK : N_SPECIAL_TOKENS + (int)pcg32_below(&rng, (uint32_t)(d->src_vocab - N_SPECIAL_TOKENS));
                words[b][1][k] = N_SPECIAL_TOKENS + (int)pcg32_below(&rng, (uint32_t)(d->tgt_vocab - N_SPECIAL_TOKENS));
            }
            bt->pair_src[b] = words[b][0];
            bt->pair_tgt[b] = words[b][1];
        }
        if (image)
            synthetic_pictures(bt, d, (int)batch, &rng);
        else
            batch_fill(bt, (int)batch, bt->pair_src, bt->pair_src_n, bt->pair_tgt, bt->pair_tgt_n);
        batch_sort_by_target(bt);
    }
    free(words);
    return batches;
}

/* Trains on the batches with Adam (lr 1e-3): warmup steps, then steps timed one by one
 * into times (steps). Returns the target tokens of the timed steps; the losses of the
 * first and the last step go to *first_loss and *last_loss. */
static long train_timed(const Dims *d, const Batch *batches, long n_batches,
                        const BenchOptions *o, double *times, double *first_loss,
                        double *last_loss, double *exchange_seconds, double *exchange_bytes,
                        double *exposed_seconds, size_t *overlapped)
{
    Params P;
    params_alloc(&P, d);
    Shards shards;
    shards_init(&shards, d, (int)o->shards, (int)o->threads, (int)o->batch,
                batches[0].max_src_steps, MAX_LEN + 1, d->image_size, 0);
    if (o->no_overlap)
        shards_set_overlap(&shards, 0);
    Pcg32 init;
    pcg32_seed(&init, (uint64_t)o->seed, RNG_STREAM_INIT);
    params_init(&P, &init, 0.1f);
    const Regularization none = {0};
    Optimizer opt;
    optim_init(&opt, OPTIM_ADAM, P.n, 1e-3f);
    long tokens = 0;
    for (long s = 0; s < o->warmup + o->steps; s++) {
        const Batch *bt = &batches[s % n_batches];
        /* a hard model's step as training's defaults make it (trainer.c) */
        HardAttention hard = {.mode = CONTEXT_SAMPLE, .expected_prob = 0.5,
                              .reinforce_weight = 1, .entropy_weight = 0.002, .token_reward = 1};
        pcg32_seed(&hard.rng, (uint64_t)o->seed, RNG_STREAM_HARD);
        pcg32_advance(&hard.rng, (uint64_t)s << 32);
        if (s == o->warmup) {
            *exchange_seconds = -ranks_seconds();
            *exchange_bytes = -ranks_bytes_sent();
            *exposed_seconds = -shards.exposed_seconds;
        }
        double t0 = now_seconds();
        double loss = shards_forward_backward(&shards, &P, bt, &none, d->hard ? &hard : NULL);
        if (d->hard) /* it returned the surrogate J: report the cross-entropy, as training */
            loss = shards.hard_stats.nll;
        model_grad_apply(&opt, &P, shards_gradient(&shards));
        double dt = now_seconds() - t0;
        if (s == 0)
            *first_loss = loss;
        *last_loss = loss;
        if (s >= o->warmup) {
            times[s - o->warmup] = dt;
            tokens += bt->n_tgt_tokens;
        }
    }
    *exchange_seconds += ranks_seconds();
    *exchange_bytes += ranks_bytes_sent();
    *exposed_seconds += shards.exposed_seconds;
    *overlapped = shards.overlap ? sizeof(float) * (shards.grad[0].dense.n - shards.output_from) : 0;
    params_free(&P);
    shards_free(&shards);
    optim_free(&opt);
    return tokens;
}

/* The model the options ask for into d. Returns -1, or the exit code of a usage error. */
static int bench_dims(const BenchOptions *o, Dims *out)
{
    Dims d;
    if (o->image) { /* configs/shapes.yaml's model before issue 45 (8 x 8 grid, no
                     * self-attention layer; the bench's rows keep it), its 17 caption
                     * words and 4 specials */
        d = (Dims){N_SPECIAL_TOKENS, 21, 64, 0, 128, 64, 128, .enc_layers = 1};
        model_use_image_encoder(&d, 64, (const int[]){16, 32, 64}, 3, 1);
    } else if (!strcmp(o->size, "S"))
        d = (Dims){1000, 1000, 64, 64, 128, 64, 128, .enc_layers = 1};
    else if (!strcmp(o->size, "M"))
        d = (Dims){8000, 8000, 256, 256, 512, 256, 256, .enc_layers = 1};
    else if (!strcmp(o->size, "L"))
        d = (Dims){16000, 16000, 512, 512, 1024, 512, 512, .enc_layers = 1};
    else
        return cmd_usage_error("--size: expected S, M or L, got `%s`", o->size);
    if (o->image && o->attention_only)
        return cmd_usage_error("--image and --attention-only: an image model has no text "
                               "encoder to leave out%s", "");
    if (o->translate && (o->image || o->hard))
        return cmd_usage_error("--translate: times text models with soft attention (not %s)",
                               o->image ? "--image" : "--hard");
    d.heads = (int)o->heads;
    d.hard = o->hard;
    if (!o->image)
        d.encoder = o->attention_only ? ENCODER_ATTN : ENCODER_BIRNN;
    d.sa_layers = o->sa_layers >= 0 ? (int)o->sa_layers : o->attention_only ? 2 : 0;
    d.sa_heads = 4;
    d.sa_ffn = 4 * model_annotation_width(&d);
    char given[32];
    snprintf(given, sizeof given, "%ld", o->sa_layers);
    if (d.sa_layers > SA_MAX_LAYERS || (o->attention_only && d.sa_layers < 1))
        return cmd_usage_error("--self-attention: expected 0 to " SA_MAX_LAYERS_TEXT " layers (with "
                               "--attention-only, 1 to " SA_MAX_LAYERS_TEXT "), got %s", given);
    if (o->dec_layers > 0) { /* as config_model_dims makes the Transformer decoder */
        if (o->hard || o->image)
            return cmd_usage_error("--decoder-layers: times a text model with soft attention "
                                   "(not %s)", o->hard ? "--hard" : "--image");
        d.decoder = DECODER_TRANSFORMER;
        d.dec_layers = (int)o->dec_layers;
        d.dec_ffn = 4 * d.emb;
        d.readout = d.emb;
        d.score = SCORE_DOT;
    }
    const AttnDims ad = model_attn_dims(&d);
    snprintf(given, sizeof given, "%ld", o->heads);
    if (model_is_transformer(&d) ? d.emb % d.heads != 0 : attn_size_problems(&ad) != 0)
        return cmd_usage_error("--heads: %s heads do not split the model's vectors evenly (try "
                               "1, 2, 4 or 8)", given);
    *out = d;
    return -1;
}

int cmd_bench(int argc, char **argv)
{
    BenchOptions o;
    int rc = parse_options(&o, argc, argv);
    if (rc >= 0)
        return rc;
    if (o.peak) {
        if (o.threads > 0)
            openblas_set_num_threads((int)o.threads);
        return sgemm_peak();
    }
    Dims d;
    if ((rc = bench_dims(&o, &d)) >= 0)
        return rc;
    /* as training does with training.threads 0: one BLAS thread for one sentence at a
     * time, whose products are too small to share out; shards one per thread, each with
     * one BLAS thread */
    if (o.threads == 0)
        o.threads = o.batch <= 4 ? 1 : openblas_get_num_procs();
    const int ranks = ranks_size(); /* under mpirun: each process runs its share */
    if (o.shards == 0)
        o.shards = o.threads * ranks;
    if (o.shards % ranks)
        return cmd_usage_error("--shards: %s processes (mpirun -np) must divide the number of "
                               "shards", getenv("OMPI_COMM_WORLD_SIZE"));
    if (o.translate) { /* decoding: one pass, BLAS's threads (as s2s translate) */
        openblas_set_num_threads((int)o.threads);
        return bench_translate(&d, o.size, (int)o.batch, (int)o.steps, (int)o.warmup, (int)o.beam);
    }
    openblas_set_num_threads(o.shards > 1 ? 1 : (int)o.threads);
    small_gemm_enable(o.shards > 1); /* as training has them */

    /* every batch drawn before the clock starts, as the PyTorch baseline does */
    const long total = o.warmup + o.steps;
    /* an image model's pictures are large: a few batches in turn */
    const long n_batches = o.image && total > IMAGE_BATCHES ? IMAGE_BATCHES : total;
    Batch *batches = synthetic_batches(&d, n_batches, o.batch, (uint64_t)o.seed);
    double *times = xmalloc_array((size_t)o.steps, sizeof(double)), first_loss = 0, loss = 0;
    double exchange = 0, sent = 0, exposed = 0;
    size_t overlapped = 0; /* bytes of the output layer a rank sends during the passes */
    long tokens = train_timed(&d, batches, n_batches, &o, times, &first_loss, &loss, &exchange,
                              &sent, &exposed, &overlapped);
    double seconds = 0;
    for (long s = 0; s < o.steps; s++)
        seconds += times[s];
    qsort(times, (size_t)o.steps, sizeof(double), by_double);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss_mib = (double)ru.ru_maxrss / 1024.0;
    Params counted;
    size_t n_params = params_carve(&counted, NULL, &d);
    char model[256];
    model_describe(&d, model, sizeof model);
    if (ranks_rank() != 0) /* rank 0 reports */
        goto done;
    printf("s2s bench: size %s, batch %ld in %ld shard%s on %d process%s of %ld thread%s, %ld "
           "step%s after %ld warm-up, %zu parameters: %s\n", o.image ? "image" : o.size, o.batch,
           o.shards, plural(o.shards), ranks, ranks > 1 ? "es" : "", o.threads,
           plural(o.threads), o.steps, plural(o.steps), o.warmup, n_params, model);
    printf("target tokens/s      : %.1f\n", (double)tokens / seconds);
    printf("s/step mean, median  : %.5f, %.5f\n", seconds / (double)o.steps, times[o.steps / 2]);
    printf("peak RSS             : %.1f MiB\n", rss_mib);
    printf("loss first, final    : %.4f, %.4f\n", first_loss, loss);
    if (ranks > 1)
        printf("s/step in MPI        : %.5f (rank 0: sending, receiving and waiting); %.2f MB "
               "sent a step, %.2f MB of it during the backward pass; %.5f s/step of exchange "
               "after it\n", exchange / (double)o.steps, sent / (double)o.steps / 1e6,
               (double)overlapped / 1e6, exposed / (double)o.steps);
    printf("RESULT {\"size\": \"%s\", \"batch\": %ld, \"steps\": %ld, \"tgt_tokens_per_s\": %.3f, "
           "\"s_per_step_median\": %.6f, \"peak_rss_mib\": %.1f, \"final_loss\": %.6f, "
           "\"processes\": %d, \"mpi_s_per_step\": %.6f, \"mpi_bytes_per_step\": %.0f, "
           "\"overlapped_bytes_per_step\": %zu, \"exposed_s_per_step\": %.6f}\n",
           o.image ? "image" : o.size, o.batch, o.steps, (double)tokens / seconds,
           times[o.steps / 2], rss_mib, loss, ranks, exchange / (double)o.steps,
           sent / (double)o.steps, overlapped, exposed / (double)o.steps);
done:
    for (long s = 0; s < n_batches; s++)
        batch_free(&batches[s]);
    free(batches);
    free(times);
    return cmd_flush_stdout() == 0 ? EXIT_OK : EXIT_IO;
}
