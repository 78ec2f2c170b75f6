/* command.c: the helpers all commands share (see command.h). */
#include "cli/command.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/termtext.h"

/* Prints "s2s: error: " and the message, escaped (see command.h). */
static void print_error(const char *msg)
{
    char safe[4 * ERROR_MSG_MAX];
    fprintf(stderr, "s2s: error: %s\n", termtext_escape(safe, sizeof safe, msg));
}

/* The errno of the first write to stdout a command saw fail (cmd_stdout_write_failed). */
static int first_write_errno;

void cmd_stdout_write_failed(int errno_value)
{
    if (!first_write_errno)
        first_write_errno = errno_value;
}

int cmd_flush_stdout(void)
{
    static int reported;
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    if (!reported) {
        /* an earlier write failed and the flush had nothing left to write: its errno,
         * if the command kept it, else EIO */
        if (errno == 0)
            errno = first_write_errno ? first_write_errno : EIO;
        Error err;
        error_errno(&err, "cannot write", "stdout");
        print_error(err.msg);
        reported = 1;
    }
    return -1;
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

/* For cmd_option: prints the message and returns -2. */
static int option_error(const char *fmt, ...) S2S_PRINTF(1, 2);
static int option_error(const char *fmt, ...)
{
    char msg[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    print_error(msg);
    return -2;
}

int cmd_option(const char *command, const CmdOption *opts, int argc, char **argv, int *a,
               const char **value)
{
    const char *arg = argv[*a];
    if (arg[0] != '-' || !arg[1])
        return -1;
    const char *eq = strchr(arg, '=');
    size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
    for (int k = 0; opts[k].name; k++) {
        if (strlen(opts[k].name) != name_len || strncmp(opts[k].name, arg, name_len))
            continue;
        if (eq && opts[k].takes_value)
            return option_error("%s: write `%s %s`: an option's value is the next argument, "
                                "not after '=' (see s2s %s --help)", command, opts[k].name, eq + 1,
                                command);
        if (eq)
            return option_error("%s: `%s` takes no value (got `%s`; see s2s %s --help)", command,
                                opts[k].name, arg, command);
        if (opts[k].takes_value) {
            if (*a + 1 == argc)
                return option_error("%s: `%s` needs a value (see s2s %s --help)", command, arg,
                                    command);
            *value = argv[++*a];
        }
        return k;
    }
    return option_error("%s: unknown option `%s` (see s2s %s --help)", command, arg, command);
}

/* The command a usage text is for: "train" from "usage: s2s train ...". */
static void command_of(const char *usage, char *out, size_t cap)
{
    const char *prefix = "usage: s2s ";
    const char *name = strncmp(usage, prefix, strlen(prefix)) ? "" : usage + strlen(prefix);
    snprintf(out, cap, "%.*s", (int)strcspn(name, " \n"), name);
}

/* Loads CONFIG with its --set overrides and validates it (see command.h). argv holds
 * everything after the command; its options follow cmd_option's rule. */
int cmd_load_config(Config *cfg, int argc, char **argv, const char *usage,
                       const char **resume, long *samples)
{
    const char *path = NULL;
    config_defaults(cfg);
    Error err;
    char command[32];
    command_of(usage, command, sizeof command);
    CmdOption opts[5] = {{"--help", 0}, {"--set", 1}};
    int n_opts = 2;
    if (resume)
        opts[n_opts++] = (CmdOption){"--resume", 1};
    if (samples)
        opts[n_opts++] = (CmdOption){"--samples", 1};
    opts[n_opts] = (CmdOption){NULL, 0};
    /* The file first, then the overrides in order, whatever their position. */
    for (int a = 0; a < argc; a++) {
        const char *value;
        int k = cmd_option(command, opts, argc, argv, &a, &value);
        if (k == -2)
            return EXIT_USAGE;
        if (k == 0) {
            fputs(usage, stdout);
            return -1;
        }
        if (k == -1) {
            if (path)
                return cmd_usage_error("one config file only (got a second: `%s`)", argv[a]);
            path = argv[a];
        }
    }
    if (!path) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s needs CONFIG.yaml (see s2s %s --help)", command, command);
        return cmd_usage_error("%s", msg);
    }
    if (config_load(cfg, path, &err) < 0)
        return cmd_error(&err, EXIT_USAGE);
    for (int a = 0; a < argc; a++) {
        const char *value, *opt = argv[a];
        if (cmd_option(command, opts, argc, argv, &a, &value) < 0)
            continue; /* the file: every argument was checked above */
        if (!strcmp(opt, "--set") && config_set(cfg, value, &err) < 0)
            return cmd_error(&err, EXIT_USAGE);
        if (!strcmp(opt, "--resume"))
            *resume = value;
        if (!strcmp(opt, "--samples")) {
            char *end;
            *samples = strtol(value, &end, 10);
            if (*end || end == value || *samples < 0)
                return cmd_usage_error("--samples: expected a count >= 0, got `%s`", value);
        }
    }
    if (config_validate(cfg, &err) < 0)
        return cmd_error(&err, EXIT_USAGE);
    int unused[CONFIG_MAX_KEYS];
    const int n_unused = config_unused_keys(cfg, unused, CONFIG_MAX_KEYS);
    for (int k = 0; k < n_unused; k++) {
        char note[ERROR_MSG_MAX];
        config_unused_note(cfg, unused[k], note, sizeof note);
        fprintf(stderr, "s2s: warning: %s\n", note);
    }
    return 0;
}


int cmd_choice(const char *const *names, const char *value)
{
    for (int k = 0; names[k]; k++)
        if (!strcmp(names[k], value))
            return k;
    return -1;
}

int cmd_attention_mode(const char *value)
{
    int mode = cmd_choice(decode_mode_names, value);
    if (mode < 0)
        cmd_usage_error("--attention-mode: expected auto, soft or argmax, got `%s`", value);
    return mode;
}
