/* test_checkpoint.c: the checkpoint container and contents: CRC-32's published check
 * value, a save/load round trip, and refusal (never a crash) of damaged files. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "ckptfile.h"
#include "cli.h"
#include "suites.h"

START_TEST(crc32_matches_the_published_check_value)
{
    /* The CRC-32/ISO-HDLC check value of "123456789" (e.g. the CRC catalogue of
     * Greg Cook, reveng.sourceforge.io): 0xCBF43926. */
    ck_assert_uint_eq(crc32_update(0, "123456789", 9), 0xCBF43926u);
    ck_assert_uint_eq(crc32_update(crc32_update(0, "1234", 4), "56789", 5), 0xCBF43926u);
}
END_TEST

/* A small model-only checkpoint in dir/x.ckpt; returns its bytes. */
static char *make_checkpoint(const char *dir, size_t *size)
{
    Config cfg;
    config_defaults(&cfg);
    snprintf(cfg.data.train_src, sizeof cfg.data.train_src, "a");
    snprintf(cfg.data.train_tgt, sizeof cfg.data.train_tgt, "b");
    cfg.training.scheduling = SCHEDULING_NONE;
    Error err;
    ck_assert_int_eq(config_validate(&cfg, &err), 0);
    char *yaml = config_to_yaml(&cfg);
    Vocab counts, src, tgt;
    vocab_init(&counts);
    vocab_count(&counts, "hello");
    vocab_build(&src, &counts, 0, 1);
    vocab_build(&tgt, &counts, 0, 1);
    Dims d = {src.size, tgt.size, 3, 4, 5, 6, 7};
    Params p;
    params_alloc(&p, &d);
    for (size_t k = 0; k < p.n; k++)
        p.mem[k] = (float)k / 7;
    Optimizer opt;
    optim_init(&opt, OPTIM_ADAM, p.n, 0.001f);
    opt.m[3] = 1.5f;
    Progress prog = {.step = 42, .lr = 0.001, .best_score = 12.5, .rng_state = 7, .rng_inc = 9};
    char path[600];
    snprintf(path, sizeof path, "%s/x.ckpt", dir);
    ck_assert_msg(checkpoint_save(path, yaml, &d, &src, &tgt, &p, &opt, &prog, &err) == 0, "%s", err.msg);
    Checkpoint ck;
    ck_assert_msg(checkpoint_load(&ck, path, 1, &err) == 0, "%s", err.msg);
    ck_assert(memcmp(ck.params.mem, p.mem, sizeof(float) * p.n) == 0);
    ck_assert_int_eq(ck.progress.step, 42);
    ck_assert_double_eq(ck.progress.best_score, 12.5);
    ck_assert_float_eq(ck.optim.m[3], 1.5f);
    ck_assert_str_eq(vocab_word(&ck.src_vocab, 4), "hello");
    ck_assert_str_eq(ck.config.data.train_src, "a");
    checkpoint_free(&ck);
    optim_free(&opt);
    params_free(&p);
    vocab_free(&counts);
    vocab_free(&src);
    vocab_free(&tgt);
    free(yaml);
    char *bytes = read_file(path);
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fclose(f);
    return bytes;
}

static const char *load_error(const char *bytes, size_t size)
{
    static Error err;
    Checkpoint ck;
    err.msg[0] = '\0';
    int rc = checkpoint_load_bytes(&ck, bytes, size, "x.ckpt", 1, &err);
    checkpoint_free(&ck);
    return rc == 0 ? "" : err.msg;
}

START_TEST(checkpoint_round_trips_and_refuses_damage)
{
    char dir[512];
    scratch_dir(dir, sizeof dir, "ckpt");
    size_t size;
    char *good = make_checkpoint(dir, &size);
    ck_assert_str_eq(load_error(good, size), "");
    char *bad = malloc(size);

    memcpy(bad, good, size);
    bad[0] = 'X';
    ck_assert_str_eq(load_error(bad, size), "`x.ckpt` is not an s2s checkpoint (bad magic)");
    memcpy(bad, good, size);
    bad[8] = 2;
    ck_assert_str_eq(load_error(bad, size), "checkpoint `x.ckpt` has format version 2; this s2s reads version 1");
    char expected[256];
    snprintf(expected, sizeof expected, "checkpoint `x.ckpt` is truncated or padded: %zu bytes, its header says %zu",
             size - 1, size);
    ck_assert_str_eq(load_error(good, size - 1), expected);
    ck_assert_str_eq(load_error(good, 10), "checkpoint `x.ckpt` is truncated: 10 bytes, shorter than its header");
    ck_assert_str_eq(load_error(good, 0), "`x.ckpt` is not an s2s checkpoint (bad magic)");
    memcpy(bad, good, size);
    bad[size - 100] ^= 1; /* inside the last section */
    ck_assert_str_eq(load_error(bad, size), "checkpoint `x.ckpt`: CRC mismatch in section PROG (the file is damaged)");
    /* every truncation and every flipped byte is refused with a message */
    for (size_t cut = 0; cut < size; cut += 1 + cut / 16)
        ck_assert_str_ne(load_error(good, cut), "");
    for (size_t at = 0; at < size; at += 1 + at / 64) {
        memcpy(bad, good, size);
        bad[at] ^= 0x5a;
        ck_assert_msg(strcmp(load_error(bad, size), "") != 0, "flipped byte %zu accepted", at);
    }
    free(bad);
    free(good);
}
END_TEST

Suite *checkpoint_suite(void)
{
    Suite *s = suite_create("checkpoint");
    TCase *tc = tcase_create("format");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, crc32_matches_the_published_check_value);
    tcase_add_test(tc, checkpoint_round_trips_and_refuses_damage);
    suite_add_tcase(s, tc);
    return s;
}
