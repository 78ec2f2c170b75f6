/* linereader.h: reading text one line at a time, for corpora, gold alignments, the
 * files of `s2s eval` and stdin: lines end at "\n" only (a final line without it
 * counts), one "\r" before it is stripped, and a line over a byte cap is read through
 * without being held in memory. Reads a file descriptor in blocks with read(2), which on
 * a terminal returns as soon as a line is typed, so the same reader serves files and
 * interactive use.
 *
 * Between blocks it asks interrupt_pending() (interrupt.h), so a signal stops even the
 * reading of an endless input. With refuse_nul, a NUL byte in a line over the cap is an
 * error at once: no text holds one, and a binary file -- /dev/zero -- would otherwise
 * be read through to an end that never comes. (NULs in a line within the cap are the
 * caller's to judge, with the rest of its UTF-8: linereader_check_utf8.) */
#ifndef S2S_LINEREADER_H
#define S2S_LINEREADER_H

#include <stddef.h>

#include "base/error.h"

typedef struct {
    int fd, owned;         /* owned: opened here, closed by linereader_close */
    const char *name;      /* for messages: the path, or "stdin" */
    const char *what;      /* what it is, for messages: "corpus" */
    char block[1 << 16];
    size_t pos, end;
    int at_eof;
    char *line;            /* the current line, NUL-terminated; valid until the next call */
    size_t line_cap;
    long line_no;          /* lines read so far */
    int refuse_nul;        /* a NUL byte in a line over the cap is an error */
    int finish_on_signal;  /* a pending signal does not stop the reading: for the run's own
                            * logs, read by the work a signal waits for (the report) */
} LineReader;

/* Opens path ("cannot open WHAT `path`: ..." on failure). Returns 0, or -1 with err set;
 * linereader_close is safe either way. */
int linereader_open(LineReader *r, const char *path, const char *what, Error *err);
/* Reads an already open descriptor (not closed by linereader_close). */
void linereader_fd(LineReader *r, int fd, const char *name, const char *what);
void linereader_close(LineReader *r);

/* Reads the next line (without "\n" or "\r\n") into r->line. Returns 1, 0 at the end,
 * or -1 with err set on a read error ("cannot read WHAT `name`: ..."), a signal
 * ("WHAT `name`: reading stopped by signal N"), or with refuse_nul a NUL byte in an
 * over-long line ("name:LINE:BYTE: NUL byte (expected UTF-8 text)"). A line over
 * max_bytes is read through but not kept: *too_long is set and *len is 0. */
int linereader_next(LineReader *r, size_t max_bytes, size_t *len, int *too_long, Error *err);

/* Judges the line just read (its len bytes) as text: strict UTF-8 without a NUL byte.
 * Returns 0, or -1 with err set: "name:LINE:BYTE: NUL byte (expected UTF-8 text)" (the
 * message of refuse_nul too) or "name:LINE:BYTE: invalid UTF-8 (0x.. ..)", the bytes of
 * the bad sequence. */
int linereader_check_utf8(const LineReader *r, size_t len, Error *err);

#endif
