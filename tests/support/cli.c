/* cli.c: running commands from tests (see cli.h). */
#define _DEFAULT_SOURCE /* wait4, which reports the peak memory of one child */
#include "support/cli.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

void remove_tree(const char *path)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    ck_assert_int_eq(system(cmd), 0);
}

/* The scratch directories this process made. Each test runs in a forked process, which
 * inherits the list and the atexit handler: an entry is removed only by the process
 * that made it, so no child removes its parent's directory. */
enum { MAX_SCRATCH = 64 };
static struct {
    char path[512];
    pid_t owner;
} scratch[MAX_SCRATCH];
static int n_scratch;

static void remove_scratch(void)
{
    for (int k = 0; k < n_scratch; k++)
        if (scratch[k].owner == getpid()) {
            char cmd[600];
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch[k].path);
            if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", scratch[k].path);
        }
}

void scratch_dir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "/tmp/s2s-test-%s-%ld", name, (long)getpid());
    remove_tree(out);
    ck_assert_int_eq(mkdir(out, 0777), 0);
    static int registered;
    if (!registered)
        ck_assert_int_eq(atexit(remove_scratch), 0);
    registered = 1;
    ck_assert_int_lt(n_scratch, MAX_SCRATCH);
    snprintf(scratch[n_scratch].path, sizeof scratch[n_scratch].path, "%s", out);
    scratch[n_scratch++].owner = getpid();
}

static void redirect(int fd, const char *path)
{
    int f = open(path ? path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (f < 0)
        _exit(126);
    dup2(f, fd);
    close(f);
}

/* Forks and execs argv as opt says. In the child, a failed setup step exits 126. */
static pid_t spawn(const char *const *argv, const char *out_path, const char *err_path,
                   const RunOptions *opt)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        redirect(STDOUT_FILENO, out_path);
        redirect(STDERR_FILENO, err_path);
        int in = open(opt->in_path ? opt->in_path : "/dev/null", O_RDONLY);
        if (in < 0 || dup2(in, STDIN_FILENO) < 0)
            _exit(126);
        close(in);
        if (opt->cwd && chdir(opt->cwd) != 0)
            _exit(126);
        if (opt->ignore_sigint)
            signal(SIGINT, SIG_IGN);
        if (opt->max_address_space) {
            struct rlimit limit = {opt->max_address_space, opt->max_address_space};
            if (setrlimit(RLIMIT_AS, &limit) != 0)
                _exit(126);
        }
        for (const char *const *e = opt->env; e && *e; e++) {
            char name[256];
            const char *eq = strchr(*e, '=');
            snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
            setenv(name, eq + 1, 1);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

pid_t start_command(const char *const *argv, const char *out_path, const char *err_path,
                    const char *const *env)
{
    return spawn(argv, out_path, err_path, &(RunOptions){.env = env});
}

pid_t start_command_with(const char *const *argv, const char *out_path, const char *err_path,
                         const RunOptions *opt)
{
    return spawn(argv, out_path, err_path, opt);
}

static int decode_status(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}

int wait_command(pid_t pid, double seconds)
{
    struct timespec pause = {0, 20 * 1000 * 1000};
    for (double waited = 0; waited < seconds; waited += 0.02) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return decode_status(status);
        nanosleep(&pause, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

int wait_for_stdin_read(pid_t pid, double seconds)
{
    char path[64], text[256];
    snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
    struct timespec pause = {0, 5 * 1000 * 1000};
    for (double waited = 0; waited < seconds; waited += 0.005) {
        FILE *f = fopen(path, "r");
        if (!f)
            return -1; /* the process is gone */
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        long number = -1;
        unsigned long fd = 1;
        if (sscanf(text, "%ld %lx", &number, &fd) == 2 && number == SYS_read && fd == 0)
            return 0;
        nanosleep(&pause, NULL);
    }
    return -1;
}

int under_memory_tool(void)
{
    const char *preload = getenv("LD_PRELOAD");
    return getenv("ASAN_OPTIONS") != NULL || (preload && strstr(preload, "valgrind"));
}

int wait_for_open_file(pid_t pid, const char *path, double seconds)
{
    char dir[64], link[64 + 256], target[4096];
    struct timespec pause = {0, 5 * 1000 * 1000};
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    for (double waited = 0; waited < seconds; waited += 0.005) {
        DIR *d = opendir(dir);
        if (!d)
            return -1; /* the process is gone */
        for (struct dirent *e; (e = readdir(d));) {
            snprintf(link, sizeof link, "%s/%s", dir, e->d_name);
            ssize_t n = readlink(link, target, sizeof target - 1);
            if (n > 0) {
                target[n] = '\0';
                if (!strcmp(target, path)) {
                    closedir(d);
                    return 0;
                }
            }
        }
        closedir(d);
        nanosleep(&pause, NULL);
    }
    return -1;
}

int run_command_with(const char *const *argv, const char *out_path, const char *err_path,
                     const RunOptions *opt, long *max_rss_kib)
{
    pid_t pid = spawn(argv, out_path, err_path, opt);
    struct timespec pause = {0, 5 * 1000 * 1000};
    struct rusage usage;
    int status;
    /* a time limit is a guard against a hang: it stretches with the test cases' own
     * (make asan and make valgrind run 3 and 20 times slower) */
    const char *multiplier = getenv("CK_TIMEOUT_MULTIPLIER");
    const double limit = opt->timeout * (multiplier && atof(multiplier) > 1 ? atof(multiplier) : 1);
    for (double waited = 0;; waited += 0.005) {
        pid_t r = wait4(pid, &status, opt->timeout > 0 ? WNOHANG : 0, &usage);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            ck_abort_msg("wait4: %s", strerror(errno));
        if (opt->timeout > 0 && waited >= limit) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return -1;
        }
        if (r == 0)
            nanosleep(&pause, NULL);
    }
    if (max_rss_kib)
        *max_rss_kib = usage.ru_maxrss;
    return decode_status(status);
}

int run_command(const char *const *argv, const char *out_path, const char *err_path,
                const char *const *env)
{
    pid_t pid = start_command(argv, out_path, err_path, env);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return decode_status(status);
}

int path_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

void first_line(const char *path, char *out, size_t cap)
{
    char *s = read_file(path);
    char *nl = strchr(s, '\n');
    if (nl)
        *nl = '\0';
    snprintf(out, cap, "%s", s);
    free(s);
}

/* The DOM headless Chromium builds from the page at html (its scripts run), as text
 * (free it); its profile and the dump go under dir. */
char *chromium_dom(const char *html, const char *dir)
{
    char out[700], profile[700], url[800];
    snprintf(out, sizeof out, "%s/dom.html", dir);
    snprintf(profile, sizeof profile, "--user-data-dir=%s/chromium", dir);
    snprintf(url, sizeof url, "file://%s", html);
    const char *argv[] = {"/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
                          "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update",
                          "--disable-sync", profile, "--dump-dom", url, NULL};
    ck_assert_int_eq(run_command(argv, out, NULL, NULL), 0);
    return read_file(out);
}

int count_of(const char *haystack, const char *needle)
{
    int n = 0;
    for (const char *p = haystack; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}
