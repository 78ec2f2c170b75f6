/* test_get_multi30k.c: scripts/get-multi30k.sh --from on a made-up checkout of the
 * dataset (the real one's file names and line counts, made-up lines, stand-ins for its
 * Moses scripts): it writes the raw splits, the tokenized references and the Moses
 * scripts where the configs and scripts/experiments/multi30k/score.sh read them; a file of
 * the wrong length stops it naming the file, exit 1; a directory that is no checkout,
 * exit 2. And score.sh scores both ways through those scripts. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"

/* A shell loop that writes DIR/data/task1/{raw/SPLIT.L.gz, tok/SPLIT.lc.norm.tok.L} for
 * every split and language of task 1, line k of each "SPLIT L k of a split" (raw) or "tok
 * SPLIT L k of a split" (tok), so that the copies can be told apart and traced. */
static const char MAKE_CHECKOUT[] =
    "set -e; d=\"$1\"; mkdir -p \"$d/data/task1/raw\" \"$d/data/task1/tok\"; "
    "for e in train:29000:'en de fr cs' val:1014:'en de fr cs' "
    "test_2016_flickr:1000:'en de fr cs' test_2017_flickr:1000:'en de fr' "
    "test_2017_mscoco:461:'en de fr'; do s=${e%%:*}; r=${e#*:}; n=${r%%:*}; "
    "for l in ${r#*:}; do seq 1 \"$n\" | sed \"s/^/$s $l /; s/$/ of a split/\" | gzip > \"$d/data/task1/raw/$s.$l.gz\"; "
    "seq 1 \"$n\" | sed \"s/^/tok $s $l /; s/$/ of a split/\" > \"$d/data/task1/tok/$s.lc.norm.tok.$l\"; done; done; "
    /* Moses's scripts stood in for: the tokenizer marks each line as the tok/ files are */
    "m=\"$d/scripts/moses-3a0631a\"; mkdir -p \"$m/tokenizer\" \"$m/share/nonbreaking_prefixes\"; "
    "echo 'while (<STDIN>) { print lc $_; }' > \"$m/tokenizer/lowercase.perl\"; "
    "echo 'while (<STDIN>) { print $_; }' > \"$m/tokenizer/normalize-punctuation.perl\"; "
    "echo 'while (<STDIN>) { print \"tok $_\"; }' > \"$m/tokenizer/tokenizer.perl\"; "
    "touch \"$m/tokenizer/basic-protected-patterns\"; "
    "for l in en de fr cs; do touch \"$m/share/nonbreaking_prefixes/nonbreaking_prefix.$l\"; done";

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
        {"train.de", "train de 1 of a split"}, {"train.cs", "train cs 1 of a split"}, {"val.en", "val en 1 of a split"},
        {"test_2016_flickr.fr", "test_2016_flickr fr 1 of a split"},
        {"test_2017_mscoco.en", "test_2017_mscoco en 1 of a split"},
        {"tok/test_2016_flickr.lc.norm.tok.de", "tok test_2016_flickr de 1 of a split"},
        {"tok/train.lc.norm.tok.en", "tok train en 1 of a split"},
        {"moses/tokenizer/lowercase.perl", "while (<STDIN>) { print lc $_; }"},
    };
    for (size_t w = 0; w < sizeof WANT / sizeof *WANT; w++) {
        snprintf(path, sizeof path, "%s/out/%s", dir, WANT[w].file);
        first_line(path, line, sizeof line);
        ck_assert_str_eq(line, WANT[w].first);
    }
    snprintf(path, sizeof path, "%s/out/test_2017_flickr.cs", dir); /* the dataset has none */
    ck_assert(access(path, F_OK) != 0);
    /* the references translated perfectly score 100 both ways: the raw lines as they
     * are, and through the (stand-in) Moses scripts against tok/ */
    snprintf(cmd, sizeof cmd, "sh scripts/experiments/multi30k/score.sh '%s/out/val.de' de val "
             "--data '%s/out' --s2s '%s' > '%s/score.txt' 2> '%s/score-err.txt'", dir, dir, S2S,
             dir, dir);
    ck_assert_msg(run(cmd) == 0, "score.sh failed: see %s", dir);
    snprintf(path, sizeof path, "%s/score.txt", dir);
    char *score = read_file(path);
    ck_assert_ptr_nonnull(strstr(score, "sacreBLEU BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = "
                                        "1.000 ratio = 1.000 hyp_len = 6084 ref_len = 6084) | "
                                        "chrF2 = 100.00 | nrefs:1|case:mixed|eff:no|tok:13a|"));
    ck_assert_ptr_nonnull(strstr(score, "\ntokenized BLEU = 100.00 100.0/100.0/100.0/100.0 "
                                        "(BP = 1.000 ratio = 1.000 hyp_len = 7098 ref_len = 7098)\n"));
    free(score);
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
