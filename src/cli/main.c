/* main.c: the s2s command line: parses the command, runs it, prints errors, and maps
 * failures to the exit codes of cli/INTERFACE.md. The only file that exits. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ranks.h"
#include "cli/command.h"

static const char USAGE[] =
    "usage: s2s COMMAND [ARGS]\n"
    "\n"
    "s2s trains and runs RNN encoder-decoder translation models with attention, and\n"
    "shows how their alignments form.\n"
    "\n"
    "commands:\n"
    "  train      train a model: s2s train CONFIG.yaml [--set KEY=VALUE]... [--resume DIR]\n"
    "  gradcheck  check every gradient of the configured model by finite differences\n"
    "  corpus     write a synthetic corpus with gold alignments: s2s corpus NAME --out DIR\n"
    "  translate  translate stdin with a trained model (greedy or beam search)\n"
    "  align      teacher-forced attention of sentence pairs as alignments (and AER)\n"
    "  heatmap    draw alignments.jsonl as SVG, an HTML report, or text\n"
    "  explain    one attention step of a model worked out, every tensor named and shaped\n"
    "  eval       score translations: s2s eval --hyp FILE --ref FILE [--metric M]...\n"
    "  bench      training speed on synthetic data (see make bench)\n"
    "  config     print every config key with its default (--doc: as a Markdown table)\n"
    "  tokenize   split stdin into tokens as training does, one line per line\n"
    "\n"
    "options:\n"
    "  --help      show this help (s2s COMMAND --help for a command)\n"
    "  --version   show the versions of s2s, its BLAS and libyaml, and the BLAS threads\n"
    "\n"
    "Every command: an option's value is the next argument (--beam 5, not --beam=5);\n"
    "results go to stdout, progress and errors to stderr; `man s2s` once installed.\n";

/* ---- dispatch ---------------------------------------------------------------------- */

static int run(int argc, char **argv)
{
    /* A file-size limit (ulimit -f) is a write failure like a full disk: the write
     * returns EFBIG and the command reports it (exit 3) and cleans up, instead of being
     * killed mid-write with a temporary file left behind. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        fputs(USAGE, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        fputs(USAGE, stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version"))
        return cmd_version();
    if (!strcmp(cmd, "train"))
        return cmd_train(argc - 2, argv + 2);
    if (!strcmp(cmd, "gradcheck"))
        return cmd_gradcheck(argc - 2, argv + 2);
    if (!strcmp(cmd, "corpus"))
        return cmd_corpus(argc - 2, argv + 2);
    if (!strcmp(cmd, "translate"))
        return cmd_translate(argc - 2, argv + 2);
    if (!strcmp(cmd, "align"))
        return cmd_align(argc - 2, argv + 2);
    if (!strcmp(cmd, "heatmap"))
        return cmd_heatmap(argc - 2, argv + 2);
    if (!strcmp(cmd, "explain"))
        return cmd_explain(argc - 2, argv + 2);
    if (!strcmp(cmd, "eval"))
        return cmd_eval(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 2, argv + 2);
    if (!strcmp(cmd, "config"))
        return cmd_config(argc - 2, argv + 2);
    if (!strcmp(cmd, "tokenize"))
        return cmd_tokenize(argc - 2, argv + 2);
    return cmd_usage_error("unknown command `%s` (see s2s --help)", cmd);
}

/* Under mpirun (base/ranks.h): training and its benchmark run on every process, with
 * MPI started; any other command is one process's work. */
static int run_ranks(int argc, char **argv)
{
    if (!ranks_launched())
        return run(argc, argv);
    const char *cmd = argc >= 2 ? argv[1] : "";
    if (strcmp(cmd, "train") && strcmp(cmd, "bench")) {
        const char *size = getenv("OMPI_COMM_WORLD_SIZE");
        if (strcmp(size, "1"))
            return cmd_usage_error("`s2s %s` runs on one process: under mpirun, only `s2s "
                                   "train` and `s2s bench` share their work", cmd);
        return run(argc, argv);
    }
    char msg[256];
    if (ranks_start(msg, sizeof msg) < 0) {
        fprintf(stderr, "s2s: error: %s\n", msg);
        return EXIT_USAGE;
    }
    int rc = run(argc, argv);
    ranks_stop();
    return rc;
}

int main(int argc, char **argv)
{
    int rc = run_ranks(argc, argv);
    /* whatever the command wrote to stdout must have arrived: one check, one message */
    if (cmd_flush_stdout() < 0 && rc == EXIT_OK)
        rc = EXIT_IO;
    return rc;
}
