/* test_install.c: s2s as a Unix tool: `make install` into a temporary DESTDIR and the
 * installed program at work, `make uninstall`; the manual page in step with every
 * command's --help, every config key and every exit code; bash completion; --version;
 * and every command's --help and usage errors in one form. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/cli.h"
#include "support/suites.h"
#include "support/tinyrun.h"
#include "run/config.h"

static const char *const COMMANDS[] = {"train", "gradcheck", "translate", "align", "heatmap",
                                       "explain", "eval", "corpus", "config", "tokenize", "bench"};
enum { N_COMMANDS = sizeof COMMANDS / sizeof *COMMANDS };

/* stdout of argv (NULL-terminated) into a malloc'd string; its exit code to *rc. */
static char *output_of(const char *const *argv, const char *dir, int *rc)
{
    char out[700], err[700];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    *rc = run_command(argv, out, err, NULL);
    return read_file(out);
}

/* The man page's text with troff's escapes of a dash and font changes taken out. */
static char *man_text(void)
{
    char *s = read_file("src/cli/s2s.1");
    char *w = s;
    for (const char *r = s; *r;) {
        if (r[0] == '\\' && r[1] == '-') {
            *w++ = '-';
            r += 2;
        } else if (r[0] == '\\' && r[1] == 'f' && r[2]) {
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return s;
}

/* Whether word stands in text as a whole word (not inside a longer name). */
static int has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; (p = strstr(p, word)); p++) {
        int before = p == text || !(p[-1] == '_' || p[-1] == '-' || (p[-1] >= 'a' && p[-1] <= 'z'));
        char c = p[n];
        int after = !(c == '_' || c == '-' || (c >= 'a' && c <= 'z'));
        if (before && after)
            return 1;
    }
    return 0;
}

/* The long options (--word) in text, space-separated with a space at each end. */
static void options_in(const char *text, char *out, size_t cap)
{
    size_t used = (size_t)snprintf(out, cap, " ");
    for (const char *p = text; (p = strstr(p, "--")); ) {
        p += 2;
        size_t n = 0;
        while ((p[n] >= 'a' && p[n] <= 'z') || p[n] == '-')
            n++;
        if (n > 0 && p[0] != '-') {
            char opt[64];
            snprintf(opt, sizeof opt, " --%.*s ", (int)n, p);
            if (!strstr(out, opt) && used + strlen(opt) < cap)
                used += (size_t)snprintf(out + used, cap - used, "%s", opt + 1);
        }
        p += n;
    }
}

START_TEST(make_install_puts_a_working_s2s_under_destdir_and_uninstall_takes_it_back)
{
    char dir[512], dest[600], prog[600], destdir[700];
    scratch_dir(dir, sizeof dir, "install");
    snprintf(dest, sizeof dest, "%s/dest", dir);
    snprintf(prog, sizeof prog, "PROG=%s", S2S);
    snprintf(destdir, sizeof destdir, "DESTDIR=%s", dest);
    /* the program the suite tests, as it is (-o: not rebuilt), outside the parent make */
    const char *install[] = {"/usr/bin/make", "-s", "-o", S2S, "install", prog, destdir,
                             "PREFIX=/usr/local", NULL};
    const char *env[] = {"MAKEFLAGS=", "MAKELEVEL=", "MFLAGS=", NULL};
    char out[700], err[700];
    snprintf(out, sizeof out, "%s/make.txt", dir);
    snprintf(err, sizeof err, "%s/make.err", dir);
    ck_assert_msg(run_command(install, out, err, env) == 0, "make install: %s", read_file(err));
    static const char *const files[] = {
        "bin/s2s", "share/man/man1/s2s.1", "share/bash-completion/completions/s2s",
        "share/s2s/configs/demo.yaml", "share/s2s/configs/README.md",
        "share/s2s/corpora/README.md", "share/s2s/corpora/toy-fr/train.src",
        "share/s2s/corpora/copy/valid.align"};
    char path[900];
    for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
        snprintf(path, sizeof path, "%s/usr/local/%s", dest, files[k]);
        ck_assert_msg(path_exists(path), "make install did not write %s", path);
    }
    /* the installed program runs */
    char bin[700], share[700];
    snprintf(bin, sizeof bin, "%s/usr/local/bin/s2s", dest);
    snprintf(share, sizeof share, "%s/usr/local/share/s2s", dest);
    int rc;
    const char *version[] = {bin, "--version", NULL};
    char *v = output_of(version, dir, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(strncmp(v, "s2s 0.1.0\nBLAS: ", 16), 0);
    free(v);
    /* the installed configs name the installed corpora where they will be (PREFIX), not
     * relative to the directory a user trains from */
    snprintf(path, sizeof path, "%s/configs/copy.yaml", share);
    char *config = read_file(path);
    ck_assert_msg(strstr(config, "\n  train_src: /usr/local/share/s2s/corpora/copy/train.src\n"),
                  "%s", config);
    free(config);
    /* so an example installed at its PREFIX trains from any directory, as the README
     * shows: `s2s train PREFIX/share/s2s/configs/copy.yaml`, runs/copy written there */
    char prefix[600], prefix_set[700], elsewhere[700], example[800];
    snprintf(prefix, sizeof prefix, "%s/prefix", dir);
    snprintf(prefix_set, sizeof prefix_set, "PREFIX=%s", prefix);
    const char *at_prefix[] = {"/usr/bin/make", "-s", "-o", S2S, "install", prog, prefix_set,
                               NULL};
    ck_assert_msg(run_command(at_prefix, out, err, env) == 0, "make install: %s", read_file(err));
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", dir);
    ck_assert_int_eq(mkdir(elsewhere, 0777), 0);
    snprintf(bin, sizeof bin, "%s/bin/s2s", prefix);
    snprintf(example, sizeof example, "%s/share/s2s/configs/copy.yaml", prefix);
    const char *anywhere[] = {bin, "train", example, "--set", "training.max_steps=3", "--set",
                              "training.max_time=0", "--set", "training.valid_every=3", "--set",
                              "model.embedding_size=8", "--set", "model.encoder_size=8", "--set",
                              "model.decoder_size=16", "--set", "training.batch_size=8", NULL};
    RunOptions in_elsewhere = {.cwd = elsewhere};
    ck_assert_msg(run_command_with(anywhere, NULL, err, &in_elsewhere, NULL) == 0, "%s",
                  read_file(err));
    snprintf(path, sizeof path, "%s/runs/copy/checkpoints/last.ckpt", elsewhere);
    ck_assert_msg(path_exists(path), "no %s", path);
    snprintf(path, sizeof path, "%s/runs/copy/test.hyp", elsewhere);
    ck_assert_msg(path_exists(path), "the installed corpus's test set was not translated: no %s",
                  path);
    /* make uninstall leaves no file behind */
    const char *uninstall[] = {"/usr/bin/make", "-s", "uninstall", destdir, "PREFIX=/usr/local",
                               NULL};
    ck_assert_int_eq(run_command(uninstall, out, err, env), 0);
    char cmd[900];
    snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' -type f)\"", dest);
    ck_assert_msg(system(cmd) == 0, "files are left under %s", dest);
}
END_TEST

START_TEST(the_manual_names_every_command_option_key_and_exit_code)
{
    char *man = man_text();
    char dir[512], all_options[4096] = " ";
    scratch_dir(dir, sizeof dir, "manpage");
    for (int c = 0; c < N_COMMANDS; c++) {
        char head[64];
        snprintf(head, sizeof head, ".B s2s %s", COMMANDS[c]);
        ck_assert_msg(strstr(man, head), "the manual's synopsis lacks `s2s %s`", COMMANDS[c]);
        /* every option the command's --help names, in the manual */
        const char *argv[] = {S2S, COMMANDS[c], "--help", NULL};
        int rc;
        char *help = output_of(argv, dir, &rc);
        ck_assert_int_eq(rc, 0);
        char opts[2048];
        options_in(help, opts, sizeof opts);
        for (char *o = strtok(opts, " "); o; o = strtok(NULL, " ")) {
            ck_assert_msg(has_word(man, o), "the manual lacks `s2s %s %s`", COMMANDS[c], o);
            char spaced[80];
            snprintf(spaced, sizeof spaced, " %s ", o);
            if (!strstr(all_options, spaced))
                strncat(all_options, spaced + 1, sizeof all_options - strlen(all_options) - 1);
        }
        free(help);
    }
    /* and no option the commands do not have (--help and --version are the program's) */
    char man_opts[4096];
    options_in(man, man_opts, sizeof man_opts);
    for (char *o = strtok(man_opts, " "); o; o = strtok(NULL, " ")) {
        char spaced[80];
        snprintf(spaced, sizeof spaced, " %s ", o);
        ck_assert_msg(strstr(all_options, spaced) || !strcmp(o, "--help") || !strcmp(o, "--version"),
                      "the manual names `%s`, which no command's --help has", o);
    }
    /* every config key, in its section's list */
    const char *configuration = strstr(man, ".SH CONFIGURATION");
    ck_assert_ptr_nonnull(configuration);
    for (int k = 0; k < config_n_keys(); k++) {
        const char *path = config_key_path(k), *dot = strchr(path, '.');
        char section[64];
        snprintf(section, sizeof section, ".TP\n.B %.*s\n", dot ? (int)(dot - path) : 9,
                 dot ? path : "top level");
        const char *list = strstr(configuration, section);
        ck_assert_msg(list != NULL, "the manual has no `%s` list of keys", section);
        list += strlen(section);
        const char *end = strstr(list, ".TP");
        char *keys = strndup(list, end ? (size_t)(end - list) : strlen(list));
        ck_assert_msg(has_word(keys, dot ? dot + 1 : path), "the manual lacks the key %s", path);
        free(keys);
    }
    static const char *const codes[] = {".B 0\n", ".B 1\n", ".B 2\n", ".B 3\n", ".B 4\n", "130",
                                        "143", "129", "141"};
    const char *status = strstr(man, ".SH EXIT STATUS");
    ck_assert_ptr_nonnull(status);
    for (size_t k = 0; k < sizeof codes / sizeof *codes; k++)
        ck_assert_msg(strstr(status, codes[k]), "the manual's exit codes lack %s", codes[k]);
    free(man);
}
END_TEST

START_TEST(bash_completion_offers_commands_options_choices_and_keys)
{
    char dir[512], script[700];
    scratch_dir(dir, sizeof dir, "completion");
    snprintf(script, sizeof script, "%s/complete.sh", dir);
    /* completes each line of words (the program is the suite's s2s) and prints the offers */
    char text[2400];
    snprintf(text, sizeof text,
             "source src/cli/s2s.bash\n"
             "c() { COMP_WORDS=(\"%s\" \"$@\"); COMP_CWORD=$#; _s2s; echo \"${COMPREPLY[*]}\"; }\n"
             "c tr\nc translate --b\nc train x.yaml --set training.learning_r\n"
             "c heatmap x --format ''\nc corpus toy-f\nc eval --metric c\nc bench --size ''\n"
             "c explain --format ''\nc explain --example ''\nc ex\n",
             S2S);
    write_file(script, text);
    const char *argv[] = {"/bin/bash", script, NULL};
    int rc;
    char *got = output_of(argv, dir, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(got, "train translate\n--beam\ntraining.learning_rate= training.learning_rate_min=\n"
                          "svg html txt\ntoy-fr toy-fr-long\nchrf\nS M L\ntext json html\n"
                          "dot general qkv\nexplain\n");
    free(got);
}
END_TEST

/* Each command's --help: usage first, on stdout, in lines of at most 88 columns. Its
 * usage errors: one line on stderr, `s2s: error: ...`, exit 2, pointing at --help. */
START_TEST(every_help_and_usage_error_reads_the_same_way)
{
    char dir[512], out[700], err[700], expected[300];
    scratch_dir(dir, sizeof dir, "helpform");
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    for (int c = 0; c < N_COMMANDS; c++) {
        const char *help[] = {S2S, COMMANDS[c], "--help", NULL};
        ck_assert_int_eq(run_command(help, out, err, NULL), 0);
        char *text = read_file(out), *said = read_file(err);
        char usage[64];
        snprintf(usage, sizeof usage, "usage: s2s %s", COMMANDS[c]);
        ck_assert_msg(!strncmp(text, usage, strlen(usage)), "s2s %s --help: %.60s", COMMANDS[c], text);
        ck_assert_str_eq(said, "");
        for (const char *line = text; *line;) {
            size_t n = strcspn(line, "\n");
            ck_assert_msg(n <= 88, "s2s %s --help has a line of %zu columns: %.*s", COMMANDS[c], n,
                          (int)n, line);
            line += n + (line[n] == '\n');
        }
        free(text);
        free(said);
        /* an option the command does not have */
        const char *bogus[] = {S2S, COMMANDS[c], "--bogus", NULL};
        ck_assert_int_eq(run_command(bogus, out, err, NULL), 2);
        said = read_file(err);
        snprintf(expected, sizeof expected, "s2s: error: %s: unknown option `--bogus` (see s2s %s "
                 "--help)\n", COMMANDS[c], COMMANDS[c]);
        ck_assert_str_eq(said, expected);
        free(said);
        text = read_file(out);
        ck_assert_str_eq(text, "");
        free(text);
    }
    /* what the commands need and did not get */
    static const char *const needs[][2] = {
        {"train", "s2s: error: train needs CONFIG.yaml (see s2s train --help)\n"},
        {"gradcheck", "s2s: error: gradcheck needs CONFIG.yaml (see s2s gradcheck --help)\n"},
        {"translate", "s2s: error: translate needs --model CKPT (see s2s translate --help)\n"},
        {"align", "s2s: error: align needs --model, --src and --tgt (see s2s align --help)\n"},
        {"heatmap", "s2s: error: heatmap needs ALIGNMENTS.jsonl (see s2s heatmap --help)\n"},
        {"explain", "s2s: error: explain needs --model CKPT (see s2s explain --help)\n"},
        {"eval", "s2s: error: eval needs --hyp FILE and --ref FILE (see s2s eval --help)\n"},
        {"corpus", "s2s: error: corpus needs a task NAME and --out DIR (see s2s corpus --help)\n"},
    };
    for (size_t k = 0; k < sizeof needs / sizeof *needs; k++) {
        const char *argv[] = {S2S, needs[k][0], NULL};
        ck_assert_int_eq(run_command(argv, out, err, NULL), 2);
        char *said = read_file(err);
        ck_assert_str_eq(said, needs[k][1]);
        free(said);
    }
    /* a value after '=' and a value missing, the same in every command */
    const char *eq[] = {S2S, "bench", "--steps=3", NULL};
    ck_assert_int_eq(run_command(eq, out, err, NULL), 2);
    char *said = read_file(err);
    ck_assert_str_eq(said, "s2s: error: bench: write `--steps 3`: an option's value is the next "
                           "argument, not after '=' (see s2s bench --help)\n");
    free(said);
    /* a count out of its range names the range of that option (issue 25: --heads 0 said
     * "0 heads do not split ... evenly", --heads -4 "expected 0 to 100000") */
    static const char *const ranges[][3] = {
        {"--heads", "0", "s2s: error: --heads: expected 1 to 64, got `0`\n"},
        {"--heads", "-4", "s2s: error: --heads: expected 1 to 64, got `-4`\n"},
        {"--heads", "3", "s2s: error: --heads: 3 heads do not split the model's vectors evenly "
                         "(try 1, 2, 4 or 8)\n"},
        {"--batch", "0", "s2s: error: --batch: expected 1 to 65536, got `0`\n"},
        {"--self-attention", "7", "s2s: error: --self-attention: expected 0 to 6, got `7`\n"},
        {"--threads", "x", "s2s: error: --threads: expected 0 to 1024, got `x`\n"},
        {"--shards", "65", "s2s: error: --shards: expected 0 to 64, got `65`\n"},
        {"--image", "--attention-only", "s2s: error: --image and --attention-only: an image "
                                        "model has no text encoder to leave out\n"},
        {"--translate", "--image", "s2s: error: --translate: times text models with soft "
                                   "attention (not --image)\n"},
    };
    for (size_t k = 0; k < sizeof ranges / sizeof *ranges; k++) {
        const char *argv[] = {S2S, "bench", ranges[k][0], ranges[k][1], NULL};
        ck_assert_int_eq(run_command(argv, out, err, NULL), 2);
        char *text = read_file(err);
        ck_assert_str_eq(text, ranges[k][2]);
        free(text);
    }
    /* the variants' rows of make bench run, sharded, and say which model they timed */
    static const char *const models[][3] = {{"--image", "\"size\": \"image\""},
                                            {"--hard", "hard attention additive"}};
    for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
        const char *argv[] = {S2S, "bench", models[k][0], "--batch", "5", "--shards", "2",
                              "--steps", "2", "--warmup", "0", NULL};
        ck_assert_int_eq(run_command(argv, out, err, NULL), 0);
        char *text = read_file(out);
        ck_assert_msg(strstr(text, models[k][1]) && strstr(text, "in 2 shards") &&
                      strstr(text, "\nRESULT {"), "s2s bench %s said:\n%s", models[k][0], text);
        free(text);
    }
    /* and the translation rows: greedy and beam search */
    static const char *const beams[] = {"1", "3"};
    for (size_t k = 0; k < sizeof beams / sizeof *beams; k++) {
        const char *argv[] = {S2S, "bench", "--translate", "--beam", beams[k], "--batch", "3",
                              "--steps", "1", "--warmup", "0", NULL};
        ck_assert_int_eq(run_command(argv, out, err, NULL), 0);
        char *text = read_file(out);
        char want[64];
        snprintf(want, sizeof want, "\"beam\": %s, \"sentences_per_s\": ", beams[k]);
        ck_assert_msg(strstr(text, want) && strstr(text, "\"words_out\": "),
                      "s2s bench --translate --beam %s said:\n%s", beams[k], text);
        free(text);
    }
    const char *missing[] = {S2S, "tokenize", "--level", NULL};
    ck_assert_int_eq(run_command(missing, out, err, NULL), 2);
    said = read_file(err);
    ck_assert_str_eq(said, "s2s: error: tokenize: `--level` needs a value (see s2s tokenize --help)\n");
    free(said);
    /* the program's own */
    const char *none[] = {S2S, "bogus", NULL};
    ck_assert_int_eq(run_command(none, out, err, NULL), 2);
    said = read_file(err);
    ck_assert_str_eq(said, "s2s: error: unknown command `bogus` (see s2s --help)\n");
    free(said);
}
END_TEST

START_TEST(version_names_the_blas_the_small_products_threads_and_libyaml)
{
    char dir[512];
    scratch_dir(dir, sizeof dir, "version");
    const char *argv[] = {S2S, "--version", NULL};
    int rc;
    char *v = output_of(argv, dir, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(strncmp(v, "s2s 0.1.0\nBLAS: OpenBLAS 0.", 26), 0);
    ck_assert_ptr_nonnull(strstr(v, "\nthreads: training "));
#ifdef S2S_XSMM
    ck_assert_ptr_nonnull(strstr(v, "\nsmall products: libxsmm (kernels for "));
#else
    ck_assert_ptr_nonnull(strstr(v, "\nsmall products: OpenBLAS (built without libxsmm)"));
#endif
    ck_assert_ptr_nonnull(strstr(v, "\nlibyaml: 0."));
    free(v);
}
END_TEST

Suite *install_suite(void)
{
    Suite *s = suite_create("install");
    TCase *tc = tcase_create("install");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, make_install_puts_a_working_s2s_under_destdir_and_uninstall_takes_it_back);
    tcase_add_test(tc, the_manual_names_every_command_option_key_and_exit_code);
    tcase_add_test(tc, bash_completion_offers_commands_options_choices_and_keys);
    tcase_add_test(tc, every_help_and_usage_error_reads_the_same_way);
    tcase_add_test(tc, version_names_the_blas_the_small_products_threads_and_libyaml);
    suite_add_tcase(s, tc);
    return s;
}
