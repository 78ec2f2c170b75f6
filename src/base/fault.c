/* fault.c: the test-only fault hooks of fault.h. Empty unless S2S_FAULT_HOOKS. */
#include "base/fault.h"

#ifdef S2S_FAULT_HOOKS
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Whether step lies in the range "A", "A-" or "A-B" held by the variable name. */
static int step_in_range(const char *name, long step)
{
    const char *spec = getenv(name);
    long first = 0, last = 0;
    char dash = 0;
    if (!spec)
        return 0;
    int n = sscanf(spec, "%ld%c%ld", &first, &dash, &last);
    if (n == 1)
        return step == first;
    if (n == 2 && dash == '-')
        return step >= first;
    return n == 3 && step >= first && step <= last;
}

int fault_nan_loss(long step)
{
    return step_in_range("S2S_FAULT_NAN_STEPS", step);
}

int fault_inf_grad(long step)
{
    return step_in_range("S2S_FAULT_INF_GRAD_STEPS", step);
}

int fault_io_error(FaultOp op)
{
    static const char *const names[] = {"write", "flush", "fsync", "close", "rename", "logwrite"};
    static long calls[6];
    const char *spec = getenv("S2S_FAULT_IO");
    char name[16];
    long k = 0;
    int code = ENOSPC;
    calls[op]++;
    if (!spec || sscanf(spec, "%15[a-z]:%ld:%d", name, &k, &code) < 2)
        return 0;
    return !strcmp(name, names[op]) && calls[op] == k ? code : 0;
}

size_t fault_kill_bytes(void)
{
    const char *spec = getenv("S2S_FAULT_KILL_BYTES");
    return spec ? (size_t)strtoull(spec, NULL, 10) : SIZE_MAX;
}

void fault_kill_at(const char *stage)
{
    const char *spec = getenv("S2S_FAULT_KILL_AT");
    if (spec && !strcmp(spec, stage))
        raise(SIGKILL);
}

int fault_alloc_fails(void)
{
    static long calls;
    const char *spec = getenv("S2S_FAULT_ALLOC");
    if (!spec)
        return 0;
    char *end;
    long k = strtol(spec, &end, 10);
    calls++;
    return *end == '-' ? calls >= k : calls == k;
}

void fault_slow_step(void)
{
    const char *spec = getenv("S2S_FAULT_STEP_MS");
    if (!spec)
        return;
    long ms = atol(spec);
    struct timespec left = {ms / 1000, ms % 1000 * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        continue;
}

/* Under mpirun, S2S_FAULT_RANK=K: whether this rank is the one that gets the fault. */
static int this_rank_faults(void)
{
    const char *only = getenv("S2S_FAULT_RANK"), *rank = getenv("OMPI_COMM_WORLD_RANK");
    return !only || (rank && !strcmp(only, rank));
}

void fault_trace(const char *fmt, ...)
{
    const char *path = getenv("S2S_FAULT_TRACE");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

int fault_batch_unreadable(long step)
{
    const char *spec = getenv("S2S_FAULT_BATCH");
    return spec && this_rank_faults() && atol(spec) == step;
}

void fault_signal_at(const char *phase, long step)
{
    const char *spec = getenv("S2S_FAULT_SIGNAL");
    char name[16];
    long at = 0;
    int sig = SIGTERM, times = 1;
    if (!this_rank_faults())
        return;
    if (spec && sscanf(spec, "%15[a-z]:%ld:%d:%d", name, &at, &sig, &times) >= 2 &&
        !strcmp(name, phase) && at == step)
        for (int k = 0; k < times; k++) /* raise() returns after the handler has run */
            raise(sig);
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int fault_hooks_compiled_out;
#endif
