/* test_cmd_train.c: `s2s train` and `s2s gradcheck` end to end on a tiny generated corpus:
 * the run directory, the effective config, exact resume, refusing changed settings,
 * SIGINT/SIGTERM, the non-finite guard (with the fault hooks of build/s2s-faults),
 * corpus errors with their messages, CRLF, and the gradient check command. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/rng.h"
#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"
#include "text/number.h"
#include "train/checkpoint.h"

static void assert_same_weights_at(const char *run_a, const char *run_b, int same_step)
{
    Checkpoint a, b;
    load_checkpoint(&a, run_a, "last.ckpt");
    load_checkpoint(&b, run_b, "last.ckpt");
    ck_assert_uint_eq(a.model.params.n, b.model.params.n);
    ck_assert_msg(memcmp(a.model.params.mem, b.model.params.mem,
                         sizeof(float) * a.model.params.n) == 0,
                  "weights of %s and %s differ", run_a, run_b);
    if (a.optim.m && b.optim.m) {
        ck_assert(memcmp(a.optim.m, b.optim.m, sizeof(float) * a.model.params.n) == 0);
        ck_assert(memcmp(a.optim.v, b.optim.v, sizeof(float) * a.model.params.n) == 0);
    }
    if (same_step)
        ck_assert_int_eq(a.progress.step, b.progress.step);
    checkpoint_free(&a);
    checkpoint_free(&b);
}

static void assert_same_weights(const char *run_a, const char *run_b)
{
    assert_same_weights_at(run_a, run_b, 1);
}

/* Removes `"key":value,` (or a last `,"key":value`) from a JSON record in place. */
static void drop_field(char *record, const char *key)
{
    char *at = strstr(record, key);
    if (!at)
        return;
    char *end = at + strcspn(at, ",}");
    if (*end == ',') {
        end++;
    } else if (at > record && at[-1] == ',') {
        at--;
    }
    memmove(at, end, strlen(end) + 1);
}

/* The training records of a run's metrics.jsonl, one per line, without their timing
 * (tokens_per_s, train_seconds): what two runs of the same work must write alike. */
static char *train_losses(const char *run_dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/metrics.jsonl", run_dir);
    char *all = read_file(path), *out = calloc(1, strlen(all) + 1);
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, "\"train_loss\":"))
            continue;
        drop_field(line, "\"tokens_per_s\":");
        drop_field(line, "\"train_seconds\":");
        strcat(out, line);
        strcat(out, "\n");
    }
    free(all);
    return out;
}

START_TEST(train_writes_the_run_directory_and_its_config_retrains_identically)
{
    char dir[512], path[700], run_b[600];
    scratch_dir(dir, sizeof dir, "rundir");
    write_tiny_setup(dir);
    ck_assert_int_eq(train(S2S, dir, NULL, NULL, NULL), 0);
    const char *files[] = {"config.yaml", "train.log", "metrics.jsonl", "checkpoints/last.ckpt",
                           "checkpoints/best.ckpt"};
    for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
        snprintf(path, sizeof path, "%s/run/%s", dir, files[k]);
        ck_assert_msg(path_exists(path), "%s is missing", path);
    }
    snprintf(path, sizeof path, "%s/run/metrics.jsonl", dir);
    char *metrics = read_file(path);
    ck_assert_ptr_nonnull(strstr(metrics, "\"step\":10,\"epoch\":"));
    ck_assert_ptr_nonnull(strstr(metrics, "\"valid_bleu\":"));
    free(metrics);

    /* the effective config, given back, trains the same model */
    snprintf(path, sizeof path, "%s/run/config.yaml", dir);
    snprintf(run_b, sizeof run_b, "run_dir=%s/run_b", dir);
    const char *argv[] = {S2S, "train", path, "--set", run_b, NULL};
    ck_assert_int_eq(run_command(argv, NULL, NULL, NULL), 0);
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/run", dir);
    snprintf(b, sizeof b, "%s/run_b", dir);
    assert_same_weights(a, b);
    char *la = train_losses(a), *lb = train_losses(b);
    ck_assert_str_eq(la, lb);
    free(la);
    free(lb);
}
END_TEST

/* The default model, and ones with every stateful addition of the variants: an LSTM
 * decoder (its cell state), dropout (its per-step masks, the self-attention layers' too),
 * label smoothing, a deeper encoder, heads, the attention-only encoder (whose c_0
 * an LSTM decoder starts from), and hard attention (its samples and baselines). */
static const char *const RESUME_VARIANTS[][8] = {
    {NULL},
    {"model.decoder_cell=lstm", "model.encoder_layers=2", "model.embedding_dropout=0.2",
     "model.readout_dropout=0.3", "training.label_smoothing=0.1", NULL},
    {"model.decoder_cell=lstm", "model.attention_heads=2", "model.self_attention_layers=2",
     "model.self_attention_heads=2", "model.self_attention_dropout=0.2",
     "model.embedding_dropout=0.2", NULL},
    {"model.encoder_cell=none", "model.self_attention_layers=1", "model.decoder_cell=lstm",
     "model.self_attention_dropout=0.3", NULL},
    /* hard attention: its draws, and the baselines and log sums carried across (the
     * split at step 7 comes after the warm-up and between log lines), with either reward */
    {"model.attention_mode=hard", "model.attention_heads=2", "model.embedding_dropout=0.2",
     "training.hard_warmup_steps=3", "training.hard_expected_prob=0.3", "training.hard_reward=token",
     "training.log_every=4", NULL},
    {"model.attention_mode=hard", "training.hard_warmup_steps=2", "training.hard_reward=sentence",
     "training.hard_entropy_weight=0.01", "training.log_every=4", NULL},
    /* subword sampling: each epoch's drawn split (3 batches an epoch: the split at step 7
     * resumes inside epoch 2, whose split the resumed run must draw as the straight run
     * drew it, after epochs 0 and 1) */
    {"data.subwords=sentencepiece", "data.subword_vocab_size=24", "data.subword_alpha=0.5",
     "training.batch_size=128", NULL},
};

START_TEST(resume_continues_bit_identically)
{
    char dir[512], straight[600], split[600], set_dir[640];
    scratch_dir(dir, sizeof dir, _i ? "resume-variant" : "resume");
    write_tiny_setup(dir);
    snprintf(straight, sizeof straight, "%s/straight", dir);
    snprintf(split, sizeof split, "%s/split", dir);
    const char *sets[12];
    int n = 0;
    for (const char *const *v = RESUME_VARIANTS[_i]; *v; v++)
        sets[n++] = *v;
    snprintf(set_dir, sizeof set_dir, "run_dir=%s", straight);
    sets[n] = set_dir;
    sets[n + 1] = NULL;
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    /* 7 steps (not a validation step, not an epoch boundary), then resume to 20 */
    snprintf(set_dir, sizeof set_dir, "run_dir=%s", split);
    sets[n + 1] = "training.max_steps=7";
    sets[n + 2] = NULL;
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    char config[600];
    snprintf(config, sizeof config, "%s/tiny.yaml", dir);
    const char *argv[24] = {S2S, "train", config, "--resume", split};
    int a = 5;
    for (int k = 0; k < n; k++) { /* the settings of the checkpoint, given again */
        argv[a++] = "--set";
        argv[a++] = sets[k];
    }
    argv[a] = NULL;
    ck_assert_int_eq(run_command(argv, NULL, NULL, NULL), 0);
    assert_same_weights(straight, split);
    char *la = train_losses(straight), *lb = train_losses(split);
    ck_assert_str_eq(la, lb);
    ck_assert_ptr_nonnull(strstr(la, "{\"step\":20,"));
    free(la);
    free(lb);
}
END_TEST

START_TEST(resume_refuses_changed_settings_and_fresh_runs_refuse_old_directories)
{
    char dir[512], run[600], err_path[600], line[1024], expected[2400];
    scratch_dir(dir, sizeof dir, "refuse");
    write_tiny_setup(dir);
    const char *sets[] = {"training.max_steps=3", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(run, sizeof run, "%s/run", dir);
    char config[600];
    snprintf(config, sizeof config, "%s/tiny.yaml", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    const char *argv[] = {S2S, "train", config, "--resume", run, "--set", "model.embedding_size=12",
                          "--set", "training.learning_rate=0.02", NULL};
    ck_assert_int_eq(run_command(argv, NULL, err_path, NULL), 2);
    first_line(err_path, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: cannot resume from `%s/checkpoints/last.ckpt`: "
             "2 settings differ: model.embedding_size (8 in the checkpoint, 12 now); "
             "training.learning_rate (0.01 in the checkpoint, 0.02 now)", run);
    ck_assert_str_eq(line, expected);
    /* nor what the model has no use for: a soft model reads no hard_* key (one line says so) */
    const char *unused_argv[] = {S2S, "train", config, "--resume", run, "--set",
                                 "training.hard_warmup_steps=7", NULL};
    ck_assert_int_eq(run_command(unused_argv, NULL, err_path, NULL), 0);
    first_line(err_path, line, sizeof line);
    ck_assert_str_eq(line, "s2s: warning: --set training.hard_warmup_steps: 7 is not used: only "
                           "hard attention samples (model.attention_mode: hard)");
    /* logging and stopping settings may change */
    const char *free_argv[] = {S2S, "train", config, "--resume", run, "--set", "training.log_every=2",
                               "--set", "training.max_steps=5", "--set", "training.valid_every=4", NULL};
    ck_assert_int_eq(run_command(free_argv, NULL, NULL, NULL), 0);

    ck_assert_int_eq(train(S2S, dir, NULL, NULL, "err2.txt"), 2);
    snprintf(err_path, sizeof err_path, "%s/err2.txt", dir);
    first_line(err_path, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: run directory `%s` already holds a run "
             "(%s/checkpoints/last.ckpt); continue it with --resume %s, or set another run_dir",
             run, run, run);
    ck_assert_str_eq(line, expected);
}
END_TEST

/* Waits until path contains text (at most 60 s). */
static int wait_for_text(const char *path, const char *text)
{
    struct timespec pause = {0, 20 * 1000 * 1000};
    for (int k = 0; k < 3000; k++) {
        char *s = read_file(path);
        int found = strstr(s, text) != NULL;
        free(s);
        if (found)
            return 1;
        nanosleep(&pause, NULL);
    }
    return 0;
}

/* Stops a 20-step run with sig after step 5 (every step made 30 ms slower, so it is
 * still running), checks the exit code and the message, then resumes it: the weights
 * and every step's loss equal those of the run trained straight through. */
static void check_stop_signal(int sig, int expected_exit)
{
    char dir[512], config[600], err_path[600], run[600], straight[600], set_dir[640], name[32];
    snprintf(name, sizeof name, "signal%d", sig);
    scratch_dir(dir, sizeof dir, name);
    write_tiny_setup(dir);
    snprintf(config, sizeof config, "%s/tiny.yaml", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    const char *env[] = {"S2S_FAULT_STEP_MS=30", NULL};
    const char *argv[] = {S2S_FAULTS, "train", config, NULL};
    pid_t pid = start_command(argv, NULL, err_path, env);
    ck_assert(wait_for_text(err_path, "step=5 "));
    kill(pid, sig);
    ck_assert_int_eq(wait_command(pid, 30), expected_exit);
    snprintf(run, sizeof run, "%s/run", dir);
    Checkpoint ck;
    load_checkpoint(&ck, run, "last.ckpt");
    ck_assert_int_ge(ck.progress.step, 5);
    ck_assert_int_lt(ck.progress.step, 20);
    char *log = read_file(err_path);
    char said[64];
    snprintf(said, sizeof said, "stopped by signal %d at step %ld; saved checkpoints/last.ckpt",
             sig, ck.progress.step);
    ck_assert_ptr_nonnull(strstr(log, said));
    free(log);
    checkpoint_free(&ck);

    const char *resume[] = {S2S, "train", config, "--resume", run, NULL};
    ck_assert_int_eq(run_command(resume, NULL, NULL, NULL), 0);
    snprintf(straight, sizeof straight, "%s/straight", dir);
    snprintf(set_dir, sizeof set_dir, "run_dir=%s", straight);
    const char *sets[] = {set_dir, NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    assert_same_weights(run, straight);
    char *la = train_losses(run), *lb = train_losses(straight);
    ck_assert_str_eq(la, lb);
    free(la);
    free(lb);
}

START_TEST(sigint_saves_and_exits_130)
{
    check_stop_signal(SIGINT, 130);
}
END_TEST

START_TEST(sigterm_saves_and_exits_143)
{
    check_stop_signal(SIGTERM, 143);
}
END_TEST

/* A closed terminal and a reader of the log that went away: the run saves like after
 * SIGTERM, and exits as a shell reports those signals. */
START_TEST(sighup_and_sigpipe_save_and_exit_129_and_141)
{
    check_stop_signal(SIGHUP, 129);
    check_stop_signal(SIGPIPE, 141);
}
END_TEST

/* `s2s train ... 2>&1 | head -c 200`: once head has gone, the next line written to
 * stderr raises SIGPIPE (and fails, as every one after it does). The run still saves at
 * the end of its step, says so in train.log, exits 141, and resumes to the straight
 * run's weights and losses. */
START_TEST(a_closed_stderr_pipe_stops_the_run_after_saving)
{
    char dir[512], config[600], cmd[3000], rc_path[600], run[600], straight[700], set_dir[720];
    scratch_dir(dir, sizeof dir, "pipe");
    write_tiny_setup(dir);
    snprintf(config, sizeof config, "%s/tiny.yaml", dir);
    snprintf(rc_path, sizeof rc_path, "%s/rc", dir);
    /* 30 ms a step: head has long gone before the 60 steps are done */
    snprintf(cmd, sizeof cmd, "S2S_FAULT_STEP_MS=30; export S2S_FAULT_STEP_MS; "
             "('%s' train '%s' --set training.max_steps=60 2>&1; echo $? > '%s.tmp'; "
             "mv '%s.tmp' '%s') | head -c 200 > /dev/null", S2S_FAULTS, config, rc_path, rc_path,
             rc_path);
    ck_assert_int_eq(system(cmd), 0);
    struct timespec pause = {0, 50 * 1000 * 1000};
    for (int k = 0; k < 600 && !path_exists(rc_path); k++)
        nanosleep(&pause, NULL);
    char rc[32];
    first_line(rc_path, rc, sizeof rc);
    ck_assert_str_eq(rc, "141");
    snprintf(run, sizeof run, "%s/run", dir);
    Checkpoint ck;
    load_checkpoint(&ck, run, "last.ckpt");
    ck_assert_int_lt(ck.progress.step, 60);
    char path[700], said[96];
    snprintf(path, sizeof path, "%s/train.log", run);
    char *log = read_file(path);
    snprintf(said, sizeof said, "stopped by signal %d at step %ld; saved checkpoints/last.ckpt\n",
             SIGPIPE, ck.progress.step);
    ck_assert_msg(strstr(log, said) != NULL, "%s", log);
    free(log);
    checkpoint_free(&ck);
    const char *resume[] = {S2S, "train", config, "--resume", run, "--set", "training.max_steps=60",
                            NULL};
    ck_assert_int_eq(run_command(resume, NULL, NULL, NULL), 0);
    snprintf(straight, sizeof straight, "%s/straight", dir);
    snprintf(set_dir, sizeof set_dir, "run_dir=%s", straight);
    const char *sets[] = {set_dir, "training.max_steps=60", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    assert_same_weights(run, straight);
    char *la = train_losses(run), *lb = train_losses(straight);
    ck_assert_str_eq(la, lb);
    free(la);
    free(lb);
}
END_TEST

/* Inputs that are not text, or never end: /dev/zero is refused at its first NUL byte
 * wherever a corpus is read; an endless line of text is read until a signal comes, and
 * the signal is honoured while reading (nothing is written). */
START_TEST(inputs_without_newlines_are_refused_or_stopped_by_a_signal)
{
    char dir[512], data[2000], line[1024], fifo[600], cmd[1400], config[600], err_path[600];
    scratch_dir(dir, sizeof dir, "nonewline");
    write_tiny_setup(dir);
    const char *nul = "s2s: error: /dev/zero:1:1: NUL byte (expected UTF-8 text)";
    snprintf(data, sizeof data, "  train_src: /dev/zero\n  train_tgt: %s/train.tgt", dir);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    ck_assert_str_eq(line, nul);
    snprintf(data, sizeof data, "  train_src: %s/train.src\n  train_tgt: %s/train.tgt\n"
             "  test_src: /dev/zero\n  test_tgt: %s/valid.tgt", dir, dir, dir);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    ck_assert_str_eq(line, nul);
    /* s2s align reads its pairs as a corpus too */
    snprintf(data, sizeof data, "  train_src: %s/train.src\n  train_tgt: %s/train.tgt", dir, dir);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 0);
    char model[700], tgt[700];
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(tgt, sizeof tgt, "%s/valid.tgt", dir);
    snprintf(err_path, sizeof err_path, "%s/align.txt", dir);
    const char *align[] = {S2S, "align", "--model", model, "--src", "/dev/zero", "--tgt", tgt, NULL};
    ck_assert_int_eq(run_command(align, NULL, err_path, NULL), 2);
    first_line(err_path, line, sizeof line);
    ck_assert_str_eq(line, nul);

    /* endless text on a pipe: SIGTERM, or a first SIGINT, stops the reading */
    snprintf(fifo, sizeof fifo, "%s/endless", dir);
    snprintf(cmd, sizeof cmd, "mkfifo '%s'", fifo);
    ck_assert_int_eq(system(cmd), 0);
    const int sigs[] = {SIGTERM, SIGINT};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "yes abc | tr -d '\\n' > '%s'", fifo);
        const char *writer_argv[] = {"/bin/sh", "-c", cmd, NULL};
        pid_t writer = start_command(writer_argv, NULL, NULL, NULL);
        snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s/train.tgt", fifo, dir);
        write_data_config(dir, data);
        snprintf(config, sizeof config, "%s/c.yaml", dir);
        snprintf(err_path, sizeof err_path, "%s/endless.txt", dir);
        const char *argv[] = {S2S, "train", config, NULL};
        pid_t pid = start_command(argv, NULL, err_path, NULL);
        /* the signal must find s2s reading, not starting (valgrind takes seconds to
         * start it): once the FIFO is open its handlers are set, and the line it reads
         * never ends */
        ck_assert_int_eq(wait_for_open_file(pid, fifo, 60), 0);
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
        kill(pid, sigs[k]);
        ck_assert_int_eq(wait_command(pid, 10), 128 + sigs[k]);
        first_line(err_path, line, sizeof line);
        char expected[900];
        snprintf(expected, sizeof expected, "s2s: corpus `%s`: reading stopped by signal %d; "
                 "nothing was written", fifo, sigs[k]);
        ck_assert_str_eq(line, expected);
        snprintf(cmd, sizeof cmd, "%s/run", dir);
        ck_assert(!path_exists(cmd));
        kill(writer, SIGTERM); /* the shell; its pipeline ends on the closed FIFO */
        wait_command(writer, 10);
    }
}
END_TEST

START_TEST(a_nonfinite_step_is_skipped_without_changing_anything)
{
    char dir[512], a[600], b[600], set_a[640], set_b[640];
    scratch_dir(dir, sizeof dir, "nan");
    write_tiny_setup(dir);
    snprintf(a, sizeof a, "%s/with_nan", dir);
    snprintf(b, sizeof b, "%s/without", dir);
    snprintf(set_a, sizeof set_a, "run_dir=%s", a);
    snprintf(set_b, sizeof set_b, "run_dir=%s", b);
    /* step 3 is NaN: its update is skipped, so after 3 steps the weights are those of
     * steps 1-2 (the data of step 3 is consumed either way). */
    const char *env[] = {"S2S_FAULT_NAN_STEPS=3", NULL};
    const char *sets_a[] = {set_a, "training.max_steps=3", NULL};
    ck_assert_int_eq(train(S2S_FAULTS, dir, sets_a, env, "err_a.txt"), 0);
    const char *sets_b[] = {set_b, "training.max_steps=2", NULL};
    ck_assert_int_eq(train(S2S_FAULTS, dir, sets_b, NULL, "err_b.txt"), 0);
    Checkpoint ca, cb;
    load_checkpoint(&ca, a, "last.ckpt");
    load_checkpoint(&cb, b, "last.ckpt");
    ck_assert(memcmp(ca.model.params.mem, cb.model.params.mem,
                     sizeof(float) * ca.model.params.n) == 0);
    ck_assert(memcmp(ca.optim.m, cb.optim.m, sizeof(float) * ca.model.params.n) == 0);
    ck_assert_int_eq(ca.progress.skipped_steps, 1);
    ck_assert_int_eq(ca.optim.step, 2);
    checkpoint_free(&ca);
    checkpoint_free(&cb);
    char path[700];
    snprintf(path, sizeof path, "%s/err_a.txt", dir);
    char *log = read_file(path);
    ck_assert_ptr_nonnull(strstr(log, "step=3 skipped: non-finite loss (loss=nan grad_norm="));
    free(log);
}
END_TEST

START_TEST(endless_nonfinite_steps_stop_with_exit_4)
{
    char dir[512], a[600], b[600], set_a[640], set_b[640], path[700];
    scratch_dir(dir, sizeof dir, "diverge");
    write_tiny_setup(dir);
    snprintf(a, sizeof a, "%s/diverged", dir);
    snprintf(b, sizeof b, "%s/four", dir);
    snprintf(set_a, sizeof set_a, "run_dir=%s", a);
    snprintf(set_b, sizeof set_b, "run_dir=%s", b);
    const char *env[] = {"S2S_FAULT_NAN_STEPS=5-", NULL};
    const char *sets_a[] = {set_a, "training.valid_every=2", NULL};
    ck_assert_int_eq(train(S2S_FAULTS, dir, sets_a, env, "err.txt"), 4);
    snprintf(path, sizeof path, "%s/err.txt", dir);
    char *log = read_file(path);
    ck_assert_ptr_nonnull(strstr(log, "s2s: error: training diverged: 5 steps in a row had a "
                                      "non-finite loss or gradient (the last at step 9); lower "
                                      "training.learning_rate or set training.clip_grad_norm; "
                                      "the checkpoints were left as they were\n"));
    free(log);
    /* the checkpoint (of step 8) holds finite weights: those after step 4 */
    const char *sets_b[] = {set_b, "training.max_steps=4", NULL};
    ck_assert_int_eq(train(S2S_FAULTS, dir, sets_b, NULL, "err_b.txt"), 0);
    assert_same_weights_at(a, b, 0);
}
END_TEST

START_TEST(corpus_errors_name_the_file_and_line)
{
    char dir[512], line[1024], data[2048], expected[1400];
    scratch_dir(dir, sizeof dir, "corpus");
    char p[8][600];
    const char *names[] = {"a.src", "a.tgt", "short.tgt", "bad.src", "empty.src", "empty.tgt",
                           "pairs.tsv", "notab.tsv"};
    for (int k = 0; k < 8; k++)
        snprintf(p[k], sizeof p[k], "%s/%s", dir, names[k]);
    write_file(p[0], "a b\nc d\ne f\n");
    write_file(p[1], "x\ny\nz");            /* no final newline: still 3 lines */
    write_file(p[2], "x\ny\n");
    write_file(p[3], "ok\nfine\nbad \xc3\x28 byte\n");
    write_file(p[4], "\n \n\t\n");
    write_file(p[5], "x\n\ny\n");
    write_file(p[6], "a b\tx y\r\nc\tz\n");
    write_file(p[7], "a b\tx\nno tab here\n");

    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s", p[0], p[1]);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 0);

    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s", p[0], p[2]);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: source `%s` has 3 lines, target `%s` has 2", p[0], p[2]);
    ck_assert_str_eq(line, expected);

    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s", p[3], p[1]);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: %s:3:5: invalid UTF-8 (0xc3)", p[3]);
    ck_assert_str_eq(line, expected);

    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s", p[4], p[5]);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: no usable sentence pairs in the training corpus "
             "`%s` (read 3 pairs, kept 0; skipped: 3 empty, 0 too long, 0 over max_line_bytes)", p[4]);
    ck_assert_str_eq(line, expected);

    snprintf(data, sizeof data, "  train_src: %s/missing.src\n  train_tgt: %s", dir, p[1]);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: cannot open corpus `%s/missing.src`: No such "
             "file or directory", dir);
    ck_assert_str_eq(line, expected);

    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s", dir, p[1]);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: cannot read corpus `%s`: Is a directory", dir);
    ck_assert_str_eq(line, expected);

    snprintf(data, sizeof data, "  train_tsv: %s", p[6]);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 0);

    snprintf(data, sizeof data, "  train_tsv: %s", p[7]);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: %s:2: expected source<TAB>target, found no tab", p[7]);
    ck_assert_str_eq(line, expected);
}
END_TEST

START_TEST(skipped_pairs_are_counted_and_the_rest_stay_aligned)
{
    char dir[512], src[600], tgt[600], data[1400], line[1024], path[700];
    scratch_dir(dir, sizeof dir, "skips");
    snprintf(src, sizeof src, "%s/s.txt", dir);
    snprintf(tgt, sizeof tgt, "%s/t.txt", dir);
    /* line 2 empty on the source, line 3 too long (4 tokens > 3), line 4 over the byte cap */
    write_file(src, "a b\n\nw w w w\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nc\n");
    write_file(tgt, "x\ny\nz\nq\nr\n");
    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s\n  max_length: 3\n  max_line_bytes: 64",
             src, tgt);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 0);
    snprintf(path, sizeof path, "%s/run/train.log", dir);
    char *log = read_file(path);
    ck_assert_ptr_nonnull(strstr(log, "training data: read 5 pairs, kept 2; skipped: 1 empty, 1 too "
                                      "long, 1 over max_line_bytes\n"));
    /* the kept pairs are (a b, x) and (c, r): the vocabularies are the 4 specials and
     * {a, b, c} on the source side, {x, r} on the target side */
    ck_assert_ptr_nonnull(strstr(log, "vocabularies: source 7, target 6;"));
    free(log);
}
END_TEST

START_TEST(crlf_corpus_trains_exactly_like_lf)
{
    char dir[512], crlf[600], set_data[4][700];
    scratch_dir(dir, sizeof dir, "crlf");
    write_tiny_setup(dir);
    write_reverse_corpus(dir, "crlf", 300, 1, "\r\n");
    snprintf(crlf, sizeof crlf, "run_dir=%s/run_crlf", dir);
    snprintf(set_data[0], sizeof set_data[0], "data.train_src=%s/crlf.src", dir);
    snprintf(set_data[1], sizeof set_data[1], "data.train_tgt=%s/crlf.tgt", dir);
    const char *sets_crlf[] = {crlf, set_data[0], set_data[1], "training.max_steps=5", NULL};
    const char *sets_lf[] = {"training.max_steps=5", NULL};
    ck_assert_int_eq(train(S2S, dir, sets_lf, NULL, NULL), 0);
    ck_assert_int_eq(train(S2S, dir, sets_crlf, NULL, NULL), 0);
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/run", dir);
    snprintf(b, sizeof b, "%s/run_crlf", dir);
    assert_same_weights(a, b);
}
END_TEST

START_TEST(a_config_error_exits_2_and_writes_nothing)
{
    char dir[512], path[600], err_path[600], line[1024], expected[1400], run[600];
    scratch_dir(dir, sizeof dir, "badconfig");
    write_tiny_setup(dir);
    snprintf(path, sizeof path, "%s/tiny.yaml", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    const char *argv[] = {S2S, "train", path, "--set", "training.optimizer=adamw", NULL};
    ck_assert_int_eq(run_command(argv, NULL, err_path, NULL), 2);
    first_line(err_path, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: --set training.optimizer=adamw: "
             "training.optimizer: expected one of {adam,sgd,adadelta}, got \"adamw\"");
    ck_assert_str_eq(line, expected);
    snprintf(run, sizeof run, "%s/run", dir);
    ck_assert(!path_exists(run));
    /* a name is a name: with the default run_dir, runs/<name> may not leave runs/ */
    const char *path_name[] = {s2s_absolute(), "train", path, "--set", "run_dir=", "--set",
                               "name=a/../../outside", NULL};
    ck_assert_int_eq(run_command_with(path_name, NULL, err_path, &(RunOptions){.cwd = dir}, NULL), 2);
    first_line(err_path, line, sizeof line);
    ck_assert_str_eq(line, "s2s: error: --set name: expected a name, not a path (no `/`, not `.` "
                           "or `..`; run_dir sets where the run goes), got \"a/../../outside\"");
    snprintf(run, sizeof run, "%s/outside", dir);
    ck_assert(!path_exists(run));
    snprintf(run, sizeof run, "%s/runs", dir);
    ck_assert(!path_exists(run));
}
END_TEST

START_TEST(plateau_decay_and_early_stopping_follow_the_validations)
{
    /* Exact match stays 0 on this task after a few steps, so after the first
     * validation nothing improves: with patience 1 the learning rate halves at every
     * validation, and early stopping after 2 stale validations ends at step 6. */
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "plateau");
    write_tiny_setup(dir);
    const char *sets[] = {"training.valid_every=2", "training.max_steps=100",
                          "training.early_stopping_metric=exact", "training.patience=1",
                          "training.early_stopping=2", "training.scheduling=plateau", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/run/metrics.jsonl", dir);
    char *m = read_file(path);
    ck_assert_ptr_nonnull(strstr(m, "\"step\":2,\"epoch\":0.0526,\"valid_loss\""));
    ck_assert_ptr_nonnull(strstr(m, "\"valid_exact\":0.0000,\"lr\":0.005,\"best\":false}"));
    ck_assert_ptr_nonnull(strstr(m, "\"valid_exact\":0.0000,\"lr\":0.0025,\"best\":false}"));
    ck_assert_ptr_null(strstr(m, "\"step\":7,"));
    free(m);
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    char *log = read_file(path);
    ck_assert_ptr_nonnull(strstr(log, "early stopping: no improvement in 2 validations (best at step 2)"));
    ck_assert_ptr_nonnull(strstr(log, "no improvement in 1 validation: learning rate now 0.005\n"));
    ck_assert_ptr_nonnull(strstr(log, "done: early stopping at step 6"));
    free(log);
}
END_TEST

/* Whether the line that starts at line (up to its newline) ends with suffix. */
static int line_ends_with(const char *line, const char *suffix)
{
    const char *end = strchr(line, '\n');
    const size_t n = end ? (size_t)(end - line) : strlen(line), k = strlen(suffix);
    return n >= k && memcmp(line + n - k, suffix, k) == 0;
}

/* A hard-attention model trains on expected contexts until its warm-up ends (4 steps
 * here) and only then samples: the validations of the warm-up (steps 2 and 4) neither
 * halve the learning rate nor count towards early stopping, and the first after it (step
 * 6) takes best.ckpt though its exact match (0) is no better; from there the rules apply
 * (step 8 halves the rate, step 10 halves it again and stops the run, 2 stale). */
START_TEST(the_hard_warmup_validations_count_for_nothing_but_a_short_run)
{
    char dir[512], path[700];
    scratch_dir(dir, sizeof dir, "hard-plateau");
    write_tiny_setup(dir);
    const char *sets[] = {"model.attention_mode=hard", "training.hard_warmup_steps=4",
                          "training.valid_every=2", "training.max_steps=100",
                          "training.early_stopping_metric=exact", "training.patience=1",
                          "training.early_stopping=2", "training.scheduling=plateau", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/run/metrics.jsonl", dir);
    char *m = read_file(path);
    const char *expected[] = {"{\"step\":2,", "\"lr\":0.01,\"best\":true}",
                              "{\"step\":4,", "\"lr\":0.01,\"best\":false}",
                              "{\"step\":6,", "\"lr\":0.01,\"best\":true}",
                              "{\"step\":8,", "\"lr\":0.005,\"best\":false}",
                              "{\"step\":10,", "\"lr\":0.0025,\"best\":false}"};
    int validations = 0;
    for (char *line = strtok(m, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, "\"valid_loss\""))
            continue;
        ck_assert_int_lt(validations, 5);
        ck_assert_msg(strncmp(line, expected[2 * validations], strlen(expected[2 * validations])) == 0 &&
                          strstr(line, "\"valid_exact\":0.0000,") &&
                          strstr(line, expected[2 * validations + 1]),
                      "validation %d: %s", validations, line);
        validations++;
    }
    ck_assert_int_eq(validations, 5);
    ck_assert_ptr_null(strstr(m, "\"step\":11,"));
    free(m);
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    char *log = read_file(path);
    const char *step4 = strstr(log, "validation step=4 "), *step6 = strstr(log, "validation step=6 ");
    ck_assert_ptr_nonnull(step4);
    ck_assert_ptr_nonnull(step6);
    ck_assert(line_ends_with(step4, " (hard-attention warm-up: not counted)"));
    ck_assert(line_ends_with(step6, " (the first after the hard-attention warm-up: saved best.ckpt)"));
    ck_assert_ptr_nonnull(strstr(log, "early stopping: no improvement in 2 validations (best at step 6)"));
    ck_assert_ptr_nonnull(strstr(log, "done: early stopping at step 10"));
    free(log);
}
END_TEST

/* training.warmup_steps W: update k of the first W uses k/W of the scheduled rate, which
 * the plateau rule halves meanwhile (here at every validation after the first, every 2
 * steps), and from update W on the scheduled rate itself. The rule decides on the
 * scheduled rate, never below learning_rate_min: with a floor of 0.004, step 4 halves
 * 0.01 to 0.005 though its warmed-up rate (0.004) is at the floor, and step 6 takes it to
 * the floor though the next update's rate (0.0035) is below it (issue 41: with a floor
 * of 0 alone, a rule comparing either of those passed). Every training record (one a
 * step) says the rate its update used, a validation record the rate of the next update:
 * both are checked against the rates computed here, the way the trainer must. */
START_TEST(the_warmup_rises_linearly_and_composes_with_the_plateau_decay)
{
    static const double floors[] = {0, 0.004};
    for (int f = 0; f < 2; f++) {
        char dir[512], path[700], key[64], text[32], floor_set[64];
        scratch_dir(dir, sizeof dir, f ? "warmup-floor" : "warmup");
        write_tiny_setup(dir);
        snprintf(floor_set, sizeof floor_set, "training.learning_rate_min=%g", floors[f]);
        const char *sets[] = {"training.valid_every=2", "training.max_steps=14",
                              "training.early_stopping_metric=exact", "training.patience=1",
                              "training.scheduling=plateau", "training.warmup_steps=10",
                              floor_set, NULL};
        ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
        snprintf(path, sizeof path, "%s/run/metrics.jsonl", dir);
        char *m = read_file(path);
        double scheduled = 0.01; /* halved by each validation after the first, to the floor */
        int checked = 0, decays = 0;
        for (char *line = strtok(m, "\n"); line; line = strtok(NULL, "\n")) {
            long step = atol(line + strlen("{\"step\":"));
            const int validation = strstr(line, "\"valid_loss\"") != NULL;
            if (!validation && !strstr(line, "\"train_loss\""))
                continue; /* an alignment record */
            if (validation && step > 2 && scheduled > floors[f]) {
                scheduled = fmax(scheduled * 0.5, floors[f]);
                decays++;
            }
            const long k = validation ? step + 1 : step; /* the update the rate is for */
            const double expected = k < 10 ? scheduled * (double)k / 10 : scheduled;
            snprintf(key, sizeof key, "\"lr\":%s,", number_digits(text, sizeof text, expected, 6));
            ck_assert_msg(strstr(line, key) != NULL, "floor %g, step %ld: expected %s in %s",
                          floors[f], step, key, line);
            checked++;
        }
        ck_assert_int_eq(checked, 14 + 7);
        ck_assert_int_eq(decays, f ? 2 : 6);
        free(m);
        snprintf(path, sizeof path, "%s/stderr.txt", dir);
        char *log = read_file(path);
        ck_assert_ptr_nonnull(strstr(log, "learning rate: rises linearly to 0.01 over the first 10 "
                                          "updates (training.warmup_steps)\n"));
        ck_assert_ptr_nonnull(strstr(log, "step=3 epoch=0.079 loss="));
        ck_assert_ptr_nonnull(strstr(log, " lr=0.003 elapsed="));
        free(log);
    }
}
END_TEST

/* training.scheduling inverse_sqrt: update k of the W warm-up updates uses k/W of the rate,
 * and update k >= W uses sqrt(W / k) of it, with or without a validation set (the rule
 * reads the step alone). Every training record's rate is checked, and the validation
 * records' (the next update's). With no warm-up the schedule has no scale: refused. */
START_TEST(inverse_sqrt_falls_as_the_root_of_the_step_after_the_warmup)
{
    for (int with_valid = 0; with_valid < 2; with_valid++) {
        char dir[512], path[700], key[64], text[32];
        scratch_dir(dir, sizeof dir, with_valid ? "rsqrt-valid" : "rsqrt");
        write_tiny_setup(dir);
        const char *sets[] = {"training.max_steps=12", "training.scheduling=inverse_sqrt",
                              "training.warmup_steps=4",
                              with_valid ? "training.valid_every=3" : "data.valid_src=",
                              with_valid ? NULL : "data.valid_tgt=", NULL};
        ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
        snprintf(path, sizeof path, "%s/run/metrics.jsonl", dir);
        char *m = read_file(path);
        int checked = 0;
        for (char *line = strtok(m, "\n"); line; line = strtok(NULL, "\n")) {
            long step = atol(line + strlen("{\"step\":"));
            const int validation = strstr(line, "\"valid_loss\"") != NULL;
            if (!validation && !strstr(line, "\"train_loss\""))
                continue;
            const long k = validation ? step + 1 : step;
            const double expected = k < 4 ? 0.01 * (double)k / 4 : 0.01 * sqrt(4.0 / (double)k);
            snprintf(key, sizeof key, "\"lr\":%s,", number_digits(text, sizeof text, expected, 6));
            ck_assert_msg(strstr(line, key) != NULL, "step %ld: expected %s in %s", step, key, line);
            checked++;
        }
        ck_assert_int_eq(checked, 12 + (with_valid ? 4 : 0));
        free(m);
        snprintf(path, sizeof path, "%s/stderr.txt", dir);
        char *log = read_file(path);
        ck_assert_ptr_nonnull(strstr(log, "learning rate: then falls as sqrt(4 / k) at update k "
                                          "(training.scheduling: inverse_sqrt)\n"));
        free(log);
    }
    char dir[512], path[600];
    scratch_dir(dir, sizeof dir, "rsqrt-nowarmup");
    write_tiny_setup(dir);
    const char *sets[] = {"training.scheduling=inverse_sqrt", "training.warmup_steps=0", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 2);
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    char *log = read_file(path);
    ck_assert_str_eq(log, "s2s: error: --set training.warmup_steps: training.scheduling: "
                          "inverse_sqrt needs training.warmup_steps >= 1 (the rate falls as "
                          "sqrt(W / k) after the W warm-up updates)\n");
    free(log);
}
END_TEST

/* The weights of dir/RUN/checkpoints/last.ckpt minus those of dir/OTHER's, as an L2 norm. */
static double weight_distance(const char *run_a, const char *run_b)
{
    Checkpoint a, b;
    load_checkpoint(&a, run_a, "last.ckpt");
    load_checkpoint(&b, run_b, "last.ckpt");
    ck_assert_uint_eq(a.model.params.n, b.model.params.n);
    double sum = 0;
    for (size_t k = 0; k < a.model.params.n; k++) {
        double d = (double)a.model.params.mem[k] - (double)b.model.params.mem[k];
        sum += d * d;
    }
    checkpoint_free(&a);
    checkpoint_free(&b);
    return sqrt(sum);
}

/* Clipping rescales the gradient to the threshold: with plain SGD (learning rate 1) one
 * step moves the weights by exactly the threshold, so two runs clipped at c and 2c
 * from the same start end c apart (and would be equal without clipping: the gradient's
 * norm is far above both). */
START_TEST(clipping_scales_the_step_to_the_threshold)
{
    char dir[512], a[600], b[600], set_a[640], set_b[640];
    scratch_dir(dir, sizeof dir, "clip");
    write_tiny_setup(dir);
    snprintf(a, sizeof a, "%s/clip1", dir);
    snprintf(b, sizeof b, "%s/clip2", dir);
    snprintf(set_a, sizeof set_a, "run_dir=%s", a);
    snprintf(set_b, sizeof set_b, "run_dir=%s", b);
    const char *sets_a[] = {set_a, "training.max_steps=1", "training.optimizer=sgd",
                            "training.learning_rate=1", "training.clip_grad_norm=0.01", NULL};
    const char *sets_b[] = {set_b, "training.max_steps=1", "training.optimizer=sgd",
                            "training.learning_rate=1", "training.clip_grad_norm=0.02", NULL};
    ck_assert_int_eq(train(S2S, dir, sets_a, NULL, "a.txt"), 0);
    ck_assert_int_eq(train(S2S, dir, sets_b, NULL, "b.txt"), 0);
    double d = weight_distance(a, b);
    printf("clipped at 0.01 and 0.02: weights %.6g apart\n", d);
    ck_assert_double_eq_tol(d, 0.01, 1e-5);
}
END_TEST

/* The warm-up scales the update itself, not only what the log says: with plain SGD at
 * learning rate 1 and clipping at 0.01, update 1 of a 4-update warm-up moves the weights
 * by a quarter of 0.01 along the same gradient as a run without warm-up, which moves them
 * by 0.01: the two end 0.0075 apart. */
START_TEST(the_warmup_scales_the_update)
{
    char dir[512], a[600], b[600], set_a[640], set_b[640];
    scratch_dir(dir, sizeof dir, "warmupstep");
    write_tiny_setup(dir);
    snprintf(a, sizeof a, "%s/plain", dir);
    snprintf(b, sizeof b, "%s/warm", dir);
    snprintf(set_a, sizeof set_a, "run_dir=%s", a);
    snprintf(set_b, sizeof set_b, "run_dir=%s", b);
    const char *sets_a[] = {set_a, "training.max_steps=1", "training.optimizer=sgd",
                            "training.learning_rate=1", "training.clip_grad_norm=0.01",
                            "training.warmup_steps=0", NULL};
    const char *sets_b[] = {set_b, "training.max_steps=1", "training.optimizer=sgd",
                            "training.learning_rate=1", "training.clip_grad_norm=0.01",
                            "training.warmup_steps=4", NULL};
    ck_assert_int_eq(train(S2S, dir, sets_a, NULL, "a.txt"), 0);
    ck_assert_int_eq(train(S2S, dir, sets_b, NULL, "b.txt"), 0);
    double d = weight_distance(a, b);
    printf("one update without and with a 4-update warm-up: weights %.6g apart\n", d);
    ck_assert_double_eq_tol(d, 0.0075, 1e-5);
}
END_TEST

/* dir/one.yaml: one sentence pair, trained in batches of one with a learning rate so
 * small that no float weight moves: every step sees the same model and the same batch,
 * so its loss changes only with its dropout masks. */
static void write_one_pair_setup(const char *dir, const char *dropout)
{
    char path[600], text[2400];
    snprintf(path, sizeof path, "%s/one.src", dir);
    write_file(path, "w1 w2 w3 w4\n");
    snprintf(path, sizeof path, "%s/one.tgt", dir);
    write_file(path, "w4 w3 w2 w1\n");
    snprintf(path, sizeof path, "%s/one.yaml", dir);
    snprintf(text, sizeof text,
             "run_dir: %s/run-%s\ndata:\n  train_src: %s/one.src\n  train_tgt: %s/one.tgt\n"
             "model:\n  embedding_size: 8\n  encoder_size: 8\n  decoder_size: 16\n"
             "  attention_size: 8\n  readout_size: 16\n  embedding_dropout: %s\n"
             "  readout_dropout: %s\ntraining:\n  batch_size: 1\n  max_steps: 8\n  log_every: 1\n"
             "  threads: 1\n  optimizer: sgd\n  learning_rate: 1e-30\n  learning_rate_min: 0\n",
             dir, dropout, dir, dir, dropout, dropout);
    write_file(path, text);
}

/* The train_loss values of a run, in step order, into losses; returns their number. */
static int read_losses(const char *run_dir, double *losses, int cap)
{
    char path[800];
    snprintf(path, sizeof path, "%s/metrics.jsonl", run_dir);
    char *all = read_file(path);
    int n = 0;
    for (const char *at = all; (at = strstr(at, "\"train_loss\":")) && n < cap; at++)
        losses[n++] = strtod(at + strlen("\"train_loss\":"), NULL);
    free(all);
    return n;
}

/* Every step draws its own dropout masks: without dropout the eight steps' losses are
 * equal (nothing else changes), with it no two are. */
START_TEST(each_step_draws_its_own_dropout_masks)
{
    char dir[512], config[600], run[700];
    scratch_dir(dir, sizeof dir, "masks");
    const char *rates[] = {"0", "0.5"};
    for (int k = 0; k < 2; k++) {
        write_one_pair_setup(dir, rates[k]);
        snprintf(config, sizeof config, "%s/one.yaml", dir);
        const char *argv[] = {S2S, "train", config, NULL};
        ck_assert_int_eq(run_command(argv, NULL, NULL, NULL), 0);
        snprintf(run, sizeof run, "%s/run-%s", dir, rates[k]);
        double loss[8];
        ck_assert_int_eq(read_losses(run, loss, 8), 8);
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < i; j++) {
                if (k == 0)
                    ck_assert_msg(loss[i] == loss[j], "without dropout, steps %d and %d: %.17g, %.17g",
                                  j + 1, i + 1, loss[j], loss[i]);
                else
                    ck_assert_msg(loss[i] != loss[j], "steps %d and %d drew the same masks (%.17g)",
                                  j + 1, i + 1, loss[i]);
            }
    }
}
END_TEST

/* The AER and attention entropy logged at a dump are those of the model of that step
 * over the validation pairs against their own gold links: the same numbers as s2s
 * align computes from the checkpoint of that step. */
START_TEST(training_aer_and_entropy_match_s2s_align_on_the_same_checkpoint)
{
    char dir[512], gold[640], config[600], model[700], src[600], tgt[600], forced[600], err_path[600];
    scratch_dir(dir, sizeof dir, "aer");
    write_tiny_setup(dir);
    snprintf(gold, sizeof gold, "data.valid_align=%s/valid.align", dir);
    const char *sets[] = {gold, "alignments.every=20", "training.learning_rate=0.05", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    char path[700];
    snprintf(path, sizeof path, "%s/run/metrics.jsonl", dir);
    char *m = read_file(path);
    const char *rec = strstr(m, "{\"step\":20,\"epoch\":0.5263,\"aer\":");
    ck_assert_ptr_nonnull(rec);
    double aer = strtod(strstr(rec, "\"aer\":") + 6, NULL);
    double precision = strtod(strstr(rec, "\"aer_precision\":") + 16, NULL);
    double recall = strtod(strstr(rec, "\"aer_recall\":") + 13, NULL);
    double entropy = strtod(strstr(rec, "\"attention_entropy\":") + 20, NULL);
    free(m);

    snprintf(config, sizeof config, "%s/tiny.yaml", dir);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(src, sizeof src, "%s/valid.src", dir);
    snprintf(tgt, sizeof tgt, "%s/valid.tgt", dir);
    snprintf(gold, sizeof gold, "%s/valid.align", dir);
    snprintf(forced, sizeof forced, "%s/forced.jsonl", dir);
    snprintf(err_path, sizeof err_path, "%s/align.txt", dir);
    const char *align[] = {S2S, "align", "--model", model, "--src", src, "--tgt", tgt, "--gold", gold,
                           "--out", forced, NULL};
    ck_assert_int_eq(run_command(align, NULL, err_path, NULL), 0);
    char line[512], expected[512];
    first_line(err_path, line, sizeof line);
    snprintf(expected, sizeof expected, "AER = %.4f (precision %.4f, recall %.4f;", aer, precision,
             recall);
    ck_assert_msg(!strncmp(line, expected, strlen(expected)), "training logged %s\ns2s align: %s",
                  expected, line);
    /* the mean entropy (nats) of every attention row s2s align wrote */
    char *rows = read_file(forced);
    double sum = 0;
    long n_rows = 0;
    for (const char *w = rows; (w = strstr(w, "\"weights\":[")); ) {
        w += strlen("\"weights\":[");
        while (*w == '[') {
            double h = 0;
            const char *p = w + 1;
            for (;;) {
                char *end;
                double a = strtod(p, &end);
                if (a > 0)
                    h -= a * log(a);
                p = end;
                if (*p != ',')
                    break;
                p++;
            }
            sum += h;
            n_rows++;
            w = p + 1; /* past ']' */
            if (*w == ',')
                w++;
        }
    }
    free(rows);
    ck_assert_int_gt(n_rows, 20);
    printf("entropy: training %.6f, s2s align %.6f over %ld rows\n", entropy, sum / (double)n_rows,
           n_rows);
    ck_assert_double_eq_tol(sum / (double)n_rows, entropy, 2e-6);
}
END_TEST

/* A run directory (or any path from outside) holding terminal control sequences is
 * quoted in the log as \xHH: neither stderr nor train.log lets a terminal act on it. */
START_TEST(the_log_keeps_control_characters_off_the_terminal)
{
    char dir[512], set_dir[700], path[800];
    scratch_dir(dir, sizeof dir, "logesc");
    write_tiny_setup(dir);
    snprintf(set_dir, sizeof set_dir, "run_dir=%s/run\033[2J\007", dir);
    const char *sets[] = {set_dir, "training.max_steps=2", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, "err.txt"), 0);
    snprintf(path, sizeof path, "%s/err.txt", dir);
    char *err = read_file(path);
    snprintf(path, sizeof path, "%s/run\033[2J\007/train.log", dir);
    char *log = read_file(path);
    const char *texts[] = {err, log};
    for (int k = 0; k < 2; k++) {
        ck_assert_ptr_nonnull(strstr(texts[k], "/run\\x1b[2J\\x07"));
        for (const char *c = texts[k]; *c; c++)
            ck_assert_msg(*c == '\n' || (unsigned char)*c >= 0x20, "a control byte 0x%02x",
                          (unsigned char)*c);
    }
    free(err);
    free(log);
}
END_TEST

/* `s2s gradcheck CONFIG --samples 8` with a --set for each of sets (NULL-ended): it
 * exits 0 and says PASSED; returns its output (free it), which the caller also sees. */
static char *gradcheck_output(const char *config, const char *out_path, const char *const *sets)
{
    const char *argv[24] = {S2S, "gradcheck", config, "--samples", "8"};
    int a = 5;
    for (; *sets; sets++) {
        ck_assert_int_lt(a + 3, 24);
        argv[a++] = "--set";
        argv[a++] = *sets;
    }
    argv[a] = NULL;
    ck_assert_int_eq(run_command(argv, out_path, NULL, NULL), 0);
    char *out = read_file(out_path);
    printf("%s", out);
    ck_assert_ptr_nonnull(strstr(out, "): PASSED\n"));
    return out;
}

START_TEST(gradcheck_command_checks_the_configured_model)
{
    char dir[512], path[600], out_path[600];
    scratch_dir(dir, sizeof dir, "gradcheck");
    write_tiny_setup(dir);
    snprintf(path, sizeof path, "%s/tiny.yaml", dir);
    snprintf(out_path, sizeof out_path, "%s/out.txt", dir);
    char *out = gradcheck_output(path, out_path, (const char *[]){NULL});
    ck_assert_ptr_nonnull(strstr(out, "gradient check in double precision: 3 sentence pairs"));
    ck_assert_ptr_nonnull(strstr(out, "  W_a "));
    free(out);
    /* a variant, with its dropout and label smoothing */
    out = gradcheck_output(path, out_path,
                           (const char *[]){"model.attention=general", "model.decoder_cell=lstm",
                                            "model.encoder_layers=2", "model.readout_dropout=0.5",
                                            "training.label_smoothing=0.1", NULL});
    ck_assert_ptr_nonnull(strstr(out, "model: gru encoder (2 layers), lstm decoder, attention general; "
                                      "embedding dropout 0, readout dropout 0.5, label smoothing 0.1\n"));
    ck_assert_ptr_nonnull(strstr(out, "  W_g "));
    ck_assert_ptr_nonnull(strstr(out, "  enc_bwd_l1.W_h "));
    ck_assert_ptr_null(strstr(out, "  W_a "));
    free(out);
    /* four heads */
    out = gradcheck_output(path, out_path, (const char *[]){"model.attention_heads=4", NULL});
    ck_assert_ptr_nonnull(strstr(out, "model: gru encoder (1 layer), gru decoder, attention additive (4 heads); "));
    ck_assert_ptr_nonnull(strstr(out, "  v_a "));
    free(out);
    /* self-attention layers on the bi-GRU, with their dropout; the attention-only encoder
     * with an LSTM decoder (its c_0) */
    out = gradcheck_output(path, out_path,
                           (const char *[]){"model.self_attention_layers=2",
                                            "model.self_attention_heads=2", NULL});
    ck_assert_ptr_nonnull(strstr(out, "and 2 self-attention layers (2 heads, ffn "));
    ck_assert_ptr_nonnull(strstr(out, "  sa2.gamma_2 "));
    free(out);
    out = gradcheck_output(path, out_path,
                           (const char *[]){"model.encoder_cell=none", "model.self_attention_layers=1",
                                            "model.decoder_cell=lstm", NULL});
    ck_assert_ptr_nonnull(strstr(out, "model: attention-only encoder (positions) and 1 self-attention"));
    ck_assert_ptr_nonnull(strstr(out, "  W_c "));
    free(out);
    /* hard attention: the surrogate J with the paths sampled and the rewards frozen, with
     * either reward (every sentence sampling; some on expected contexts) */
    out = gradcheck_output(path, out_path,
                           (const char *[]){"model.attention_mode=hard", "model.attention_heads=2",
                                            "training.hard_reward=sentence",
                                            "training.hard_expected_prob=0",
                                            "training.hard_entropy_weight=0.05", NULL});
    ck_assert_ptr_nonnull(strstr(out, ": 3 sentence pairs, surrogate J "));
    ck_assert_ptr_nonnull(strstr(out, "hard attention: 3 of 3 sentences sampled their positions"));
    ck_assert_ptr_nonnull(strstr(out, "  v_a "));
    free(out);
    out = gradcheck_output(path, out_path,
                           (const char *[]){"model.attention_mode=hard", "model.attention=general",
                                            "training.hard_reward=token", NULL});
    ck_assert_ptr_nonnull(strstr(out, ": 3 sentence pairs, surrogate J "));
    ck_assert_ptr_nonnull(strstr(out, "paths and rewards held fixed"));
    free(out);
}
END_TEST

/* A number of a JSON record (NAN when the record has no such key). */
static double record_number(const char *record, const char *key)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\":", key);
    const char *at = strstr(record, quoted);
    return at ? strtod(at + strlen(quoted), NULL) : NAN;
}

/* Hard attention's running baseline, read off a run logged every step: nothing samples
 * in the warm-up (no reward; b stays 0), then each step b <- d b + (1 - d) (its mean
 * reward) -- R_s per sentence under the sentence reward, log p per token under the token
 * reward, whose baseline the record shows -- exactly, and the checkpoint keeps the last b. */
START_TEST(hard_baselines_follow_the_rewards_after_the_warmup)
{
    const int token = _i;
    char dir[512], run[600], set_run[640], path[700];
    scratch_dir(dir, sizeof dir, token ? "baseline-token" : "baseline-sentence");
    write_tiny_setup(dir);
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(set_run, sizeof set_run, "run_dir=%s", run);
    const char *sets[] = {"model.attention_mode=hard", "training.hard_warmup_steps=3",
                          "training.hard_expected_prob=0", "training.hard_baseline_decay=0.75",
                          token ? "training.hard_reward=token" : "training.hard_reward=sentence",
                          "training.max_steps=8", set_run, NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(path, sizeof path, "%s/metrics.jsonl", run);
    char *all = read_file(path);
    const double d = 0.75;
    double b = 0;
    long steps = 0;
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, "\"train_loss\":"))
            continue;
        const long step = (long)record_number(line, "step");
        const double reward = record_number(line, "train_reward");
        ck_assert_int_eq(step, ++steps);
        ck_assert_msg(step <= 3 ? isnan(reward) : reward < 0, "step %ld: reward %g", step, reward);
        if (step > 3)
            b = d * b + (1 - d) * reward;
        ck_assert_double_eq(record_number(line, "train_baseline"), b);
        ck_assert_double_gt(record_number(line, "train_attention_entropy"), 0);
    }
    ck_assert_int_eq(steps, 8);
    ck_assert_double_ne(b, 0);
    free(all);
    /* The text log, like the records, shows a reward only once something sampled. */
    snprintf(path, sizeof path, "%s/train.log", run);
    all = read_file(path);
    steps = 0;
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "step=", 5) != 0)
            continue;
        const long step = strtol(line + 5, NULL, 10);
        ck_assert_int_eq(step, ++steps);
        ck_assert_msg((strstr(line, " reward=") != NULL) == (step > 3), "%s", line);
        ck_assert_ptr_nonnull(strstr(line, " baseline="));
    }
    ck_assert_int_eq(steps, 8);
    free(all);
    Checkpoint ck;
    load_checkpoint(&ck, run, "last.ckpt");
    ck_assert_double_eq(token ? ck.progress.hard_token_baseline : ck.progress.hard_baseline, b);
    checkpoint_free(&ck);
}
END_TEST

Suite *train_suite(void)
{
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, train_writes_the_run_directory_and_its_config_retrains_identically);
    tcase_add_loop_test(tc, resume_continues_bit_identically, 0,
                        (int)(sizeof RESUME_VARIANTS / sizeof *RESUME_VARIANTS));
    tcase_add_test(tc, resume_refuses_changed_settings_and_fresh_runs_refuse_old_directories);
    tcase_add_test(tc, sigint_saves_and_exits_130);
    tcase_add_test(tc, sigterm_saves_and_exits_143);
    tcase_add_test(tc, sighup_and_sigpipe_save_and_exit_129_and_141);
    tcase_add_test(tc, a_closed_stderr_pipe_stops_the_run_after_saving);
    tcase_add_test(tc, inputs_without_newlines_are_refused_or_stopped_by_a_signal);
    tcase_add_test(tc, a_nonfinite_step_is_skipped_without_changing_anything);
    tcase_add_test(tc, endless_nonfinite_steps_stop_with_exit_4);
    tcase_add_test(tc, corpus_errors_name_the_file_and_line);
    tcase_add_test(tc, skipped_pairs_are_counted_and_the_rest_stay_aligned);
    tcase_add_test(tc, crlf_corpus_trains_exactly_like_lf);
    tcase_add_test(tc, a_config_error_exits_2_and_writes_nothing);
    tcase_add_test(tc, plateau_decay_and_early_stopping_follow_the_validations);
    tcase_add_test(tc, the_hard_warmup_validations_count_for_nothing_but_a_short_run);
    tcase_add_test(tc, the_warmup_rises_linearly_and_composes_with_the_plateau_decay);
    tcase_add_test(tc, the_warmup_scales_the_update);
    tcase_add_test(tc, inverse_sqrt_falls_as_the_root_of_the_step_after_the_warmup);
    tcase_add_test(tc, gradcheck_command_checks_the_configured_model);
    tcase_add_test(tc, the_log_keeps_control_characters_off_the_terminal);
    tcase_add_test(tc, clipping_scales_the_step_to_the_threshold);
    tcase_add_test(tc, each_step_draws_its_own_dropout_masks);
    tcase_add_test(tc, training_aer_and_entropy_match_s2s_align_on_the_same_checkpoint);
    tcase_add_loop_test(tc, hard_baselines_follow_the_rewards_after_the_warmup, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}
