/* command.c: the helpers all commands share (see command.h). */
#include "command.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "termtext.h"

/* Prints "s2s: error: " and the message, escaped (see command.h). */
static void print_error(const char *msg)
{
    char safe[4 * ERROR_MSG_MAX];
    fprintf(stderr, "s2s: error: %s\n", termtext_escape(safe, sizeof safe, msg));
}

int cmd_usage_error(const char *fmt, const char *arg)
{
    Error err;
    error_set(&err, fmt, arg);
    print_error(err.msg);
    return EXIT_USAGE;
}

int cmd_error(const Error *err, int code)
{
    print_error(err->msg);
    return code;
}

/* Loads CONFIG with its --set overrides and validates it. args: everything after the
 * command; other options are left to the caller through *rest (or refused when rest
 * is NULL). Returns 0 or an exit code. */
int cmd_load_config(Config *cfg, int argc, char **argv, const char *usage,
                       const char **resume, long *samples)
{
    const char *path = NULL;
    config_defaults(cfg);
    Error err;
    /* The file first, then the overrides in order, whatever their position. */
    for (int a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "--help")) {
            fputs(usage, stdout);
            return -1;
        } else if (!strcmp(argv[a], "--set") || (resume && !strcmp(argv[a], "--resume")) ||
                   (samples && !strcmp(argv[a], "--samples"))) {
            if (++a == argc)
                return cmd_usage_error("%s needs a value", argv[a - 1]);
        } else if (argv[a][0] == '-' && argv[a][1]) {
            return cmd_usage_error("unknown option `%s`", argv[a]);
        } else if (path) {
            return cmd_usage_error("one config file only (got a second: `%s`)", argv[a]);
        } else {
            path = argv[a];
        }
    }
    if (!path)
        return cmd_usage_error("%s", "missing CONFIG.yaml (see --help)");
    if (config_load(cfg, path, &err) < 0)
        return cmd_error(&err, EXIT_USAGE);
    for (int a = 0; a < argc; a++) {
        if (!strcmp(argv[a], "--set") && config_set(cfg, argv[++a], &err) < 0)
            return cmd_error(&err, EXIT_USAGE);
        if (resume && !strcmp(argv[a], "--resume"))
            *resume = argv[++a];
        if (samples && !strcmp(argv[a], "--samples")) {
            char *end;
            *samples = strtol(argv[++a], &end, 10);
            if (*end || *samples < 0)
                return cmd_usage_error("--samples: expected a count >= 0, got `%s`", argv[a]);
        }
    }
    if (config_validate(cfg, &err) < 0)
        return cmd_error(&err, EXIT_USAGE);
    return 0;
}

