/* sectionfile.h: the checkpoint container: a header (magic, format version, endianness
 * marker, sizeof(float), section count, file size), then tagged sections, each with a
 * CRC32. Saving is atomic and durable (atomicfile.h): every write checked, then fsync,
 * rename over the final name, fsync of the directory; a crash at any point leaves the
 * old file or the new one, never a torn one. Loading checks the header against the real
 * file size before allocating, then every CRC. Readers skip sections they do not know,
 * so a section added later does not need a new format version. */
#ifndef S2S_SECTIONFILE_H
#define S2S_SECTIONFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/atomicfile.h"
#include "base/error.h"

#define CKPT_FORMAT_VERSION 1
#define CKPT_MAX_SECTIONS 32

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) of n bytes, continuing crc
 * (start with 0). */
uint32_t crc32_update(uint32_t crc, const void *data, size_t n);

typedef struct {
    AtomicFile file;
    uint32_t n_sections;
    uint64_t size;
    int failed;
} SectionWriter;

/* Opens path's temporary file. Returns 0, or -1 with err set (an I/O failure). */
int secfile_begin(SectionWriter *w, const char *path, Error *err);
/* Appends one section (tag: 4 characters). */
int secfile_section(SectionWriter *w, const char *tag, const void *data, size_t len, Error *err);
/* Finishes the file, makes it durable and renames it over path. On failure the
 * temporary file is removed and path is left as it was. */
int secfile_commit(SectionWriter *w, Error *err);
/* Abandons the file (removes the temporary). Safe after a failed call. */
void secfile_abort(SectionWriter *w);

typedef struct {
    char tag[5];
    const unsigned char *data;
    uint64_t len;
} Section;

typedef struct {
    unsigned char *bytes;
    size_t size;
    int n_sections;
    Section sections[CKPT_MAX_SECTIONS];
} SectionFile;

/* Reads and checks path. Returns 0, or -1 with err naming what is wrong (not a
 * checkpoint, another version, truncated at byte X of Y, CRC mismatch in section S).
 * secfile_close is safe either way. */
int secfile_read(SectionFile *f, const char *path, Error *err);
/* The same on a copy of bytes in memory (for tests and fuzzing); name is used in
 * messages. */
int secfile_parse(SectionFile *f, const void *bytes, size_t size, const char *name, Error *err);
/* Section by tag, or NULL. Borrowed until secfile_close. */
const Section *secfile_find(const SectionFile *f, const char *tag);
/* The same for a section the file must have: NULL with err set ("checkpoint `name` has
 * no TAG section") when it is missing. */
const Section *secfile_need(const SectionFile *f, const char *tag, const char *name, Error *err);
void secfile_close(SectionFile *f);

#endif
