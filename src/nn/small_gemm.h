/* small_gemm.h: float products small enough for libxsmm's JIT kernels (when s2s is built
 * with it, S2S_XSMM). A training step is thousands of products of a few dozen rows
 * (one decoder step of one shard); libxsmm generates a kernel for each such shape once
 * and calls it directly, without the packing copies BLAS makes on every call
 * (scripts/bench/gemm-shapes measured 1.1-1.5x OpenBLAS on one core for s2s's own products). */
#ifndef S2S_SMALL_GEMM_H
#define S2S_SMALL_GEMM_H

#include <cblas.h>

/* Whether the coming products may use the kernels (0 at the start). They run on the
 * calling thread alone: training turns them on for sharded steps, whose products run
 * one thread each anyway, and off where BLAS has all the threads for one product
 * (validation, decoding, one shard). A setting of the run, not of the thread count, so
 * that which code multiplies never depends on the threads. Set between passes only. */
void small_gemm_enable(int on);

/* C (M, N) = op(A) (M, K) . op(B) (K, N) + beta C, row-major, beta 0 or 1, by a JIT
 * kernel when they are enabled and libxsmm makes one for the shape: returns 1 if done, 0
 * to leave it to BLAS. Always 0 without S2S_XSMM. */
int small_gemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int M, int N, int K,
               const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc);

/* As small_gemm, whatever small_gemm_enable says: for products whose operands were laid
 * out for the kernels on purpose (decoding's weights, packed once, nn/ops.h
 * linear_forward_packed), which take them in every run. */
int small_gemm_always(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int M, int N, int K,
                      const float *A, int lda, const float *B, int ldb, float beta, float *C,
                      int ldc);

/* What multiplies the small products, for s2s version: "libxsmm (kernels for hsw)"
 * with the instruction set libxsmm generates for, or "OpenBLAS (built without
 * libxsmm)". */
void small_gemm_describe(char *out, int cap);

#endif
