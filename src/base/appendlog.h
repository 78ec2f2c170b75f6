/* appendlog.h: the append-only line files of a run directory (train.log, metrics.jsonl,
 * alignments.jsonl), kept as whole lines whatever happens to the process.
 *
 * Each line goes to the file in one write(2) with O_APPEND; a write that fails or
 * stops short (a full disk, a file-size limit) is cut back off with ftruncate, so the
 * file never ends in a fragment that the next line would be glued to. A fragment left
 * by something no program survives (a power cut) is cut off when the file is opened
 * again. On resume the file is also cut back to the length it had when the checkpoint
 * was saved, so the records of steps that are about to be replayed are not doubled. */
#ifndef S2S_APPENDLOG_H
#define S2S_APPENDLOG_H

#include <stddef.h>

#include "base/error.h"

typedef struct {
    int fd;             /* -1: not open */
    char path[2200];
    long long size;     /* bytes in the file: whole lines only */
    int failed;         /* a write has failed (warned about once) */
} AppendLog;

/* What opening had to repair, for the caller to tell the user. */
typedef struct {
    long long dropped_after_keep; /* bytes past `keep`, cut off */
    long long torn_tail;          /* bytes of a last line without its newline, cut off */
    int shorter_than_keep;        /* the file had fewer bytes than `keep` (left as it is) */
} AppendLogRepair;

/* Opens (creating) path for appending; a symbolic link there is refused. With keep >= 0,
 * the file is first cut back to keep bytes. Then a last line without its newline is cut
 * off. Returns 0, or -1 with err set. */
int appendlog_open(AppendLog *l, const char *path, long long keep, AppendLogRepair *repair,
                   Error *err);
void appendlog_close(AppendLog *l);

/* Appends text (len bytes, no newline) and a newline in one write. Returns 0, or -1
 * with errno set; the file is then as it was before the call. */
int appendlog_line(AppendLog *l, const char *text, size_t len);

/* fsync: what is written reaches the disk before a checkpoint that counts on it. */
int appendlog_sync(AppendLog *l);

#endif
