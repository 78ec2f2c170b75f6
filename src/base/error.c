/* error.c: formatting of one-line error messages (see error.h). Never prints. */
#include "base/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int error_set(Error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int error_at(Error *err, const char *file, long line, long col, const char *fmt, ...)
{
    int used;
    if (line > 0 && col > 0)
        used = snprintf(err->msg, sizeof err->msg, "%s:%ld:%ld: ", file, line, col);
    else if (line > 0)
        used = snprintf(err->msg, sizeof err->msg, "%s:%ld: ", file, line);
    else
        used = snprintf(err->msg, sizeof err->msg, "%s: ", file);
    if (used < 0 || (size_t)used >= sizeof err->msg)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + used, sizeof err->msg - (size_t)used, fmt, ap);
    va_end(ap);
    return -1;
}

int error_errno(Error *err, const char *what, const char *path)
{
    int saved = errno;
    return error_set(err, "%s `%s`: %s", what, path, strerror(saved));
}
