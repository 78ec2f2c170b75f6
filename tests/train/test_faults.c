/* test_faults.c: the fault rows of the fault matrix (src/README.md, "Reliability"), looped
 * deterministically with the hooks of src/base/fault.h (build/s2s-faults): kill -9 at
 * every stage of a checkpoint write, write/sync/rename errors, a file size limit, out of
 * memory at each allocation, an Inf gradient, a second signal, damaged checkpoints at the
 * command line, and two trainers on one run directory. Every case ends with the
 * checkpoints of before the fault intact (byte for byte) and a resume that works. */
#define _DEFAULT_SOURCE /* realpath */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/rng.h"
#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"
#include "train/checkpoint.h"
#include "run/sectionfile.h"

/* ---- a run directory with checkpoints of step 3, and its bytes ------------------------------ */

/* Exact match stays 0 on the tiny task, so no validation after step 3's improves on it:
 * continuing the run writes last.ckpt and never best.ckpt, one save at a known place. */
#define NO_NEW_BEST "training.early_stopping_metric=exact"

typedef struct {
    char dir[512], config[600], run[600];
    char *last, *best; /* the checkpoints' bytes after step 3 */
    size_t last_size, best_size;
} Fixture;

static char *read_bytes(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *size = 0;
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    rewind(f);
    char *bytes = malloc(*size + 1);
    ck_assert_uint_eq(fread(bytes, 1, *size, f), *size);
    fclose(f);
    return bytes;
}

static void checkpoint_path(const Fixture *fx, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/checkpoints/%s", fx->run, name);
}

static void fixture_init(Fixture *fx, const char *name)
{
    scratch_dir(fx->dir, sizeof fx->dir, name);
    write_tiny_setup(fx->dir);
    snprintf(fx->config, sizeof fx->config, "%s/tiny.yaml", fx->dir);
    snprintf(fx->run, sizeof fx->run, "%s/run", fx->dir);
    const char *sets[] = {"training.max_steps=3", NO_NEW_BEST, NULL};
    ck_assert_int_eq(train(S2S, fx->dir, sets, NULL, NULL), 0);
    char path[700];
    checkpoint_path(fx, "last.ckpt", path, sizeof path);
    fx->last = read_bytes(path, &fx->last_size);
    checkpoint_path(fx, "best.ckpt", path, sizeof path);
    fx->best = read_bytes(path, &fx->best_size);
    ck_assert(fx->last && fx->best);
}

static void fixture_free(Fixture *fx)
{
    free(fx->last);
    free(fx->best);
}

/* Continues the run to step `to` with binary and env; stderr into dir/err_name. */
static int resume(const Fixture *fx, const char *binary, int to, const char *const *env,
                  const char *err_name)
{
    char steps[64], err_path[700];
    snprintf(steps, sizeof steps, "training.max_steps=%d", to);
    snprintf(err_path, sizeof err_path, "%s/%s", fx->dir, err_name);
    const char *argv[] = {binary, "train", fx->config, "--resume", fx->run, "--set", steps,
                          "--set", NO_NEW_BEST, NULL};
    return run_command(argv, NULL, err_path, env);
}

static int same_bytes(const char *path, const char *bytes, size_t size)
{
    size_t n;
    char *now = read_bytes(path, &n);
    int same = now && n == size && memcmp(now, bytes, size) == 0;
    free(now);
    return same;
}

/* Both checkpoints are those of step 3, byte for byte. */
static void assert_checkpoints_unchanged(const Fixture *fx, const char *fault)
{
    char path[700];
    checkpoint_path(fx, "last.ckpt", path, sizeof path);
    ck_assert_msg(same_bytes(path, fx->last, fx->last_size), "%s: last.ckpt changed", fault);
    checkpoint_path(fx, "best.ckpt", path, sizeof path);
    ck_assert_msg(same_bytes(path, fx->best, fx->best_size), "%s: best.ckpt changed", fault);
}

/* Both checkpoints load (CRCs, finite weights); each is step 3's or a later one. */
static void assert_checkpoints_whole(const Fixture *fx, const char *fault)
{
    const char *names[] = {"last.ckpt", "best.ckpt"};
    for (int k = 0; k < 2; k++) {
        Checkpoint ck;
        load_checkpoint(&ck, fx->run, names[k]);
        ck_assert_msg(ck.progress.step >= 3, "%s: %s at step %ld", fault, names[k], ck.progress.step);
        checkpoint_free(&ck);
    }
}

static int count_temporaries(const Fixture *fx)
{
    char dir[700];
    snprintf(dir, sizeof dir, "%s/checkpoints", fx->run);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

/* The temporary a kill left (there must be one), read as a checkpoint file: whole, every
 * CRC right. Returns 0, or -1 with err set. */
static int read_temporary(const Fixture *fx, Error *err)
{
    char dir[700], path[1000] = "";
    snprintf(dir, sizeof dir, "%s/checkpoints", fx->run);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp."))
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    closedir(d);
    ck_assert_msg(path[0], "no temporary in %s", dir);
    SectionFile f;
    const int rc = secfile_read(&f, path, err);
    secfile_close(&f);
    return rc;
}

/* After a fault: a plain resume works, starts from the step the checkpoint holds, and
 * cleans away the temporary file a kill left. */
static void assert_resume_works(const Fixture *fx, const char *fault)
{
    Checkpoint ck;
    load_checkpoint(&ck, fx->run, "last.ckpt");
    char expected[64], path[700];
    snprintf(expected, sizeof expected, "resuming at step %ld ", ck.progress.step);
    checkpoint_free(&ck);
    ck_assert_msg(resume(fx, S2S, 4, NULL, "resume.txt") == 0, "%s: resume failed", fault);
    snprintf(path, sizeof path, "%s/resume.txt", fx->dir);
    char *log = read_file(path);
    ck_assert_msg(strstr(log, expected) != NULL, "%s: resume did not say `%s`", fault, expected);
    free(log);
    ck_assert_int_eq(count_temporaries(fx), 0);
}

/* Puts step 3's checkpoints back (after a resume moved them on). */
static void restore_checkpoints(const Fixture *fx)
{
    char path[700];
    checkpoint_path(fx, "last.ckpt", path, sizeof path);
    FILE *f = fopen(path, "wb");
    ck_assert(f && fwrite(fx->last, 1, fx->last_size, f) == fx->last_size && fclose(f) == 0);
    checkpoint_path(fx, "best.ckpt", path, sizeof path);
    f = fopen(path, "wb");
    ck_assert(f && fwrite(fx->best, 1, fx->best_size, f) == fx->best_size && fclose(f) == 0);
}

/* ---- kill -9 while saving ------------------------------------------------------------------ */

START_TEST(a_kill_at_any_byte_of_a_checkpoint_leaves_the_old_one)
{
    Fixture fx;
    fixture_init(&fx, "killbytes");
    size_t len = fx.last_size;
    /* the header is 32 bytes, the first section header ends at 48 */
    size_t cuts[20] = {0, 1, 31, 32, 33, 47, 48, 49, len / 2, len - 1, len};
    int n = 11;
    Pcg32 rng;
    pcg32_seed(&rng, 8, 1);
    while (n < 16)
        cuts[n++] = pcg32_below(&rng, (uint32_t)len);
    for (int k = 0; k < n; k++) {
        char env_kill[64], fault[80];
        snprintf(env_kill, sizeof env_kill, "S2S_FAULT_KILL_BYTES=%zu", cuts[k]);
        snprintf(fault, sizeof fault, "kill after %zu of %zu bytes", cuts[k], len);
        const char *env[] = {env_kill, NULL};
        ck_assert_msg(resume(&fx, S2S_FAULTS, 4, env, "kill.txt") == 128 + SIGKILL,
                      "%s: not killed", fault);
        assert_checkpoints_unchanged(&fx, fault);
        ck_assert_int_eq(count_temporaries(&fx), 1); /* the torn file, ignored */
        assert_resume_works(&fx, fault);
        restore_checkpoints(&fx);
    }
    fixture_free(&fx);
}
END_TEST

START_TEST(a_kill_at_each_stage_of_the_commit_leaves_a_whole_checkpoint)
{
    Fixture fx;
    fixture_init(&fx, "killstages");
    const char *stages[] = {"fsync", "rename", "dirsync"};
    for (int k = 0; k < 3; k++) {
        char env_kill[64];
        snprintf(env_kill, sizeof env_kill, "S2S_FAULT_KILL_AT=%s", stages[k]);
        const char *env[] = {env_kill, NULL};
        ck_assert_int_eq(resume(&fx, S2S_FAULTS, 4, env, "kill.txt"), 128 + SIGKILL);
        if (k < 2) /* before the rename: the old files; after it: one new whole file */
            assert_checkpoints_unchanged(&fx, stages[k]);
        if (k == 0) { /* what fsync makes durable is the whole file: nothing is written
                       * to it after (issue 41: only a message's wording caught that) */
            Error err;
            ck_assert_msg(read_temporary(&fx, &err) == 0, "killed before fsync: %s", err.msg);
        }
        assert_checkpoints_whole(&fx, stages[k]);
        assert_resume_works(&fx, stages[k]);
        restore_checkpoints(&fx);
    }
    fixture_free(&fx);
}
END_TEST

/* ---- durability of the logs ------------------------------------------------------------------- */

/* Every byte of metrics.jsonl and alignments.jsonl that a checkpoint records (the
 * lengths a resume cuts the logs back to) is synced before that checkpoint is renamed
 * into place, at every save of the run: read from the trace of writes, syncs, marks and
 * renames the fault build keeps (issue 41: a last.ckpt recording a validation line that
 * was never synced passed every test). */
START_TEST(every_log_byte_a_checkpoint_records_is_synced_before_its_rename)
{
    char dir[512], trace[700], env_trace[800];
    scratch_dir(dir, sizeof dir, "durable-logs");
    write_tiny_setup(dir);
    snprintf(trace, sizeof trace, "%s/trace.txt", dir);
    snprintf(env_trace, sizeof env_trace, "S2S_FAULT_TRACE=%s", trace);
    const char *env[] = {env_trace, NULL};
    const char *sets[] = {"training.max_steps=24", "training.valid_every=4", "training.log_every=3",
                          "alignments.every=5", "training.average_last=2", NULL};
    ck_assert_int_eq(train(S2S_FAULTS, dir, sets, env, NULL), 0);
    char *text = read_file(trace);
    long long written[2] = {0, 0}, synced[2] = {0, 0}, marks[2] = {-1, -1};
    static const char *const logs[2] = {"metrics.jsonl", "alignments.jsonl"};
    int renames = 0, recorded = 0;
    for (char *save, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char what[16], name[600];
        long long a = 0, b = 0;
        if (sscanf(line, "marks %lld %lld", &a, &b) == 2) {
            marks[0] = a, marks[1] = b;
            continue;
        }
        ck_assert_msg(sscanf(line, "%15s %599s %lld", what, name, &a) >= 2, "trace: %s", line);
        for (int k = 0; k < 2; k++) {
            if (strcmp(name, logs[k]))
                continue;
            if (!strcmp(what, "write"))
                written[k] = a;
            else if (!strcmp(what, "sync"))
                synced[k] = a;
        }
        if (!strcmp(what, "rename") && strstr(name, "/checkpoints/")) {
            renames++;
            ck_assert_msg(marks[0] >= 0, "a checkpoint renamed without marks: %s", name);
            for (int k = 0; k < 2; k++) {
                ck_assert_msg(marks[k] <= synced[k], "%s records %lld bytes of %s, of which %lld "
                              "are synced (%lld written)", name, marks[k], logs[k], synced[k],
                              written[k]);
                recorded += marks[k] > 0;
            }
        }
    }
    free(text);
    ck_assert_int_ge(renames, 6);   /* best.ckpt and last.ckpt at each validation, at least */
    ck_assert_int_ge(recorded, 2 * 6 - 2); /* and they record lines of both logs */
    ck_assert(written[0] > 0 && written[1] > 0);
}
END_TEST

/* ---- write errors --------------------------------------------------------------------------- */

/* Resumes with S2S_FAULT_IO=spec; returns the exit code, the first stderr line in line. */
static int resume_with_io_fault(const Fixture *fx, const char *spec, char *line, size_t cap)
{
    char env_io[64], path[700];
    snprintf(env_io, sizeof env_io, "S2S_FAULT_IO=%s", spec);
    const char *env[] = {env_io, NULL};
    int rc = resume(fx, S2S_FAULTS, 4, env, "io.txt");
    snprintf(path, sizeof path, "%s/io.txt", fx->dir);
    char *log = read_file(path);
    char *error = strstr(log, "s2s: error: ");
    snprintf(line, cap, "%s", error ? error : "");
    line[strcspn(line, "\n")] = '\0';
    ck_assert_msg(!strstr(log, "saved"), "%s: the log claims a save: %s", spec, log);
    free(log);
    return rc;
}

START_TEST(every_failing_write_of_a_save_exits_3_and_keeps_the_old_checkpoint)
{
    Fixture fx;
    fixture_init(&fx, "writefail");
    char line[1200], prefix[800];
    snprintf(prefix, sizeof prefix, "s2s: error: cannot write checkpoint `%s/checkpoints/", fx.run);
    /* the k-th write of the run, until a run succeeds: every write of the save (one
     * for the header, then a head, the data and a CRC per section) */
    uint32_t sections;
    memcpy(&sections, fx.last + 20, 4);
    int writes = 1 + 3 * (int)sections, k = 1;
    for (;; k++) {
        char spec[32];
        snprintf(spec, sizeof spec, "write:%d", k);
        int rc = resume_with_io_fault(&fx, spec, line, sizeof line);
        if (rc == 0)
            break;
        ck_assert_msg(rc == 3, "%s: exit %d", spec, rc);
        ck_assert_msg(strncmp(line, prefix, strlen(prefix)) == 0, "%s: %s", spec, line);
        ck_assert_ptr_nonnull(strstr(line, ".ckpt.tmp."));
        ck_assert_ptr_nonnull(strstr(line, "`: No space left on device"));
        assert_checkpoints_unchanged(&fx, spec);
        ck_assert_int_eq(count_temporaries(&fx), 0);
    }
    ck_assert_int_eq(k, writes + 1); /* one save, and each of its writes failed once */
    restore_checkpoints(&fx);

    struct {
        const char *spec, *message;
    } faults[] = {
        {"flush:1", "cannot write checkpoint"},
        {"fsync:1", "cannot sync checkpoint"},
        {"close:1", "cannot close checkpoint"},
        {"rename:1", "cannot rename checkpoint into place"},
        {"write:1:28", "No space left on device"},
        {"write:1:27", "File too large"},
        {"fsync:1:5", "Input/output error"},
    };
    for (size_t f = 0; f < sizeof faults / sizeof *faults; f++) {
        ck_assert_int_eq(resume_with_io_fault(&fx, faults[f].spec, line, sizeof line), 3);
        ck_assert_msg(strstr(line, faults[f].message) != NULL, "%s: %s", faults[f].spec, line);
        assert_checkpoints_unchanged(&fx, faults[f].spec);
        ck_assert_int_eq(count_temporaries(&fx), 0);
    }
    /* the directory's fsync comes after the rename: the new file is whole and in place,
     * but not known to be durable, so the run still stops with exit 3 */
    ck_assert_int_eq(resume_with_io_fault(&fx, "fsync:2", line, sizeof line), 3);
    ck_assert_ptr_nonnull(strstr(line, "cannot sync directory"));
    assert_checkpoints_whole(&fx, "fsync:2");
    assert_resume_works(&fx, "fsync:2");
    fixture_free(&fx);
}
END_TEST

START_TEST(a_file_size_limit_makes_the_save_fail_with_exit_3)
{
    Fixture fx;
    fixture_init(&fx, "fsize");
    /* A real kernel error without privileges: the child may not write files over 16 KiB
     * (the checkpoint is bigger; the logs are not). SIGXFSZ is left at its default,
     * which kills: s2s itself must ignore it, so that the write fails with EFBIG. */
    char cmd[2400], err_path[700], line[1200];
    snprintf(err_path, sizeof err_path, "%s/fsize.txt", fx.dir);
    snprintf(cmd, sizeof cmd, "trap - XFSZ; ulimit -f 32; exec '%s' train '%s' --resume '%s' "
             "--set training.max_steps=4 --set %s 2> '%s'", S2S, fx.config, fx.run, NO_NEW_BEST, err_path);
    ck_assert_uint_gt(fx.last_size, 16384);
    int status = system(cmd);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 3);
    first_line(err_path, line, sizeof line);
    char *log = read_file(err_path);
    ck_assert_msg(strstr(log, "File too large") != NULL, "%s", log);
    free(log);
    assert_checkpoints_unchanged(&fx, "RLIMIT_FSIZE");
    ck_assert_int_eq(count_temporaries(&fx), 0);
    fixture_free(&fx);
}
END_TEST

/* ---- the system calls of a durable write ---------------------------------------------------- */

/* What strace saw of one file descriptor. */
typedef struct {
    char path[600];
    int open, synced, exclusive;
} TracedFd;

/* The directory of path (without its last component) into out. */
static void dir_of_path(const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash)
        *slash = '\0';
}

/* Every whole file a run writes -- config.yaml, both checkpoints, report.html,
 * test.hyp -- goes through a temporary created exclusively without following links
 * (O_EXCL|O_NOFOLLOW), fsynced, renamed into place, and then its directory fsynced; the
 * data logs (metrics.jsonl and alignments.jsonl) are each fsynced before every last.ckpt,
 * which records their lengths for a resume; the logs are
 * opened to append without following links. Checked on the system calls themselves,
 * traced by strace, so a commit without its real fsync cannot pass. */
START_TEST(whole_files_go_through_exclusive_temporaries_synced_file_and_directory)
{
    char dir[512], config[600], trace[600], test_src[700], test_tgt[700];
    scratch_dir(dir, sizeof dir, "strace");
    write_tiny_setup(dir);
    snprintf(config, sizeof config, "%s/tiny.yaml", dir);
    snprintf(trace, sizeof trace, "%s/trace.txt", dir);
    snprintf(test_src, sizeof test_src, "data.test_src=%s/valid.src", dir);
    snprintf(test_tgt, sizeof test_tgt, "data.test_tgt=%s/valid.tgt", dir);
    /* the main thread only (no -f): it does all the file work, and a trace of one
     * thread has no calls interleaved and split in two ("<unfinished ...>") */
    const char *argv[] = {"/usr/bin/strace", "-qq", "-o", trace, "-e",
                          "trace=openat,fsync,close,rename", S2S, "train", config, "--set",
                          test_src, "--set", test_tgt, NULL};
    /* LeakSanitizer cannot run in a traced process (it exits 1 at the end, saying it
     * "does not work under ptrace"): under `make asan` this one run checks addresses
     * and undefined behaviour only; every untraced run still checks leaks. */
    const char *asan = getenv("ASAN_OPTIONS");
    char no_leaks[512];
    snprintf(no_leaks, sizeof no_leaks, "ASAN_OPTIONS=%s%sdetect_leaks=0", asan ? asan : "",
             asan && *asan ? ":" : "");
    const char *env[] = {no_leaks, NULL};
    char err[600];
    snprintf(err, sizeof err, "%s/stderr.txt", dir);
    int rc = run_command(argv, NULL, err, env);
    if (rc != 0) {
        char *text = read_file(err);
        ck_abort_msg("strace s2s train exited %d: %s", rc, text);
    }
    FILE *f = fopen(trace, "r");
    ck_assert_ptr_nonnull(f);
    static TracedFd fds[256]; /* zeroed */
    TracedFd synced[64]; /* closed temporaries that had been fsynced */
    /* the data logs resume relies on, each synced before every last.ckpt (issue 25: only
     * metrics.jsonl's sync was traced) */
    const char *data_logs[2] = {"/metrics.jsonl", "/alignments.jsonl"};
    int n_synced = 0, renames[5] = {0}, logs_synced[2] = {0}, logs_opened = 0;
    char pending_dir[600] = "", line[4096];
    const char *finals[5] = {"/config.yaml", "/checkpoints/last.ckpt", "/checkpoints/best.ckpt",
                             "/heatmaps/report.html", "/test.hyp"};
    while (fgets(line, sizeof line, f)) {
        char path[600], path2[600], flags[256];
        int fd, ret;
        const char *call = line;
        if (sscanf(call, "openat(AT_FDCWD, \"%599[^\"]\", %255[^,)]%*[^=]= %d", path, flags, &fd) == 3 &&
            fd >= 0 && fd < 256) {
            fds[fd] = (TracedFd){.open = 1};
            snprintf(fds[fd].path, sizeof fds[fd].path, "%s", path);
            fds[fd].exclusive = strstr(flags, "O_EXCL") && strstr(flags, "O_NOFOLLOW");
            if (strstr(path, ".tmp."))
                ck_assert_msg(fds[fd].exclusive, "temporary opened without O_EXCL|O_NOFOLLOW: %s", line);
            if ((strstr(path, ".jsonl") || strstr(path, "/train.log")) && !strstr(flags, "O_RDONLY")) {
                ck_assert_msg(strstr(flags, "O_APPEND") && strstr(flags, "O_NOFOLLOW"), "%s", line);
                logs_opened++;
            }
        } else if (sscanf(call, "fsync(%d) = %d", &fd, &ret) == 2 && ret == 0 && fd >= 0 && fd < 256) {
            fds[fd].synced = 1;
            if (pending_dir[0] && !strcmp(fds[fd].path, pending_dir))
                pending_dir[0] = '\0';
            for (int k = 0; k < 2; k++)
                logs_synced[k] |= strstr(fds[fd].path, data_logs[k]) != NULL;
        } else if (sscanf(call, "close(%d) = %d", &fd, &ret) == 2 && fd >= 0 && fd < 256) {
            if (fds[fd].open && fds[fd].synced && strstr(fds[fd].path, ".tmp.") && n_synced < 64)
                synced[n_synced++] = fds[fd];
            fds[fd].open = 0;
        } else if (sscanf(call, "rename(\"%599[^\"]\", \"%599[^\"]\") = %d", path, path2, &ret) == 3 &&
                   ret == 0) {
            ck_assert_msg(!pending_dir[0], "renamed %s before the directory %s was synced", path,
                          pending_dir);
            int was_synced = 0;
            for (int k = 0; k < n_synced; k++)
                was_synced |= !strcmp(synced[k].path, path) && synced[k].exclusive;
            ck_assert_msg(was_synced, "renamed %s into place without an fsync of it", path);
            for (int k = 0; k < 5; k++)
                if (strlen(path2) > strlen(finals[k]) &&
                    !strcmp(path2 + strlen(path2) - strlen(finals[k]), finals[k]))
                    renames[k]++;
            if (strstr(path2, "/last.ckpt"))
                for (int k = 0; k < 2; k++) {
                    ck_assert_msg(logs_synced[k], "last.ckpt renamed before %s was synced",
                                  data_logs[k] + 1);
                    logs_synced[k] = 0;
                }
            dir_of_path(path2, pending_dir, sizeof pending_dir);
        }
    }
    fclose(f);
    ck_assert_msg(!pending_dir[0], "the directory %s was never synced after its rename", pending_dir);
    for (int k = 0; k < 5; k++)
        ck_assert_msg(renames[k] >= 1, "%s was never renamed into place", finals[k]);
    ck_assert_int_eq(renames[4], 1);
    ck_assert_int_eq(logs_opened, 3);
}
END_TEST

/* Links planted where older s2s put its temporaries (FINAL.tmp.PID, a name anyone could
 * guess) are never written through: they are cleaned at start, and the temporaries are
 * created exclusively under names with a random part. */
START_TEST(links_planted_at_temporary_names_are_never_followed)
{
    char dir[512], cmd[8000], victim[600], s2s[4096];
    ck_assert_ptr_nonnull(realpath(S2S, s2s)); /* the shell runs it from the run's folder */
    scratch_dir(dir, sizeof dir, "planted");
    write_tiny_setup(dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    write_file(victim, "precious\n");
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p run/checkpoints run/heatmaps && for f in run/config.yaml "
             "run/test.hyp run/checkpoints/last.ckpt run/checkpoints/best.ckpt "
             "run/heatmaps/report.html; do ln -s '%s' \"$f.tmp.$$\" || exit 9; done && "
             "exec '%s' train tiny.yaml --set data.test_src=valid.src --set data.test_tgt=valid.tgt "
             "2> err.txt", dir, victim, s2s);
    ck_assert_int_eq(system(cmd), 0);
    char *text = read_file(victim);
    ck_assert_str_eq(text, "precious\n");
    free(text);
}
END_TEST

/* ---- damaged checkpoints at the command line ----------------------------------------------- */

/* `s2s translate --model model < dir/valid.src`: the exit code, the first stderr line
 * into line, stdout into dir/translate.out. */
static int translate_with(const Fixture *fx, const char *model, char *line, size_t cap)
{
    char cmd[3000], err_path[700];
    snprintf(err_path, sizeof err_path, "%s/translate.err", fx->dir);
    snprintf(cmd, sizeof cmd, "'%s' translate --model '%s' < '%s/valid.src' > '%s/translate.out' "
             "2> '%s'", S2S, model, fx->dir, fx->dir, err_path);
    int status = system(cmd);
    ck_assert(WIFEXITED(status));
    first_line(err_path, line, cap);
    return WEXITSTATUS(status);
}

START_TEST(damaged_checkpoints_are_refused_and_an_intact_one_is_offered)
{
    Fixture fx;
    fixture_init(&fx, "damaged");
    char last[700], best[700], line[1500], expected[2000], path[700];
    checkpoint_path(&fx, "last.ckpt", last, sizeof last);
    checkpoint_path(&fx, "best.ckpt", best, sizeof best);

    /* translation needs nothing but the checkpoint: vocabularies and settings are in it */
    ck_assert_int_eq(translate_with(&fx, best, line, sizeof line), 0);
    snprintf(path, sizeof path, "%s/translate.out", fx.dir);
    char *before = read_file(path);
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "rm '%s/train.src' '%s/train.tgt' '%s/tiny.yaml'", fx.dir, fx.dir, fx.dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(translate_with(&fx, best, line, sizeof line), 0);
    char *after = read_file(path);
    ck_assert_int_eq((int)strlen(after), (int)strlen(before));
    ck_assert_str_eq(after, before);
    free(before);
    free(after);
    write_tiny_setup(fx.dir);

    /* one flipped byte near the end of last.ckpt */
    char *bad = malloc(fx.last_size);
    memcpy(bad, fx.last, fx.last_size);
    bad[fx.last_size - 10] ^= 0x10;
    FILE *f = fopen(last, "wb");
    ck_assert(f && fwrite(bad, 1, fx.last_size, f) == fx.last_size && fclose(f) == 0);
    ck_assert_int_eq(resume(&fx, S2S, 4, NULL, "damaged.txt"), 2);
    snprintf(path, sizeof path, "%s/damaged.txt", fx.dir);
    first_line(path, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: checkpoint `%s`: CRC mismatch in section DUMP "
             "(the file is damaged); checkpoints/best.ckpt (step 3) is intact: copy it over "
             "last.ckpt to resume from there", last);
    ck_assert_str_eq(line, expected);
    ck_assert_int_eq(translate_with(&fx, last, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: checkpoint `%s`: CRC mismatch in section DUMP "
             "(the file is damaged)", last);
    ck_assert_str_eq(line, expected);

    /* cut short, empty, a directory */
    f = fopen(last, "wb");
    ck_assert(f && fwrite(fx.last, 1, 1000, f) == 1000 && fclose(f) == 0);
    ck_assert_int_eq(translate_with(&fx, last, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: checkpoint `%s` is truncated or padded: 1000 "
             "bytes, its header says %zu", last, fx.last_size);
    ck_assert_str_eq(line, expected);
    f = fopen(last, "wb");
    ck_assert(f && fclose(f) == 0);
    ck_assert_int_eq(translate_with(&fx, last, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: `%s` is not an s2s checkpoint (bad magic)", last);
    ck_assert_str_eq(line, expected);
    ck_assert_int_eq(translate_with(&fx, fx.dir, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: checkpoint `%s` is not a regular file", fx.dir);
    ck_assert_str_eq(line, expected);
    free(bad);
    fixture_free(&fx);
}
END_TEST

/* ---- out of memory -------------------------------------------------------------------------- */

START_TEST(out_of_memory_at_any_allocation_exits_1_with_its_size)
{
    char dir[512], err_path[600], model[600], in_path[600];
    scratch_dir(dir, sizeof dir, "oom");
    write_tiny_setup(dir);
    const char *sets[] = {"training.max_steps=2", NULL};
    /* training: every allocation of the run fails in turn (config, corpus, vocabularies,
     * model, workspaces, validation, saving): the k-th alone for odd k, all from the k-th
     * on for even k; each ends in exit 1 with the size, until k is past the last one */
    int k = 1, failed = 0;
    for (;; k++) {
        char env_alloc[64], run_set[640];
        snprintf(env_alloc, sizeof env_alloc, "S2S_FAULT_ALLOC=%d%s", k, k % 2 ? "" : "-");
        snprintf(run_set, sizeof run_set, "run_dir=%s/run%d", dir, k);
        const char *env[] = {env_alloc, NULL};
        const char *sets_k[] = {run_set, "training.max_steps=2", NULL};
        int rc = train(S2S_FAULTS, dir, sets_k, env, "oom.txt");
        if (rc == 0)
            break;
        snprintf(err_path, sizeof err_path, "%s/oom.txt", dir);
        char *log = read_file(err_path);
        ck_assert_msg(rc == 1 && strstr(log, "s2s: error: out of memory (allocating "),
                      "%s: exit %d: %s", env_alloc, rc, log);
        free(log);
        failed++;
    }
    ck_assert_int_eq(failed, k - 1);
    ck_assert_int_gt(failed, 1000); /* the run's allocations were all reached */

    /* translating: loading the checkpoint, the decoder, the output */
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(in_path, sizeof in_path, "%s/valid.src", dir);
    snprintf(err_path, sizeof err_path, "%s/oom_translate.txt", dir);
    failed = 0;
    for (k = 1;; k++) {
        char env_alloc[64], cmd[2000];
        snprintf(env_alloc, sizeof env_alloc, "S2S_FAULT_ALLOC=%d", k);
        snprintf(cmd, sizeof cmd, "%s '%s' translate --model '%s' < '%s' > /dev/null 2> '%s'",
                 env_alloc, S2S_FAULTS, model, in_path, err_path);
        int status = system(cmd);
        ck_assert(WIFEXITED(status));
        if (WEXITSTATUS(status) == 0)
            break;
        char *log = read_file(err_path);
        ck_assert_msg(WEXITSTATUS(status) == 1 && strstr(log, "s2s: error: out of memory"),
                      "%s: exit %d: %s", env_alloc, WEXITSTATUS(status), log);
        free(log);
        failed++;
    }
    ck_assert_int_gt(failed, 200);
}
END_TEST

/* ---- the non-finite guard with an Inf gradient --------------------------------------------- */

START_TEST(an_inf_gradient_is_skipped_like_a_nan_loss)
{
    char dir[512], a[600], b[600], set_a[640], set_b[640], path[700];
    scratch_dir(dir, sizeof dir, "infgrad");
    write_tiny_setup(dir);
    snprintf(a, sizeof a, "%s/with_inf", dir);
    snprintf(b, sizeof b, "%s/without", dir);
    snprintf(set_a, sizeof set_a, "run_dir=%s", a);
    snprintf(set_b, sizeof set_b, "run_dir=%s", b);
    const char *env[] = {"S2S_FAULT_INF_GRAD_STEPS=3", NULL};
    const char *sets_a[] = {set_a, "training.max_steps=3", NULL};
    ck_assert_int_eq(train(S2S_FAULTS, dir, sets_a, env, "err_a.txt"), 0);
    const char *sets_b[] = {set_b, "training.max_steps=2", NULL};
    ck_assert_int_eq(train(S2S_FAULTS, dir, sets_b, NULL, "err_b.txt"), 0);
    Checkpoint ca, cb;
    load_checkpoint(&ca, a, "last.ckpt");
    load_checkpoint(&cb, b, "last.ckpt");
    ck_assert(memcmp(ca.model.params.mem, cb.model.params.mem,
                     sizeof(float) * ca.model.params.n) == 0);
    ck_assert(memcmp(ca.optim.v, cb.optim.v, sizeof(float) * ca.model.params.n) == 0);
    ck_assert_int_eq(ca.progress.skipped_steps, 1);
    checkpoint_free(&ca);
    checkpoint_free(&cb);
    snprintf(path, sizeof path, "%s/err_a.txt", dir);
    char *log = read_file(path);
    ck_assert_ptr_nonnull(strstr(log, "step=3 skipped: non-finite gradient (loss="));
    ck_assert_ptr_nonnull(strstr(log, "grad_norm=inf); 1 in a row"));
    free(log);
}
END_TEST

START_TEST(the_largest_learning_rate_never_writes_a_nonfinite_checkpoint)
{
    /* lr at its maximum (100) without clipping: plain SGD and Adam thrash but stay finite
     * (log-softmax and the saturating gates cannot overflow); no crash, and every
     * checkpoint loads, which includes the loader's finiteness check */
    char dir[512];
    scratch_dir(dir, sizeof dir, "hugelr");
    write_tiny_setup(dir);
    const char *optimizers[] = {"training.optimizer=sgd", "training.optimizer=adam"};
    for (int k = 0; k < 2; k++) {
        char run_set[640], run[600];
        snprintf(run, sizeof run, "%s/run%d", dir, k);
        snprintf(run_set, sizeof run_set, "run_dir=%s", run);
        const char *sets[] = {run_set, optimizers[k], "training.learning_rate=100",
                              "training.clip_grad_norm=0", "training.max_steps=60", NULL};
        int rc = train(S2S, dir, sets, NULL, NULL);
        ck_assert_msg(rc == 0 || rc == 4, "exit %d", rc);
        const char *names[] = {"last.ckpt", "best.ckpt"};
        for (int c = 0; c < 2; c++) {
            Checkpoint ck;
            load_checkpoint(&ck, run, names[c]);
            checkpoint_free(&ck);
        }
    }
}
END_TEST

/* ---- signals -------------------------------------------------------------------------------- */

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

START_TEST(a_second_sigint_before_saving_exits_at_once_and_saves_nothing)
{
    Fixture fx;
    fixture_init(&fx, "sigint2");
    char err_path[700], steps[] = "training.max_steps=100000", signal_twice[64];
    snprintf(err_path, sizeof err_path, "%s/sigint2.txt", fx.dir);
    /* Both SIGINTs in the middle of step 6, one after the other, sent by the process
     * itself: sent by the test 50 ms apart, on a loaded machine they could both arrive
     * before the handler ran (one signal, so a save) or the second after the save. */
    snprintf(signal_twice, sizeof signal_twice, "S2S_FAULT_SIGNAL=gradient:6:%d:2", SIGINT);
    const char *env[] = {signal_twice, NULL};
    const char *argv[] = {S2S_FAULTS, "train", fx.config, "--resume", fx.run, "--set", steps,
                          "--set", NO_NEW_BEST, NULL};
    pid_t pid = start_command(argv, NULL, err_path, env);
    ck_assert_int_eq(wait_command(pid, 60), 130);
    char *log = read_file(err_path);
    ck_assert_msg(!strstr(log, "stopped by signal"), "%s", log);
    free(log);
    assert_checkpoints_unchanged(&fx, "second SIGINT");
    ck_assert_int_eq(count_temporaries(&fx), 0);
    fixture_free(&fx);
}
END_TEST

/* ---- two trainers, one run directory ------------------------------------------------------- */

START_TEST(a_second_trainer_is_locked_out_until_the_first_dies)
{
    Fixture fx;
    fixture_init(&fx, "lock");
    char err_path[700], line[1200], expected[1400], steps[] = "training.max_steps=100000";
    snprintf(err_path, sizeof err_path, "%s/first.txt", fx.dir);
    const char *env[] = {"S2S_FAULT_STEP_MS=20", NULL};
    const char *argv[] = {S2S_FAULTS, "train", fx.config, "--resume", fx.run, "--set", steps,
                          "--set", NO_NEW_BEST, NULL};
    pid_t first = start_command(argv, NULL, err_path, env);
    ck_assert(wait_for_text(err_path, "step=4 "));
    ck_assert_int_eq(resume(&fx, S2S, 10, NULL, "second.txt"), 2);
    snprintf(err_path, sizeof err_path, "%s/second.txt", fx.dir);
    first_line(err_path, line, sizeof line);
    snprintf(expected, sizeof expected, "s2s: error: run directory `%s` is in use by another s2s "
             "train (pid %ld)", fx.run, (long)first);
    ck_assert_str_eq(line, expected);
    /* kill -9 leaves the lock file behind, but flock's lock died with the process */
    kill(first, SIGKILL);
    ck_assert_int_eq(wait_command(first, 30), 128 + SIGKILL);
    ck_assert_int_eq(resume(&fx, S2S, 12, NULL, "third.txt"), 0);
    fixture_free(&fx);
}
END_TEST

Suite *faults_suite(void)
{
    Suite *s = suite_create("faults");
    /* The loops start s2s dozens of times each: make valgrind leaves them to make test
     * and make asan (CK_EXCLUDE_TAGS=loop), which run the same code paths. */
    TCase *loops = tcase_create("loops");
    tcase_set_tags(loops, "loop");
    tcase_set_timeout(loops, 900); /* the sanitizer build runs each of 1400 processes slower */
    tcase_add_test(loops, a_kill_at_any_byte_of_a_checkpoint_leaves_the_old_one);
    tcase_add_test(loops, a_kill_at_each_stage_of_the_commit_leaves_a_whole_checkpoint);
    tcase_add_test(loops, every_failing_write_of_a_save_exits_3_and_keeps_the_old_checkpoint);
    tcase_add_test(loops, out_of_memory_at_any_allocation_exits_1_with_its_size);
    suite_add_tcase(s, loops);
    TCase *tc = tcase_create("faults");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, a_file_size_limit_makes_the_save_fail_with_exit_3);
    tcase_add_test(tc, every_log_byte_a_checkpoint_records_is_synced_before_its_rename);
    tcase_add_test(tc, whole_files_go_through_exclusive_temporaries_synced_file_and_directory);
    tcase_add_test(tc, links_planted_at_temporary_names_are_never_followed);
    tcase_add_test(tc, damaged_checkpoints_are_refused_and_an_intact_one_is_offered);
    tcase_add_test(tc, an_inf_gradient_is_skipped_like_a_nan_loss);
    tcase_add_test(tc, the_largest_learning_rate_never_writes_a_nonfinite_checkpoint);
    tcase_add_test(tc, a_second_sigint_before_saving_exits_at_once_and_saves_nothing);
    tcase_add_test(tc, a_second_trainer_is_locked_out_until_the_first_dies);
    suite_add_tcase(s, tc);
    return s;
}
