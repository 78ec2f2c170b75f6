/* cmd_train.c: `s2s train`: a training run (train/trainer.h) from a config, with its signal
 * handling and exit codes. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "base/interrupt.h"
#include "base/ranks.h"
#include "cli/command.h"
#include "text/termtext.h"
#include "train/trainer.h"

static const char TRAIN_USAGE[] =
    "usage: s2s train CONFIG.yaml [--set SECTION.KEY=VALUE]... [--resume RUN_DIR]\n"
    "\n"
    "Trains the model CONFIG.yaml describes (every key: configs/README.md). The run\n"
    "directory gets config.yaml (the effective config), train.log, metrics.jsonl and\n"
    "checkpoints/last.ckpt and best.ckpt. --resume continues the run saved in RUN_DIR\n"
    "exactly where it stopped (settings that shape the model or the training must not\n"
    "change; stopping and logging settings may).\n"
    "\n"
    "Exit codes: 0 done; 2 bad config, data or checkpoint; 3 cannot write (a full disk,\n"
    "a file-size limit); 4 diverged; 130/143/129/141 stopped by SIGINT/SIGTERM/SIGHUP/\n"
    "SIGPIPE once the step's work is done and checkpoints/last.ckpt is saved (a second\n"
    "SIGINT or SIGTERM before the save begins exits at once, leaving the checkpoints as\n"
    "they were).\n";

int cmd_train(int argc, char **argv)
{
    Config cfg;
    const char *resume = NULL;
    int rc = cmd_load_config(&cfg, argc, argv, TRAIN_USAGE, &resume, NULL);
    /* under mpirun every rank loads the config: one that could not (its message said
     * why) stops the others, which would wait for it at their first exchange */
    long failed = rc > 0 ? ranks_rank() : -1;
    ranks_max(&failed, 1);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (failed >= 0) {
        if (ranks_rank() == 0)
            fprintf(stderr, "s2s: error: rank %ld could not load the config (its message "
                    "above); nothing was trained\n", failed);
        return EXIT_USAGE;
    }
    interrupt_install();
    Error err;
    int outcome = train_run(&cfg, resume, &err);
    if (outcome != TRAIN_OK && outcome != TRAIN_SIGNALLED && !err.msg[0])
        return outcome; /* another rank of an mpirun said what went wrong */
    switch (outcome) {
    case TRAIN_OK:
        return EXIT_OK;
    case TRAIN_SIGNALLED:
        if (err.msg[0]) {
            char safe[ERROR_MSG_MAX * 4];
            fprintf(stderr, "s2s: %s\n", termtext_escape(safe, sizeof safe, err.msg));
        }
        return interrupt_exit_code();
    case TRAIN_IO_ERROR:
        return cmd_error(&err, EXIT_IO);
    case TRAIN_DIVERGED:
        return cmd_error(&err, EXIT_DIVERGED);
    default:
        return cmd_error(&err, EXIT_USAGE);
    }
}
