/* mem.c: checked allocation and the activation arena (see mem.h). */
#include "base/mem.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/fault.h"

/* Exit code 1 (cli/INTERFACE.md: a failure that is not the input's fault), not abort():
 * running out of memory is an outcome to report, not a crash to debug. */
static void die_out_of_memory(size_t size)
{
    if (size == SIZE_MAX)
        fprintf(stderr, "s2s: error: out of memory (a size beyond the address space)\n");
    else
        fprintf(stderr, "s2s: error: out of memory (allocating %zu bytes, %.1f MiB)\n", size,
                (double)size / (1 << 20));
    exit(1);
}

size_t mem_available(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t most = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : SIZE_MAX;
    const int limits[] = {RLIMIT_AS, RLIMIT_DATA};
    for (size_t k = 0; k < sizeof limits / sizeof *limits; k++) {
        struct rlimit r;
        if (getrlimit(limits[k], &r) == 0 && r.rlim_cur != RLIM_INFINITY && r.rlim_cur < most)
            most = (size_t)r.rlim_cur;
    }
    return most;
}

void *xmalloc(size_t size)
{
    void *p = fault_alloc_fails() ? NULL : malloc(size ? size : 1);
    if (!p)
        die_out_of_memory(size);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = fault_alloc_fails() ? NULL : calloc(count ? count : 1, size ? size : 1);
    if (!p)
        die_out_of_memory(count * size);
    return p;
}

void *xmalloc_array(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        die_out_of_memory(SIZE_MAX);
    return xmalloc(count * size);
}

void *xrealloc_array(void *ptr, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        die_out_of_memory(SIZE_MAX);
    size_t bytes = count * size;
    void *p = fault_alloc_fails() ? NULL : realloc(ptr, bytes ? bytes : 1);
    if (!p)
        die_out_of_memory(bytes);
    return p;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = xmalloc(n);
    memcpy(p, s, n);
    return p;
}

size_t arena_size(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        die_out_of_memory(SIZE_MAX);
    size_t bytes = count * size;
    return (bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
}

void arena_init(Arena *arena, size_t capacity)
{
    arena->base = NULL;
    if (capacity > 0) {
        size_t bytes = arena_size(capacity, 1);
        arena->base = fault_alloc_fails() ? NULL : aligned_alloc(ARENA_ALIGN, bytes);
        if (!arena->base)
            die_out_of_memory(capacity);
    }
    arena->capacity = capacity;
    arena->used = 0;
}

void arena_free(Arena *arena)
{
    free(arena->base);
    arena->base = NULL;
    arena->capacity = arena->used = 0;
}

void arena_reset(Arena *arena)
{
    arena->used = 0;
}

void *arena_alloc(Arena *arena, size_t count, size_t size)
{
    size_t bytes = arena_size(count, size);
    if (!arena->base) {
        arena->used += bytes;
        return NULL;
    }
    assert(arena->used + bytes <= arena->capacity);
    void *p = arena->base + arena->used;
    arena->used += bytes;
    return p;
}
