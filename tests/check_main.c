/* check_main.c: the one test runner. Runs every suite (or the one named by
 * CK_RUN_SUITE), pins OpenBLAS to one thread so results are reproducible, and exits
 * non-zero if any test failed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "support/suites.h"
#include "support/tinyrun.h"

#include <cblas.h> /* openblas_set_num_threads */

int main(void)
{
    openblas_set_num_threads(1);
    tinyrun_init();
    /* Line-buffered, so a test's printed table survives when the forked test fails. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    SRunner *runner = srunner_create(rng_suite());
    srunner_add_suite(runner, workers_suite());
    srunner_add_suite(runner, small_gemm_suite());
    srunner_add_suite(runner, pool_float_suite());
    srunner_add_suite(runner, batch_suite());
    srunner_add_suite(runner, tokenize_suite());
    srunner_add_suite(runner, number_suite());
    srunner_add_suite(runner, config_suite());
    srunner_add_suite(runner, data_suite());
    srunner_add_suite(runner, image_suite());
    srunner_add_suite(runner, ground_suite());
    srunner_add_suite(runner, shapes_suite());
    srunner_add_suite(runner, gen_suite());
    srunner_add_suite(runner, align_suite());
    srunner_add_suite(runner, metrics_suite());
    srunner_add_suite(runner, fdcheck_suite());
    srunner_add_suite(runner, ops_suite());
    srunner_add_suite(runner, conv_suite());
    srunner_add_suite(runner, cell_suite());
    srunner_add_suite(runner, attention_suite());
    srunner_add_suite(runner, self_attention_suite());
    srunner_add_suite(runner, model_suite());
    srunner_add_suite(runner, hard_suite());
    srunner_add_suite(runner, explain_suite());
    srunner_add_suite(runner, training_suite());
    srunner_add_suite(runner, checkpoint_suite());
    srunner_add_suite(runner, train_suite());
    srunner_add_suite(runner, resume_suite());
    srunner_add_suite(runner, shards_suite());
    srunner_add_suite(runner, average_suite());
    srunner_add_suite(runner, mpi_suite());
    srunner_add_suite(runner, faults_suite());
    srunner_add_suite(runner, report_suite());
    srunner_add_suite(runner, picture_suite());
    srunner_add_suite(runner, grounding_suite());
    srunner_add_suite(runner, translate_suite());
    srunner_add_suite(runner, regress_suite());
    srunner_add_suite(runner, badinput_suite());
    srunner_add_suite(runner, variants_suite());
    srunner_add_suite(runner, images_suite());
    srunner_add_suite(runner, explain_cli_suite());
    srunner_add_suite(runner, gradcheck_suite());
    srunner_add_suite(runner, install_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
