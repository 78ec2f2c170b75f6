/* check_main.c: the one test runner. Runs every suite, or the one named by
 * CK_RUN_SUITE (scripts/checks/run-checks.py runs each suite as its own process, as many at
 * once as there are cores); `check_s2s --list` prints the suites' names, one a line.
 * Pins OpenBLAS to one thread so results are reproducible, and exits non-zero if any
 * test failed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/suites.h"
#include "support/tinyrun.h"

#include <cblas.h> /* openblas_set_num_threads */

/* Every suite, in the order a whole run takes them. A suite's name is its function's
 * (the name it gives suite_create): run-checks.py fails a suite that runs no test, so a
 * name that drifts from its suite cannot hide it. */
#define SUITE(name) {#name, name##_suite}
static const struct {
    const char *name;
    Suite *(*make)(void);
} SUITES[] = {
    SUITE(rng), SUITE(workers), SUITE(small_gemm), SUITE(pool_float), SUITE(batch),
    SUITE(tokenize), SUITE(number), SUITE(subwords), SUITE(get_multi30k), SUITE(config), SUITE(data), SUITE(image),
    SUITE(ground), SUITE(shapes), SUITE(gen), SUITE(align), SUITE(metrics), SUITE(fdcheck),
    SUITE(ops), SUITE(conv), SUITE(cell), SUITE(attention), SUITE(self_attention),
    SUITE(model), SUITE(hard), SUITE(explain), SUITE(training), SUITE(evaluator), SUITE(checkpoint),
    SUITE(train), SUITE(resume), SUITE(shards), SUITE(average), SUITE(mpi), SUITE(faults),
    SUITE(report), SUITE(picture), SUITE(grounding), SUITE(beam), SUITE(split), SUITE(translate), SUITE(subword_run), SUITE(regress),
    SUITE(badinput), SUITE(variants), SUITE(images), SUITE(explain_cli), SUITE(gradcheck), SUITE(gradcheck_self),
    SUITE(gradcheck_tatoeba),
    SUITE(install), SUITE(tour_text), SUITE(tour_image), SUITE(tour_commands),
};
enum { N_SUITES = sizeof SUITES / sizeof *SUITES };

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        for (int k = 0; k < N_SUITES; k++)
            printf("%s\n", SUITES[k].name);
        return EXIT_SUCCESS;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: check_s2s [--list]   (CK_RUN_SUITE=NAME runs one suite)\n");
        return 2;
    }
    openblas_set_num_threads(1);
    tinyrun_init();
    /* Line-buffered, so a test's printed table survives when the forked test fails. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    SRunner *runner = srunner_create(NULL);
    for (int k = 0; k < N_SUITES; k++)
        srunner_add_suite(runner, SUITES[k].make());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    /* What the suites' tests shared through this process's pid (test_images.c's corpus):
     * a test's own scratch directory carries its own pid and goes with it. */
    char shared[128];
    snprintf(shared, sizeof shared, "rm -rf /tmp/s2s-test-*-%ld", (long)getpid());
    if (system(shared) != 0)
        fprintf(stderr, "check_s2s: could not remove /tmp/s2s-test-*-%ld\n", (long)getpid());
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
