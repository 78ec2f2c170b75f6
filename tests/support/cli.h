/* cli.h: running the s2s binary from tests: fork/exec with the output captured in
 * files, a scratch directory per test, and small file helpers. */
#ifndef S2S_TEST_CLI_H
#define S2S_TEST_CLI_H

#include <stddef.h>
#include <sys/types.h>

/* A fresh empty directory under /tmp for one test, its path written to out. It is
 * removed when the test's process exits normally (a passing test); a failing or
 * crashing test leaves it for inspection (Check ends those without running atexit). */
void scratch_dir(char *out, size_t cap, const char *name);
/* Removes path and everything under it (rm -rf); a missing path is fine. */
void remove_tree(const char *path);

/* Runs argv (argv[0] a path) with stdout and stderr captured into out_path and
 * err_path (either may be NULL: /dev/null) and extra environment entries env (NULL-
 * terminated "K=V" list, or NULL). Returns the exit code, or 128 + signal. */
int run_command(const char *const *argv, const char *out_path, const char *err_path,
                const char *const *env);
/* The same in the background: returns the child's pid. */
pid_t start_command(const char *const *argv, const char *out_path, const char *err_path,
                    const char *const *env);
/* Waits for pid at most seconds; returns its exit code (128 + signal), or -1 on time out
 * (the child is then killed). */
int wait_command(pid_t pid, double seconds);

/* Waits at most seconds until process pid has the file at path (absolute, no links)
 * open: a test's way to know a child is past its start, whatever slows it (valgrind).
 * Returns 0, or -1 if the time ran out or the process is gone. */
int wait_for_open_file(pid_t pid, const char *path, double seconds);

/* What run_command_with changes for the child; zeroed fields change nothing. */
typedef struct {
    const char *const *env;   /* extra "K=V" entries, NULL-terminated */
    const char *in_path;      /* stdin from this file (default /dev/null) */
    const char *cwd;          /* working directory (relative paths in argv start there) */
    size_t max_address_space; /* RLIMIT_AS in bytes, set in the child before exec */
    double timeout;           /* seconds before the child is killed (0: none), times
                               * $CK_TIMEOUT_MULTIPLIER when it is set */
    int ignore_sigint;        /* start with SIGINT ignored, as `cmd &` in a script does */
} RunOptions;
/* start_command with options (their timeout aside: wait_command waits). */
pid_t start_command_with(const char *const *argv, const char *out_path, const char *err_path,
                         const RunOptions *opt);
/* run_command with options. Returns the exit code (128 + signal), or -1 on time out;
 * *max_rss_kib (if not NULL) gets the child's peak resident set size in KiB. */
int run_command_with(const char *const *argv, const char *out_path, const char *err_path,
                     const RunOptions *opt, long *max_rss_kib);

/* Waits at most seconds until process pid blocks reading its stdin (read(2) on fd 0, as
 * /proc/PID/syscall shows): it is past its start and waits for input. Returns 0, or -1 if
 * the time ran out or the process is gone. */
int wait_for_stdin_read(pid_t pid, double seconds);

/* Whether the tests run under AddressSanitizer or valgrind, where an address-space limit
 * or an absolute memory figure measures the tool, not s2s. */
int under_memory_tool(void);

/* Whether anything (a dangling link too) is at path. */
int path_exists(const char *path);
/* Whole file into a malloc'd NUL-terminated string ("" for a missing file). */
char *read_file(const char *path);
/* The DOM headless Chromium builds from the page at html (its scripts run), as text
 * (free it); its profile and the dump go under dir. */
char *chromium_dom(const char *html, const char *dir);
/* How many times needle occurs in haystack, without overlaps. */
int count_of(const char *haystack, const char *needle);
/* Writes text to path; fails the test on error. */
void write_file(const char *path, const char *text);
/* First line of a file, without its newline, into out. */
void first_line(const char *path, char *out, size_t cap);

#endif
