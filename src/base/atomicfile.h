/* atomicfile.h: replacing a file whole, so that a reader -- or a crash at any moment --
 * sees the old file or the new one, never a mix (checkpoints, config.yaml, test.hyp,
 * report.html).
 *
 * The new content goes to a temporary beside the final name, created exclusively
 * (O_CREAT|O_EXCL|O_NOFOLLOW under a name with a random part, so a link planted there
 * is never followed and a name taken is never reused); commit flushes, fsyncs and
 * closes it, renames it over the final name and fsyncs the directory, so the rename
 * itself is durable. Any failure removes the temporary and leaves the final name as
 * it was. Temporaries of a killed process are named FINAL.tmp.* (see
 * atomicfile_is_temporary) and cleaned at the next start. */
#ifndef S2S_ATOMICFILE_H
#define S2S_ATOMICFILE_H

#include <stdio.h>

#include "base/error.h"

typedef struct {
    FILE *f;              /* write the content here (fwrite, fprintf, fseek) */
    char path[4096];      /* the final name */
    char tmp_path[4200];  /* the temporary ("" once removed or renamed) */
    const char *what;     /* in messages: "checkpoint" -> "cannot write checkpoint `...`" */
    int fault_hooks;      /* the test-only hooks of fault.h apply (checkpoints only) */
} AtomicFile;

/* Creates the temporary for path. what names the file in messages ("" for none).
 * Returns 0, or -1 with err set; nothing is left behind on failure. */
int atomicfile_begin(AtomicFile *a, const char *path, const char *what, Error *err);

/* Makes the written content the file at path, durably. Returns 0, or -1 with err set
 * (the temporary is then removed; path is the old file, or, when only the directory's
 * fsync failed, the whole new one). */
int atomicfile_commit(AtomicFile *a, Error *err);

/* Gives up: closes and removes the temporary. Safe after commit or a failure. */
void atomicfile_abort(AtomicFile *a);

/* The whole of data to path, atomically. */
int atomicfile_write(const char *path, const char *what, const void *data, size_t len,
                     Error *err);

/* Whether the directory entry name is a temporary of one of these final names. */
int atomicfile_is_temporary(const char *name, const char *final_name);

#endif
