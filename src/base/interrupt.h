/* interrupt.h: stopping on a signal at a safe point instead of where the signal lands.
 *
 * `s2s train` catches SIGINT, SIGTERM, SIGHUP (the terminal closed) and SIGPIPE (the
 * reader of its stderr went away): the handler only records the signal, and the
 * program polls interrupt_pending() where stopping loses nothing -- the training loop
 * once a step's work (its validation included) is done, the readers of input between
 * blocks, the test translation between batches -- then saves and exits with 128 + the
 * signal's number (cli/INTERFACE.md). A second SIGINT or SIGTERM before a save has begun
 * exits at once; repeats of SIGHUP and SIGPIPE are ignored (a broken stderr raises a
 * SIGPIPE at every line written to it, and must not stop the save).
 *
 * `s2s translate` catches SIGINT and SIGTERM only (interrupt_install_stop): it finishes
 * the line it is writing and stops, whatever repeats; SIGPIPE ends it as it ends any
 * filter.
 *
 * A signal that was ignored when the program started (a job started with `&` from a
 * script ignores SIGINT; nohup ignores SIGHUP) stays ignored, as POSIX has it.
 *
 * Commands that install nothing keep the default dispositions (a signal ends them;
 * their output so far is what they wrote), and interrupt_pending() stays 0 for them. */
#ifndef S2S_INTERRUPT_H
#define S2S_INTERRUPT_H

/* Installs the handlers described above: for SIGINT, SIGTERM, SIGHUP and SIGPIPE
 * (training), or for SIGINT and SIGTERM only. */
void interrupt_install(void);
void interrupt_install_stop(void);

/* The first signal received since interrupt_install, or 0. */
int interrupt_pending(void);

/* Records sig as received if no signal was (the other ranks of an mpirun agree to stop
 * for a signal one of them got, and exit as that rank does). */
void interrupt_adopt(int sig);

/* Whether a checkpoint is being written: a second SIGINT/SIGTERM then waits for it. */
void interrupt_saving(int saving);

/* The shell's exit status for the pending signal (128 + its number). */
int interrupt_exit_code(void);

#endif
