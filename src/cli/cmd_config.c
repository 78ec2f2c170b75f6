/* cmd_config.c: `s2s config`: a config with every key at its default, or the table of keys
 * of configs/README.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/command.h"

static const char CONFIG_USAGE[] =
    "usage: s2s config [--doc]\n"
    "\n"
    "Prints a config with every key at its default value: a starting point for your\n"
    "own. With --doc, prints the table of keys of configs/README.md instead.\n";

int cmd_config(int argc, char **argv)
{
    int doc = 0;
    enum { HELP, DOC };
    static const CmdOption OPTS[] = {[HELP] = {"--help", 0}, [DOC] = {"--doc", 0}, {NULL, 0}};
    for (int a = 0; a < argc; a++) {
        const char *value = NULL;
        switch (cmd_option("config", OPTS, argc, argv, &a, &value)) {
        case -2:
            return EXIT_USAGE;
        case -1:
            return cmd_usage_error("config: unexpected argument `%s` (see s2s config --help)", argv[a]);
        case HELP:
            fputs(CONFIG_USAGE, stdout);
            return EXIT_OK;
        case DOC:
            doc = 1;
            break;
        }
    }
    if (doc) {
        /* stop at the first failed write, its errno kept for the message */
        int failed = puts("| key | type | default | range | meaning |") == EOF ||
                     puts("| --- | --- | --- | --- | --- |") == EOF;
        int write_errno = errno;
        for (int k = 0; k < config_n_keys() && !failed; k++) {
            char *row = config_key_doc_row(k);
            failed = puts(row) == EOF;
            write_errno = errno;
            free(row);
        }
        if (failed)
            cmd_stdout_write_failed(write_errno);
    } else {
        Config cfg;
        config_defaults(&cfg);
        char *yaml = config_to_yaml(&cfg);
        fputs(yaml, stdout);
        free(yaml);
    }
    return cmd_flush_stdout() == 0 ? EXIT_OK : EXIT_IO;
}
