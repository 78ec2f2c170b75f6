/* main.c: the s2s command line: parses the command, runs it, prints errors, and maps
 * failures to the exit codes of INTERFACE.md. The only file that exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "error.h"
#include "tokenize.h"

#define S2S_VERSION "0.1.0"

enum { EXIT_OK = 0, EXIT_BUG = 1, EXIT_USAGE = 2, EXIT_IO = 3 };

static const char USAGE[] =
    "usage: s2s COMMAND [ARGS]\n"
    "\n"
    "s2s trains and runs RNN encoder-decoder translation models with Bahdanau\n"
    "attention, and shows how their alignments form.\n"
    "\n"
    "commands:\n"
    "  config     print every config key with its default (--doc: as a Markdown table)\n"
    "  tokenize   split stdin into tokens as training does, one line per line\n"
    "\n"
    "options:\n"
    "  --help      show this help (s2s COMMAND --help for a command)\n"
    "  --version   show the version\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "s2s: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return EXIT_USAGE;
}

/* ---- s2s tokenize ------------------------------------------------------------------ */

static const char TOKENIZE_USAGE[] =
    "usage: s2s tokenize [--level word|char] [--lowercase] < text > tokens\n"
    "\n"
    "Writes each line of stdin split into tokens exactly as training splits corpus\n"
    "lines, tokens separated by single spaces. Use it to prepare references for\n"
    "scoring. Invalid UTF-8 gives an empty line and a warning with the line number.\n";

static int cmd_tokenize(int argc, char **argv)
{
    TokenLevel level = LEVEL_WORD;
    int lowercase = 0;
    for (int a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "--help")) {
            fputs(TOKENIZE_USAGE, stdout);
            return EXIT_OK;
        } else if (!strcmp(argv[a], "--lowercase")) {
            lowercase = 1;
        } else if (!strcmp(argv[a], "--level") && a + 1 < argc) {
            a++;
            if (!strcmp(argv[a], "word"))
                level = LEVEL_WORD;
            else if (!strcmp(argv[a], "char"))
                level = LEVEL_CHAR;
            else
                return usage_error("--level: expected word or char, got `%s`", argv[a]);
        } else {
            return usage_error("tokenize: unexpected argument `%s` (see s2s tokenize --help)",
                               argv[a]);
        }
    }
    Tokens tokens = {0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long line_no = 0;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        line_no++;
        if (len > 0 && line[len - 1] == '\n')
            len--;
        if (len > 0 && line[len - 1] == '\r')
            len--;
        size_t bad_at, bad_len;
        if (utf8_validate(line, (size_t)len, &bad_at, &bad_len) < 0) {
            fprintf(stderr, "s2s: warning: stdin:%ld: invalid UTF-8 at byte %zu; wrote an "
                    "empty line\n", line_no, bad_at + 1);
            putchar('\n');
            continue;
        }
        int n = tokenize_line(&tokens, line, (size_t)len, level, lowercase);
        for (int k = 0; k < n; k++) {
            if (k > 0)
                putchar(' ');
            fputs(tokens_get(&tokens, k), stdout);
        }
        putchar('\n');
    }
    free(line);
    tokens_free(&tokens);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("s2s: error: writing stdout");
        return EXIT_IO;
    }
    return EXIT_OK;
}

/* ---- s2s config ------------------------------------------------------------------------ */

static const char CONFIG_USAGE[] =
    "usage: s2s config [--doc]\n"
    "\n"
    "Prints a config with every key at its default value: a starting point for your\n"
    "own. With --doc, prints the table of keys of configs/README.md instead.\n";

static int cmd_config(int argc, char **argv)
{
    int doc = 0;
    for (int a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "--help")) {
            fputs(CONFIG_USAGE, stdout);
            return EXIT_OK;
        } else if (!strcmp(argv[a], "--doc")) {
            doc = 1;
        } else {
            return usage_error("config: unexpected argument `%s` (see s2s config --help)", argv[a]);
        }
    }
    if (doc) {
        puts("| key | type | default | range | meaning |");
        puts("| --- | --- | --- | --- | --- |");
        for (int k = 0; k < config_n_keys(); k++) {
            char *row = config_key_doc_row(k);
            puts(row);
            free(row);
        }
    } else {
        Config cfg;
        config_defaults(&cfg);
        char *yaml = config_to_yaml(&cfg);
        fputs(yaml, stdout);
        free(yaml);
    }
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_IO;
}

/* ---- dispatch ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(USAGE, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        fputs(USAGE, stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("s2s %s\n", S2S_VERSION);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "config"))
        return cmd_config(argc - 2, argv + 2);
    if (!strcmp(cmd, "tokenize"))
        return cmd_tokenize(argc - 2, argv + 2);
    return usage_error("unknown command `%s` (see s2s --help)", cmd);
}
