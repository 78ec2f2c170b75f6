/* tinyrun.c: the shared tiny training setup (see tinyrun.h). */
#include "support/tinyrun.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "support/cli.h"

const char *S2S = "./s2s";
const char *S2S_FAULTS = "./build/s2s-faults";

void tinyrun_init(void)
{
    if (getenv("S2S_BIN"))
        S2S = getenv("S2S_BIN");
    if (getenv("S2S_FAULTS_BIN"))
        S2S_FAULTS = getenv("S2S_FAULTS_BIN");
}

const char *s2s_absolute(void)
{
    static char path[PATH_MAX + 64];
    char cwd[PATH_MAX];
    ck_assert(getcwd(cwd, sizeof cwd) != NULL);
    if (S2S[0] == '/')
        snprintf(path, sizeof path, "%s", S2S);
    else
        snprintf(path, sizeof path, "%s/%s", cwd, S2S);
    return path;
}

/* A reversal task: words w0..w19, 2 to 6 of them, the target is the source reversed. */
void write_reverse_corpus(const char *dir, const char *name, int pairs, uint64_t seed,
                                 const char *eol)
{
    char src_path[600], tgt_path[600], align_path[600];
    snprintf(src_path, sizeof src_path, "%s/%s.src", dir, name);
    snprintf(tgt_path, sizeof tgt_path, "%s/%s.tgt", dir, name);
    snprintf(align_path, sizeof align_path, "%s/%s.align", dir, name);
    FILE *fs = fopen(src_path, "wb"), *ft = fopen(tgt_path, "wb"), *fa = fopen(align_path, "wb");
    ck_assert(fs && ft && fa);
    Pcg32 rng;
    pcg32_seed(&rng, seed, 9);
    for (int p = 0; p < pairs; p++) {
        int n = 2 + (int)pcg32_below(&rng, 5), w[6];
        for (int k = 0; k < n; k++)
            w[k] = (int)pcg32_below(&rng, 20);
        for (int k = 0; k < n; k++)
            fprintf(fs, "%sw%d", k ? " " : "", w[k]);
        for (int k = n - 1; k >= 0; k--)
            fprintf(ft, "%sw%d", k < n - 1 ? " " : "", w[k]);
        for (int k = 0; k < n; k++)
            fprintf(fa, "%s%d-%d", k ? " " : "", k, n - 1 - k);
        fputs(eol, fs);
        fputs(eol, ft);
        fputs(eol, fa);
    }
    fclose(fs);
    fclose(ft);
    fclose(fa);
}

/* dir/tiny.yaml: a tiny model on dir/train.*, validated on dir/valid.*. */
void write_tiny_setup(const char *dir)
{
    write_reverse_corpus(dir, "train", 300, 1, "\n");
    write_reverse_corpus(dir, "valid", 20, 2, "\n");
    char path[600], text[2048];
    snprintf(path, sizeof path, "%s/tiny.yaml", dir);
    snprintf(text, sizeof text,
             "name: tiny\nrun_dir: %s/run\n"
             "data:\n  train_src: %s/train.src\n  train_tgt: %s/train.tgt\n"
             "  valid_src: %s/valid.src\n  valid_tgt: %s/valid.tgt\n"
             "model:\n  embedding_size: 8\n  encoder_size: 8\n  decoder_size: 16\n"
             "  attention_size: 8\n  readout_size: 16\n"
             "training:\n  batch_size: 8\n  max_steps: 20\n  valid_every: 10\n  log_every: 1\n"
             "  threads: 1\n  learning_rate: 0.01\n",
             dir, dir, dir, dir, dir);
    write_file(path, text);
}

/* Runs s2s train on dir/tiny.yaml with up to 12 --set overrides. */
int train(const char *binary, const char *dir, const char *const *sets,
                 const char *const *env, const char *err_name)
{
    char config[600], err[600];
    snprintf(config, sizeof config, "%s/tiny.yaml", dir);
    snprintf(err, sizeof err, "%s/%s", dir, err_name ? err_name : "stderr.txt");
    const char *argv[28] = {binary, "train", config};
    int a = 3;
    for (int k = 0; sets && sets[k]; k++) {
        ck_assert_int_lt(k, 12);
        argv[a++] = "--set";
        argv[a++] = sets[k];
    }
    argv[a] = NULL;
    return run_command(argv, NULL, err, env);
}

void load_checkpoint(Checkpoint *ck, const char *run_dir, const char *name)
{
    char path[700];
    Error err;
    snprintf(path, sizeof path, "%s/checkpoints/%s", run_dir, name);
    ck_assert_msg(checkpoint_load(ck, path, 1, &err) == 0, "%s", err.msg);
}

void assert_same_training_state(const char *run_a, const char *run_b, const char *name)
{
    Checkpoint a, b;
    load_checkpoint(&a, run_a, name);
    load_checkpoint(&b, run_b, name);
    ck_assert_uint_eq(a.model.params.n, b.model.params.n);
    ck_assert_msg(!memcmp(a.model.params.mem, b.model.params.mem, sizeof(float) * a.model.params.n),
                  "%s of %s and %s: the weights differ", name, run_a, run_b);
    ck_assert_int_eq(a.optim.kind, b.optim.kind);
    ck_assert_int_eq(a.optim.step, b.optim.step);
    if (a.optim.m)
        ck_assert_msg(!memcmp(a.optim.m, b.optim.m, sizeof(float) * a.model.params.n) &&
                      !memcmp(a.optim.v, b.optim.v, sizeof(float) * a.model.params.n),
                      "%s of %s and %s: the optimizer's moments differ", name, run_a, run_b);
    Progress p = a.progress, q = b.progress;
    p.train_seconds = q.train_seconds = p.log_seconds = q.log_seconds = 0;
    p.metrics_bytes = q.metrics_bytes = 0;
    ck_assert_msg(p.step == q.step && p.epoch == q.epoch && p.next_batch == q.next_batch &&
                  p.rng_state == q.rng_state && p.rng_inc == q.rng_inc && p.lr == q.lr &&
                  p.best_score == q.best_score && p.best_step == q.best_step &&
                  p.stale == q.stale && p.plateau == q.plateau && p.bad_steps == q.bad_steps &&
                  p.skipped_steps == q.skipped_steps && p.validations == q.validations &&
                  p.tokens == q.tokens && p.alignments_bytes == q.alignments_bytes &&
                  p.log_loss == q.log_loss && p.log_steps == q.log_steps &&
                  p.log_tokens == q.log_tokens && p.validated_step == q.validated_step &&
                  a.average.k == b.average.k && a.average.count == b.average.count &&
                  a.average.oldest == b.average.oldest,
                  "%s of %s and %s: the progress differs (step %ld and %ld, lr %g and %g, "
                  "validations %ld and %ld)", name, run_a, run_b, p.step, q.step, p.lr, q.lr,
                  p.validations, q.validations);
    ck_assert_msg(!a.average.count || !memcmp(a.average.ring, b.average.ring, a.average.count *
                                              a.average.n * sizeof(float)),
                  "%s of %s and %s: the averaged snapshots differ", name, run_a, run_b);
    checkpoint_free(&a);
    checkpoint_free(&b);
}

/* dir/c.yaml: one step of a tiny model on the given data section (YAML lines), run
 * directory dir/run (removed first). */
void write_data_config(const char *dir, const char *data)
{
    char config[600], run[600], text[8192], clean[700];
    snprintf(config, sizeof config, "%s/c.yaml", dir);
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(text, sizeof text,
             "run_dir: %s\ndata:\n%s\nmodel:\n  embedding_size: 4\n  encoder_size: 4\n"
             "  decoder_size: 8\n  attention_size: 4\n  readout_size: 8\n"
             "training:\n  max_steps: 1\n  threads: 1\n", run, data);
    write_file(config, text);
    snprintf(clean, sizeof clean, "rm -rf '%s'", run);
    ck_assert_int_eq(system(clean), 0);
}

/* Trains as write_data_config says; returns the exit code and the first line of stderr. A
 * failed run must not have created its run directory. */
int train_on_data(const char *dir, const char *data, char *line, size_t cap)
{
    char config[600], err_path[600], run[600];
    snprintf(config, sizeof config, "%s/c.yaml", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    snprintf(run, sizeof run, "%s/run", dir);
    write_data_config(dir, data);
    const char *argv[] = {S2S, "train", config, NULL};
    int rc = run_command(argv, NULL, err_path, NULL);
    first_line(err_path, line, cap);
    if (rc != 0)
        ck_assert_msg(!path_exists(run), "the failed run (exit %d: %s) created %s", rc, line, run);
    return rc;
}

void tiny_model_run(char *dir, size_t cap, const char *name, const char *const *extra)
{
    scratch_dir(dir, cap, name);
    write_tiny_setup(dir);
    const char *sets[8] = {"training.max_steps=80", "training.valid_every=40", NULL};
    for (int k = 0; extra && extra[k]; k++)
        sets[2 + k] = extra[k];
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
}

const char *const TINY_TRANSFORMER[] = {"model.encoder_cell=none", "model.self_attention_layers=1",
                                        "model.decoder_cell=none", "model.decoder_layers=2",
                                        "model.attention_heads=2", NULL};

void tiny_trained_and_random(const char *name, const char *const *extra,
                             void (*check)(const char *run, double random_scale))
{
    char dir[512], run[600];
    tiny_model_run(dir, sizeof dir, name, extra);
    snprintf(run, sizeof run, "%s/run", dir);
    check(run, 0);
    check(run, 1);
}
