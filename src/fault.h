/* fault.h: fault injection for the reliability tests, compiled in only with
 * -DS2S_FAULT_HOOKS (the build/s2s-faults binary the tests run); in s2s itself every
 * hook is a constant and costs nothing.
 *   S2S_FAULT_NAN_STEPS=A-B  the loss of steps A..B (1-based; "A-" = from A on) is NaN */
#ifndef S2S_FAULT_H
#define S2S_FAULT_H

#ifdef S2S_FAULT_HOOKS
int fault_nan_loss(long step);
#else
static inline int fault_nan_loss(long step)
{
    (void)step;
    return 0;
}
#endif

#endif
