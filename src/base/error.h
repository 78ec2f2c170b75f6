/* error.h: one-line error messages for bad input (config, corpus, CLI, files).
 * A failing function fills an Error and returns -1; main prints "s2s: error: <msg>".
 * Positions are 1-based: FILE:LINE:COL: what was expected and what was found. */
#ifndef S2S_ERROR_H
#define S2S_ERROR_H

#define ERROR_MSG_MAX 1024

typedef struct {
    char msg[ERROR_MSG_MAX];
} Error;

#if defined(__GNUC__)
#define S2S_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define S2S_PRINTF(fmt_index, first_arg)
#endif

/* "s" unless n is 1, for the counts in messages: "%ld pair%s", n, plural(n). */
static inline const char *plural(long n)
{
    return n == 1 ? "" : "s";
}

/* Sets err to the formatted message. Returns -1, so failures read `return error_set(...)`. */
int error_set(Error *err, const char *fmt, ...) S2S_PRINTF(2, 3);

/* Sets err to "file:line:col: message" ("file:line: " if col is 0, "file: " if line is
 * also 0). Returns -1. */
int error_at(Error *err, const char *file, long line, long col, const char *fmt, ...)
    S2S_PRINTF(5, 6);

/* Sets err to "what `path`: strerror(errno)" using the current errno. Returns -1. */
int error_errno(Error *err, const char *what, const char *path);

#endif
