/* cmd_corpus.c: `s2s corpus`: one of the synthetic corpora of src/gen/ written to a folder,
 * with its gold alignments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/command.h"
#include "gen/gen.h"

static const char CORPUS_USAGE[] =
    "usage: s2s corpus NAME --out DIR [--size N] [--seed S]\n"
    "\n"
    "Writes a synthetic parallel corpus with gold word alignments: DIR/{train,valid,test}\n"
    "with .src and .tgt (one tokenized sentence a line) and .align (Pharaoh links j-i,\n"
    "0-based source-target token indices). Valid and test hold 1000 pairs each, never\n"
    "seen in train; --size sets the training pairs. The same seed (default 1) gives the\n"
    "same corpus everywhere. Tasks (corpora/README.md describes each):\n";

int cmd_corpus(int argc, char **argv)
{
    const char *name = NULL, *out = NULL;
    long size = -1, seed = 1;
    for (int a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "--help")) {
            int n;
            const GenTask *tasks = gen_tasks(&n);
            fputs(CORPUS_USAGE, stdout);
            for (int k = 0; k < n; k++)
                printf("  %-8s %s (default size %d)\n", tasks[k].name, tasks[k].about,
                       tasks[k].default_train);
            return EXIT_OK;
        } else if ((!strcmp(argv[a], "--out") || !strcmp(argv[a], "--size") ||
                    !strcmp(argv[a], "--seed")) && a + 1 < argc) {
            const char *opt = argv[a++];
            if (!strcmp(opt, "--out")) {
                out = argv[a];
                continue;
            }
            char *end;
            long v = strtol(argv[a], &end, 10);
            if (*end || !*argv[a] || v < (opt[2] == 's' && opt[3] == 'i' ? 1 : 0) || v > 100000000)
                return cmd_usage_error(!strcmp(opt, "--size") ? "--size: expected a count from 1 to 100000000, got `%s`"
                                                          : "--seed: expected a number from 0 to 100000000, got `%s`",
                                   argv[a]);
            if (!strcmp(opt, "--size"))
                size = v;
            else
                seed = v;
        } else if (argv[a][0] == '-') {
            return cmd_usage_error("corpus: unknown option `%s` (see s2s corpus --help)", argv[a]);
        } else if (name) {
            return cmd_usage_error("corpus: one task only (got a second: `%s`)", argv[a]);
        } else {
            name = argv[a];
        }
    }
    if (!name || !out)
        return cmd_usage_error("%s", "corpus needs a task NAME and --out DIR (see s2s corpus --help)");
    const GenTask *task = gen_find(name);
    if (!task) {
        int n;
        const GenTask *tasks = gen_tasks(&n);
        char list[256] = "";
        for (int k = 0; k < n; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "", tasks[k].name);
        fprintf(stderr, "s2s: error: unknown corpus `%s` (expected one of: %s)\n", name, list);
        return EXIT_USAGE;
    }
    Error err;
    if (gen_write(task, out, size > 0 ? (int)size : task->default_train, (uint64_t)seed, &err) < 0)
        return cmd_error(&err, EXIT_IO);
    fprintf(stderr, "s2s corpus: wrote %s (%ld training pairs, 1000 validation, 1000 test, seed %ld) "
            "to %s\n", name, size > 0 ? size : (long)task->default_train, seed, out);
    return EXIT_OK;
}
