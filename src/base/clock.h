/* clock.h: seconds on the monotonic clock, for timing steps, validations and benchmarks
 * (never the wall clock, which may jump). */
#ifndef S2S_CLOCK_H
#define S2S_CLOCK_H

#include <time.h>

static inline double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#endif
