/* mem.h: allocation that never returns NULL, and a bump arena for activations.
 * Out of memory is not an input error: they print the byte count and exit 1. */
#ifndef S2S_MEM_H
#define S2S_MEM_H

#include <stddef.h>

/* malloc/calloc/realloc that abort with the requested size on failure. xmalloc_array
 * and xrealloc_array check count * size for overflow. */
void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xmalloc_array(size_t count, size_t size);
void *xrealloc_array(void *ptr, size_t count, size_t size);
char *xstrdup(const char *s);

/* The memory this process may use: the machine's physical memory, or less under an
 * address-space or data-size limit (setrlimit: RLIMIT_AS, RLIMIT_DATA). */
size_t mem_available(void);

/* A bump allocator over one block, sized once. Every allocation is aligned to
 * ARENA_ALIGN bytes (a cache line, also enough for any SIMD load). */
#define ARENA_ALIGN 64

typedef struct {
    char *base;
    size_t capacity;
    size_t used;
} Arena;

/* Allocates the block. arena_free on a zeroed Arena is safe. */
void arena_init(Arena *arena, size_t capacity);
void arena_free(Arena *arena);
/* Forgets every allocation (the memory stays). */
void arena_reset(Arena *arena);
/* Returns count * size bytes, uninitialised; asserts that they fit. With a NULL base
 * (a counting arena) only advances `used` and returns NULL: this is how sizes are
 * measured before the block is allocated. */
void *arena_alloc(Arena *arena, size_t count, size_t size);
/* Bytes arena_alloc would use for count * size (the aligned size). */
size_t arena_size(size_t count, size_t size);

#endif
