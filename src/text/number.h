/* number.h: a double as the shortest decimal text that reads back as the same double
 * (0.9, not 0.90000000000000002): how s2s writes a number a user may read again -- the
 * effective config, `s2s config`, messages quoting a setting. */
#ifndef S2S_NUMBER_H
#define S2S_NUMBER_H

#include <stddef.h>

/* Writes v into out (at most cap bytes with the NUL; 32 always suffice) with the fewest
 * significant digits (1 to 17) that strtod reads back as v exactly; inf, -inf and nan as
 * printf writes them. Returns out. */
char *number_shortest(char *out, size_t cap, double v);

#endif
