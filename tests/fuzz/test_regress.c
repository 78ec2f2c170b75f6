/* test_regress.c: every input that once made a fuzzer crash (tests/regress/<target>/,
 * minimized, each named after its bug) and every fuzzing seed (tests/fuzz/seeds/
 * <target>/, and configs/ for the config target) replayed through the fuzz targets of
 * fuzz_targets.h, so a fixed bug stays fixed without running the fuzzers (`make fuzz`).
 * Not crashing is not enough: what the code made of each input (accepted, with what it
 * kept, or refused, with its message) must be the verdict tests/regress/verdicts.txt
 * holds for it. The fuzzers' kept corpus (tests/fuzz/corpus/<target>/) is replayed
 * too, for running cleanly alone (replay_target says why). After a deliberate change of messages, rewrite that file with
 * `S2S_REGRESS_WRITE=tests/regress/verdicts.txt CK_RUN_SUITE=regress build/check_s2s`
 * (from an empty file) and read the difference before committing it.
 * Paths are relative to the repository root, where `make test` runs. */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/fuzz_targets.h"
#include "support/suites.h"

typedef int (*FuzzTarget)(const uint8_t *data, size_t size);

/* The input being replayed, named on stderr if it crashes the test process (Check
 * itself would only say which signal). */
static char replaying[1024];

static void name_the_crash(int sig)
{
    static const char what[] = "regress: crashed while replaying ";
    ssize_t ignored = write(STDERR_FILENO, what, sizeof what - 1);
    ignored = write(STDERR_FILENO, replaying, strlen(replaying));
    ignored = write(STDERR_FILENO, "\n", 1);
    (void)ignored;
    signal(sig, SIG_DFL);
    raise(sig);
}

static unsigned char *read_bytes(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    size_t cap = 4096;
    unsigned char *data = malloc(cap);
    *size = 0;
    for (size_t got; (got = fread(data + *size, 1, cap - *size, f)) > 0;) {
        *size += got;
        if (*size == cap)
            data = realloc(data, cap *= 2);
        ck_assert(data != NULL);
    }
    ck_assert_msg(!ferror(f), "cannot read %s", path);
    fclose(f);
    /* an exact-size copy, so that AddressSanitizer sees any read past the input */
    unsigned char *exact = malloc(*size ? *size : 1);
    memcpy(exact, data, *size);
    free(data);
    return exact;
}

#define VERDICTS "tests/regress/verdicts.txt"

/* The verdict verdicts.txt holds for path (lines "PATH<TAB>VERDICT"), or NULL. */
static char *expected_verdict(const char *path)
{
    FILE *f = fopen(VERDICTS, "r");
    ck_assert_msg(f != NULL, "cannot open %s", VERDICTS);
    static char line[8192];
    char *found = NULL;
    size_t n = strlen(path);
    while (!found && fgets(line, sizeof line, f))
        if (!strncmp(line, path, n) && line[n] == '\t') {
            line[strcspn(line, "\n")] = '\0';
            found = line + n + 1;
        }
    fclose(f);
    return found;
}

/* Holds the target's verdict on path to verdicts.txt's, or with S2S_REGRESS_WRITE
 * appends it to that file instead. */
static void check_verdict(const char *path)
{
    const char *out = getenv("S2S_REGRESS_WRITE");
    if (out) {
        FILE *f = fopen(out, "a");
        ck_assert(f && fprintf(f, "%s\t%s\n", path, fuzz_verdict()) > 0 && fclose(f) == 0);
        return;
    }
    const char *expected = expected_verdict(path);
    ck_assert_msg(expected != NULL, "%s has no verdict in %s", path, VERDICTS);
    ck_assert_msg(!strcmp(fuzz_verdict(), expected), "%s:\n  now:      %s\n  expected: %s", path,
                  fuzz_verdict(), expected);
}

/* Replays every regular file of dir through target and, if verdicts, checks its
 * verdict; returns how many. The directory must exist: a missing one would make the
 * replay pass without testing anything. */
static int replay_dir(const char *dir, FuzzTarget target, bool verdicts)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s (run the tests from the repository root)", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        size_t size;
        unsigned char *data = read_bytes(path, &size);
        snprintf(replaying, sizeof replaying, "%s", path);
        target(data, size);
        if (verdicts)
            check_verdict(path);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

/* The crashes and seeds of one target (and extra, another directory of seeds, or
 * NULL), each against its verdict, then the fuzzer's kept corpus (tests/fuzz/corpus/,
 * hundreds of inputs that libFuzzer chose for the code they reach, and that `make
 * fuzz-merge` grows): these must only run cleanly -- no crash, and under `make asan` no
 * memory error or leak. Their verdicts would change with every merge and say little that
 * the seeds' do not. Each directory must hold at least one input. */
static void replay_target(const char *name, FuzzTarget target, const char *extra)
{
    static const int signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    void (*old[5])(int);
    for (int k = 0; k < 5; k++)
        old[k] = signal(signals[k], name_the_crash);
    char dir[256];
    snprintf(dir, sizeof dir, "tests/regress/%s", name);
    ck_assert_msg(replay_dir(dir, target, true) > 0, "no input in %s", dir);
    snprintf(dir, sizeof dir, "tests/fuzz/seeds/%s", name);
    ck_assert_msg(replay_dir(dir, target, true) > 0, "no input in %s", dir);
    if (extra)
        ck_assert_msg(replay_dir(extra, target, true) > 0, "no input in %s", extra);
    snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s", name);
    ck_assert_msg(replay_dir(dir, target, false) > 0, "no input in %s", dir);
    for (int k = 0; k < 5; k++)
        signal(signals[k], old[k]);
}

START_TEST(config_crashes_and_seeds_replay_cleanly)
{
    replay_target("config", fuzz_config_one, "configs");
}
END_TEST

START_TEST(corpus_crashes_and_seeds_replay_cleanly)
{
    replay_target("corpus", fuzz_corpus_one, NULL);
}
END_TEST

START_TEST(ckpt_crashes_and_seeds_replay_cleanly)
{
    replay_target("ckpt", fuzz_ckpt_one, NULL);
}
END_TEST

START_TEST(image_crashes_and_seeds_replay_cleanly)
{
    replay_target("image", fuzz_image_one, NULL);
}
END_TEST

START_TEST(ground_crashes_and_seeds_replay_cleanly)
{
    replay_target("ground", fuzz_ground_one, NULL);
}
END_TEST

START_TEST(align_crashes_and_seeds_replay_cleanly)
{
    replay_target("align", fuzz_align_one, NULL);
}
END_TEST

START_TEST(spm_crashes_and_seeds_replay_cleanly)
{
    replay_target("spm", fuzz_spm_one, NULL);
}
END_TEST

Suite *regress_suite(void)
{
    Suite *s = suite_create("regress");
    TCase *tc = tcase_create("replay");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, config_crashes_and_seeds_replay_cleanly);
    tcase_add_test(tc, corpus_crashes_and_seeds_replay_cleanly);
    tcase_add_test(tc, ckpt_crashes_and_seeds_replay_cleanly);
    tcase_add_test(tc, align_crashes_and_seeds_replay_cleanly);
    tcase_add_test(tc, image_crashes_and_seeds_replay_cleanly);
    tcase_add_test(tc, ground_crashes_and_seeds_replay_cleanly);
    tcase_add_test(tc, spm_crashes_and_seeds_replay_cleanly);
    suite_add_tcase(s, tc);
    return s;
}
