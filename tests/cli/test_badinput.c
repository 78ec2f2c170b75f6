/* test_badinput.c: the bad-input rows of the fault matrix (src/README.md, "Reliability") end to
 * end, through the s2s binary: malformed configs, missing and unreadable corpora, line
 * counts that differ, invalid UTF-8, empty corpora and 10 MB lines, in training and in
 * translation.
 * Every error exits 2 with its exact message and leaves nothing on disk; the huge line
 * runs under an address-space limit and its peak memory is measured. The loader's own
 * tables are in test_config.c, the UTF-8 validator's in test_tokenize.c. */
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h> /* chmod */
#include <unistd.h>

#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static void write_bytes(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* Names in dir (without . and ..), sorted, joined by spaces. */
static void list_dir(const char *dir, char *out, size_t cap)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    ck_assert_int_ge(n, 0);
    out[0] = '\0';
    for (int k = 0; k < n; k++) {
        if (strcmp(names[k]->d_name, ".") && strcmp(names[k]->d_name, ".."))
            snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? " " : "",
                     names[k]->d_name);
        free(names[k]);
    }
    free(names);
}

/* The line of dir/run/train.log that starts with prefix, without its newline. */
static void log_line(const char *dir, const char *prefix, char *out, size_t cap)
{
    char path[700];
    snprintf(path, sizeof path, "%s/run/train.log", dir);
    char *log = read_file(path), *at = strstr(log, prefix);
    ck_assert_msg(at != NULL, "%s has no line `%s`", path, prefix);
    snprintf(out, cap, "%.*s", (int)strcspn(at, "\n"), at);
    free(log);
}

/* train_on_data with data.train_src and data.train_tgt. */
static int train_pair(const char *dir, const char *src, const char *tgt, char *line, size_t cap)
{
    char data[1400];
    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s", src, tgt);
    return train_on_data(dir, data, line, cap);
}

/* n lines "w<k> w<k+1>" (k from first), the last one without its newline if open_end. */
static void write_lines(const char *path, int first, int n, int open_end)
{
    FILE *f = fopen(path, "wb");
    ck_assert(f != NULL);
    for (int k = 0; k < n; k++)
        fprintf(f, "w%d w%d%s", (first + k) % 20, (first + k + 1) % 20,
                k == n - 1 && open_end ? "" : "\n");
    fclose(f);
}

/* ---- configs -------------------------------------------------------------------------------- */

/* `s2s train bad.yaml` run in a directory of its own: whatever is wrong with the file, the
 * exit is 2, stderr's first line is exact, and the directory holds nothing new (neither
 * the run_dir the file names nor the default runs/). */
START_TEST(a_bad_config_file_exits_2_with_its_position_and_creates_nothing)
{
    enum { DEPTH = 10000 }; /* flow lists nested this deep */
    char *deep = malloc(2 * DEPTH + 32);
    char *p = deep + sprintf(deep, "run_dir: out\nmodel: ");
    for (int k = 0; k < DEPTH; k++)
        *p++ = '[';
    for (int k = 0; k < DEPTH; k++)
        *p++ = ']';
    *p = '\0';
    const struct {
        const char *text;
        size_t len; /* 0: strlen */
        const char *expected;
    } table[] = {
        {"run_dir: out\nalignments:\n  lines: [1, 2\n", 0,
         "bad.yaml:4:1: did not find expected ',' or ']' (while parsing a flow sequence at line 3)"},
        {"run_dir: out\nmodel: {readout_size: 8\n", 0,
         "bad.yaml:3:1: did not find expected ',' or '}' (while parsing a flow mapping at line 2)"},
        {"run_dir: out\nmodel:\n  readout_size: 8\n embedding_size: 8\n", 0,
         "bad.yaml:4:2: did not find expected key (while parsing a block mapping at line 1)"},
        {"run_dir: out\nmodel:\n\treadout_size: 8\n", 0,
         "bad.yaml:3:1: found character that cannot start any token (while scanning for the next "
         "token at line 3)"},
        {"run_dir: out\nname: \xed\xa0\x80\n", 0, "bad.yaml:2:7: invalid Unicode character (U+D800)"},
        {"run_dir: out\nname: a\0b\n", 23, "bad.yaml:2:8: control characters are not allowed (U+0000)"},
        {"", 0, "bad.yaml:1:1: the config is empty (expected a mapping of sections such as model: "
         "and training:)"},
        {"# nothing but a comment\n", 0, "bad.yaml:1:1: the config is empty (expected a mapping of "
         "sections such as model: and training:)"},
        {"- run_dir: out\n", 0, "bad.yaml:1:1: expected a mapping of sections at the top level, got a list"},
        {"run_dir: &o out\n", 0, "bad.yaml:1:10: anchors (&o) are not allowed in a config"},
        {"run_dir: out\nseed: 1\nseed: 1\n", 0, "bad.yaml:3:1: duplicate key `seed` (first set at line 2)"},
        {"run_dir: out\n---\nrun_dir: out2\n", 0,
         "bad.yaml:2:1: expected one YAML document, found a second one"},
        {"run_dir: out\nmodel:\n  encoder_sise: 8\n", 0,
         "bad.yaml:3:3: unknown key `model.encoder_sise` (did you mean `model.encoder_size`?)"},
        {"run_dir: out\nmodel:\n  encoder_size: abc\n", 0,
         "bad.yaml:3:17: model.encoder_size: expected an integer (1 to 8192), got \"abc\""},
        {"run_dir: out\ntraining:\n  shuffle: maybe\n", 0,
         "bad.yaml:3:12: training.shuffle: expected true or false, got \"maybe\""},
        {"run_dir: out\ntraining:\n  learning_rate: 0\n", 0,
         "bad.yaml:3:18: training.learning_rate: 0 is out of range (expected > 0 and <= 100)"},
        /* loads, but fails validation: still nothing on disk */
        {"run_dir: out\nmodel:\n  readout_size: 8\n", 0,
         "bad.yaml: no training data: set data.train_src and data.train_tgt, or data.train_tsv"},
        {deep, 0, "bad.yaml:2:8: section `model`: expected a mapping of keys, got a list"},
    };
    char dir[512], path[700], err_path[700], line[1024], expected[1200], listing[1024];
    scratch_dir(dir, sizeof dir, "badyaml");
    snprintf(path, sizeof path, "%s/bad.yaml", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    const char *argv[] = {s2s_absolute(), "train", "bad.yaml", NULL};
    for (size_t k = 0; k < sizeof table / sizeof *table; k++) {
        write_bytes(path, table[k].text, table[k].len ? table[k].len : strlen(table[k].text));
        ck_assert_int_eq(run_command_with(argv, NULL, err_path, &(RunOptions){.cwd = dir}, NULL), 2);
        first_line(err_path, line, sizeof line);
        snprintf(expected, sizeof expected, "s2s: error: %s", table[k].expected);
        ck_assert_str_eq(line, expected);
        list_dir(dir, listing, sizeof listing);
        ck_assert_msg(!strcmp(listing, "bad.yaml err.txt"), "case %zu left: %s", k, listing);
    }
    free(deep);
}
END_TEST

/* ---- corpus files that are not there -------------------------------------------------------- */

START_TEST(a_missing_or_unreadable_corpus_exits_2_naming_the_path)
{
    char dir[512], line[1024], expected[1400], data[3072];
    char src[600], tgt[600], link[600], missing[600];
    scratch_dir(dir, sizeof dir, "nocorpus");
    snprintf(src, sizeof src, "%s/a.src", dir);
    snprintf(tgt, sizeof tgt, "%s/a.tgt", dir);
    snprintf(link, sizeof link, "%s/dangling.src", dir);
    snprintf(missing, sizeof missing, "%s/gone.src", dir);
    write_lines(src, 0, 5, 0);
    write_lines(tgt, 1, 5, 0);
    ck_assert_int_eq(train_pair(dir, src, tgt, line, sizeof line), 0);

    ck_assert_int_eq(train_pair(dir, missing, tgt, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: cannot open corpus `%s`: No such file or directory",
             missing);
    ck_assert_str_eq(line, expected);

    ck_assert_int_eq(symlink(missing, link), 0);
    ck_assert_int_eq(train_pair(dir, src, link, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: cannot open corpus `%s`: No such file or directory",
             link);
    ck_assert_str_eq(line, expected);

    ck_assert_int_eq(train_pair(dir, dir, tgt, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: cannot read corpus `%s`: Is a directory", dir);
    ck_assert_str_eq(line, expected);

    /* an empty path is no path: the other file of the pair misses its partner */
    ck_assert_int_eq(train_pair(dir, "\"\"", tgt, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: %s/c.yaml:4:14: data.train_tgt: needs "
             "data.train_src too", dir);
    ck_assert_str_eq(line, expected);
    ck_assert_int_eq(train_pair(dir, "\"\"", "\"\"", line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: %s/c.yaml:3:14: no training data: set "
             "data.train_src and data.train_tgt, or data.train_tsv", dir);
    ck_assert_str_eq(line, expected);

    /* validation and test files are checked before anything is written, too */
    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s\n  valid_src: %s\n  valid_tgt: %s",
             src, tgt, missing, tgt);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: cannot open corpus `%s`: No such file or directory",
             missing);
    ck_assert_str_eq(line, expected);
    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s\n  test_src: %s\n  test_tgt: %s",
             src, tgt, src, link);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: cannot open corpus `%s`: No such file or directory",
             link);
    ck_assert_str_eq(line, expected);

    /* root reads any file whatever its mode (and CI runs as root) */
    if (geteuid() != 0) {
        ck_assert_int_eq(chmod(src, 0), 0);
        ck_assert_int_eq(train_pair(dir, src, tgt, line, sizeof line), 2);
        snprintf(expected, sizeof expected, "s2s: error: cannot open corpus `%s`: Permission denied", src);
        ck_assert_str_eq(line, expected);
    }
}
END_TEST

/* ---- line counts ---------------------------------------------------------------------------- */

START_TEST(different_line_counts_exit_2_naming_both_files_and_counts)
{
    static const struct {
        int src, tgt;
    } cases[] = {{100, 99}, {99, 100}, {0, 1}, {1, 0}};
    char dir[512], src[600], tgt[600], line[1024], expected[1400];
    scratch_dir(dir, sizeof dir, "counts");
    snprintf(src, sizeof src, "%s/c.src", dir);
    snprintf(tgt, sizeof tgt, "%s/c.tgt", dir);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        write_lines(src, 0, cases[k].src, 0);
        write_lines(tgt, 3, cases[k].tgt, 0);
        ck_assert_int_eq(train_pair(dir, src, tgt, line, sizeof line), 2);
        snprintf(expected, sizeof expected, "s2s: error: source `%s` has %d line%s, target `%s` "
                 "has %d", src, cases[k].src, cases[k].src == 1 ? "" : "s", tgt, cases[k].tgt);
        ck_assert_str_eq(line, expected);
    }
    /* 99 lines and a 100th without its newline: also 100 against 99 */
    write_lines(src, 0, 100, 1);
    write_lines(tgt, 3, 99, 0);
    ck_assert_int_eq(train_pair(dir, src, tgt, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: source `%s` has 100 lines, target `%s` has 99",
             src, tgt);
    ck_assert_str_eq(line, expected);
}
END_TEST

START_TEST(a_missing_final_newline_on_one_side_is_not_a_mismatch)
{
    char dir[512], src[600], tgt[600], line[1024];
    scratch_dir(dir, sizeof dir, "finalnl");
    snprintf(src, sizeof src, "%s/c.src", dir);
    snprintf(tgt, sizeof tgt, "%s/c.tgt", dir);
    for (int side = 0; side < 2; side++) {
        write_lines(src, 0, 100, side == 0);
        write_lines(tgt, 3, 100, side == 1);
        ck_assert_int_eq(train_pair(dir, src, tgt, line, sizeof line), 0);
        log_line(dir, "training data: ", line, sizeof line);
        ck_assert_str_eq(line, "training data: read 100 pairs, kept 100; skipped: 0 empty, 0 too "
                               "long, 0 over max_line_bytes");
    }
}
END_TEST

/* Python's str.splitlines() (and tools built on it) also breaks lines at \v, \f, \x1c-\x1e,
 * U+0085, U+2028 and U+2029, and a lone \r; s2s breaks only at \n, on both sides alike. */
START_TEST(vertical_tab_form_feed_and_unicode_line_separators_do_not_split_lines)
{
    char dir[512], src[600], tgt[600], line[1024];
    scratch_dir(dir, sizeof dir, "separators");
    snprintf(src, sizeof src, "%s/c.src", dir);
    snprintf(tgt, sizeof tgt, "%s/c.tgt", dir);
    write_file(src, "a\x0b" "b\n"
                    "c\x0c" "d\n"
                    "e\xe2\x80\xa8" "f\n"
                    "g\xc2\x85" "h\n"
                    "i\xe2\x80\xa9j\x1ck\n"
                    "l\rm\n");
    write_file(tgt, "1\n2\n3\n4\n5\n6\n");
    ck_assert_int_eq(train_pair(dir, src, tgt, line, sizeof line), 0);
    log_line(dir, "training data: ", line, sizeof line);
    ck_assert_str_eq(line, "training data: read 6 pairs, kept 6; skipped: 0 empty, 0 too long, "
                           "0 over max_line_bytes");
    /* the separators split words, not lines: a..m are 13 source words, 1..6 six targets,
     * each with the 4 special tokens */
    log_line(dir, "vocabularies: ", line, sizeof line);
    ck_assert_ptr_nonnull(strstr(line, "vocabularies: source 17, target 10;"));
}
END_TEST

/* ---- invalid UTF-8 -------------------------------------------------------------------------- */

START_TEST(invalid_utf8_in_a_corpus_exits_2_with_file_line_byte_and_hex)
{
    static const struct {
        const char *bytes;
        size_t n;
        const char *shown;
    } bad[] = {
        {"\xc0\x80", 2, "invalid UTF-8 (0xc0 0x80)"},                 /* overlong NUL */
        {"\xed\xa0\x80", 3, "invalid UTF-8 (0xed 0xa0 0x80)"},        /* surrogate U+D800 */
        {"\xf4\x90\x80\x80", 4, "invalid UTF-8 (0xf4 0x90 0x80 0x80)"}, /* above U+10FFFF */
        {"\x80", 1, "invalid UTF-8 (0x80)"},                          /* lone continuation */
        {"\0", 1, "NUL byte (expected UTF-8 text)"},
    };
    char dir[512], src[600], tgt[600], good[600], line[1024], expected[1400], text[64], data[3072];
    scratch_dir(dir, sizeof dir, "utf8");
    snprintf(src, sizeof src, "%s/c.src", dir);
    snprintf(tgt, sizeof tgt, "%s/c.tgt", dir);
    snprintf(good, sizeof good, "%s/good.txt", dir);
    write_file(good, "x y\nz\nw\n");
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        /* line 2, after 4 good bytes (one a 2-byte é): the bad sequence is at byte 5 */
        size_t n = (size_t)sprintf(text, "a b\n\xc3\xa9 c ");
        memcpy(text + n, bad[k].bytes, bad[k].n);
        n += bad[k].n;
        n += (size_t)sprintf(text + n, " d\ne\n");
        for (int side = 0; side < 2; side++) {
            write_bytes(side ? tgt : src, text, n);
            ck_assert_int_eq(train_pair(dir, side ? good : src, side ? tgt : good, line, sizeof line), 2);
            snprintf(expected, sizeof expected, "s2s: error: %s:2:6: %s", side ? tgt : src, bad[k].shown);
            ck_assert_str_eq(line, expected);
        }
    }
    /* a sequence cut short by the end of the file (no final newline) */
    write_bytes(src, "a\nb\nc \xe2\x82", 8);
    ck_assert_int_eq(train_pair(dir, src, good, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: %s:3:3: invalid UTF-8 (0xe2 0x82)", src);
    ck_assert_str_eq(line, expected);
    /* in a validation file and in a TSV file alike */
    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s\n  valid_src: %s\n  valid_tgt: %s",
             good, good, good, src);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    ck_assert_str_eq(line, expected);
    write_bytes(src, "a\tb\nc\td \xed\xa0\x80\n", 13);
    snprintf(data, sizeof data, "  train_tsv: %s", src);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: %s:2:5: invalid UTF-8 (0xed 0xa0 0x80)", src);
    ck_assert_str_eq(line, expected);
    /* a NUL byte after the line went over data.max_line_bytes, in the part read past and
     * not kept: still refused, at its byte (a text line that turns into /dev/zero) */
    char nul_line[260];
    size_t n = (size_t)sprintf(nul_line, "a b\n");
    memset(nul_line + n, 'a', 200);
    n += 200;
    nul_line[n++] = '\0';
    n += (size_t)sprintf(nul_line + n, " x\nc d\n");
    write_bytes(src, nul_line, n);
    write_file(good, "x y\nz\nw\n");
    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s\n  max_line_bytes: 64", src, good);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: %s:2:201: NUL byte (expected UTF-8 text)", src);
    ck_assert_str_eq(line, expected);
}
END_TEST

/* ---- empty corpora -------------------------------------------------------------------------- */

START_TEST(an_empty_corpus_exits_2_with_the_counts_and_creates_no_run_directory)
{
    char dir[512], src[600], tgt[600], line[1024], expected[1400], data[3072];
    scratch_dir(dir, sizeof dir, "empty");
    snprintf(src, sizeof src, "%s/c.src", dir);
    snprintf(tgt, sizeof tgt, "%s/c.tgt", dir);
    static const struct {
        const char *src, *tgt, *extra, *counts;
    } cases[] = {
        {"", "", NULL, "read 0 pairs, kept 0; skipped: 0 empty, 0 too long, 0 over max_line_bytes"},
        {"\n\n\n", "\n\n\n", NULL, "read 3 pairs, kept 0; skipped: 3 empty, 0 too long, 0 over max_line_bytes"},
        {"\r\n \n\t\n", "x\ny\nz\n", NULL,
         "read 3 pairs, kept 0; skipped: 3 empty, 0 too long, 0 over max_line_bytes"},
        /* everything filtered, each filter once or more */
        {"a\n\nb b b b\nccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\nd d d\n",
         "\ny\nz\nq\nr r r r r\n", "  max_length: 3\n  max_line_bytes: 64\n",
         "read 5 pairs, kept 0; skipped: 2 empty, 2 too long, 1 over max_line_bytes"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        write_file(src, cases[k].src);
        write_file(tgt, cases[k].tgt);
        snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s\n%s", src, tgt,
                 cases[k].extra ? cases[k].extra : "");
        ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
        snprintf(expected, sizeof expected, "s2s: error: no usable sentence pairs in the training "
                 "corpus `%s` (%s)", src, cases[k].counts);
        ck_assert_str_eq(line, expected);
    }
    /* an empty validation set is refused the same way */
    char good[600];
    snprintf(good, sizeof good, "%s/good.txt", dir);
    write_file(good, "a b\nc\n");
    write_file(src, "\n\n");
    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s\n  valid_src: %s\n  valid_tgt: %s",
             good, good, src, good);
    ck_assert_int_eq(train_on_data(dir, data, line, sizeof line), 2);
    snprintf(expected, sizeof expected, "s2s: error: no usable sentence pairs in the validation corpus "
             "`%s` (read 2 pairs, kept 0; skipped: 2 empty, 0 too long, 0 over max_line_bytes)", src);
    ck_assert_str_eq(line, expected);
}
END_TEST

/* ---- 10 MB lines ---------------------------------------------------------------------------- */

/* Removes a scratch directory, so that the 10 MB files of a passing test do not pile up
 * in /tmp (a failing test leaves them to look at). */
static void remove_scratch(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

enum { HUGE_LINE_BYTES = 10 * 1000 * 1000 };

/* The memory a run may use beyond that of the same run without the huge line: the reader
 * keeps at most data.max_line_bytes (1 MiB) of a line, never the 10 MB. */
#define EXTRA_KIB_ALLOWED (6 * 1024L)

/* Appends a line of HUGE_LINE_BYTES bytes of words ("w1 w1 ..."), with a newline or not. */
static void append_huge_line(const char *path, int newline)
{
    FILE *f = fopen(path, "ab");
    ck_assert(f != NULL);
    for (int k = 0; k < HUGE_LINE_BYTES / 3; k++)
        fputs("w1 ", f);
    fputs(newline ? "w1\n" : "w1", f);
    fclose(f);
}

/* Runs argv with stdin from in_path (or /dev/null), stderr into err_path, under an
 * address-space limit of 512 MiB (unless under a memory tool); returns the exit code and
 * the peak memory in KiB. */
static int run_bounded(const char *const *argv, const char *in_path, const char *out_path,
                       const char *err_path, long *max_rss_kib)
{
    static const char *const env[] = {"OPENBLAS_NUM_THREADS=1", NULL};
    RunOptions opt = {.env = env, .in_path = in_path, .timeout = 120,
                      .max_address_space = under_memory_tool() ? 0 : (size_t)512 << 20};
    return run_command_with(argv, out_path, err_path, &opt, max_rss_kib);
}

START_TEST(a_10_mb_line_in_a_corpus_is_skipped_and_counted_in_bounded_memory)
{
    char dir[512], src[600], tgt[600], config[600], err_path[600], data[1400], line[1024];
    scratch_dir(dir, sizeof dir, "hugeline");
    snprintf(src, sizeof src, "%s/c.src", dir);
    snprintf(tgt, sizeof tgt, "%s/c.tgt", dir);
    snprintf(config, sizeof config, "%s/c.yaml", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    snprintf(data, sizeof data, "  train_src: %s\n  train_tgt: %s", src, tgt);
    write_lines(tgt, 3, 51, 0);
    /* 51 source lines, the last without a newline: short (the control run), or 10 MB */
    long rss_kib[2];
    for (int huge = 0; huge < 2; huge++) {
        write_lines(src, 0, huge ? 50 : 51, !huge);
        if (huge)
            append_huge_line(src, 0);
        write_data_config(dir, data);
        const char *argv[] = {S2S, "train", config, NULL};
        ck_assert_int_eq(run_bounded(argv, NULL, NULL, err_path, &rss_kib[huge]), 0);
        log_line(dir, "training data: ", line, sizeof line);
        ck_assert_str_eq(line, huge ? "training data: read 51 pairs, kept 50; skipped: 0 empty, 0 "
                                      "too long, 1 over max_line_bytes"
                                    : "training data: read 51 pairs, kept 51; skipped: 0 empty, 0 "
                                      "too long, 0 over max_line_bytes");
    }
    printf("peak memory of s2s train: %ld KiB, %ld KiB with a 10 MB line\n", rss_kib[0], rss_kib[1]);
    ck_assert_int_le(rss_kib[1], rss_kib[0] + EXTRA_KIB_ALLOWED);
    if (!under_memory_tool())
        ck_assert_int_lt(rss_kib[1], 100 * 1024L);
    remove_scratch(dir);
}
END_TEST

/* ---- translation ---------------------------------------------------------------------------- */

/* Trains the tiny reversal model (300 steps, well under a second) in a fresh directory;
 * its checkpoint's path goes into model. */
static void tiny_model(char *dir, size_t cap, const char *name, char *model, size_t model_cap)
{
    scratch_dir(dir, cap, name);
    write_tiny_setup(dir);
    const char *sets[] = {"training.max_steps=300", "training.valid_every=300", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(model, model_cap, "%s/run/checkpoints/last.ckpt", dir);
}

/* Translates dir/name.in into dir/name.out (stderr: dir/name.err) under run_bounded's
 * limit; returns the peak memory in KiB. Fails the test unless s2s exits 0. */
static long translate_file(const char *dir, const char *model, const char *name)
{
    char in[600], out[600], err[600];
    snprintf(in, sizeof in, "%s/%s.in", dir, name);
    snprintf(out, sizeof out, "%s/%s.out", dir, name);
    snprintf(err, sizeof err, "%s/%s.err", dir, name);
    const char *argv[] = {S2S, "translate", "--model", model, NULL};
    long rss_kib;
    ck_assert_int_eq(run_bounded(argv, in, out, err, &rss_kib), 0);
    return rss_kib;
}

/* The contents of dir/name.ext. */
static char *result(const char *dir, const char *name, const char *ext)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    return read_file(path);
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

/* A bad line must come out exactly as an empty line does: an empty output line, and the
 * lines around it translated as if it were not there. */
START_TEST(translate_answers_each_invalid_utf8_line_with_an_empty_line_in_its_place)
{
    char dir[512], model[700], path[700];
    tiny_model(dir, sizeof dir, "tr-utf8", model, sizeof model);
    static const char bad[] = "w1 w2 w3\n"
                              "w4 \xc0\x80\n"
                              "w4 w5\n"
                              "\xed\xa0\x80 w1\n"
                              "w6 \xf4\x90\x80\x80\n"
                              "\x80\n"
                              "w7\0w8\n"
                              "w9 w10 w11\n"
                              "w2 \xe2\x82"; /* cut short by the end of the input */
    snprintf(path, sizeof path, "%s/bad.in", dir);
    write_bytes(path, bad, sizeof bad - 1);
    snprintf(path, sizeof path, "%s/blank.in", dir);
    write_file(path, "w1 w2 w3\n\nw4 w5\n\n\n\n\nw9 w10 w11\n\n");
    translate_file(dir, model, "bad");
    translate_file(dir, model, "blank");
    char *out = result(dir, "bad", "out"), *expected = result(dir, "blank", "out");
    ck_assert_int_eq(count_lines(out), 9);
    ck_assert_str_eq(out, expected);
    ck_assert_msg(out[0] != '\n', "the model translates w1 w2 w3 to nothing: the test proves little");
    char *err = result(dir, "bad", "err");
    ck_assert_str_eq(err, "s2s: warning: stdin:2:4: invalid UTF-8; wrote an empty line\n"
                          "s2s: warning: stdin:4:1: invalid UTF-8; wrote an empty line\n"
                          "s2s: warning: stdin:5:4: invalid UTF-8; wrote an empty line\n"
                          "s2s: warning: stdin:6:1: invalid UTF-8; wrote an empty line\n"
                          "s2s: warning: stdin:7:3: NUL byte; wrote an empty line\n"
                          "s2s: warning: stdin:9:4: invalid UTF-8; wrote an empty line\n");
    free(out);
    free(expected);
    free(err);
}
END_TEST

START_TEST(translate_skips_a_10_mb_line_with_a_warning_in_bounded_memory)
{
    char dir[512], model[700], path[700];
    tiny_model(dir, sizeof dir, "tr-huge", model, sizeof model);
    snprintf(path, sizeof path, "%s/huge.in", dir);
    write_file(path, "w1 w2 w3\n");
    append_huge_line(path, 1);
    FILE *f = fopen(path, "ab");
    fputs("w4 w5\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/blank.in", dir);
    write_file(path, "w1 w2 w3\n\nw4 w5\n");
    long rss_huge = translate_file(dir, model, "huge");
    long rss_blank = translate_file(dir, model, "blank");
    char *out = result(dir, "huge", "out"), *expected = result(dir, "blank", "out");
    ck_assert_int_eq(count_lines(out), 3);
    ck_assert_str_eq(out, expected);
    char *err = result(dir, "huge", "err");
    ck_assert_str_eq(err, "s2s: warning: stdin:2: line longer than data.max_line_bytes (1048576); "
                          "wrote an empty line\n");
    printf("peak memory of s2s translate: %ld KiB, %ld KiB with a 10 MB line\n", rss_blank, rss_huge);
    ck_assert_int_le(rss_huge, rss_blank + EXTRA_KIB_ALLOWED);
    free(out);
    free(expected);
    free(err);
    remove_scratch(dir);
}
END_TEST

/* A source over translate.max_source_length (250 tokens) is translated as its first 250
 * tokens would be, with a warning, and the lines after it keep their place. */
START_TEST(translate_crops_a_source_over_max_source_length_and_keeps_alignment)
{
    char dir[512], model[700], long_path[700], cropped_path[700];
    tiny_model(dir, sizeof dir, "tr-crop", model, sizeof model);
    snprintf(long_path, sizeof long_path, "%s/long.in", dir);
    snprintf(cropped_path, sizeof cropped_path, "%s/cropped.in", dir);
    FILE *a = fopen(long_path, "wb"), *b = fopen(cropped_path, "wb");
    ck_assert(a && b);
    fputs("w1 w2 w3\n", a);
    fputs("w1 w2 w3\n", b);
    for (int k = 0; k < 300; k++) {
        fprintf(a, "%sw%d", k ? " " : "", (k * 7) % 20);
        if (k < 250)
            fprintf(b, "%sw%d", k ? " " : "", (k * 7) % 20);
    }
    fputs("\nw4 w5\n", a);
    fputs("\nw4 w5\n", b);
    fclose(a);
    fclose(b);
    translate_file(dir, model, "long");
    translate_file(dir, model, "cropped");
    char *out = result(dir, "long", "out"), *expected = result(dir, "cropped", "out");
    ck_assert_int_eq(count_lines(out), 3);
    ck_assert_str_eq(out, expected);
    char *err = result(dir, "long", "err"), *no_err = result(dir, "cropped", "err");
    ck_assert_str_eq(err, "s2s: warning: stdin:2: more than 250 tokens, translated the first 250 "
                          "(translate.max_source_length)\n");
    ck_assert_str_eq(no_err, "");
    free(out);
    free(expected);
    free(err);
    free(no_err);
}
END_TEST

/* A directory as stdin is bad input (exit 2, as the docs say), named before the model is
 * even read, not a failed read (exit 1). */
START_TEST(translate_refuses_a_directory_as_stdin)
{
    char dir[512], model[700], err[700], line[1000];
    tiny_model(dir, sizeof dir, "tr-dir", model, sizeof model);
    snprintf(err, sizeof err, "%s/dir.err", dir);
    const char *argv[] = {S2S, "translate", "--model", model, NULL};
    ck_assert_int_eq(run_command_with(argv, NULL, err, &(RunOptions){.in_path = dir}, NULL), 2);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "s2s: error: cannot read input `stdin`: Is a directory");
}
END_TEST

/* ---- a full stdout -------------------------------------------------------------------------- */

/* Whatever the command, output that cannot be written (stdout on /dev/full) exits 3
 * with one message, the same everywhere (issue 25: eval and config exited 3 saying
 * nothing, --help exited 0, tokenize had a message of its own). */
START_TEST(every_command_writing_to_a_full_stdout_exits_3_with_one_message)
{
    char dir[512], model[700], src[700], jsonl[700], err[700], line[512];
    scratch_dir(dir, sizeof dir, "devfull");
    write_tiny_setup(dir);
    const char *sets[] = {"training.max_steps=4", "alignments.every=2", NULL};
    ck_assert_int_eq(train(S2S, dir, sets, NULL, NULL), 0);
    snprintf(model, sizeof model, "%s/run/checkpoints/last.ckpt", dir);
    snprintf(src, sizeof src, "%s/valid.src", dir);
    snprintf(jsonl, sizeof jsonl, "%s/run/alignments.jsonl", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    const char *const commands[][12] = {
        {S2S, "--help"},
        {S2S, "--version"},
        {S2S, "train", "--help"},
        {S2S, "config"},
        {S2S, "config", "--doc"},
        {S2S, "eval", "--hyp", src, "--ref", src},
        {S2S, "tokenize"},
        {S2S, "translate", "--model", model},
        {S2S, "align", "--model", model, "--src", src, "--tgt", src},
        {S2S, "heatmap", jsonl, "--format", "txt"},
        {S2S, "bench", "--steps", "1", "--warmup", "0"},
    };
    for (size_t c = 0; c < sizeof commands / sizeof *commands; c++) {
        char *argv_text = NULL;
        size_t len = 0;
        FILE *a = open_memstream(&argv_text, &len);
        for (int k = 1; commands[c][k]; k++)
            fprintf(a, "%s ", commands[c][k]);
        fclose(a);
        const int rc = run_command_with(commands[c], "/dev/full", err,
                                        &(RunOptions){.in_path = src}, NULL);
        ck_assert_msg(rc == 3, "s2s %s: exit %d", argv_text, rc);
        first_line(err, line, sizeof line);
        ck_assert_msg(!strcmp(line, "s2s: error: cannot write `stdout`: No space left on device"),
                      "s2s %s: %s", argv_text, line);
        free(argv_text);
    }
}
END_TEST

Suite *badinput_suite(void)
{
    Suite *s = suite_create("badinput");
    TCase *tc = tcase_create("badinput");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_bad_config_file_exits_2_with_its_position_and_creates_nothing);
    tcase_add_test(tc, a_missing_or_unreadable_corpus_exits_2_naming_the_path);
    tcase_add_test(tc, different_line_counts_exit_2_naming_both_files_and_counts);
    tcase_add_test(tc, a_missing_final_newline_on_one_side_is_not_a_mismatch);
    tcase_add_test(tc, vertical_tab_form_feed_and_unicode_line_separators_do_not_split_lines);
    tcase_add_test(tc, invalid_utf8_in_a_corpus_exits_2_with_file_line_byte_and_hex);
    tcase_add_test(tc, an_empty_corpus_exits_2_with_the_counts_and_creates_no_run_directory);
    tcase_add_test(tc, a_10_mb_line_in_a_corpus_is_skipped_and_counted_in_bounded_memory);
    tcase_add_test(tc, translate_answers_each_invalid_utf8_line_with_an_empty_line_in_its_place);
    tcase_add_test(tc, translate_skips_a_10_mb_line_with_a_warning_in_bounded_memory);
    tcase_add_test(tc, translate_crops_a_source_over_max_source_length_and_keeps_alignment);
    tcase_add_test(tc, translate_refuses_a_directory_as_stdin);
    tcase_add_test(tc, every_command_writing_to_a_full_stdout_exits_3_with_one_message);
    suite_add_tcase(s, tc);
    return s;
}
