/* sectionfile.c: the checkpoint container format, atomic save and checked load (see
 * sectionfile.h). The only file that writes checkpoints to disk. */
#include "run/sectionfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fault.h"
#include "base/mem.h"

static const char MAGIC[8] = {'S', '2', 'S', 'C', 'K', 'P', 'T', '\n'};
#define ENDIAN_MARK 0x01020304u
#define HEADER_SIZE 32 /* magic 8, version 4, endian 4, float size 4, sections 4, file size 8 */
#define SECTION_HEAD 16 /* tag 4, reserved 4, length 8 */

uint32_t crc32_update(uint32_t crc, const void *data, size_t n)
{
    /* The byte table is rebuilt per call (2048 steps): cheap next to the hundreds of
     * megabytes a checkpoint can hold, and no mutable global. */
    uint32_t table[256];
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int bit = 0; bit < 8; bit++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        table[b] = c;
    }
    const unsigned char *p = data;
    crc = ~crc;
    while (n--)
        crc = (crc >> 8) ^ table[(crc ^ *p++) & 0xFF];
    return ~crc;
}

/* ---- writing --------------------------------------------------------------------------- */

/* In the fault-hook build, dies once the file holds the chosen number of bytes, with
 * exactly that many in it (a torn temporary file, as a kill -9 would leave). */
static void kill_midway(SectionWriter *w, const void *data, size_t len)
{
    size_t budget = fault_kill_bytes();
    if (budget == SIZE_MAX || w->size + len <= budget)
        return;
    fwrite(data, 1, budget > w->size ? budget - w->size : 0, w->file.f);
    fflush(w->file.f);
    raise(SIGKILL);
}

static int write_all(SectionWriter *w, const void *data, size_t len, Error *err)
{
    if (w->failed)
        return -1;
    kill_midway(w, data, len);
    int code = fault_io_error(FAULT_WRITE);
    if (code)
        errno = code;
    if (code || (len && fwrite(data, 1, len, w->file.f) != len)) {
        w->failed = 1;
        return error_errno(err, "cannot write checkpoint", w->file.tmp_path);
    }
    w->size += len;
    return 0;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4); /* native order; the endianness marker tells readers which */
}

static void put_u64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

int secfile_begin(SectionWriter *w, const char *path, Error *err)
{
    memset(w, 0, sizeof *w);
    if (atomicfile_begin(&w->file, path, "checkpoint", err) < 0)
        return -1;
    w->file.fault_hooks = 1; /* the tests' write faults aim at checkpoints */
    /* The header is written again with the real counts at commit. */
    unsigned char header[HEADER_SIZE] = {0};
    if (write_all(w, header, sizeof header, err) < 0) {
        secfile_abort(w); /* the caller has no writer to abort: leave no temporary behind */
        return -1;
    }
    return 0;
}

int secfile_section(SectionWriter *w, const char *tag, const void *data, size_t len, Error *err)
{
    if (w->n_sections >= CKPT_MAX_SECTIONS) {
        w->failed = 1;
        return error_set(err, "checkpoint `%s`: too many sections", w->file.path);
    }
    unsigned char head[SECTION_HEAD] = {0};
    memcpy(head, tag, 4);
    put_u64(head + 8, (uint64_t)len);
    unsigned char tail[4];
    put_u32(tail, crc32_update(0, data, len));
    if (write_all(w, head, sizeof head, err) < 0 || write_all(w, data, len, err) < 0 ||
        write_all(w, tail, sizeof tail, err) < 0)
        return -1;
    w->n_sections++;
    return 0;
}

int secfile_commit(SectionWriter *w, Error *err)
{
    if (w->failed) {
        secfile_abort(w);
        return -1;
    }
    unsigned char header[HEADER_SIZE];
    memcpy(header, MAGIC, 8);
    put_u32(header + 8, CKPT_FORMAT_VERSION);
    put_u32(header + 12, ENDIAN_MARK);
    put_u32(header + 16, (uint32_t)sizeof(float));
    put_u32(header + 20, w->n_sections);
    put_u64(header + 24, w->size);
    kill_midway(w, header, sizeof header); /* N = the whole file: before its header is final */
    if (fseek(w->file.f, 0, SEEK_SET) != 0 ||
        fwrite(header, 1, sizeof header, w->file.f) != sizeof header) {
        error_errno(err, "cannot write checkpoint", w->file.tmp_path);
        secfile_abort(w);
        return -1;
    }
    return atomicfile_commit(&w->file, err);
}

void secfile_abort(SectionWriter *w)
{
    atomicfile_abort(&w->file);
}

/* ---- reading ------------------------------------------------------------------------------ */

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Checks the structure of bytes (owned by f) and indexes its sections. */
static int index_sections(SectionFile *f, const char *name, Error *err)
{
    const unsigned char *b = f->bytes;
    size_t size = f->size;
    if (size < 8 || memcmp(b, MAGIC, 8) != 0)
        return error_set(err, "`%s` is not an s2s checkpoint (bad magic)", name);
    if (size < HEADER_SIZE)
        return error_set(err, "checkpoint `%s` is truncated: %zu byte%s, shorter than its "
                         "header", name, size, plural((long)size));
    uint32_t version = get_u32(b + 8);
    if (get_u32(b + 12) != ENDIAN_MARK)
        return error_set(err, "checkpoint `%s` was written on a machine of the other byte order",
                         name);
    if (version != CKPT_FORMAT_VERSION)
        return error_set(err, "checkpoint `%s` has format version %u; this s2s reads version %d",
                         name, version, CKPT_FORMAT_VERSION);
    if (get_u32(b + 16) != sizeof(float))
        return error_set(err, "checkpoint `%s` stores %u-byte floats; this s2s uses %zu", name,
                         get_u32(b + 16), sizeof(float));
    uint32_t n_sections = get_u32(b + 20);
    uint64_t declared = get_u64(b + 24);
    if (declared != size)
        return error_set(err, "checkpoint `%s` is truncated or padded: %zu bytes, its header "
                         "says %llu", name, size, (unsigned long long)declared);
    if (n_sections > CKPT_MAX_SECTIONS)
        return error_set(err, "checkpoint `%s`: %u sections (at most %d)", name, n_sections,
                         CKPT_MAX_SECTIONS);
    size_t at = HEADER_SIZE;
    for (uint32_t s = 0; s < n_sections; s++) {
        if (size - at < SECTION_HEAD)
            return error_set(err, "checkpoint `%s` is truncated in section %u at byte %zu of %zu",
                             name, s + 1, at, size);
        Section *sec = &f->sections[s];
        memcpy(sec->tag, b + at, 4);
        sec->tag[4] = '\0';
        int bad_header = get_u32(b + at + 4) != 0; /* the reserved word */
        for (int k = 0; k < 4; k++)
            bad_header |= sec->tag[k] < 'A' || sec->tag[k] > 'Z';
        if (bad_header)
            return error_set(err, "checkpoint `%s`: corrupt section header at byte %zu", name, at);
        sec->len = get_u64(b + at + 8);
        at += SECTION_HEAD;
        if (sec->len > size - at || size - at - sec->len < 4)
            return error_set(err, "checkpoint `%s`: section %s runs past the end of the file",
                             name, sec->tag);
        sec->data = b + at;
        at += sec->len;
        if (crc32_update(0, sec->data, sec->len) != get_u32(b + at))
            return error_set(err, "checkpoint `%s`: CRC mismatch in section %s (the file is "
                             "damaged)", name, sec->tag);
        at += 4;
    }
    if (at != size)
        return error_set(err, "checkpoint `%s`: %zu bytes after the last section", name, size - at);
    f->n_sections = (int)n_sections;
    return 0;
}

int secfile_parse(SectionFile *f, const void *bytes, size_t size, const char *name, Error *err)
{
    memset(f, 0, sizeof *f);
    f->bytes = xmalloc(size ? size : 1);
    memcpy(f->bytes, bytes, size);
    f->size = size;
    return index_sections(f, name, err);
}

int secfile_read(SectionFile *f, const char *path, Error *err)
{
    memset(f, 0, sizeof *f);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return error_errno(err, "cannot open checkpoint", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        error_errno(err, "cannot read checkpoint", path);
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return error_set(err, "checkpoint `%s` is not a regular file", path);
    }
    /* The allocation is the file's real size, whatever the header claims. */
    f->size = (size_t)st.st_size;
    f->bytes = xmalloc(f->size ? f->size : 1);
    size_t got = 0;
    while (got < f->size) {
        ssize_t r = read(fd, f->bytes + got, f->size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            error_errno(err, "cannot read checkpoint", path);
            close(fd);
            return -1;
        }
        got += (size_t)r;
    }
    close(fd);
    return index_sections(f, path, err);
}

const Section *secfile_find(const SectionFile *f, const char *tag)
{
    for (int s = 0; s < f->n_sections; s++)
        if (!strcmp(f->sections[s].tag, tag))
            return &f->sections[s];
    return NULL;
}

const Section *secfile_need(const SectionFile *f, const char *tag, const char *name, Error *err)
{
    const Section *s = secfile_find(f, tag);
    if (!s)
        error_set(err, "checkpoint `%s` has no %s section", name, tag);
    return s;
}

void secfile_close(SectionFile *f)
{
    free(f->bytes);
    memset(f, 0, sizeof *f);
}
