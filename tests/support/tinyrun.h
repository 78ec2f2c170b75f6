/* tinyrun.h: the tiny training setup the end-to-end tests share: a generated reversal
 * corpus (with its gold alignment), a config for a tiny model, and running s2s train. */
#ifndef S2S_TEST_TINYRUN_H
#define S2S_TEST_TINYRUN_H

#include <stddef.h>
#include <stdint.h>

#include "train/checkpoint.h"

/* The programs under test: ./s2s and ./build/s2s-faults (with fault hooks), or the
 * builds named by $S2S_BIN and $S2S_FAULTS_BIN (make asan). Set by tinyrun_init. */
extern const char *S2S;
extern const char *S2S_FAULTS;
void tinyrun_init(void);
/* S2S as an absolute path, for children started in another directory. */
const char *s2s_absolute(void);

/* dir/NAME.{src,tgt,align}: pairs of 2-6 words w0..w19, the target reversed; eol ends
 * each line. */
void write_reverse_corpus(const char *dir, const char *name, int pairs, uint64_t seed,
                          const char *eol);
/* dir/tiny.yaml: a tiny model on dir/train.*, validated on dir/valid.*, run dir dir/run. */
void write_tiny_setup(const char *dir);
/* Runs `binary train dir/tiny.yaml` with --set overrides (NULL-terminated) and extra
 * environment entries; stderr goes to dir/err_name (default stderr.txt). Returns the
 * exit code. */
int train(const char *binary, const char *dir, const char *const *sets, const char *const *env,
          const char *err_name);
/* A fresh scratch directory dir (test name `name`) with the tiny setup, trained 80 steps
 * (validated at 40 and 80) with the extra --set overrides (NULL-terminated, at most 5):
 * a few seconds. The run is dir/run. */
void tiny_model_run(char *dir, size_t cap, const char *name, const char *const *extra);
/* tiny_model_run, then check(run, 0) on it trained and check(run, 1) with random weights
 * (the check's to draw). */
void tiny_trained_and_random(const char *name, const char *const *extra,
                             void (*check)(const char *run, double random_scale));
/* --set overrides for the whole Transformer of the tiny setup: attention-only encoder,
 * 2 decoder layers, 2 heads. */
extern const char *const TINY_TRANSFORMER[];
/* dir/c.yaml: one step of a tiny model on the given data section (YAML lines under
 * `data:`), run directory dir/run (removed first). */
void write_data_config(const char *dir, const char *data);
/* Trains as write_data_config says; returns the exit code and the first line of stderr
 * (dir/err.txt). A failed run must not have created its run directory. */
int train_on_data(const char *dir, const char *data, char *line, size_t cap);
/* Loads run_dir/checkpoints/name with its training state; fails the test on error. */
void load_checkpoint(Checkpoint *ck, const char *run_dir, const char *name);
/* checkpoints/name of both run directories hold the same weights, optimizer state and
 * progress, bit for bit (measured times and the length of metrics.jsonl, which holds
 * them, aside). */
void assert_same_training_state(const char *run_a, const char *run_b, const char *name);

#endif
