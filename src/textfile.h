/* textfile.h: a whole text file as lines (for `s2s eval` and other small inputs):
 * strict UTF-8, "\n" or "\r\n" line ends, a last line without "\n" counted. */
#ifndef S2S_TEXTFILE_H
#define S2S_TEXTFILE_H

#include "error.h"

typedef struct {
    char **lines;
    int n;
    char *text; /* the file, with each line end replaced by a NUL */
} TextFile;

/* Reads path. Returns 0, or -1 with err naming the file (and line and byte for bad
 * UTF-8). textfile_free is safe either way. */
int textfile_read(TextFile *f, const char *path, Error *err);
void textfile_free(TextFile *f);

#endif
