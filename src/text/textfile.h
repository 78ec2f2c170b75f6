/* textfile.h: text files of any origin read in bounded memory, for gold alignments,
 * alignments.jsonl, metrics.jsonl and the files of `s2s eval`. On top of linereader.h,
 * so a signal stops the reading between blocks; lines end at "\n" or "\r\n" (a last
 * line without "\n" counts), and each line is checked: at most a cap of bytes given by
 * the caller (a longer line is an error, not a skipped line: these files are made by
 * programs, and one that holds such a line is not the text it claims to be), no NUL
 * byte, strict UTF-8. /dev/zero is refused at its first byte once a line's cap is
 * read; a file of one endless line holds at most the cap in memory. */
#ifndef S2S_TEXTFILE_H
#define S2S_TEXTFILE_H

#include <stddef.h>

#include "base/error.h"
#include "text/linereader.h"

/* One line at a time. */
typedef struct {
    LineReader in;         /* in.line_no: the lines read so far */
    size_t max_line_bytes;
    const char *limit_name; /* the setting max_line_bytes comes from, for messages (or NULL) */
} TextReader;

/* Opens path; what names it in messages ("cannot open WHAT `path`: ..."; NULL: "cannot
 * open `path`"). Returns 0, or -1 with err set and errno saying why; textreader_close is
 * safe either way. */
int textreader_open(TextReader *t, const char *path, const char *what, size_t max_line_bytes,
                    Error *err);
/* The next line, NUL-terminated without its line end, in *line (valid until the next
 * call) and its length in *len. Returns 1, 0 at the end, or -1 with err set:
 *   "PATH:LINE: line longer than N bytes (is this a text file?)" (with limit_name:
 *   "line longer than LIMIT_NAME (N bytes)"), "PATH:LINE:BYTE: NUL byte (expected UTF-8
 *   text)", "PATH:LINE:BYTE: invalid UTF-8 (0x.. ..)", and linereader's read and signal
 *   errors. */
int textreader_next(TextReader *t, const char **line, size_t *len, Error *err);
void textreader_close(TextReader *t);

/* A whole text file as lines. */
typedef struct {
    char **lines;
    int n;
    char *text; /* the lines, each followed by a NUL */
} TextFile;

/* The cap on a line of textfile_read: 1 MiB, data.max_line_bytes's default. */
#define TEXTFILE_MAX_LINE_BYTES ((size_t)1 << 20)

/* Reads path whole, as textreader_next checks it (errors name the file, line and byte).
 * Returns 0, or -1 with err set; textfile_free is safe either way. */
int textfile_read(TextFile *f, const char *path, Error *err);
void textfile_free(TextFile *f);

#endif
