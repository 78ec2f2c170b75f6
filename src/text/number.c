/* number.c: decimal text of a double for people (see number.h). */
#include "text/number.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* printf's exponent "e+06" / "e-08" as "e6" / "e-8": the same number, shorter. */
static void tidy_exponent(char *text)
{
    char *e = strchr(text, 'e');
    if (!e)
        return;
    char *digits = e + 1, *to = e + 1;
    if (*digits == '-')
        *to++ = *digits++;
    else if (*digits == '+')
        digits++;
    while (*digits == '0' && digits[1])
        digits++;
    memmove(to, digits, strlen(digits) + 1);
}

char *number_digits(char *out, size_t cap, double v, int digits)
{
    snprintf(out, cap, "%.*g", digits, v);
    if (isfinite(v))
        tidy_exponent(out);
    return out;
}

/* v's text read back: as a double, or (as_float) as a float */
static double read_back(const char *text, int as_float)
{
    return as_float ? (double)strtof(text, NULL) : strtod(text, NULL);
}

/* number_shortest and number_shortest_float: the fewest digits that read back as v in
 * its own precision (17 always do for a double, 9 for a float) */
static char *shortest(char *out, size_t cap, double v, int as_float)
{
    if (!isfinite(v))
        return number_digits(out, cap, v, 6);
    char sci[40], plain[400];
    const int most = as_float ? 9 : 17;
    int digits = 1;
    for (; digits < most; digits++) {
        snprintf(sci, sizeof sci, "%.*e", digits - 1, v);
        if (read_back(sci, as_float) == v)
            break;
    }
    snprintf(sci, sizeof sci, "%.*e", digits - 1, v);
    /* the same digits without an exponent (as %g does down to 1e-4), unless zeros make
     * that two or more characters longer: 100, 0.0003 and 123456 as they are; 1e6, 1e-8 */
    const int exponent = atoi(strchr(sci, 'e') + 1);
    const int decimals = digits - 1 - exponent > 0 ? digits - 1 - exponent : 0;
    tidy_exponent(sci);
    if (exponent >= -4) {
        snprintf(plain, sizeof plain, "%.*f", decimals, v);
        if ((exponent < 0 || strlen(plain) <= strlen(sci) + 1) && read_back(plain, as_float) == v) {
            snprintf(out, cap, "%s", plain);
            return out;
        }
    }
    snprintf(out, cap, "%s", sci);
    return out;
}

char *number_shortest(char *out, size_t cap, double v)
{
    return shortest(out, cap, v, 0);
}

char *number_shortest_float(char *out, size_t cap, float v)
{
    return shortest(out, cap, v, 1);
}
