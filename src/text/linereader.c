/* linereader.c: lines from a file descriptor, bounded in memory (see linereader.h). */
#include "text/linereader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/interrupt.h"
#include "base/mem.h"
#include "text/tokenize.h"

/* A NUL byte at offset `at` of line line_no: no text holds one. */
static int nul_error(const LineReader *r, long line_no, size_t at, Error *err)
{
    return error_at(err, r->name, line_no, (long)at + 1, "NUL byte (expected UTF-8 text)");
}

static void init(LineReader *r, int fd, const char *name, const char *what)
{
    /* field by field: the block needs no clearing */
    r->fd = fd;
    r->owned = 0;
    r->name = name;
    r->what = what;
    r->pos = r->end = 0;
    r->at_eof = 0;
    r->line = NULL;
    r->line_cap = 0;
    r->line_no = 0;
    r->refuse_nul = 0;
    r->finish_on_signal = 0;
}

int linereader_open(LineReader *r, const char *path, const char *what, Error *err)
{
    init(r, -1, path, what);
    r->fd = open(path, O_RDONLY);
    if (r->fd < 0) {
        char msg[64];
        snprintf(msg, sizeof msg, "cannot open %s", what);
        return error_errno(err, msg, path);
    }
    r->owned = 1;
    return 0;
}

void linereader_fd(LineReader *r, int fd, const char *name, const char *what)
{
    init(r, fd, name, what);
}

void linereader_close(LineReader *r)
{
    if (r->owned && r->fd >= 0)
        close(r->fd);
    free(r->line);
    r->fd = -1;
    r->owned = 0;
    r->line = NULL;
}

/* Refills the block; returns the bytes read (0 at the end), or -1 with err set. */
static long refill(LineReader *r, Error *err)
{
    ssize_t got;
    do {
        if (interrupt_pending() && !r->finish_on_signal)
            return error_set(err, "%s `%s`: reading stopped by signal %d", r->what, r->name,
                             interrupt_pending());
        got = read(r->fd, r->block, sizeof r->block);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
        char msg[64];
        snprintf(msg, sizeof msg, "cannot read %s", r->what);
        return error_errno(err, msg, r->name);
    }
    r->pos = 0;
    r->end = (size_t)got;
    return (long)got;
}

int linereader_next(LineReader *r, size_t max_bytes, size_t *len, int *too_long, Error *err)
{
    size_t n = 0;    /* bytes kept in r->line */
    size_t seen = 0; /* bytes of the line read so far, kept or not */
    int got_any = 0;
    *too_long = 0;
    for (;;) {
        if (r->pos == r->end) {
            if (r->at_eof)
                break;
            long got = refill(r, err);
            if (got < 0)
                return -1;
            if (got == 0) {
                r->at_eof = 1;
                break;
            }
        }
        got_any = 1;
        char *start = r->block + r->pos;
        size_t avail = r->end - r->pos;
        char *nl = memchr(start, '\n', avail);
        size_t take = nl ? (size_t)(nl - start) : avail;
        r->pos += take + (nl ? 1 : 0);
        if (!*too_long && n + take > max_bytes + 1) { /* +1: room for a '\r' to strip */
            *too_long = 1;
            const char *nul = r->refuse_nul && n ? memchr(r->line, '\0', n) : NULL;
            if (nul) /* in the part kept so far: the first NUL is there */
                return nul_error(r, r->line_no + 1, (size_t)(nul - r->line), err);
        }
        if (*too_long && r->refuse_nul) {
            const char *nul = memchr(start, '\0', take);
            if (nul)
                return nul_error(r, r->line_no + 1, seen + (size_t)(nul - start), err);
        }
        if (!*too_long) {
            if (n + take + 1 > r->line_cap) {
                r->line_cap = (n + take + 1) * 2;
                r->line = xrealloc_array(r->line, r->line_cap, 1);
            }
            memcpy(r->line + n, start, take);
            n += take;
        }
        seen += take;
        if (nl)
            break;
    }
    if (!got_any)
        return 0;
    r->line_no++;
    if (*too_long) {
        *len = 0;
        return 1;
    }
    if (n > 0 && r->line[n - 1] == '\r')
        n--;
    if (n > max_bytes) { /* over by its last byte, which was no '\r' */
        const char *nul = r->refuse_nul ? memchr(r->line, '\0', n) : NULL;
        if (nul)
            return nul_error(r, r->line_no, (size_t)(nul - r->line), err);
        *too_long = 1;
        *len = 0;
        return 1;
    }
    if (!r->line) {
        r->line_cap = 16;
        r->line = xmalloc(r->line_cap);
    }
    r->line[n] = '\0';
    *len = n;
    return 1;
}

int linereader_check_utf8(const LineReader *r, size_t len, Error *err)
{
    const char *s = r->line;
    size_t at, bad_len;
    if (utf8_validate(s, len, &at, &bad_len) == 0)
        return 0;
    if (s[at] == '\0')
        return nul_error(r, r->line_no, at, err);
    char hex[32] = "";
    for (size_t k = 0; k < bad_len; k++)
        snprintf(hex + strlen(hex), sizeof hex - strlen(hex), "%s0x%02x", k ? " " : "",
                 (unsigned char)s[at + k]);
    return error_at(err, r->name, r->line_no, (long)at + 1, "invalid UTF-8 (%s)", hex);
}
