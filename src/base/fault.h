/* fault.h: fault injection for the reliability tests, compiled in only with
 * -DS2S_FAULT_HOOKS (the build/s2s-faults binary the tests run); in s2s itself every
 * hook is a constant and costs nothing. Faults are chosen by environment variables, so
 * a test can loop over them deterministically instead of racing a kill against a timer:
 *   S2S_FAULT_NAN_STEPS=A-B   the loss of steps A..B (1-based; "A-" = from A on) is NaN
 *   S2S_FAULT_INF_GRAD_STEPS=A-B  one gradient entry of those steps is +Inf
 *   S2S_FAULT_IO=op:k[:errno] the k-th (1-based) op of the durable writes fails with
 *                             errno (default ENOSPC); op is write, flush, fsync, close
 *                             or rename, or logwrite: the k-th line appended to a run's
 *                             log stops halfway and fails
 *   S2S_FAULT_KILL_BYTES=N    SIGKILL once N bytes of a checkpoint are in its file
 *                             (N = its size: all written, the header not yet final)
 *   S2S_FAULT_KILL_AT=stage   SIGKILL at a stage of the checkpoint commit: fsync,
 *                             rename, dirsync (renamed, directory not yet synced)
 *   S2S_FAULT_ALLOC=k         the k-th allocation through mem.h fails ("k-": and
 *                             every one after it)
 *   S2S_FAULT_STEP_MS=ms      every training step takes ms milliseconds longer (so a
 *                             test's signals surely arrive in the middle of a step)
 *   S2S_FAULT_SIGNAL=phase:step[:sig[:times]]  the process sends itself sig (a number;
 *                             default SIGTERM), times times in a row (default 1), when
 *                             training reaches phase at that step: batch, gradient,
 *                             update, log, dump, validate, report, save (inside a
 *                             checkpoint save), agreed (just after the ranks agreed on
 *                             the step's end) or test (the final test translation)
 *   S2S_FAULT_BATCH=step      the batch of that step cannot be read (as a picture past
 *                             the cache that no longer decodes)
 *   S2S_FAULT_TRACE=path      a line appended to path for each durable event: a log's
 *                             line written ("write NAME SIZE"), a log synced ("sync NAME
 *                             SIZE"), the log lengths a checkpoint records ("marks
 *                             METRICS ALIGNMENTS"), a checkpoint renamed into place
 *                             ("rename PATH"): what the durability test reads
 * Under mpirun, S2S_FAULT_RANK=K gives the SIGNAL and BATCH faults to rank K alone. */
#ifndef S2S_FAULT_H
#define S2S_FAULT_H

#include <stddef.h>
#include <stdint.h>

typedef enum { FAULT_WRITE, FAULT_FLUSH, FAULT_FSYNC, FAULT_CLOSE, FAULT_RENAME, FAULT_LOG_WRITE } FaultOp;

#ifdef S2S_FAULT_HOOKS
int fault_nan_loss(long step);
int fault_inf_grad(long step);
/* The errno this call of op must fail with, or 0. */
int fault_io_error(FaultOp op);
/* How many checkpoint bytes may be written before the process dies (SIZE_MAX: all). */
size_t fault_kill_bytes(void);
/* Dies here (SIGKILL) if S2S_FAULT_KILL_AT names stage. */
void fault_kill_at(const char *stage);
/* Nonzero if this allocation must fail. */
int fault_alloc_fails(void);
/* Sleeps S2S_FAULT_STEP_MS milliseconds, through signals. */
void fault_slow_step(void);
/* Raises S2S_FAULT_SIGNAL's signal if it names this phase and step. */
void fault_signal_at(const char *phase, long step);
/* Nonzero if S2S_FAULT_BATCH names this step. */
int fault_batch_unreadable(long step);
/* Appends the line fmt makes to S2S_FAULT_TRACE's file, if it is set. */
void fault_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#else
static inline int fault_nan_loss(long step)
{
    (void)step;
    return 0;
}
static inline int fault_inf_grad(long step)
{
    (void)step;
    return 0;
}
static inline int fault_io_error(FaultOp op)
{
    (void)op;
    return 0;
}
static inline size_t fault_kill_bytes(void)
{
    return SIZE_MAX;
}
static inline void fault_kill_at(const char *stage)
{
    (void)stage;
}
static inline int fault_alloc_fails(void)
{
    return 0;
}
static inline void fault_slow_step(void)
{
}
static inline void fault_signal_at(const char *phase, long step)
{
    (void)phase;
    (void)step;
}
static inline int fault_batch_unreadable(long step)
{
    (void)step;
    return 0;
}
static inline void fault_trace(const char *fmt, ...)
{
    (void)fmt;
}
#endif

#endif
