/* appendlog.c: append-only files of whole lines (see appendlog.h). */
#include "base/appendlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fault.h"
#include "base/mem.h"

/* The length of the file's whole lines: up to and with its last newline. */
static int whole_lines_length(int fd, long long size, long long *out)
{
    char block[4096];
    long long end = size;
    while (end > 0) {
        long long start = end > (long long)sizeof block ? end - (long long)sizeof block : 0;
        size_t n = (size_t)(end - start);
        ssize_t got = pread(fd, block, n, (off_t)start);
        if (got < 0 && errno == EINTR)
            continue;
        if (got != (ssize_t)n)
            return -1;
        for (size_t k = n; k > 0; k--)
            if (block[k - 1] == '\n') {
                *out = start + (long long)k;
                return 0;
            }
        end = start;
    }
    *out = 0;
    return 0;
}

int appendlog_open(AppendLog *l, const char *path, long long keep, AppendLogRepair *repair,
                   Error *err)
{
    memset(repair, 0, sizeof *repair);
    l->fd = -1;
    l->failed = 0;
    snprintf(l->path, sizeof l->path, "%s", path);
    l->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (l->fd < 0)
        return error_errno(err, errno == ELOOP ? "refusing to write through the symbolic link"
                                               : "cannot open", path);
    struct stat st;
    if (fstat(l->fd, &st) != 0) {
        error_errno(err, "cannot open", path);
        appendlog_close(l);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        appendlog_close(l);
        return error_set(err, "`%s` is not a regular file", path);
    }
    long long size = (long long)st.st_size, whole;
    if (keep >= 0 && size > keep) {
        repair->dropped_after_keep = size - keep;
        size = keep;
    } else if (keep > size) {
        repair->shorter_than_keep = 1;
    }
    if (whole_lines_length(l->fd, size, &whole) != 0) {
        error_errno(err, "cannot read", path);
        appendlog_close(l);
        return -1;
    }
    repair->torn_tail = size - whole;
    if (whole != (long long)st.st_size && ftruncate(l->fd, (off_t)whole) != 0) {
        error_errno(err, "cannot cut back", path);
        appendlog_close(l);
        return -1;
    }
    l->size = whole;
    return 0;
}

void appendlog_close(AppendLog *l)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
}

/* The file name of path, for the fault hooks' trace. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int appendlog_line(AppendLog *l, const char *text, size_t len)
{
    if (l->fd < 0) {
        errno = EBADF;
        return -1;
    }
    /* one buffer, one write: a kill between two writes cannot split the line */
    char small[1024];
    char *buf = len + 1 <= sizeof small ? small : xmalloc(len + 1);
    memcpy(buf, text, len);
    buf[len] = '\n';
    size_t done = 0;
    int code = fault_io_error(FAULT_LOG_WRITE);
    if (code) /* the injected failure of a write that stops short: half the line lands */
        done = (size_t)write(l->fd, buf, (len + 1) / 2) == (len + 1) / 2 ? (len + 1) / 2 : 0;
    while (!code && done < len + 1) {
        ssize_t got = write(l->fd, buf + done, len + 1 - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            code = got < 0 ? errno : ENOSPC;
            break;
        }
        done += (size_t)got;
    }
    if (buf != small)
        free(buf);
    if (!code) {
        l->size += (long long)(len + 1);
        fault_trace("write %s %lld", base_name(l->path), l->size);
        return 0;
    }
    /* cut back what part of the line did land (if even this fails, the next open
     * cuts the fragment off) */
    int cut = ftruncate(l->fd, (off_t)l->size);
    (void)cut;
    errno = code;
    return -1;
}

int appendlog_sync(AppendLog *l)
{
    if (l->fd < 0)
        return 0;
    const int rc = fsync(l->fd);
    if (rc == 0)
        fault_trace("sync %s %lld", base_name(l->path), l->size);
    return rc;
}
