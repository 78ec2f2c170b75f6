/* suites.h: every Check suite of the test binary, one per module (see check_main.c). */
#ifndef S2S_TEST_SUITES_H
#define S2S_TEST_SUITES_H

#include <check.h>

Suite *rng_suite(void);
Suite *workers_suite(void);
Suite *small_gemm_suite(void);
Suite *pool_float_suite(void);
Suite *batch_suite(void);
Suite *tokenize_suite(void);
Suite *number_suite(void);
Suite *config_suite(void);
Suite *data_suite(void);
Suite *image_suite(void);
Suite *ground_suite(void);
Suite *shapes_suite(void);
Suite *images_suite(void);
Suite *gen_suite(void);
Suite *align_suite(void);
Suite *report_suite(void);
Suite *picture_suite(void);
Suite *translate_suite(void);
Suite *beam_suite(void);
Suite *metrics_suite(void);
Suite *grounding_suite(void);
Suite *fdcheck_suite(void);
Suite *ops_suite(void);
Suite *conv_suite(void);
Suite *cell_suite(void);
Suite *attention_suite(void);
Suite *self_attention_suite(void);
Suite *model_suite(void);
Suite *hard_suite(void);
Suite *explain_suite(void);
Suite *explain_cli_suite(void);
Suite *training_suite(void);
Suite *evaluator_suite(void);
Suite *train_suite(void);
Suite *resume_suite(void);
Suite *shards_suite(void);
Suite *average_suite(void);
Suite *mpi_suite(void);
Suite *checkpoint_suite(void);
Suite *faults_suite(void);
Suite *regress_suite(void);
Suite *badinput_suite(void);
Suite *variants_suite(void);
Suite *gradcheck_suite(void);
Suite *gradcheck_self_suite(void);
Suite *gradcheck_tatoeba_suite(void);
Suite *install_suite(void);
Suite *tour_text_suite(void);
Suite *tour_image_suite(void);
Suite *tour_commands_suite(void);

#endif
