/* real.h: the floating-point type of the numerical core (ops, conv, gru, attention, model).
 * The core is compiled twice: as float for training (the default) and, with
 * -DS2S_REAL_DOUBLE, as double for the gradient checks, which need double precision
 * to reach 1e-6 relative error. In the double build every public core symbol gets an
 * _f64 suffix, so both builds can be linked into one test binary and compared. */
#ifndef S2S_REAL_H
#define S2S_REAL_H

#include <math.h>
#include <cblas.h>

#include "nn/fastmath.h"
#include "nn/small_gemm.h"

#ifdef S2S_REAL_DOUBLE
typedef double real;
#define REAL_NAME "double"
#define cblas_gemm cblas_dgemm
#define cblas_gemv cblas_dgemv
#define cblas_ger cblas_dger

/* Core API renames for the double build (a missing line here is a duplicate-symbol
 * link error, never a silent mix of the two builds). */
#define linear_forward linear_forward_f64
#define linear_backward linear_backward_f64
#define linear_forward_packed linear_forward_packed_f64
#define packed_product packed_product_f64
#define linear_forward_any linear_forward_any_f64
#define pack_panels pack_panels_f64
#define embedding_forward embedding_forward_f64
#define embedding_backward embedding_backward_f64
#define tanh_forward tanh_forward_f64
#define sinusoid_position sinusoid_position_f64
#define positions_forward positions_forward_f64
#define tdec_carve tdec_carve_f64
#define tdec_carve_work tdec_carve_work_f64
#define tdec_forward tdec_forward_f64
#define tdec_backward tdec_backward_f64
#define tdec_cache_floats tdec_cache_floats_f64
#define tdec_cache_carve tdec_cache_carve_f64
#define tdec_cache_start tdec_cache_start_f64
#define tdec_step tdec_step_f64
#define tdec_step_weights_floats tdec_step_weights_floats_f64
#define tdec_step_weights_make tdec_step_weights_make_f64
#define tdec_cache_reorder tdec_cache_reorder_f64
#define model_tdec_dims model_tdec_dims_f64
#define model_is_transformer model_is_transformer_f64
#define transformer_embed_step transformer_embed_step_f64
#define transformer_forward_to_readout transformer_forward_to_readout_f64
#define transformer_backward_from_readout transformer_backward_from_readout_f64
#define tanh_backward tanh_backward_f64
#define relu_forward relu_forward_f64
#define relu_backward relu_backward_f64
#define relu_freeze relu_freeze_f64
#define relu_frozen_choice relu_frozen_choice_f64
#define conv3x3_forward conv3x3_forward_f64
#define conv3x3_backward conv3x3_backward_f64
#define maxpool2x2_forward maxpool2x2_forward_f64
#define maxpool2x2_backward maxpool2x2_backward_f64
#define layer_norm_forward layer_norm_forward_f64
#define layer_norm_backward layer_norm_backward_f64
#define dropout_forward dropout_forward_f64
#define dropout_backward dropout_backward_f64
#define sublayer_end_forward sublayer_end_forward_f64
#define sublayer_end_backward sublayer_end_backward_f64
#define ffn_inner_forward ffn_inner_forward_f64
#define ffn_inner_backward ffn_inner_backward_f64
#define heads_forward heads_forward_f64
#define heads_draw_masks heads_draw_masks_f64
#define heads_backward heads_backward_f64
#define real_rows_carve real_rows_carve_f64
#define real_rows_set real_rows_set_f64
#define real_rows_gather real_rows_gather_f64
#define real_rows_scatter real_rows_scatter_f64
#define real_rows_scatter_add real_rows_scatter_add_f64
#define real_rows_dropout_forward real_rows_dropout_forward_f64
#define real_rows_dropout_backward real_rows_dropout_backward_f64
#define sa_carve sa_carve_f64
#define sa_carve_work sa_carve_work_f64
#define sa_attend_forward sa_attend_forward_f64
#define sa_attend_backward sa_attend_backward_f64
#define sa_forward sa_forward_f64
#define sa_output sa_output_f64
#define sa_backward sa_backward_f64
#define column_sums_add column_sums_add_f64
#define conv3x3_forward conv3x3_forward_f64
#define conv3x3_backward conv3x3_backward_f64
#define maxpool2x2_forward maxpool2x2_forward_f64
#define maxpool2x2_backward maxpool2x2_backward_f64
#define hidden_projection_forward hidden_projection_forward_f64
#define hidden_projection_backward hidden_projection_backward_f64
#define softmax_xent_forward softmax_xent_forward_f64
#define softmax_xent_backward softmax_xent_backward_f64
#define gru_step_forward gru_step_forward_f64
#define gru_step_backward gru_step_backward_f64
#define lstm_step_forward lstm_step_forward_f64
#define lstm_step_backward lstm_step_backward_f64
#define rnn_tanh_step_forward rnn_tanh_step_forward_f64
#define rnn_tanh_step_backward rnn_tanh_step_backward_f64
#define cell_step_forward cell_step_forward_f64
#define cell_step_backward cell_step_backward_f64
#define cell_sequence_forward cell_sequence_forward_f64
#define cell_sequence_backward cell_sequence_backward_f64
#define cell_gates cell_gates_f64
#define cell_cache_width cell_cache_width_f64
#define cell_state_offset cell_state_offset_f64
#define cell_name cell_name_f64
#define cell_sequence_scratch cell_sequence_scratch_f64
#define cell_names cell_names_f64
#define score_names score_names_f64
#define tensor_carve tensor_carve_f64
#define attn_carve attn_carve_f64
#define attn_has_weights attn_has_weights_f64
#define attn_size_problems attn_size_problems_f64
#define attn_key_width attn_key_width_f64
#define attn_query_width attn_query_width_f64
#define attn_pre_width attn_pre_width_f64
#define attn_keys_forward attn_keys_forward_f64
#define attn_keys_backward attn_keys_backward_f64
#define attn_step_forward attn_step_forward_f64
#define attn_step_backward attn_step_backward_f64
#define attn_queries_backward attn_queries_backward_f64
#define encoder_ops encoder_ops_f64
#define grid_sine grid_sine_f64
#define encoder_carve_embeddings encoder_carve_embeddings_f64
#define encoder_embed_forward encoder_embed_forward_f64
#define encoder_embed_backward encoder_embed_backward_f64
#define birnn_encoder birnn_encoder_f64
#define attention_only_encoder attention_only_encoder_f64
#define image_encoder image_encoder_f64
#define encoder_mean_forward encoder_mean_forward_f64
#define encoder_mean_annotations_backward encoder_mean_annotations_backward_f64
#define encoder_mean_backward encoder_mean_backward_f64
#define encoder_no_scratch encoder_no_scratch_f64
#define model_encoder_dims model_encoder_dims_f64
#define model_attn_dims model_attn_dims_f64
#define model_annotation_width model_annotation_width_f64
#define model_has_alignments model_has_alignments_f64
#define model_grid_side model_grid_side_f64
#define model_reads_pictures model_reads_pictures_f64
#define model_use_image_encoder model_use_image_encoder_f64
#define model_cell_name model_cell_name_f64
#define model_starts_cell_state model_starts_cell_state_f64
#define model_describe model_describe_f64
#define context_gate_forward context_gate_forward_f64
#define context_gate_backward context_gate_backward_f64
#define model_set_regularization model_set_regularization_f64
#define model_set_loss_counts model_set_loss_counts_f64
#define model_forward_to_readout model_forward_to_readout_f64
#define model_workspace_carve model_workspace_carve_f64
#define init_state_forward init_state_forward_f64
#define init_state_backward init_state_backward_f64
#define model_output_layer model_output_layer_f64
#define model_att_pre_step model_att_pre_step_f64
#define attn_additive_scores_forward attn_additive_scores_forward_f64
#define attn_additive_scores_by_row attn_additive_scores_by_row_f64
#define attn_additive_scores_backward attn_additive_scores_backward_f64
#define attn_dot_scores_forward attn_dot_scores_forward_f64
#define attn_dot_scores_backward attn_dot_scores_backward_f64
#define attn_softmax_forward attn_softmax_forward_f64
#define attn_softmax_backward attn_softmax_backward_f64
#define attn_context_forward attn_context_forward_f64
#define attn_context_backward attn_context_backward_f64
#define params_carve params_carve_f64
#define params_init params_init_f64
#define params_alloc params_alloc_f64
#define params_free params_free_f64
#define model_workspace_init model_workspace_init_f64
#define model_workspace_free model_workspace_free_f64
#define model_workspace_bytes model_workspace_bytes_f64
#define model_encode model_encode_f64
#define model_self_weights model_self_weights_f64
#define model_forward model_forward_f64
#define model_backward model_backward_f64
#define model_backward_rows model_backward_rows_f64
#define model_forward_backward model_forward_backward_f64
#define model_set_hard model_set_hard_f64
#define model_set_argmax model_set_argmax_f64
#define model_set_output_done model_set_output_done_f64
#define model_keep_step model_keep_step_f64
#define model_pass_loss model_pass_loss_f64
#define model_ground_mass model_ground_mass_f64
#define hard_contexts hard_contexts_f64
#define hard_plan hard_plan_f64
#define hard_step_choice hard_step_choice_f64
#define hard_objective hard_objective_f64
#define hard_step_weights hard_step_weights_f64
#define attn_choose attn_choose_f64
#define attn_pick_forward attn_pick_forward_f64
#define attn_pick_backward attn_pick_backward_f64
#define attn_entropy attn_entropy_f64
#define attn_entropy_backward attn_entropy_backward_f64
#define attn_log_prob_backward attn_log_prob_backward_f64
#define params_carve_dense params_carve_dense_f64
#define params_dense_target_embeddings params_dense_target_embeddings_f64
#define embedding_grad_init embedding_grad_init_f64
#define embedding_grad_free embedding_grad_free_f64
#define embedding_grad_clear embedding_grad_clear_f64
#define embedding_grad_add embedding_grad_add_f64
#define embedding_grad_merge embedding_grad_merge_f64
#else
typedef float real;
#define REAL_NAME "float"
#define cblas_gemm cblas_sgemm
#define cblas_gemv cblas_sgemv
#define cblas_ger cblas_sger
#endif

/* The maths functions of the real type (tgmath.h would do this too, but it clashes
 * with the <complex.h> that OpenBLAS's cblas.h includes): libm in double, the
 * vectorisable versions of fastmath.h in float. */
static inline real r_exp(real x)
{
#ifdef S2S_REAL_DOUBLE
    return exp(x);
#else
    return fast_expf(x);
#endif
}

static inline real r_log(real x)
{
#ifdef S2S_REAL_DOUBLE
    return log(x);
#else
    return logf(x);
#endif
}

static inline real r_tanh(real x)
{
#ifdef S2S_REAL_DOUBLE
    return tanh(x);
#else
    return fast_tanhf(x);
#endif
}

static inline real r_sigmoid(real x)
{
    return (real)1 / ((real)1 + r_exp(-x));
}

/* C (M, N) = alpha op(A) (M, K) . op(B) (K, N) + beta C, all row-major: one BLAS call
 * per product. A product with one row or one column (decoding or training one sentence
 * at a time) goes to gemv, and one with K = 1 (a weight gradient of one sentence) to
 * ger: gemm pays for packing its operands, which only big products repay. With
 * `kernels`, a small product may be libxsmm's instead (small_gemm.h). */
static inline void matmul_by(int kernels, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                             int M, int N, int K, real alpha, const real *A, int lda,
                             const real *B, int ldb, real beta, real *C, int ldc)
{
    if (M == 1) { /* c (N) = alpha op(B)^T a + beta c, a = op(A)'s only row */
        int inc_a = ta == CblasNoTrans ? 1 : lda;
        cblas_gemv(CblasRowMajor, tb == CblasNoTrans ? CblasTrans : CblasNoTrans,
                   tb == CblasNoTrans ? K : N, tb == CblasNoTrans ? N : K, alpha, B, ldb, A, inc_a,
                   beta, C, 1);
    } else if (N == 1) { /* c (M) = alpha op(A) b + beta c, b = op(B)'s only column */
        int inc_b = tb == CblasNoTrans ? ldb : 1;
        cblas_gemv(CblasRowMajor, ta, ta == CblasNoTrans ? M : K, ta == CblasNoTrans ? K : M, alpha,
                   A, lda, B, inc_b, beta, C, ldc);
    } else if (K == 1 && beta == 1) { /* C += alpha x y^T: x = op(A)'s column, y = op(B)'s row */
        cblas_ger(CblasRowMajor, M, N, alpha, A, ta == CblasNoTrans ? lda : 1, B,
                  tb == CblasNoTrans ? 1 : ldb, C, ldc);
    } else {
#ifndef S2S_REAL_DOUBLE
        if (kernels && alpha == 1 && (beta == 0 || beta == 1) &&
            small_gemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc))
            return;
#else
        (void)kernels;
#endif
        cblas_gemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    }
}

/* The product, by libxsmm's kernels where they may run. */
static inline void matmul(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int M, int N, int K,
                          real alpha, const real *A, int lda, const real *B, int ldb, real beta,
                          real *C, int ldc)
{
    matmul_by(1, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* The product by BLAS alone: for products whose shape and strides change with every
 * sentence (one sentence's attention heads: its length, the batch's longest, the
 * batch's width), where libxsmm would make, and keep, a kernel for each new shape: a JIT
 * build with its mmap and munmap, dozens a training step, a tenth of it at size S. */
static inline void matmul_varied(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int M, int N,
                                 int K, real alpha, const real *A, int lda, const real *B,
                                 int ldb, real beta, real *C, int ldc)
{
    matmul_by(0, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

#endif
