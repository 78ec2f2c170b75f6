/* test_mpi.c: training on several processes under Open MPI's mpirun (issue 31): with
 * training.shards 4 and one thread a process, 1, 2 and 4 processes log the same numbers
 * and save the same weights, optimizer state and progress as one process, bit for bit,
 * for every kind of model; a run resumes on another number of processes; SIGTERM to
 * mpirun saves a checkpoint all ranks agree on; a rank killed ends the others within
 * 10 s with the checkpoints intact; a number of processes that does not divide the
 * shards is refused before anything is written.
 *
 * mpirun runs as root here only with OMPI_ALLOW_RUN_AS_ROOT and its confirmation, and
 * in a container without ptrace rights Open MPI's shared-memory single copy (CMA)
 * fails, so the tests turn it off (btl_vader_single_copy_mechanism none). The ranks of
 * an ASan build run under LeakSanitizer, which would report Open MPI's own allocations
 * that it never frees at MPI_Finalize: tests/train/openmpi.supp suppresses those, by
 * library, and nothing of s2s's. */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "gen/shapes.h"
#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"

/* What every mpirun of these tests needs on this machine (see the top). */
static const char *const MPI_ENV[] = {
    "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
    "OMPI_MCA_btl_vader_single_copy_mechanism=none",
    /* one machine: shared memory and loopback, no probing of other networks */
    "OMPI_MCA_btl=self,vader", "OMPI_MCA_rmaps_base_oversubscribe=1",
    /* Open MPI's components stay loaded to the end, so that LeakSanitizer can name the
     * library of what they leave behind (unloaded, it is an "unknown module"); the ranks
     * start in the suite's directory, the repository's top */
    "OMPI_MCA_mca_base_component_disable_dlclose=1",
    "LSAN_OPTIONS=suppressions=tests/train/openmpi.supp:print_suppressions=0",
    /* Open MPI is built without frame pointers: only the slow unwinder finds its
     * libraries in the stack of an allocation (the fast one stops at the first frame) */
    "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:fast_unwind_on_malloc=0",
    NULL, NULL, NULL, NULL};

/* MPI_ENV plus up to three more entries (NULL-terminated list into env). */
static void mpi_env(const char **env, const char *a, const char *b, const char *c)
{
    int n = 0;
    while (MPI_ENV[n]) {
        env[n] = MPI_ENV[n];
        n++;
    }
    env[n++] = a;
    env[n++] = b;
    env[n++] = c;
    env[n] = NULL;
}

/* mpirun, found on $PATH as a shell would (the tests exec by path). */
static const char *mpirun(void)
{
    static char found[4096];
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin"; !found[0] && *p;) {
        const size_t n = strcspn(p, ":");
        snprintf(found, sizeof found, "%.*s/mpirun", (int)n, p);
        if (access(found, X_OK) != 0)
            found[0] = '\0';
        p += n + (p[n] == ':');
    }
    ck_assert_msg(found[0], "mpirun is not on PATH (sh scripts/install-deps.sh test installs it)");
    return found;
}

/* argv of `[mpirun -np N] binary train dir/tiny.yaml --set ...` (np 0: no mpirun). */
static void train_argv(const char **argv, int np, const char *binary, const char *dir,
                       const char *const *sets)
{
    static char config[600], ranks[16];
    snprintf(config, sizeof config, "%s/tiny.yaml", dir);
    snprintf(ranks, sizeof ranks, "%d", np);
    int a = 0;
    if (np) {
        argv[a++] = mpirun();
        argv[a++] = "-np";
        argv[a++] = ranks;
    }
    argv[a++] = binary;
    argv[a++] = "train";
    argv[a++] = config;
    for (int k = 0; sets[k]; k++) {
        ck_assert_int_lt(a, 60);
        argv[a++] = "--set";
        argv[a++] = sets[k];
    }
    argv[a] = NULL;
}

/* Trains dir/tiny.yaml on np processes (0: plainly, without mpirun) into dir/RUN, with
 * the --set overrides of `common` and then `more` (NULL-terminated, either may be
 * NULL), or (resume) goes on with the run saved there; stderr to dir/RUN.err (or
 * RUN.resume.err). Returns the exit code. */
static int run_training(const char *dir, int np, const char *run, const char *const *common,
                        const char *const *more, int resume)
{
    static char run_dir[700], path[700];
    snprintf(run_dir, sizeof run_dir, "run_dir=%s/%s", dir, run);
    snprintf(path, sizeof path, "%s/%s", dir, run);
    const char *sets[40];
    int n = 0;
    for (int k = 0; common && common[k]; k++)
        sets[n++] = common[k];
    for (int k = 0; more && more[k]; k++)
        sets[n++] = more[k];
    sets[n++] = run_dir;
    sets[n] = NULL;
    const char *argv[64], *env[12];
    train_argv(argv, np, S2S, dir, sets);
    if (resume) {
        for (n = 0; argv[n]; n++)
            continue;
        argv[n++] = "--resume";
        argv[n++] = path;
        argv[n] = NULL;
    }
    mpi_env(env, NULL, NULL, NULL);
    char err[700];
    snprintf(err, sizeof err, "%s/%s%s.err", dir, run, resume ? ".resume" : "");
    return run_command_with(argv, NULL, err, &(RunOptions){.env = env, .timeout = 120}, NULL);
}

static int train_on(const char *dir, int np, const char *run, const char *const *common,
                    const char *const *more)
{
    return run_training(dir, np, run, common, more, 0);
}

/* metrics.jsonl of a run without the fields the clock decides (tokens_per_s,
 * train_seconds): what must be the same, bit for bit, however many processes ran. */
static char *metrics_without_times(const char *run_dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/metrics.jsonl", run_dir);
    char *text = read_file(path), *out = text;
    for (const char *p = text; *p;) {
        if (!strncmp(p, ",\"tokens_per_s\":", 16) || !strncmp(p, ",\"train_seconds\":", 17)) {
            p++;
            while (*p && *p != ',' && *p != '}')
                p++;
            continue;
        }
        *out++ = *p++;
    }
    *out = '\0';
    return text;
}

/* run_a and run_b under dir: the same logged numbers, and the same state in last.ckpt
 * (and best.ckpt when there is one). */
static void assert_same_runs(const char *dir, const char *run_a, const char *run_b)
{
    char a[700], b[700];
    snprintf(a, sizeof a, "%s/%s", dir, run_a);
    snprintf(b, sizeof b, "%s/%s", dir, run_b);
    char *ma = metrics_without_times(a), *mb = metrics_without_times(b);
    ck_assert_msg(strlen(ma) > 0 && !strcmp(ma, mb), "metrics.jsonl of %s and %s differ:\n%s\n"
                  "against\n%s", run_a, run_b, ma, mb);
    free(ma);
    free(mb);
    assert_same_training_state(a, b, "last.ckpt");
    char best[800];
    snprintf(best, sizeof best, "%s/checkpoints/best.ckpt", a);
    if (path_exists(best))
        assert_same_training_state(a, b, "best.ckpt");
}

/* A scratch directory `name` with the tiny setup (tinyrun.h) in it. */
static void tiny_setup(char *dir, size_t cap, const char *name)
{
    tinyrun_init();
    scratch_dir(dir, cap, name);
    write_tiny_setup(dir);
}

/* The settings every run here shares: 4 shards, one thread a process, dropout (so that
 * the draws must follow the shards, not the ranks). */
static const char *const FOUR_SHARDS[] = {"training.shards=4", "training.threads=1",
                                          "model.embedding_dropout=0.2",
                                          "model.readout_dropout=0.2", NULL};

START_TEST(test_ranks_train_what_one_process_does)
{
    char dir[512];
    tiny_setup(dir, sizeof dir, "mpi-same");
    ck_assert_int_eq(train_on(dir, 0, "one", FOUR_SHARDS, NULL), 0);
    static const int ranks[] = {1, 2, 4};
    for (int k = 0; k < 3; k++) {
        char run[32];
        snprintf(run, sizeof run, "np%d", ranks[k]);
        ck_assert_msg(train_on(dir, ranks[k], run, FOUR_SHARDS, NULL) == 0, "mpirun -np %d failed",
                      ranks[k]);
        assert_same_runs(dir, "one", run);
        /* the threads a rank was given, not one more for the exchange (issue 41) */
        char log[700], want[160];
        snprintf(log, sizeof log, "%s/%s/train.log", dir, run);
        char *text = read_file(log);
        if (ranks[k] > 1)
            snprintf(want, sizeof want, "over %d processes (mpirun), %d each on 1 thread "
                     "(training.threads), 1 BLAS thread each; the gradients go after the "
                     "passes", ranks[k], 4 / ranks[k]);
        else
            snprintf(want, sizeof want, "4 shards (training.shards) on 1 thread, ");
        ck_assert_msg(strstr(text, want), "%s does not say `%s`", log, want);
        free(text);
    }
    /* a thread more than its shards: the output layer's gradient goes during the
     * backward pass, and the numbers stay the same */
    static const char *const three[] = {"training.threads=3", NULL};
    ck_assert_int_eq(train_on(dir, 2, "np2-overlap", FOUR_SHARDS, three), 0);
    assert_same_runs(dir, "one", "np2-overlap");
    char log[700];
    snprintf(log, sizeof log, "%s/np2-overlap/train.log", dir);
    char *text = read_file(log);
    const char *want = "over 2 processes (mpirun), 2 each on 3 threads (training.threads), 1 "
                       "BLAS thread each; a thread of its own sends the output layer's gradient "
                       "during the backward pass";
    ck_assert_msg(strstr(text, want), "%s does not say `%s`", log, want);
    free(text);
}
END_TEST

/* Every kind of model (MODEL.md): its settings, as --set overrides of tiny.yaml. */
static const char *const VARIANTS[][6] = {
    {"model.encoder_cell=lstm", "model.decoder_cell=lstm", "model.attention=general",
     "model.attention_heads=2", NULL},
    {"model.encoder_cell=rnn", "model.decoder_cell=rnn", "model.attention=dot",
     "model.embedding_size=16", "model.tie_output=true", NULL},
    {"model.self_attention_layers=1", "model.attention=scaled_dot", "training.label_smoothing=0.1",
     NULL},
    {"model.encoder_cell=none", "model.self_attention_layers=2", "model.self_attention_dropout=0.1",
     NULL},
    {"model.attention_mode=hard", "training.hard_warmup_steps=3", NULL},
    /* batches under a token budget: 3 to 8 pairs, so that some of the 4 shards go empty */
    {"training.average_last=2", "training.optimizer=sgd", "training.batch_tokens=24", NULL},
    {"model.encoder_cell=none", "model.self_attention_layers=1", "model.decoder_cell=none",
     "model.decoder_layers=2", "model.self_attention_dropout=0.1", NULL},
    /* subword sampling: each process draws every epoch's split (5 batches an epoch); one
     * table for both sides' pieces (the source's rows in the dense gradient) */
    {"data.subwords=sentencepiece", "data.subword_vocab_size=24", "data.subword_alpha=0.5",
     "training.batch_size=64", "model.share_embeddings=true", NULL},
};

START_TEST(test_ranks_train_every_model_as_one_process)
{
    char dir[512];
    tiny_setup(dir, sizeof dir, "mpi-variants");
    const int v = _i;
    ck_assert_int_eq(train_on(dir, 0, "one", FOUR_SHARDS, VARIANTS[v]), 0);
    ck_assert_int_eq(train_on(dir, 2, "np2", FOUR_SHARDS, VARIANTS[v]), 0);
    assert_same_runs(dir, "one", "np2");
}
END_TEST

/* dir/tiny.yaml for an image model on a small shapes corpus (48 scenes), its boxes
 * supervising the attention: pictures, cells and grounding split by shard. */
static void write_image_setup(const char *dir)
{
    char shapes[600], text[4096], path[700];
    snprintf(shapes, sizeof shapes, "%s/shapes", dir);
    Error err;
    ck_assert_msg(shapes_write(shapes, 48, 5, NULL, &err) == 0, "%s", err.msg);
    snprintf(path, sizeof path, "%s/tiny.yaml", dir);
    snprintf(text, sizeof text,
             "name: img\n"
             "data:\n  train_src: %s/train.src\n  train_tgt: %s/train.tgt\n"
             "  train_ground: %s/train.ground\n  image_size: 16\n"
             "model:\n  encoder: image\n  conv_channels: [4, 8]\n  embedding_size: 8\n"
             "  decoder_size: 16\n  attention_size: 8\n  readout_size: 16\n"
             "training:\n  batch_size: 8\n  max_steps: 12\n  epochs: 0\n  valid_every: 6\n"
             "  log_every: 1\n  learning_rate: 0.01\n  attention_supervision: 0.5\n"
             "  doubly_stochastic: 0.5\n",
             shapes, shapes, shapes);
    write_file(path, text);
}

START_TEST(test_ranks_train_an_image_model_as_one_process)
{
    tinyrun_init();
    char dir[512];
    scratch_dir(dir, sizeof dir, "mpi-image");
    write_image_setup(dir);
    ck_assert_int_eq(train_on(dir, 0, "one", FOUR_SHARDS, NULL), 0);
    ck_assert_int_eq(train_on(dir, 2, "np2", FOUR_SHARDS, NULL), 0);
    assert_same_runs(dir, "one", "np2");
}
END_TEST

START_TEST(test_a_run_resumes_on_another_number_of_processes)
{
    char dir[512];
    tiny_setup(dir, sizeof dir, "mpi-resume");
    ck_assert_int_eq(train_on(dir, 0, "straight", FOUR_SHARDS, NULL), 0);
    /* 2 processes to step 10, then one process on to step 20 */
    static const char *const half[] = {"training.max_steps=10", NULL};
    ck_assert_int_eq(train_on(dir, 2, "split", FOUR_SHARDS, half), 0);
    ck_assert_int_eq(run_training(dir, 0, "split", FOUR_SHARDS, NULL, 1), 0);
    assert_same_runs(dir, "straight", "split");
}
END_TEST

/* The pid of rank `rank` among the children of mpirun_pid, or -1. */
static pid_t rank_pid(pid_t mpirun_pid, int rank)
{
    char want[48];
    snprintf(want, sizeof want, "OMPI_COMM_WORLD_RANK=%d", rank);
    DIR *proc = opendir("/proc");
    ck_assert(proc);
    pid_t found = -1;
    for (struct dirent *e; found < 0 && (e = readdir(proc));) {
        const int pid = atoi(e->d_name);
        char path[300], entries[8192];
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *f = pid > 0 ? fopen(path, "r") : NULL;
        if (!f)
            continue;
        int ppid = -1;
        const int got = fscanf(f, "%*d %*s %*c %d", &ppid);
        fclose(f);
        snprintf(path, sizeof path, "/proc/%d/environ", pid);
        if (got != 1 || ppid != mpirun_pid || !(f = fopen(path, "r")))
            continue;
        const size_t n = fread(entries, 1, sizeof entries - 1, f);
        fclose(f);
        entries[n] = '\0';
        for (size_t at = 0; at < n; at += strlen(entries + at) + 1)
            if (!strcmp(entries + at, want))
                found = pid;
    }
    closedir(proc);
    return found;
}

/* Starts mpirun -np 2 of the fault-hook build on dir/tiny.yaml with slow steps (ms each)
 * and Open MPI's grace after SIGTERM (odls_base_sigkill_timeout), into dir/run; waits
 * until run/checkpoints/last.ckpt exists. Returns mpirun's pid. */
static pid_t start_slow_run(const char *dir, const char *grace, int ms)
{
    static char step_ms[48];
    snprintf(step_ms, sizeof step_ms, "S2S_FAULT_STEP_MS=%d", ms);
    static const char *const sets[] = {"training.shards=4", "training.threads=1",
                                       "training.max_steps=400", "training.valid_every=5",
                                       NULL};
    const char *argv[64], *env[12];
    char run_dir[700];
    snprintf(run_dir, sizeof run_dir, "%s/run", dir);
    train_argv(argv, 2, S2S_FAULTS, dir, sets);
    mpi_env(env, step_ms, grace, NULL);
    char err[700], ckpt[800];
    snprintf(err, sizeof err, "%s/run.err", dir);
    pid_t pid = start_command_with(argv, NULL, err, &(RunOptions){.env = env});
    snprintf(ckpt, sizeof ckpt, "%s/checkpoints/last.ckpt", run_dir);
    const double until = now_seconds() + 60;
    while (!path_exists(ckpt) && now_seconds() < until)
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    ck_assert_msg(path_exists(ckpt), "no checkpoint within 60 s (%s)", err);
    return pid;
}

START_TEST(test_sigterm_to_mpirun_saves_where_the_ranks_agree)
{
    char dir[512];
    tiny_setup(dir, sizeof dir, "mpi-sigterm");
    /* Open MPI passes SIGTERM on to the ranks after the grace, and SIGKILLs them the
     * grace after that: 3 s is ample for this model's save */
    pid_t pid = start_slow_run(dir, "OMPI_MCA_odls_base_sigkill_timeout=3", 100);
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    ck_assert_int_eq(wait_command(pid, 60), 1); /* mpirun's own status, whatever the ranks' */
    char path[700];
    snprintf(path, sizeof path, "%s/run/train.log", dir);
    char *log = read_file(path);
    const char *stop = strstr(log, "stopped by signal 15 at step ");
    ck_assert_msg(stop, "train.log does not say where the ranks stopped:\n%s", log);
    long step = atol(stop + strlen("stopped by signal 15 at step "));
    ck_assert_msg(strstr(stop, "saved checkpoints/last.ckpt"), "%s", stop);
    free(log);
    snprintf(path, sizeof path, "%s/run", dir);
    Checkpoint ck;
    load_checkpoint(&ck, path, "last.ckpt");
    ck_assert_int_eq(ck.progress.step, step);
    checkpoint_free(&ck);
    /* resumed to a step past it (the slow steps are no more), it ends where a run
     * straight through does */
    static const char *const to_end[] = {"training.max_steps=60", NULL};
    ck_assert_int_lt(step, 60);
    static const char *const sets[] = {"training.shards=4", "training.threads=1",
                                       "training.valid_every=5", NULL};
    ck_assert_int_eq(train_on(dir, 0, "straight", sets, to_end), 0);
    ck_assert_int_eq(run_training(dir, 2, "run", sets, to_end, 1), 0);
    assert_same_runs(dir, "straight", "run");
}
END_TEST

/* Rank 1 alone sends itself SIGTERM (S2S_FAULT_SIGNAL=fault); both ranks must stop at
 * step `at`, rank 0 saving and logging it. */
static void check_signal_to_one_rank(const char *name, const char *fault, long at)
{
    char dir[512];
    tiny_setup(dir, sizeof dir, name);
    const char *argv[64], *env[12];
    static const char *const sets[] = {"training.shards=4", "training.threads=1", NULL};
    char run_dir[700], set_run[760];
    snprintf(run_dir, sizeof run_dir, "%s/run", dir);
    snprintf(set_run, sizeof set_run, "run_dir=%s", run_dir);
    const char *with_run[] = {sets[0], sets[1], set_run, NULL};
    train_argv(argv, 2, S2S_FAULTS, dir, with_run);
    mpi_env(env, fault, "S2S_FAULT_RANK=1", NULL);
    char err[700];
    snprintf(err, sizeof err, "%s/run.err", dir);
    const int rc = run_command_with(argv, NULL, err, &(RunOptions){.env = env, .timeout = 60},
                                    NULL);
    ck_assert_msg(rc == 128 + SIGTERM, "mpirun exited %d: the ranks did not stop together", rc);
    char path[760];
    snprintf(path, sizeof path, "%s/train.log", run_dir);
    char *log = read_file(path);
    char want[80];
    snprintf(want, sizeof want, "stopped by signal 15 at step %ld; saved checkpoints/last.ckpt",
             at);
    ck_assert_msg(strstr(log, want), "%s", log);
    free(log);
    Checkpoint ck;
    load_checkpoint(&ck, run_dir, "last.ckpt");
    ck_assert_int_eq(ck.progress.step, at);
    checkpoint_free(&ck);
}

START_TEST(test_a_signal_to_one_rank_stops_them_all_at_its_step)
{
    /* as step 7 begins (as a node's own shutdown would): the ranks agree on it at its end */
    check_signal_to_one_rank("mpi-one-signal", "S2S_FAULT_SIGNAL=batch:7", 7);
    /* just after step 7's agreement: it waits for step 8's (read again at once, it
     * stopped rank 1 a step before rank 0, which then waited for it until killed) */
    check_signal_to_one_rank("mpi-signal-after-agreeing", "S2S_FAULT_SIGNAL=agreed:7", 8);
}
END_TEST

START_TEST(test_a_killed_rank_ends_the_others)
{
    char dir[512];
    tiny_setup(dir, sizeof dir, "mpi-kill");
    /* with the grace a user gives the save (the README's 10 s would do as well) */
    pid_t pid = start_slow_run(dir, "OMPI_MCA_odls_base_sigkill_timeout=3", 100);
    pid_t rank1 = rank_pid(pid, 1);
    ck_assert_int_gt(rank1, 0);
    ck_assert_int_eq(kill(rank1, SIGKILL), 0);
    const double t0 = now_seconds();
    const int rc = wait_command(pid, 10);
    ck_assert_msg(rc != -1, "the other rank still ran 10 s after rank 1 was killed");
    ck_assert_int_ne(rc, 0);
    ck_assert_double_lt(now_seconds() - t0, 10);
    char path[700];
    snprintf(path, sizeof path, "%s/run.err", dir);
    char *err = read_file(path);
    ck_assert_msg(strstr(err, "rank 1"), "mpirun does not name the rank:\n%s", err);
    free(err);
    /* the checkpoints are whole, and the run resumes */
    snprintf(path, sizeof path, "%s/run", dir);
    Checkpoint ck;
    load_checkpoint(&ck, path, "last.ckpt");
    checkpoint_free(&ck);
    load_checkpoint(&ck, path, "best.ckpt");
    checkpoint_free(&ck);
}
END_TEST

START_TEST(test_processes_that_cannot_share_the_shards_are_refused)
{
    char dir[512];
    tiny_setup(dir, sizeof dir, "mpi-wrong-n");
    static const char *const three[] = {"training.shards=3", "training.threads=1", NULL};
    ck_assert_int_eq(train_on(dir, 2, "run", three, NULL), 2);
    char path[700];
    snprintf(path, sizeof path, "%s/run.err", dir);
    char *err = read_file(path);
    ck_assert_msg(strstr(err, "s2s: error: training.shards is 3, which 2 processes (mpirun -np 2) "
                              "cannot share"), "%s", err);
    ck_assert_int_eq(count_of(err, "s2s: error:"), 1); /* said once, by rank 0 */
    free(err);
    snprintf(path, sizeof path, "%s/run", dir);
    ck_assert_msg(!path_exists(path), "the refused run made its directory");
}
END_TEST

/* mpirun -np 1 BINARY train dir/tiny.yaml [common] : -np 1 BINARY train ... [common]
 * [second]: two ranks given their own command lines (a node where the config reads
 * otherwise), stderr to dir/run.err, with the env entries extra and more (either may be
 * NULL). Returns the status. */
static int train_two_ways(const char *dir, const char *binary, const char *const *common,
                          const char *const *second, const char *extra, const char *more)
{
    char config[600], run_dir[700];
    snprintf(config, sizeof config, "%s/tiny.yaml", dir);
    snprintf(run_dir, sizeof run_dir, "run_dir=%s/run", dir);
    const char *argv[64];
    int a = 0;
    argv[a++] = mpirun();
    for (int rank = 0; rank < 2; rank++) {
        if (rank)
            argv[a++] = ":";
        argv[a++] = "-np";
        argv[a++] = "1";
        argv[a++] = binary;
        argv[a++] = "train";
        argv[a++] = config;
        argv[a++] = "--set";
        argv[a++] = run_dir;
        for (int k = 0; common[k]; k++)
            argv[a++] = "--set", argv[a++] = common[k];
        for (int k = 0; rank && second[k]; k++)
            argv[a++] = "--set", argv[a++] = second[k];
    }
    argv[a] = NULL;
    const char *env[12];
    mpi_env(env, extra, more, NULL);
    char err[700];
    snprintf(err, sizeof err, "%s/run.err", dir);
    return run_command_with(argv, NULL, err, &(RunOptions){.env = env, .timeout = 120}, NULL);
}

/* A rank that cannot load the config, or reads another one than rank 0, stops every rank
 * before anything is written (issue 41: the run directory was made, its logs empty, while
 * the message said "nothing was trained"). */
START_TEST(test_a_rank_that_cannot_start_stops_them_all_before_anything_is_written)
{
    char dir[512], path[700];
    tiny_setup(dir, sizeof dir, "mpi-cannot-start");
    static const char *const none[] = {NULL};
    /* the config does not load on rank 1 */
    static const char *const bad_key[] = {"training.learning_rat=0.1", NULL};
    ck_assert_int_eq(train_two_ways(dir, S2S, FOUR_SHARDS, bad_key, NULL, NULL), 2);
    snprintf(path, sizeof path, "%s/run.err", dir);
    char *err = read_file(path);
    ck_assert_msg(strstr(err, "s2s: error: rank 1 could not load the config (its message above); "
                              "nothing was trained"), "%s", err);
    free(err);
    snprintf(path, sizeof path, "%s/run", dir);
    ck_assert_msg(!path_exists(path), "a run that never started made its directory");
    /* rank 1 reads another config: it says so, and nothing is written */
    static const char *const other[] = {"training.log_every=7", NULL};
    ck_assert_int_eq(train_two_ways(dir, S2S, FOUR_SHARDS, other, NULL, NULL), 2);
    snprintf(path, sizeof path, "%s/run.err", dir);
    err = read_file(path);
    ck_assert_msg(strstr(err, "s2s: error: rank 1 read another config, corpus or checkpoint than "
                              "rank 0"), "%s", err);
    ck_assert_msg(strstr(err, "s2s: error: rank 1 could not start (its message above); nothing "
                              "was trained"), "%s", err);
    free(err);
    snprintf(path, sizeof path, "%s/run", dir);
    ck_assert_msg(!path_exists(path), "a run that never started made its directory");
    /* and the same command lines on both: it trains */
    ck_assert_int_eq(train_two_ways(dir, S2S, FOUR_SHARDS, none, NULL, NULL), 0);
}
END_TEST

/* A batch one rank alone cannot read (a picture past the cache that no longer decodes
 * on its node) ends the job at once, naming the rank, instead of leaving the others
 * waiting for its shards; the checkpoints saved stay whole. */
START_TEST(test_a_batch_one_rank_cannot_read_ends_the_job_naming_it)
{
    char dir[512], path[700];
    tiny_setup(dir, sizeof dir, "mpi-batch");
    static const char *const sets[] = {"training.shards=4", "training.threads=1",
                                       "training.valid_every=3", "training.max_steps=40", NULL};
    static const char *const none[] = {NULL};
    const double t0 = now_seconds();
    const int rc = train_two_ways(dir, S2S_FAULTS, sets, none, "S2S_FAULT_BATCH=8",
                                  "S2S_FAULT_RANK=1");
    ck_assert_msg(rc >= 0, "mpirun hung: the other rank waited for good");
    snprintf(path, sizeof path, "%s/run.err", dir);
    char *err = read_file(path);
    ck_assert_msg(rc != 0, "%s", err);
    ck_assert_msg(strstr(err, "s2s: error: rank 1 of 2: the batch of step 8 cannot be read "
                              "(S2S_FAULT_BATCH); the job ends here (the checkpoints saved are "
                              "whole)"), "%s", err);
    free(err);
    ck_assert_double_lt(now_seconds() - t0, 60);
    snprintf(path, sizeof path, "%s/run", dir);
    Checkpoint ck;
    load_checkpoint(&ck, path, "last.ckpt");
    ck_assert_int_le(ck.progress.step, 7);
    checkpoint_free(&ck);
}
END_TEST

Suite *mpi_suite(void)
{
    Suite *s = suite_create("mpi");
    TCase *tc = tcase_create("mpi");
    /* the ranks are not valgrind's to follow (mpirun is a system program); test and
     * asan run them */
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_ranks_train_what_one_process_does);
    tcase_add_loop_test(tc, test_ranks_train_every_model_as_one_process, 0,
                        (int)(sizeof VARIANTS / sizeof *VARIANTS));
    tcase_add_test(tc, test_ranks_train_an_image_model_as_one_process);
    tcase_add_test(tc, test_a_run_resumes_on_another_number_of_processes);
    tcase_add_test(tc, test_sigterm_to_mpirun_saves_where_the_ranks_agree);
    tcase_add_test(tc, test_a_signal_to_one_rank_stops_them_all_at_its_step);
    tcase_add_test(tc, test_a_killed_rank_ends_the_others);
    tcase_add_test(tc, test_processes_that_cannot_share_the_shards_are_refused);
    tcase_add_test(tc, test_a_rank_that_cannot_start_stops_them_all_before_anything_is_written);
    tcase_add_test(tc, test_a_batch_one_rank_cannot_read_ends_the_job_naming_it);
    suite_add_tcase(s, tc);
    return s;
}
