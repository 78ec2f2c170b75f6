/* command.h: what the s2s commands share: exit codes (cli/INTERFACE.md), one-line error
 * printing, the option rule, loading CONFIG.yaml with --set overrides, and the commands
 * themselves, one file each (cmd_NAME.c); main.c dispatches to them. */
#ifndef S2S_COMMAND_H
#define S2S_COMMAND_H

#include "base/error.h"
#include "run/config.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_IO = 3, EXIT_DIVERGED = 4 };

/* Prints "s2s: error: " fmt (with one string argument) and returns EXIT_USAGE. */
int cmd_usage_error(const char *fmt, const char *arg);
/* Prints err's message as an s2s error and returns code. Both print messages whole on
 * one line, with control characters and bytes that are not UTF-8 written as \xHH
 * (termtext.h): what they quote (paths, words of a corpus or a vocabulary, arguments)
 * comes from outside and must not act on the terminal. */
int cmd_error(const Error *err, int code);

/* Flushes stdout; returns 0, or -1 if any write to it failed (a full disk, a closed pipe,
 * a file-size limit), having printed, the first time only, the one message every
 * command gives: "s2s: error: cannot write `stdout`: REASON". main calls it after every
 * command (a failure there is exit 3); a command that writes as it goes calls it to
 * stop early. */
int cmd_flush_stdout(void);
/* For a command that stops at its first failed write: keeps that write's errno, which
 * cmd_flush_stdout reports if its own flush finds nothing left to write (glibc drops a
 * buffer it could not write, so the reason would otherwise be lost). */
void cmd_stdout_write_failed(int errno_value);

/* The index of value in names (NULL-terminated), or -1. */
int cmd_choice(const char *const *names, const char *value);

/* The value of --attention-mode (translate, align): the ConfigDecodeMode it names, or -1
 * after "s2s: error: --attention-mode: expected auto, soft or argmax, got `VALUE`" (the
 * caller returns EXIT_USAGE). */
int cmd_attention_mode(const char *value);

/* Options follow one rule in every command: an option's value is the next argument
 * (`--beam 5`). `--beam=5` is refused, naming the form to use, and so is a value given
 * to an option that takes none (`--show-attention=1`); an option the command does not
 * have is unknown, whatever follows it. */
typedef struct {
    const char *name;  /* "--beam" */
    int takes_value;
} CmdOption;

/* Which of opts (ended by a NULL name) argv[*a] is: returns its index, with *value set
 * to the next argument (and *a moved onto it) when it takes one; -1 when argv[*a] is no
 * option (it does not start with '-', or is "-"); or -2 after printing the error
 * ("COMMAND: unknown option `--x` (see s2s COMMAND --help)", "... `--beam` needs a
 * value ...", ...): the caller returns EXIT_USAGE. */
int cmd_option(const char *command, const CmdOption *opts, int argc, char **argv, int *a,
               const char **value);
/* Loads the CONFIG.yaml among argv with its --set overrides and validates it. With
 * resume / samples not NULL, --resume DIR / --samples N are accepted and stored.
 * Returns 0, -1 after printing usage for --help, or an exit code. */
int cmd_load_config(Config *cfg, int argc, char **argv, const char *usage, const char **resume,
                    long *samples);

/* The commands: argv holds the arguments after the command name. */
int cmd_train(int argc, char **argv);
int cmd_gradcheck(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_corpus(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_align(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_heatmap(int argc, char **argv);
int cmd_explain(int argc, char **argv);
/* --version */
int cmd_version(void);

#endif
