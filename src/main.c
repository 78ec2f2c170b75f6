/* main.c: the s2s command line: parses the command, runs it, prints errors, and maps
 * failures to the exit codes of INTERFACE.md. The only file that exits. */
#include <stdio.h>
#include <string.h>

#define S2S_VERSION "0.1.0"

static const char USAGE[] =
    "usage: s2s COMMAND [ARGS]\n"
    "\n"
    "s2s trains and runs RNN encoder-decoder translation models with Bahdanau\n"
    "attention, and shows how their alignments form.\n"
    "\n"
    "options:\n"
    "  --help      show this help\n"
    "  --version   show the version\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(USAGE, stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("s2s %s\n", S2S_VERSION);
        return 0;
    }
    fprintf(stderr, "s2s: error: unknown command `%s` (see s2s --help)\n", argv[1]);
    return 2;
}
