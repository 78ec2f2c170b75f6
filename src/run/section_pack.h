/* section_pack.h: the numbers inside a section of a checkpoint (sectionfile.h), packed
 * as fixed-size 8-byte fields in the machine's order (the file's header records the
 * order). Every read is bounds-checked: reading past the end marks the Unpack bad and
 * gives 0, so a damaged section gives a message, never a crash. */
#ifndef S2S_SECTION_PACK_H
#define S2S_SECTION_PACK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/mem.h"

typedef struct {
    unsigned char *b;
    size_t len, cap;
} Pack;

static inline void pack_bytes(Pack *p, const void *data, size_t n)
{
    if (p->len + n > p->cap) {
        p->cap = (p->len + n) * 2 + 64;
        p->b = xrealloc_array(p->b, p->cap, 1);
    }
    memcpy(p->b + p->len, data, n);
    p->len += n;
}

static inline void pack_i64(Pack *p, int64_t v) { pack_bytes(p, &v, 8); }
static inline void pack_u64(Pack *p, uint64_t v) { pack_bytes(p, &v, 8); }
static inline void pack_f64(Pack *p, double v) { pack_bytes(p, &v, 8); }

typedef struct {
    const unsigned char *b;
    size_t len, at;
    int bad;
} Unpack;

static inline void take(Unpack *u, void *out, size_t n)
{
    if (u->bad || u->len - u->at < n) {
        u->bad = 1;
        memset(out, 0, n);
        return;
    }
    memcpy(out, u->b + u->at, n);
    u->at += n;
}

static inline int64_t take_i64(Unpack *u) { int64_t v; take(u, &v, 8); return v; }
static inline uint64_t take_u64(Unpack *u) { uint64_t v; take(u, &v, 8); return v; }
static inline double take_f64(Unpack *u) { double v; take(u, &v, 8); return v; }

#endif
