/* textfile.c: checked lines of text files in bounded memory (see textfile.h). */
#include "text/textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/mem.h"

int textreader_open(TextReader *t, const char *path, const char *what, size_t max_line_bytes,
                    Error *err)
{
    /* opened here rather than by linereader_open, for "cannot open `path`" without a what */
    linereader_fd(&t->in, -1, path, what ? what : "file");
    t->max_line_bytes = max_line_bytes;
    t->limit_name = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "cannot open%s%s", what ? " " : "", what ? what : "");
        int saved = errno;
        error_errno(err, msg, path);
        errno = saved; /* for the caller to tell a missing file */
        return -1;
    }
    t->in.fd = fd;
    t->in.owned = 1;
    /* a NUL in a line over the cap ends the reading at once: /dev/zero is no text */
    t->in.refuse_nul = 1;
    return 0;
}

int textreader_next(TextReader *t, const char **line, size_t *len, Error *err)
{
    int too_long;
    int got = linereader_next(&t->in, t->max_line_bytes, len, &too_long, err);
    if (got <= 0)
        return got;
    const char *name = t->in.name;
    long line_no = t->in.line_no;
    if (too_long) {
        if (t->limit_name)
            return error_at(err, name, line_no, 0, "line longer than %s (%zu bytes)",
                            t->limit_name, t->max_line_bytes);
        return error_at(err, name, line_no, 0, "line longer than %zu bytes (is this a text file?)",
                        t->max_line_bytes);
    }
    if (linereader_check_utf8(&t->in, *len, err) < 0)
        return -1;
    *line = t->in.line;
    return 1;
}

void textreader_close(TextReader *t)
{
    linereader_close(&t->in);
}

int textfile_read(TextFile *f, const char *path, Error *err)
{
    memset(f, 0, sizeof *f);
    TextReader t;
    if (textreader_open(&t, path, NULL, TEXTFILE_MAX_LINE_BYTES, err) < 0) {
        textreader_close(&t);
        return -1;
    }
    /* the lines one after another in text; pointers made once it no longer moves */
    size_t used = 0, cap = 0, *starts = NULL;
    int cap_lines = 0, got;
    const char *line = NULL; /* set by every call that returns 1 (for GCC's sake) */
    size_t len;
    while ((got = textreader_next(&t, &line, &len, err)) == 1) {
        if (f->n == INT_MAX) {
            got = error_set(err, "`%s` has more than %d lines", path, INT_MAX);
            break;
        }
        if (used + len + 1 > cap) {
            cap = (used + len + 1) * 2;
            f->text = xrealloc_array(f->text, cap, 1);
        }
        if (f->n == cap_lines) {
            cap_lines = cap_lines * 2 + 256;
            starts = xrealloc_array(starts, (size_t)cap_lines, sizeof(size_t));
        }
        memcpy(f->text + used, line, len + 1);
        starts[f->n++] = used;
        used += len + 1;
    }
    textreader_close(&t);
    if (got == 0) {
        f->lines = xmalloc_array((size_t)f->n + 1, sizeof(char *));
        for (int k = 0; k < f->n; k++)
            f->lines[k] = f->text + starts[k];
    }
    free(starts);
    return got < 0 ? -1 : 0;
}

void textfile_free(TextFile *f)
{
    free(f->lines);
    free(f->text);
    memset(f, 0, sizeof *f);
}
