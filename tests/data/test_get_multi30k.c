/* test_get_multi30k.c: scripts/get-multi30k.sh --from on a made-up checkout of the
 * dataset (the real one's file names and line counts, made-up lines): it writes the raw
 * splits and the tokenized references where the configs read them; a file of the wrong
 * length stops it naming the file, exit 1; a directory that is no checkout, exit 2. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/cli.h"
#include "support/suites.h"

/* A shell loop that writes DIR/data/task1/{raw/SPLIT.L.gz, tok/SPLIT.lc.norm.tok.L} for
 * every split and language of task 1, line k of each "SPLIT L k" (raw) or "split l k"
 * (tok), so that the copies can be told apart and traced. */
static const char MAKE_CHECKOUT[] =
    "set -e; d=\"$1\"; mkdir -p \"$d/data/task1/raw\" \"$d/data/task1/tok\"; "
    "for e in train:29000:'en de fr cs' val:1014:'en de fr cs' "
    "test_2016_flickr:1000:'en de fr cs' test_2017_flickr:1000:'en de fr' "
    "test_2017_mscoco:461:'en de fr'; do s=${e%%:*}; r=${e#*:}; n=${r%%:*}; "
    "for l in ${r#*:}; do seq 1 \"$n\" | sed \"s/^/$s $l /\" | gzip > \"$d/data/task1/raw/$s.$l.gz\"; "
    "seq 1 \"$n\" | sed \"s/^/tok $s $l /\" > \"$d/data/task1/tok/$s.lc.norm.tok.$l\"; done; done";

static int run(const char *cmd)
{
    const int status = system(cmd);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

START_TEST(get_multi30k_copies_a_checkout_and_checks_its_lengths)
{
    char dir[512], cmd[8192], path[700], line[256];
    scratch_dir(dir, sizeof dir, "multi30k");
    /* the loop's quotes: the shell string above is single-quoted, so its own single quotes
     * are written as '\'' */
    char quoted[4096];
    size_t k = 0;
    for (const char *c = MAKE_CHECKOUT; *c && k + 5 < sizeof quoted; c++) {
        if (*c == '\'') {
            memcpy(quoted + k, "'\\''", 4);
            k += 4;
        } else {
            quoted[k++] = *c;
        }
    }
    quoted[k] = '\0';
    snprintf(cmd, sizeof cmd, "sh -c '%s' sh '%s/checkout'", quoted, dir);
    ck_assert_int_eq(run(cmd), 0);
    snprintf(cmd, sizeof cmd, "sh scripts/get-multi30k.sh --from '%s/checkout' --out '%s/out' "
             "> '%s/stdout.txt' 2> '%s/stderr.txt'", dir, dir, dir, dir);
    ck_assert_msg(run(cmd) == 0, "the script failed: see %s", dir);
    static const struct {
        const char *file, *first;
    } WANT[] = {
        {"train.de", "train de 1"}, {"train.cs", "train cs 1"}, {"val.en", "val en 1"},
        {"test_2016_flickr.fr", "test_2016_flickr fr 1"},
        {"test_2017_mscoco.en", "test_2017_mscoco en 1"},
        {"tok/test_2016_flickr.lc.norm.tok.de", "tok test_2016_flickr de 1"},
        {"tok/train.lc.norm.tok.en", "tok train en 1"},
    };
    for (size_t w = 0; w < sizeof WANT / sizeof *WANT; w++) {
        snprintf(path, sizeof path, "%s/out/%s", dir, WANT[w].file);
        first_line(path, line, sizeof line);
        ck_assert_str_eq(line, WANT[w].first);
    }
    snprintf(path, sizeof path, "%s/out/test_2017_flickr.cs", dir); /* the dataset has none */
    ck_assert(access(path, F_OK) != 0);
    /* a reference one line short: named, exit 1 */
    snprintf(cmd, sizeof cmd, "sed -i '$d' '%s/checkout/data/task1/tok/val.lc.norm.tok.fr' && "
             "sh scripts/get-multi30k.sh --from '%s/checkout' --out '%s/out2' "
             "> /dev/null 2> '%s/stderr2.txt'", dir, dir, dir, dir);
    ck_assert_int_eq(run(cmd), 1);
    snprintf(path, sizeof path, "%s/stderr2.txt", dir);
    first_line(path, line, sizeof line);
    ck_assert_str_eq(line, "get-multi30k: val.lc.norm.tok.fr has 1013 lines, the dataset's has 1014");
    /* not a checkout: exit 2, saying why */
    snprintf(cmd, sizeof cmd, "sh scripts/get-multi30k.sh --from '%s' --out '%s/out3' "
             "> /dev/null 2> '%s/stderr3.txt'", dir, dir, dir);
    ck_assert_int_eq(run(cmd), 2);
    snprintf(path, sizeof path, "%s/stderr3.txt", dir);
    first_line(path, line, sizeof line);
    ck_assert_ptr_nonnull(strstr(line, "is not a checkout of multi30k/dataset"));
}
END_TEST

Suite *get_multi30k_suite(void)
{
    Suite *s = suite_create("get_multi30k");
    TCase *tc = tcase_create("script");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, get_multi30k_copies_a_checkout_and_checks_its_lengths);
    suite_add_tcase(s, tc);
    return s;
}
