/* fault.c: the test-only fault hooks of fault.h. Empty unless S2S_FAULT_HOOKS. */
#include "fault.h"

#ifdef S2S_FAULT_HOOKS
#include <stdio.h>
#include <stdlib.h>

int fault_nan_loss(long step)
{
    const char *spec = getenv("S2S_FAULT_NAN_STEPS");
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
#else
/* ISO C wants a translation unit to declare something. */
typedef int fault_hooks_compiled_out;
#endif
