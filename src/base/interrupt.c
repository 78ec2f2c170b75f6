/* interrupt.c: signals recorded by their handlers, acted on at safe points (see
 * interrupt.h). */
#include "base/interrupt.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t received, saving_now;
/* received was adopted from another rank of an mpirun: this process's own copy of the
 * signal, when it comes, is the first it got, not a second */
static volatile sig_atomic_t adopted;
/* a second SIGINT/SIGTERM exits at once (training's "now"); translate's stop comes
 * within a line anyway, and must not leave half of one */
static volatile sig_atomic_t repeat_exits = 1;

static void on_signal(int sig)
{
    if (sig == SIGHUP || sig == SIGPIPE) {
        /* Their repeats say nothing new: the terminal or the pipe stays gone. Writes to
         * it now fail with EIO/EPIPE, which the logger ignores. */
        struct sigaction ignore;
        memset(&ignore, 0, sizeof ignore);
        ignore.sa_handler = SIG_IGN;
        sigaction(sig, &ignore, NULL);
        if (!received)
            received = sig;
        return;
    }
    /* SIGINT/SIGTERM: the second one before a save has begun means "now". */
    if (adopted) {
        adopted = 0;
        return;
    }
    if (received && !saving_now && repeat_exits)
        _exit(128 + sig);
    if (!received)
        received = sig;
}

static void install(const int *signals, size_t n)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: a read from a terminal or a pipe returns EINTR, so the reader
     * gets to poll interrupt_pending() instead of waiting for more input. */
    for (size_t k = 0; k < n; k++) {
        struct sigaction now;
        /* ignored when we started (a background job of a script ignores SIGINT, nohup
         * SIGHUP): it stays ignored, as POSIX has it */
        if (sigaction(signals[k], NULL, &now) == 0 && now.sa_handler == SIG_IGN)
            continue;
        sigaction(signals[k], &sa, NULL);
    }
}

void interrupt_install(void)
{
    const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    install(signals, sizeof signals / sizeof *signals);
}

void interrupt_install_stop(void)
{
    repeat_exits = 0;
    const int signals[] = {SIGINT, SIGTERM};
    install(signals, sizeof signals / sizeof *signals);
}

int interrupt_pending(void)
{
    return received;
}

void interrupt_adopt(int sig)
{
    if (received)
        return;
    adopted = 1;
    received = sig;
}

void interrupt_saving(int saving)
{
    saving_now = saving;
}

int interrupt_exit_code(void)
{
    return 128 + received;
}
