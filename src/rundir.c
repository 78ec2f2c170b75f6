/* rundir.c: run directory, lock, logs and metrics (see rundir.h). */
#include "rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Removes checkpoints/<x>.tmp.<pid> files left by a killed run. */
static void remove_stray_temporaries(const RunDir *r)
{
    char dir[2100];
    rundir_path(r, "checkpoints", dir, sizeof dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strstr(e->d_name, ".tmp."))
            continue;
        char path[4300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

int rundir_open(RunDir *r, const char *dir, int resuming, Error *err)
{
    memset(r, 0, sizeof *r);
    r->lock_fd = -1;
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    r->tty = isatty(STDERR_FILENO);
    char path[2100];
    rundir_path(r, "checkpoints", path, sizeof path);
    if (make_dirs(path) != 0) {
        error_errno(err, "cannot create run directory", path);
        return -2;
    }
    rundir_path(r, ".lock", path, sizeof path);
    r->lock_fd = open(path, O_RDWR | O_CREAT, 0666);
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
    rundir_path(r, "checkpoints/last.ckpt", path, sizeof path);
    if (!resuming && access(path, F_OK) == 0)
        return error_set(err, "run directory `%s` already holds a run (%s); continue it with "
                         "--resume %s, or set another run_dir", dir, path, dir);
    remove_stray_temporaries(r);
    rundir_path(r, "train.log", path, sizeof path);
    r->log = fopen(path, "a");
    if (!r->log) {
        error_errno(err, "cannot open", path);
        return -2;
    }
    rundir_path(r, "metrics.jsonl", path, sizeof path);
    r->metrics = fopen(path, "a");
    if (!r->metrics) {
        error_errno(err, "cannot open", path);
        return -2;
    }
    return 0;
}

void rundir_close(RunDir *r)
{
    if (r->live_shown)
        fputc('\n', stderr);
    if (r->log)
        fclose(r->log);
    if (r->metrics)
        fclose(r->metrics);
    if (r->lock_fd >= 0)
        close(r->lock_fd); /* releases the lock */
    r->log = r->metrics = NULL;
    r->lock_fd = -1;
}

int rundir_write_config(RunDir *r, const char *yaml, Error *err)
{
    char path[2100], tmp[2200];
    rundir_path(r, "config.yaml", path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return error_errno(err, "cannot write", tmp);
    size_t len = strlen(yaml);
    int ok = fwrite(yaml, 1, len, f) == len && fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        error_errno(err, "cannot write", path);
        unlink(tmp);
        return -1;
    }
    return 0;
}

static void clear_live(RunDir *r)
{
    if (r->live_shown) {
        fputs("\r\033[K", stderr);
        r->live_shown = 0;
    }
}

void rundir_log(RunDir *r, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    clear_live(r);
    fprintf(stderr, "%s\n", line);
    if (r->log && (fprintf(r->log, "%s\n", line) < 0 || fflush(r->log) != 0) && !r->write_failed) {
        r->write_failed = 1;
        fprintf(stderr, "s2s: warning: cannot write %s/train.log: %s\n", r->dir, strerror(errno));
    }
}

void rundir_note(RunDir *r, const char *fmt, ...)
{
    if (!r->log)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->log, fmt, ap);
    va_end(ap);
    fputc('\n', r->log);
    fflush(r->log);
}

void rundir_live(RunDir *r, const char *fmt, ...)
{
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
    if (r->metrics && (fprintf(r->metrics, "%s\n", json) < 0 || fflush(r->metrics) != 0) &&
        !r->write_failed) {
        r->write_failed = 1;
        fprintf(stderr, "s2s: warning: cannot write %s/metrics.jsonl: %s\n", r->dir, strerror(errno));
    }
}
