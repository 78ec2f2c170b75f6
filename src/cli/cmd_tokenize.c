/* cmd_tokenize.c: `s2s tokenize`: stdin split into tokens exactly as training splits corpus
 * lines, one line a line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/command.h"
#include "text/tokenize.h"

static const char TOKENIZE_USAGE[] =
    "usage: s2s tokenize [--level word|char] [--lowercase] < text > tokens\n"
    "\n"
    "Writes each line of stdin split into tokens exactly as training splits corpus\n"
    "lines, tokens separated by single spaces. Use it to prepare references for\n"
    "scoring. Invalid UTF-8 gives an empty line and a warning with the line number.\n";

int cmd_tokenize(int argc, char **argv)
{
    TokenLevel level = LEVEL_WORD;
    int lowercase = 0;
    enum { HELP, LOWERCASE, LEVEL };
    static const CmdOption OPTS[] = {[HELP] = {"--help", 0}, [LOWERCASE] = {"--lowercase", 0},
                                     [LEVEL] = {"--level", 1}, {NULL, 0}};
    for (int a = 0; a < argc; a++) {
        const char *value = NULL;
        switch (cmd_option("tokenize", OPTS, argc, argv, &a, &value)) {
        case -2:
            return EXIT_USAGE;
        case -1:
            return cmd_usage_error("tokenize: unexpected argument `%s` (see s2s tokenize --help)",
                                   argv[a]);
        case HELP:
            fputs(TOKENIZE_USAGE, stdout);
            return EXIT_OK;
        case LOWERCASE:
            lowercase = 1;
            break;
        case LEVEL:
            if (!strcmp(value, "word"))
                level = LEVEL_WORD;
            else if (!strcmp(value, "char"))
                level = LEVEL_CHAR;
            else
                return cmd_usage_error("--level: expected word or char, got `%s`", value);
            break;
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
        int n = tokenize_line(&tokens, line, (size_t)len, level, lowercase, 0);
        for (int k = 0; k < n; k++) {
            if (k > 0)
                putchar(' ');
            fputs(tokens_get(&tokens, k), stdout);
        }
        putchar('\n');
    }
    free(line);
    tokens_free(&tokens);
    return cmd_flush_stdout() == 0 ? EXIT_OK : EXIT_IO;
}
