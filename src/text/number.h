/* number.h: a double as the shortest decimal text that reads back as the same double
 * (0.9, not 0.90000000000000002): how s2s writes a number a user may read again -- the
 * effective config, `s2s config`, messages quoting a setting. */
#ifndef S2S_NUMBER_H
#define S2S_NUMBER_H

#include <stddef.h>

/* Writes v into out (at most cap bytes with the NUL; 32 always suffice) with the fewest
 * significant digits (1 to 17) that strtod reads back as v exactly: as a plain decimal
 * (100, 0.0003, 0.30000000000000004) unless it is below 1e-4 or ends in zeros that an
 * exponent would save two characters of; the exponent without sign or leading zeros
 * (1e6, 1e-8, 2.5e-7: what YAML, JSON and strtod read). inf, -inf and nan as printf
 * writes them. Returns out. */
char *number_shortest(char *out, size_t cap, double v);
/* The same for a float: the fewest digits (1 to 9) that strtof reads back as v. */
char *number_shortest_float(char *out, size_t cap, float v);
/* v to `digits` significant digits, as printf's %g would write it but with the exponent
 * of number_shortest (a measured value in a log line: lr=2.5e-4). Returns out. */
char *number_digits(char *out, size_t cap, double v, int digits);

#endif
