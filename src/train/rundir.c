/* rundir.c: run directory, lock, logs and metrics (see rundir.h). */
#include "train/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomicfile.h"
#include "base/error.h"
#include "text/termtext.h"

static int make_dirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

void rundir_path(const RunDir *r, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", r->dir, name);
}

/* ---- what a run leaves -------------------------------------------------------------------- */

/* The files a run writes, beside its checkpoints; a fresh start moves them aside. */
static const char *const RUN_FILES[] = {"config.yaml", "train.log", "metrics.jsonl",
                                        "alignments.jsonl", "test.hyp", "heatmaps"};
enum { N_RUN_FILES = sizeof RUN_FILES / sizeof *RUN_FILES };

/* Each folder of the run with the final names whose temporaries may be in it. */
static const struct {
    const char *folder;
    const char *finals[3];
} TEMPORARIES[] = {
    {"checkpoints", {"last.ckpt", "best.ckpt", NULL}},
    {".", {"config.yaml", "test.hyp", NULL}},
    {"heatmaps", {"report.html", NULL}},
};

/* Removes the temporaries (atomicfile.h) a killed run left. */
static void remove_stray_temporaries(const RunDir *r)
{
    for (size_t f = 0; f < sizeof TEMPORARIES / sizeof *TEMPORARIES; f++) {
        char dir[2100];
        rundir_path(r, TEMPORARIES[f].folder, dir, sizeof dir);
        DIR *d = opendir(dir);
        if (!d)
            continue;
        for (struct dirent *e; (e = readdir(d));) {
            int ours = 0;
            for (const char *const *name = TEMPORARIES[f].finals; *name && !ours; name++)
                ours = atomicfile_is_temporary(e->d_name, *name);
            if (!ours)
                continue;
            char path[4300];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
}

/* Whether there is something at path worth keeping: a directory, or a non-empty file. */
static int holds_something(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    return !S_ISREG(st.st_mode) || st.st_size > 0;
}

/* A fresh start in a directory with the files of a run that saved no checkpoint (a
 * double Ctrl-C, a failed write): moves them to NAME.old.N, N the first number free for
 * all of them, so the new run's logs are its own and nothing is lost. */
static int move_dead_run_aside(RunDir *r, char *note, size_t cap, Error *err)
{
    char path[2300], aside[2400], moved[512] = "";
    int any = 0;
    for (int k = 0; k < N_RUN_FILES; k++) {
        rundir_path(r, RUN_FILES[k], path, sizeof path);
        any |= holds_something(path);
    }
    if (!any)
        return 0;
    int n = 1;
    for (int k = 0; k < N_RUN_FILES; k++) {
        struct stat st;
        snprintf(aside, sizeof aside, "%s/%s.old.%d", r->dir, RUN_FILES[k], n);
        if (lstat(aside, &st) == 0) {
            n++;
            k = -1; /* that number is taken: check every name again with the next */
        }
    }
    for (int k = 0; k < N_RUN_FILES; k++) {
        rundir_path(r, RUN_FILES[k], path, sizeof path);
        if (!holds_something(path))
            continue;
        snprintf(aside, sizeof aside, "%s/%s.old.%d", r->dir, RUN_FILES[k], n);
        if (rename(path, aside) != 0)
            return error_errno(err, "cannot move aside", path);
        size_t used = strlen(moved);
        snprintf(moved + used, sizeof moved - used, "%s%s", used ? ", " : "", RUN_FILES[k]);
    }
    snprintf(note, cap, "s2s: note: `%s` held files of an earlier run that saved no checkpoint; "
             "moved them aside to NAME.old.%d: %s", r->dir, n, moved);
    return 0;
}

/* Opens one log; says on stderr what had to be repaired. */
static int open_log(RunDir *r, AppendLog *l, const char *name, long long keep, Error *err)
{
    char path[2200];
    rundir_path(r, name, path, sizeof path);
    AppendLogRepair fix;
    if (appendlog_open(l, path, keep, &fix, err) < 0)
        return -1;
    if (fix.dropped_after_keep)
        rundir_log(r, "s2s: note: %s: dropped %lld byte%s written after the checkpoint (the "
                   "steps about to be trained again)", name, fix.dropped_after_keep,
                   plural(fix.dropped_after_keep));
    if (fix.shorter_than_keep)
        rundir_log(r, "s2s: warning: %s is shorter than when the checkpoint was saved: "
                   "records are missing from it", name);
    if (fix.torn_tail)
        rundir_log(r, "s2s: note: %s: cut off a last line without its newline (%lld byte%s, "
                   "left by a process that died while writing it)", name, fix.torn_tail,
                   plural(fix.torn_tail));
    return 0;
}

int rundir_open(RunDir *r, const char *dir, const RunMarks *resume, Error *err)
{
    memset(r, 0, sizeof *r);
    r->lock_fd = r->log.fd = r->metrics.fd = r->alignments.fd = -1;
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    r->tty = isatty(STDERR_FILENO);
    char path[2100];
    rundir_path(r, "checkpoints", path, sizeof path);
    if (make_dirs(path) != 0) {
        error_errno(err, "cannot create run directory", path);
        return -2;
    }
    rundir_path(r, ".lock", path, sizeof path);
    r->lock_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (r->lock_fd < 0) {
        error_errno(err, "cannot create lock file", path);
        return -2;
    }
    /* flock, not a pid file: the lock dies with its process, even under kill -9. */
    if (flock(r->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        char holder[32] = "";
        ssize_t got = pread(r->lock_fd, holder, sizeof holder - 1, 0);
        holder[got > 0 ? got : 0] = '\0';
        holder[strcspn(holder, "\n")] = '\0';
        return error_set(err, "run directory `%s` is in use by another s2s train (pid %s)", dir,
                         holder[0] ? holder : "unknown");
    }
    /* the holder's pid, for the message above (informative only: the lock is flock's) */
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(r->lock_fd, 0) != 0 || pwrite(r->lock_fd, pid, (size_t)n, 0) != n) {
        error_errno(err, "cannot write lock file", path);
        return -2;
    }
    if (!resume) {
        const char *names[] = {"last.ckpt", "best.ckpt"};
        for (int k = 0; k < 2; k++) {
            rundir_path(r, "checkpoints/", path, sizeof path);
            strncat(path, names[k], sizeof path - strlen(path) - 1);
            if (access(path, F_OK) == 0)
                return error_set(err, "run directory `%s` already holds a run (%s); continue "
                                 "it with --resume %s, or set another run_dir", dir, path, dir);
        }
    }
    remove_stray_temporaries(r);
    char moved[2600] = "";
    if (!resume && move_dead_run_aside(r, moved, sizeof moved, err) < 0)
        return -2;
    /* train.log first: the notes of the others go to it too */
    if (open_log(r, &r->log, "train.log", -1, err) < 0)
        return -2;
    if (moved[0])
        rundir_log(r, "%s", moved);
    if (open_log(r, &r->metrics, "metrics.jsonl", resume ? resume->metrics_bytes : -1, err) < 0 ||
        open_log(r, &r->alignments, "alignments.jsonl", resume ? resume->alignments_bytes : -1,
                 err) < 0)
        return -2;
    return 0;
}

void rundir_open_quiet(RunDir *r, const char *dir)
{
    *r = (RunDir){.lock_fd = -1, .quiet = 1};
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    r->log.fd = r->metrics.fd = r->alignments.fd = -1;
}

void rundir_close(RunDir *r)
{
    if (r->live_shown)
        fputc('\n', stderr);
    appendlog_close(&r->log);
    appendlog_close(&r->metrics);
    appendlog_close(&r->alignments);
    if (r->lock_fd >= 0)
        close(r->lock_fd); /* releases the lock */
    r->lock_fd = -1;
}

int rundir_write_config(RunDir *r, const char *yaml, Error *err)
{
    if (r->quiet)
        return 0;
    char path[2100];
    rundir_path(r, "config.yaml", path, sizeof path);
    return atomicfile_write(path, "", yaml, strlen(yaml), err);
}

RunMarks rundir_marks(RunDir *r)
{
    if (r->quiet)
        return (RunMarks){0, 0};
    /* a log that cannot be synced is no reason to lose the checkpoint: at worst a
     * resume after a power cut finds the log shorter than recorded, and says so */
    appendlog_sync(&r->metrics);
    appendlog_sync(&r->alignments);
    return (RunMarks){r->metrics.size, r->alignments.size};
}

/* ---- lines ---------------------------------------------------------------------------------- */

static void clear_live(RunDir *r)
{
    if (r->live_shown) {
        fputs("\r\033[K", stderr);
        r->live_shown = 0;
    }
}

/* A line into train.log; a failure is said once on stderr. */
static void log_line(RunDir *r, const char *line)
{
    if (r->log.fd < 0 || appendlog_line(&r->log, line, strlen(line)) == 0 || r->log.failed)
        return;
    r->log.failed = 1;
    char dir[sizeof r->dir * 4];
    fprintf(stderr, "s2s: warning: cannot write %s/train.log: %s\n",
            termtext_escape(dir, sizeof dir, r->dir), strerror(errno));
}

/* A line formatted, with what it quotes from outside (paths, words) made safe for a
 * terminal (termtext.h): train.log is read on one too. */
static void format_line(char *line, size_t cap, const char *fmt, va_list ap)
{
    char raw[2048];
    vsnprintf(raw, sizeof raw, fmt, ap);
    termtext_escape(line, cap, raw);
}

void rundir_log(RunDir *r, const char *fmt, ...)
{
    if (r->quiet)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    format_line(line, sizeof line, fmt, ap);
    va_end(ap);
    clear_live(r);
    /* stderr may be a closed pipe or terminal: its failures are ignored (SIGPIPE and
     * SIGHUP are caught and stop the run at the next safe point) */
    fprintf(stderr, "%s\n", line);
    log_line(r, line);
}

void rundir_note(RunDir *r, const char *fmt, ...)
{
    if (r->quiet)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    format_line(line, sizeof line, fmt, ap);
    va_end(ap);
    log_line(r, line);
}

void rundir_live(RunDir *r, const char *fmt, ...)
{
    if (r->quiet)
        return;
    if (!r->tty)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    r->live_shown = 1;
}

void rundir_metrics(RunDir *r, const char *json)
{
    if (r->quiet)
        return;
    if (appendlog_line(&r->metrics, json, strlen(json)) == 0 || r->metrics_failed)
        return;
    r->metrics_failed = 1;
    rundir_log(r, "s2s: warning: cannot write %s/metrics.jsonl: %s", r->dir, strerror(errno));
}

int rundir_alignments(RunDir *r, const char *line, size_t len, Error *err)
{
    if (r->quiet)
        return 0;
    if (appendlog_line(&r->alignments, line, len) == 0)
        return 0;
    char path[2200];
    rundir_path(r, "alignments.jsonl", path, sizeof path);
    return error_errno(err, "cannot write", path);
}
