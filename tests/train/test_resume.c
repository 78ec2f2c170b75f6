/* test_resume.c: whatever stops a run -- a signal at any phase of a step, a kill -9, a
 * failed write, a torn line -- the resumed run's checkpoints, metrics.jsonl,
 * alignments.jsonl and test.hyp are exactly those of the run trained straight through;
 * and a fresh start never mixes its logs with a dead run's. Signals land at chosen
 * phases through the fault hook S2S_FAULT_SIGNAL of build/s2s-faults. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"
#include "train/checkpoint.h"

/* ---- the run ---------------------------------------------------------------------------------- */

/* dir/resume.yaml: the tiny model with everything that writes a record: a log line every
 * 3 steps (so a stop between two carries a partial average), a validation, a dump with
 * AER and a report every 5, a test set, and a learning rate that halves at every
 * validation after the first (exact match stays 0 on this task, so nothing improves on
 * step 5) until early stopping ends the run at step 15; the learning rate warms up over
 * the first 8 updates (a function of the step, so resumed exactly too). Each batch is
 * cut into 2 shards on 2 threads, as training on this machine does by default, and
 * validation scores the mean of the last 2 validations' weights (training.average_last:
 * its snapshots are resumed too, and the ring wraps at step 15). */
static void write_resume_setup(const char *dir)
{
    write_tiny_setup(dir);
    char path[600], text[8192];
    snprintf(path, sizeof path, "%s/resume.yaml", dir);
    snprintf(text, sizeof text,
             "name: resume\nrun_dir: %s/run\n"
             "data:\n  train_src: %s/train.src\n  train_tgt: %s/train.tgt\n"
             "  valid_src: %s/valid.src\n  valid_tgt: %s/valid.tgt\n  valid_align: %s/valid.align\n"
             "  test_src: %s/valid.src\n  test_tgt: %s/valid.tgt\n  test_align: %s/valid.align\n"
             "model:\n  embedding_size: 8\n  encoder_size: 8\n  decoder_size: 16\n"
             "  attention_size: 8\n  readout_size: 16\n"
             "training:\n  batch_size: 8\n  max_steps: 20\n  valid_every: 5\n  log_every: 3\n"
             "  threads: 2\n  shards: 2\n  learning_rate: 0.01\n  early_stopping_metric: exact\n"
             "  patience: 1\n  early_stopping: 2\n  warmup_steps: 8\n  average_last: 2\n"
             "alignments:\n  every: 5\n",
             dir, dir, dir, dir, dir, dir, dir, dir, dir);
    write_file(path, text);
}

/* `binary train dir/resume.yaml [--resume dir/RUN] --set run_dir=dir/RUN [--set S]...`
 * with the sets of the NULL-terminated list `sets` (up to 2; NULL: none), stderr into
 * dir/err_name. */
static int run_train_with(const char *binary, const char *dir, const char *run, int resuming,
                          const char *const *env, const char *err_name, const char *const *sets)
{
    char config[600], run_dir[700], set[720], err[700];
    snprintf(config, sizeof config, "%s/resume.yaml", dir);
    snprintf(run_dir, sizeof run_dir, "%s/%s", dir, run);
    snprintf(set, sizeof set, "run_dir=%s", run_dir);
    snprintf(err, sizeof err, "%s/%s", dir, err_name);
    const char *argv[12] = {binary, "train", config, "--set", set};
    int a = 5;
    for (int k = 0; sets && sets[k]; k++) {
        ck_assert_int_lt(k, 2);
        argv[a++] = "--set";
        argv[a++] = sets[k];
    }
    if (resuming) {
        argv[a++] = "--resume";
        argv[a++] = run_dir;
    }
    return run_command(argv, NULL, err, env);
}

static int run_train(const char *binary, const char *dir, const char *run, int resuming,
                     const char *const *env, const char *err_name)
{
    return run_train_with(binary, dir, run, resuming, env, err_name, NULL);
}

/* The text of dir/run/name. */
static char *run_file(const char *dir, const char *run, const char *name)
{
    char path[900];
    snprintf(path, sizeof path, "%s/%s/%s", dir, run, name);
    return read_file(path);
}

/* metrics.jsonl without its measurements of time, which no two runs share. */
static char *metrics_without_timings(const char *dir, const char *run)
{
    char *m = run_file(dir, run, "metrics.jsonl");
    static const char *const timed[] = {",\"tokens_per_s\":", ",\"train_seconds\":"};
    for (size_t k = 0; k < sizeof timed / sizeof *timed; k++)
        for (char *at; (at = strstr(m, timed[k]));) {
            size_t len = strcspn(at + 1, ",}") + 1;
            memmove(at, at + len, strlen(at + len) + 1);
        }
    return m;
}

static void assert_same_file(const char *dir, const char *a, const char *b, const char *name,
                             const char *what)
{
    char *x = run_file(dir, a, name), *y = run_file(dir, b, name);
    ck_assert_msg(!strcmp(x, y), "%s: %s differs from the straight run's:\n%s\n---\n%s", what,
                  name, y, x);
    free(x);
    free(y);
}

/* Every record and checkpoint of dir/run equals dir/straight's. */
static void assert_same_as_straight(const char *dir, const char *run, const char *what)
{
    char a[700], b[700];
    snprintf(a, sizeof a, "%s/%s", dir, run);
    snprintf(b, sizeof b, "%s/straight", dir);
    assert_same_training_state(a, b, "last.ckpt");
    assert_same_training_state(a, b, "best.ckpt");
    char *ma = metrics_without_timings(dir, run), *mb = metrics_without_timings(dir, "straight");
    ck_assert_msg(!strcmp(ma, mb), "%s: metrics.jsonl differs from the straight run's:\n%s\n---\n%s",
                  what, mb, ma);
    free(ma);
    free(mb);
    assert_same_file(dir, run, "straight", "alignments.jsonl", what);
    assert_same_file(dir, run, "straight", "test.hyp", what);
}

/* ---- a signal at each phase of a step ------------------------------------------------------- */

static const struct {
    const char *phase;
    int step, sig;
} SIGNAL_CASES[] = {
    {"dump", 0, SIGTERM},      /* the dump before the first step */
    {"batch", 7, SIGTERM},     /* a step between two log lines: the average carries over */
    {"gradient", 7, SIGINT},   /* forward and backward done */
    {"update", 7, SIGHUP},     /* the weights updated */
    {"log", 9, SIGPIPE},       /* writing the log line */
    {"dump", 10, SIGTERM},     /* the attention dump, before the validation of its step */
    {"validate", 10, SIGINT},  /* the validation whose plateau halves the learning rate */
    {"report", 10, SIGTERM},   /* writing report.html */
    {"save", 10, SIGTERM},     /* inside the save of last.ckpt */
    {"validate", 15, SIGTERM}, /* the validation that stops the run early */
    {"save", 15, SIGINT},
    {"test", 15, SIGTERM},     /* the final test translation */
};

START_TEST(a_signal_at_any_phase_of_a_step_resumes_exactly_as_the_straight_run)
{
    char dir[512], env_signal[64], run[32], what[96], said[160];
    scratch_dir(dir, sizeof dir, "phases");
    write_resume_setup(dir);
    ck_assert_int_eq(run_train(S2S, dir, "straight", 0, NULL, "straight.txt"), 0);
    char *straight_log = run_file(dir, ".", "straight.txt");
    ck_assert_ptr_nonnull(strstr(straight_log, "done: early stopping at step 15"));
    ck_assert_ptr_nonnull(strstr(straight_log, "learning rate now 0.0025"));
    free(straight_log);
    char *header = run_file(dir, "straight", "train.log"); /* 300 pairs in batches of 8 */
    ck_assert_msg(strstr(header, "batches: 8 pairs (training.batch_size), 38 an epoch") != NULL,
                  "the log does not tell the batches:\n%s", header);
    free(header);
    for (size_t c = 0; c < sizeof SIGNAL_CASES / sizeof *SIGNAL_CASES; c++) {
        const char *phase = SIGNAL_CASES[c].phase;
        int step = SIGNAL_CASES[c].step, sig = SIGNAL_CASES[c].sig;
        snprintf(what, sizeof what, "signal %d at %s of step %d", sig, phase, step);
        snprintf(run, sizeof run, "run%zu", c);
        snprintf(env_signal, sizeof env_signal, "S2S_FAULT_SIGNAL=%s:%d:%d", phase, step, sig);
        const char *env[] = {env_signal, NULL};
        int rc = run_train(S2S_FAULTS, dir, run, 0, env, "stopped.txt");
        ck_assert_msg(rc == 128 + sig, "%s: exit %d", what, rc);
        char *log = run_file(dir, ".", "stopped.txt");
        if (!strcmp(phase, "test"))
            snprintf(said, sizeof said, "stopped by signal %d during the test translation", sig);
        else /* the step's work done, whatever it was interrupted in */
            snprintf(said, sizeof said, "stopped by signal %d at step %d; saved checkpoints/last.ckpt",
                     sig, step ? step : 1);
        ck_assert_msg(strstr(log, said) != NULL, "%s: the log does not say `%s`:\n%s", what, said, log);
        free(log);
        ck_assert_int_eq(run_train(S2S, dir, run, 1, NULL, "resumed.txt"), 0);
        assert_same_as_straight(dir, run, what);
    }
}
END_TEST

/* The shards fix the numbers, the threads do not: a run on one thread is the straight
 * run (2 shards on 2 threads) bit for bit. And "shards: 0" (as many as threads) is
 * fixed when the run begins: a resume with other threads cuts batches as before. */
START_TEST(shards_fix_the_numbers_whatever_the_threads)
{
    char dir[512];
    scratch_dir(dir, sizeof dir, "shards");
    write_resume_setup(dir);
    ck_assert_int_eq(run_train(S2S, dir, "straight", 0, NULL, "straight.txt"), 0);
    const char *const one_thread[] = {"training.threads=1", NULL};
    ck_assert_int_eq(run_train_with(S2S, dir, "one", 0, NULL, "one.txt", one_thread), 0);
    assert_same_as_straight(dir, "one", "2 shards on one thread");

    const char *env[] = {"S2S_FAULT_SIGNAL=update:7:15", NULL};
    const char *const as_threads[] = {"training.shards=0", NULL};
    ck_assert_int_eq(run_train_with(S2S_FAULTS, dir, "auto", 0, env, "auto.txt", as_threads),
                     128 + SIGTERM);
    char *config = run_file(dir, "auto", "config.yaml");
    ck_assert_msg(strstr(config, "shards: 2\n") != NULL, "config.yaml of shards 0 on 2 threads "
                  "does not record 2 shards:\n%s", config);
    free(config);
    const char *const as_one_thread[] = {"training.shards=0", "training.threads=1", NULL};
    ck_assert_int_eq(run_train_with(S2S, dir, "auto", 1, NULL, "resumed.txt", as_one_thread), 0);
    assert_same_as_straight(dir, "auto", "shards 0 begun on 2 threads, resumed on 1");
}
END_TEST

/* Batches under a token budget (3 to 8 pairs here, each epoch's cut by the pairs'
 * lengths): a run stopped mid-way resumes on the batches the straight run takes. */
START_TEST(token_batches_resume_exactly_as_the_straight_run)
{
    char dir[512];
    scratch_dir(dir, sizeof dir, "tokens");
    write_resume_setup(dir);
    const char *const tokens[] = {"training.batch_tokens=24", NULL};
    ck_assert_int_eq(run_train_with(S2S, dir, "straight", 0, NULL, "straight.txt", tokens), 0);
    char *log = run_file(dir, "straight", "train.log");
    ck_assert_msg(strstr(log, "batches: as many pairs as fit in 24 tokens") != NULL,
                  "the log does not tell the token budget:\n%s", log);
    free(log);
    const char *env[] = {"S2S_FAULT_SIGNAL=batch:7:15", NULL};
    ck_assert_int_eq(run_train_with(S2S_FAULTS, dir, "run", 0, env, "stopped.txt", tokens),
                     128 + SIGTERM);
    ck_assert_int_eq(run_train_with(S2S, dir, "run", 1, NULL, "resumed.txt", tokens), 0);
    assert_same_as_straight(dir, "run", "token batches, stopped at step 7");
}
END_TEST

/* The last step of a run that ends between two validations: the straight run validates
 * it at the end (and picks best.ckpt by it); a run stopped in that step must do the
 * same when resumed, though the step itself is done. */
START_TEST(a_signal_in_a_last_step_without_validation_still_validates_it_on_resume)
{
    char dir[512];
    scratch_dir(dir, sizeof dir, "laststep");
    write_resume_setup(dir);
    const char *env_steps = "training.max_steps=12", *cases[] = {"update:12", "log:12"};
    char config[600], set_dir[720], run_dir[700], err[700];
    snprintf(config, sizeof config, "%s/resume.yaml", dir);
    for (int k = -1; k < 2; k++) { /* the straight run, then one stopped per case */
        snprintf(run_dir, sizeof run_dir, "%s/%s%d", dir, k < 0 ? "straight" : "run", k);
        if (k < 0)
            snprintf(run_dir, sizeof run_dir, "%s/straight", dir);
        snprintf(set_dir, sizeof set_dir, "run_dir=%s", run_dir);
        snprintf(err, sizeof err, "%s/err.txt", dir);
        char env_signal[64];
        snprintf(env_signal, sizeof env_signal, "S2S_FAULT_SIGNAL=%s", k < 0 ? "none:0" : cases[k]);
        const char *env[] = {env_signal, NULL};
        const char *argv[] = {S2S_FAULTS, "train", config, "--set", set_dir, "--set", env_steps, NULL};
        ck_assert_int_eq(run_command(argv, NULL, err, env), k < 0 ? 0 : 128 + SIGTERM);
        if (k < 0)
            continue;
        const char *resume[] = {S2S, "train", config, "--set", set_dir, "--set", env_steps,
                                "--resume", run_dir, NULL};
        ck_assert_int_eq(run_command(resume, NULL, err, NULL), 0);
        char *log = read_file(err);
        ck_assert_msg(strstr(log, "validation step=12 ") != NULL, "%s: no validation at step 12:\n%s",
                      cases[k], log);
        free(log);
        char run[32];
        snprintf(run, sizeof run, "run%d", k);
        assert_same_as_straight(dir, run, cases[k]);
    }
}
END_TEST

/* A run that finished, resumed with nothing left to do (issue 25: it wrote its last dump
 * and its AER record again, and the report showed that step twice): every record and
 * checkpoint stays as the finished run left them, resumed once or twice, whether its last
 * step was a scheduled dump (15, early stopping) or not (12). */
START_TEST(resuming_a_finished_run_writes_nothing_twice)
{
    char dir[512], config[600], set_dir[720], run_dir[700], err[700], steps[64], copy[1600];
    scratch_dir(dir, sizeof dir, "finished");
    write_resume_setup(dir);
    snprintf(config, sizeof config, "%s/resume.yaml", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    static const int last[] = {12, 20};
    for (int k = 0; k < 2; k++) {
        snprintf(steps, sizeof steps, "training.max_steps=%d", last[k]);
        for (int r = 0; r < 2; r++) { /* "straight", then "run" resumed twice */
            snprintf(run_dir, sizeof run_dir, "%s/%s", dir, r ? "run" : "straight");
            snprintf(set_dir, sizeof set_dir, "run_dir=%s", run_dir);
            snprintf(copy, sizeof copy, "rm -rf '%s'", run_dir);
            ck_assert_int_eq(system(copy), 0);
            const char *argv[] = {S2S, "train", config, "--set", set_dir, "--set", steps, NULL};
            ck_assert_int_eq(run_command(argv, NULL, err, NULL), 0);
        }
        for (int again = 0; again < 2; again++) {
            const char *resume[] = {S2S, "train", config, "--set", set_dir, "--set", steps,
                                    "--resume", run_dir, NULL};
            ck_assert_int_eq(run_command(resume, NULL, err, NULL), 0);
            char *said = read_file(err);
            ck_assert_msg(strstr(said, "done: ") != NULL, "%s", said);
            free(said);
            assert_same_as_straight(dir, "run", last[k] == 12 ? "finished at 12, resumed"
                                                              : "stopped early at 15, resumed");
        }
    }
}
END_TEST

/* ---- kill -9 and torn lines --------------------------------------------------------------------- */

START_TEST(a_kill_after_the_last_save_drops_the_replayed_records_and_torn_lines)
{
    char dir[512], path[800];
    scratch_dir(dir, sizeof dir, "torn");
    write_resume_setup(dir);
    ck_assert_int_eq(run_train(S2S, dir, "straight", 0, NULL, "straight.txt"), 0);
    /* killed in step 13: the records of steps 11-13 are in the logs, the checkpoint is
     * step 10's */
    const char *env[] = {"S2S_FAULT_SIGNAL=update:13:9", NULL};
    ck_assert_int_eq(run_train(S2S_FAULTS, dir, "run", 0, env, "killed.txt"), 128 + SIGKILL);
    char *m = run_file(dir, "run", "metrics.jsonl");
    ck_assert_ptr_nonnull(strstr(m, "{\"step\":12,"));
    free(m);
    /* and a power cut left a line without its newline in each log */
    const char *logs[] = {"metrics.jsonl", "alignments.jsonl", "train.log"};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/run/%s", dir, logs[k]);
        FILE *f = fopen(path, "ab");
        ck_assert(f && fputs("{\"step\":13,\"epo", f) >= 0 && fclose(f) == 0);
    }
    ck_assert_int_eq(run_train(S2S, dir, "run", 1, NULL, "resumed.txt"), 0);
    char *said = run_file(dir, ".", "resumed.txt");
    ck_assert_ptr_nonnull(strstr(said, "s2s: note: metrics.jsonl: dropped "));
    ck_assert_ptr_nonnull(strstr(said, "s2s: note: alignments.jsonl: dropped "));
    ck_assert_ptr_nonnull(strstr(said, "s2s: note: train.log: cut off a last line without its "
                                       "newline (15 bytes"));
    free(said);
    assert_same_as_straight(dir, "run", "kill -9 in step 13");
    /* train.log keeps the story, whole lines only */
    char *log = run_file(dir, "run", "train.log");
    ck_assert_ptr_null(strstr(log, "\"epo"));
    ck_assert_ptr_nonnull(strstr(log, "resuming at step 10 "));
    free(log);
}
END_TEST

/* Every line of text ends with a newline; with json, every line is an object. */
static void assert_whole_lines(const char *text, int json, const char *what)
{
    size_t n = strlen(text);
    ck_assert_msg(n == 0 || text[n - 1] == '\n', "%s: ends in a fragment", what);
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        if (json)
            ck_assert_msg(line[0] == '{' && end[-1] == '}', "%s: a torn line: %.*s", what,
                          (int)(end - line), line);
        line = end + 1;
    }
}

START_TEST(a_log_write_that_stops_short_leaves_whole_lines_and_resumes_exactly)
{
    char dir[512], env_io[64], what[64];
    scratch_dir(dir, sizeof dir, "logwrite");
    write_resume_setup(dir);
    ck_assert_int_eq(run_train(S2S, dir, "straight", 0, NULL, "straight.txt"), 0);
    /* the k-th line appended to any log writes half of itself and fails with ENOSPC:
     * metrics and train.log lines are dropped with a warning, an alignments line stops
     * the run with exit 3; in every case no file holds a fragment */
    int stopped = 0, k = 1;
    for (;; k++) {
        snprintf(env_io, sizeof env_io, "S2S_FAULT_IO=logwrite:%d", k);
        snprintf(what, sizeof what, "logwrite:%d", k);
        const char *env[] = {env_io, NULL};
        char cmd[800];
        snprintf(cmd, sizeof cmd, "rm -rf '%s/run'", dir);
        ck_assert_int_eq(system(cmd), 0);
        int rc = run_train(S2S_FAULTS, dir, "run", 0, env, "io.txt");
        ck_assert_msg(rc == 0 || rc == 3, "%s: exit %d", what, rc);
        char *said = run_file(dir, ".", "io.txt");
        int landed = strstr(said, "No space left on device") != NULL;
        free(said);
        if (!landed) { /* past the run's last line: every one has failed once */
            ck_assert_int_eq(rc, 0);
            break;
        }
        const char *logs[] = {"metrics.jsonl", "alignments.jsonl", "train.log"};
        for (int l = 0; l < 3; l++) {
            char *text = run_file(dir, "run", logs[l]);
            assert_whole_lines(text, l < 2, what);
            free(text);
        }
        if (rc == 3) { /* go on: from the last checkpoint, or (none yet) from the start */
            stopped++;
            char last[800];
            snprintf(last, sizeof last, "%s/run/checkpoints/last.ckpt", dir);
            ck_assert_int_eq(run_train(S2S, dir, "run", path_exists(last), NULL, "resumed.txt"), 0);
            assert_same_as_straight(dir, "run", what);
        }
    }
    /* each line of the three logs failed once: the 16 of alignments.jsonl (4 dumps of 4
     * probes) stopped the run */
    ck_assert_int_eq(stopped, 16);
    int lines = 0;
    const char *logs[] = {"metrics.jsonl", "alignments.jsonl", "train.log"};
    for (int l = 0; l < 3; l++) {
        char *text = run_file(dir, "straight", logs[l]);
        for (const char *c = text; *c; c++)
            lines += *c == '\n';
        free(text);
    }
    ck_assert_int_eq(k - 1, lines);
}
END_TEST

/* ---- a fresh start in the directory of a dead run -------------------------------------------- */

START_TEST(a_fresh_start_moves_a_dead_runs_files_aside)
{
    char dir[512], expected[1200];
    scratch_dir(dir, sizeof dir, "deadrun");
    write_resume_setup(dir);
    ck_assert_int_eq(run_train(S2S, dir, "straight", 0, NULL, "straight.txt"), 0);
    /* killed in step 3, before its first save: logs, no checkpoint */
    const char *env[] = {"S2S_FAULT_SIGNAL=update:3:9", NULL};
    ck_assert_int_eq(run_train(S2S_FAULTS, dir, "run", 0, env, "killed.txt"), 128 + SIGKILL);
    char *dead = run_file(dir, "run", "metrics.jsonl");
    ck_assert_ptr_nonnull(strstr(dead, "{\"step\":0,")); /* the first dump's entropy */
    ck_assert_int_eq(run_train(S2S, dir, "run", 0, NULL, "fresh.txt"), 0);
    char *said = run_file(dir, ".", "fresh.txt");
    snprintf(expected, sizeof expected, "s2s: note: `%s/run` held files of an earlier run that "
             "saved no checkpoint; moved them aside to NAME.old.1: config.yaml, train.log, "
             "metrics.jsonl, alignments.jsonl, heatmaps\n", dir);
    ck_assert_msg(strstr(said, expected) != NULL, "%s", said);
    free(said);
    char *aside = run_file(dir, "run", "metrics.jsonl.old.1");
    ck_assert_str_eq(aside, dead);
    free(aside);
    free(dead);
    assert_same_as_straight(dir, "run", "a fresh start");

    /* the next dead run's files (a whole run's, its checkpoints lost) go to .old.2 */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm '%s/run/checkpoints/last.ckpt' '%s/run/checkpoints/best.ckpt'",
             dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(run_train(S2S, dir, "run", 0, NULL, "fresh.txt"), 0);
    said = run_file(dir, ".", "fresh.txt");
    snprintf(expected, sizeof expected, "moved them aside to NAME.old.2: config.yaml, train.log, "
             "metrics.jsonl, alignments.jsonl, test.hyp, heatmaps\n");
    ck_assert_msg(strstr(said, expected) != NULL, "%s", said);
    free(said);
    assert_same_as_straight(dir, "run", "a second fresh start");
}
END_TEST

Suite *resume_suite(void)
{
    Suite *s = suite_create("resume");
    TCase *tc = tcase_create("resume");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, a_signal_at_any_phase_of_a_step_resumes_exactly_as_the_straight_run);
    tcase_add_test(tc, a_signal_in_a_last_step_without_validation_still_validates_it_on_resume);
    tcase_add_test(tc, resuming_a_finished_run_writes_nothing_twice);
    tcase_add_test(tc, a_kill_after_the_last_save_drops_the_replayed_records_and_torn_lines);
    tcase_add_test(tc, a_fresh_start_moves_a_dead_runs_files_aside);
    tcase_add_test(tc, shards_fix_the_numbers_whatever_the_threads);
    tcase_add_test(tc, token_batches_resume_exactly_as_the_straight_run);
    suite_add_tcase(s, tc);
    /* dozens of runs: left out of make valgrind (tag loop), like the other fault loops */
    TCase *loops = tcase_create("resume-loops");
    tcase_set_tags(loops, "loop");
    tcase_set_timeout(loops, 400);
    tcase_add_test(loops, a_log_write_that_stops_short_leaves_whole_lines_and_resumes_exactly);
    suite_add_tcase(s, loops);
    return s;
}
