/* number.c: shortest round-trip decimal text of a double (see number.h). */
#include "text/number.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

char *number_shortest(char *out, size_t cap, double v)
{
    if (!isfinite(v)) {
        snprintf(out, cap, "%g", v);
        return out;
    }
    /* 17 significant digits always read back exactly (IEEE 754 binary64); fewer often do */
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, cap, "%.*g", digits, v);
        if (strtod(out, NULL) == v)
            break;
    }
    return out;
}
