/* textfile.c: reading a text file into lines (see textfile.h). */
#include "textfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "tokenize.h"

int textfile_read(TextFile *f, const char *path, Error *err)
{
    memset(f, 0, sizeof *f);
    FILE *in = fopen(path, "rb");
    if (!in)
        return error_errno(err, "cannot open", path);
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap * 2 + 65536;
            f->text = xrealloc_array(f->text, cap + 1, 1);
        }
        size_t got = fread(f->text + len, 1, cap - len, in);
        len += got;
        if (got == 0)
            break;
    }
    int failed = ferror(in);
    fclose(in);
    if (failed)
        return error_errno(err, "cannot read", path);
    f->text[len] = '\0';
    int cap_lines = 0;
    for (size_t at = 0; at < len;) {
        char *start = f->text + at;
        char *nl = memchr(start, '\n', len - at);
        size_t n = nl ? (size_t)(nl - start) : len - at;
        at += n + (nl ? 1 : 0);
        if (n > 0 && start[n - 1] == '\r')
            n--;
        start[n] = '\0';
        size_t bad_at, bad_len;
        if (utf8_validate(start, n, &bad_at, &bad_len) < 0)
            return error_at(err, path, f->n + 1, (long)bad_at + 1, "invalid UTF-8 (0x%02x)",
                            (unsigned char)start[bad_at]);
        if (f->n == cap_lines) {
            cap_lines = cap_lines * 2 + 256;
            f->lines = xrealloc_array(f->lines, (size_t)cap_lines, sizeof(char *));
        }
        f->lines[f->n++] = start;
    }
    return 0;
}

void textfile_free(TextFile *f)
{
    free(f->lines);
    free(f->text);
    memset(f, 0, sizeof *f);
}
