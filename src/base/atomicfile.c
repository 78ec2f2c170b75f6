/* atomicfile.c: whole-file replacement through an exclusive temporary (see
 * atomicfile.h). */
#include "base/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/fault.h"

/* "cannot <verb>[ <what>]" into out, for error_errno. */
static const char *action(const AtomicFile *a, const char *verb, char *out, size_t cap)
{
    /* what is a short word ("checkpoint"): these fit in the 96 bytes callers give */
    snprintf(out, cap, "cannot %s%s%s", verb, a->what[0] ? " " : "", a->what);
    return out;
}

/* With the hooks on, whether op must fail now (errno is then set). */
static int injected_failure(const AtomicFile *a, FaultOp op)
{
    int code = a->fault_hooks ? fault_io_error(op) : 0;
    if (code)
        errno = code;
    return code != 0;
}

static void kill_at(const AtomicFile *a, const char *stage)
{
    if (a->fault_hooks)
        fault_kill_at(stage);
}

int atomicfile_begin(AtomicFile *a, const char *path, const char *what, Error *err)
{
    memset(a, 0, sizeof *a);
    a->what = what;
    snprintf(a->path, sizeof a->path, "%s", path);
    char verb[96];
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned char r[6];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) /* never blocks after boot */
            memset(r, attempt, sizeof r);
        snprintf(a->tmp_path, sizeof a->tmp_path, "%s.tmp.%ld.%02x%02x%02x%02x%02x%02x", path,
                 (long)getpid(), r[0], r[1], r[2], r[3], r[4], r[5]);
        int fd = open(a->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST)
            continue; /* taken (or planted): another name */
        if (fd < 0)
            break;
        a->f = fdopen(fd, "wb");
        if (a->f)
            return 0;
        int saved = errno;
        close(fd);
        unlink(a->tmp_path);
        errno = saved;
        break;
    }
    error_errno(err, action(a, "create", verb, sizeof verb), a->tmp_path);
    a->tmp_path[0] = '\0';
    return -1;
}

/* fsync of the directory holding path, so the rename itself is durable. */
static int sync_directory(const AtomicFile *a, Error *err)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", a->path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return error_errno(err, "cannot open directory", dir);
    int rc = injected_failure(a, FAULT_FSYNC) ? -1 : fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    if (rc < 0 && errno != EINVAL) /* some file systems cannot sync directories */
        return error_errno(err, "cannot sync directory", dir);
    return 0;
}

int atomicfile_commit(AtomicFile *a, Error *err)
{
    char verb[96];
    if (!a->f) /* begin failed */
        return error_set(err, "%s: nothing to commit", a->path);
    if (ferror(a->f) || injected_failure(a, FAULT_FLUSH) || fflush(a->f) != 0) {
        error_errno(err, action(a, "write", verb, sizeof verb), a->tmp_path);
        goto fail;
    }
    kill_at(a, "fsync");
    if (injected_failure(a, FAULT_FSYNC) || fsync(fileno(a->f)) != 0) {
        error_errno(err, action(a, "sync", verb, sizeof verb), a->tmp_path);
        goto fail;
    }
    FILE *f = a->f;
    a->f = NULL;
    if (fclose(f) != 0 || injected_failure(a, FAULT_CLOSE)) {
        error_errno(err, action(a, "close", verb, sizeof verb), a->tmp_path);
        goto fail;
    }
    kill_at(a, "rename");
    if (a->fault_hooks)
        fault_trace("rename %s", a->path);
    if (injected_failure(a, FAULT_RENAME) || rename(a->tmp_path, a->path) != 0) {
        char what[128];
        snprintf(what, sizeof what, "%s into place", action(a, "rename", verb, sizeof verb));
        error_errno(err, what, a->path);
        goto fail;
    }
    a->tmp_path[0] = '\0';
    kill_at(a, "dirsync");
    return sync_directory(a, err);
fail:
    atomicfile_abort(a);
    return -1;
}

void atomicfile_abort(AtomicFile *a)
{
    if (a->f)
        fclose(a->f);
    a->f = NULL;
    if (a->tmp_path[0])
        unlink(a->tmp_path);
    a->tmp_path[0] = '\0';
}

int atomicfile_write(const char *path, const char *what, const void *data, size_t len,
                     Error *err)
{
    AtomicFile a;
    if (atomicfile_begin(&a, path, what, err) < 0)
        return -1;
    if (len && fwrite(data, 1, len, a.f) != len) {
        char verb[96];
        error_errno(err, action(&a, "write", verb, sizeof verb), a.tmp_path);
        atomicfile_abort(&a);
        return -1;
    }
    return atomicfile_commit(&a, err);
}

int atomicfile_is_temporary(const char *name, const char *final_name)
{
    size_t n = strlen(final_name);
    return !strncmp(name, final_name, n) && !strncmp(name + n, ".tmp.", 5);
}
