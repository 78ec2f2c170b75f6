/* gen_dates.c: dates as people write them ("the 3rd of June, 2009", "Jun 3 09",
 * "03.06.2009", ...) -> ISO 8601 as five tokens: 2009 - 06 - 03. The day, month and year
 * parts of the source align with the target's day, month and year; words like "the",
 * "of", a weekday, commas and the separators of 3 / 6 / 2009 align with nothing.
 * Numeric dates are written with their separators as tokens of their own, so that a
 * word-level model sees days, months and years, not 36,500 one-off words. Slashed
 * dates are day/month/year, never American. */
#include <stdio.h>
#include <string.h>

#include "gen/gen.h"

static const char *const MONTHS[12] = {"January", "February", "March", "April", "May", "June",
                                       "July", "August", "September", "October", "November",
                                       "December"};
static const char *const WEEKDAYS[7] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday",
                                        "Friday", "Saturday"};

static int leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return days[m - 1] + (m == 2 && leap(y));
}

/* 0 = Sunday (Sakamoto's method for the Gregorian calendar). */
static int weekday(int y, int m, int d)
{
    static const int t[12] = {0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4};
    if (m < 3)
        y -= 1;
    return (y + y / 4 - y / 100 + y / 400 + t[m - 1] + d) % 7;
}

static void ordinal(int d, char *out, size_t cap)
{
    const char *suffix = "th";
    if (d % 10 == 1 && d != 11)
        suffix = "st";
    else if (d % 10 == 2 && d != 12)
        suffix = "nd";
    else if (d % 10 == 3 && d != 13)
        suffix = "rd";
    snprintf(out, cap, "%d%s", d, suffix);
}

/* A month name: full, abbreviated, either capitalised or lower case. */
static void month_name(int m, int abbreviated, int lower, char *out, size_t cap)
{
    snprintf(out, cap, abbreviated ? "%.3s" : "%s", MONTHS[m - 1]);
    if (lower)
        out[0] = (char)(out[0] - 'A' + 'a');
}

enum { YEAR = 0, MONTH = 2, DAY = 4 }; /* target positions: YYYY - MM - DD */

void gen_dates(GenPair *p, Pcg32 *rng)
{
    int y = 1950 + (int)pcg32_below(rng, 100);
    int m = 1 + (int)pcg32_below(rng, 12);
    int d = 1 + (int)pcg32_below(rng, (uint32_t)days_in(y, m));
    char year[16], month[16], day[16], name[16], ord[16], year2[16], word[48];
    snprintf(year, sizeof year, "%d", y);
    snprintf(month, sizeof month, "%02d", m);
    snprintf(day, sizeof day, "%02d", d);
    snprintf(year2, sizeof year2, "%02d", y % 100);
    ordinal(d, ord, sizeof ord);
    gen_tgt(p, year);
    gen_tgt(p, "-");
    gen_tgt(p, month);
    gen_tgt(p, "-");
    gen_tgt(p, day);
    int lower = pcg32_below(rng, 4) == 0;
    month_name(m, 0, lower, name, sizeof name);
    char short_name[16];
    month_name(m, 1, lower, short_name, sizeof short_name);
    snprintf(word, sizeof word, "%d", d);
    switch (pcg32_below(rng, 12)) {
    case 0: /* 3 June 2009 */
        gen_link(p, gen_src(p, word), DAY);
        gen_link(p, gen_src(p, name), MONTH);
        gen_link(p, gen_src(p, year), YEAR);
        break;
    case 1: /* June 3 , 2009 */
        gen_link(p, gen_src(p, name), MONTH);
        gen_link(p, gen_src(p, word), DAY);
        gen_src(p, ",");
        gen_link(p, gen_src(p, year), YEAR);
        break;
    case 2: /* the 3rd of June , 2009 */
        gen_src(p, "the");
        gen_link(p, gen_src(p, ord), DAY);
        gen_src(p, "of");
        gen_link(p, gen_src(p, name), MONTH);
        gen_src(p, ",");
        gen_link(p, gen_src(p, year), YEAR);
        break;
    case 3: /* 3 / 6 / 2009: day/month/year */
        gen_link(p, gen_src(p, word), DAY);
        gen_src(p, "/");
        snprintf(word, sizeof word, "%d", m);
        gen_link(p, gen_src(p, word), MONTH);
        gen_src(p, "/");
        gen_link(p, gen_src(p, year), YEAR);
        break;
    case 4: /* Jun 3 09 */
        gen_link(p, gen_src(p, short_name), MONTH);
        gen_link(p, gen_src(p, word), DAY);
        gen_link(p, gen_src(p, year2), YEAR);
        break;
    case 5: /* 03 . 06 . 2009 */
        gen_link(p, gen_src(p, day), DAY);
        gen_src(p, ".");
        gen_link(p, gen_src(p, month), MONTH);
        gen_src(p, ".");
        gen_link(p, gen_src(p, year), YEAR);
        break;
    case 6: /* Wednesday , June 3 , 2009 */
        gen_src(p, WEEKDAYS[weekday(y, m, d)]);
        gen_src(p, ",");
        gen_link(p, gen_src(p, name), MONTH);
        gen_link(p, gen_src(p, word), DAY);
        gen_src(p, ",");
        gen_link(p, gen_src(p, year), YEAR);
        break;
    case 7: /* June 3rd 2009 */
        gen_link(p, gen_src(p, name), MONTH);
        gen_link(p, gen_src(p, ord), DAY);
        gen_link(p, gen_src(p, year), YEAR);
        break;
    case 8: /* 2009 June 3 */
        gen_link(p, gen_src(p, year), YEAR);
        gen_link(p, gen_src(p, name), MONTH);
        gen_link(p, gen_src(p, word), DAY);
        break;
    case 9: /* 3rd Jun 09 */
        gen_link(p, gen_src(p, ord), DAY);
        gen_link(p, gen_src(p, short_name), MONTH);
        gen_link(p, gen_src(p, year2), YEAR);
        break;
    case 10: /* 2009 / 06 / 03, year first */
        gen_link(p, gen_src(p, year), YEAR);
        gen_src(p, "/");
        gen_link(p, gen_src(p, month), MONTH);
        gen_src(p, "/");
        gen_link(p, gen_src(p, day), DAY);
        break;
    default: /* on the 3rd of June in 2009 */
        gen_src(p, "on");
        gen_src(p, "the");
        gen_link(p, gen_src(p, ord), DAY);
        gen_src(p, "of");
        gen_link(p, gen_src(p, name), MONTH);
        gen_src(p, "in");
        gen_link(p, gen_src(p, year), YEAR);
        break;
    }
}
