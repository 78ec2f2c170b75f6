/* small_gemm.c: libxsmm's kernels for s2s's row-major products (see small_gemm.h). */
#include "nn/small_gemm.h"

#include <stdio.h>

/* small_gemm_enable's setting: a run's, read by the shards' threads after the main
 * thread set it between passes (the pool's lock orders the two) */
static int enabled;

void small_gemm_enable(int on)
{
    enabled = on;
}

#ifdef S2S_XSMM
#include <libxsmm.h>

int small_gemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int M, int N, int K,
               const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    return enabled && small_gemm_always(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

int small_gemm_always(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int M, int N, int K,
                      const float *A, int lda, const float *B, int ldb, float beta, float *C,
                      int ldc)
{
    /* libxsmm is column-major: the row-major C (M, N) is the column-major C^T (N, M) =
     * op(B)^T (N, K) . op(A)^T (K, M), so B is libxsmm's first operand and A its second */
    const int flags = (tb == CblasTrans ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) |
                      (ta == CblasTrans ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
    const libxsmm_blasint first = ldb, second = lda, out = ldc;
    const float one = 1;
    /* libxsmm keeps the kernels it made in its own registry: the same shape finds the
     * same kernel, from any thread */
    libxsmm_smmfunction kernel = libxsmm_smmdispatch(N, M, K, &first, &second, &out, &one, &beta,
                                                     &flags, NULL);
    if (!kernel)
        return 0;
    kernel(B, A, C);
    return 1;
}

void small_gemm_describe(char *out, int cap)
{
    snprintf(out, (size_t)cap, "libxsmm (kernels for %s)", libxsmm_get_target_arch());
}
#else
int small_gemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int M, int N, int K,
               const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    (void)enabled, (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb;
    (void)beta, (void)C, (void)ldc;
    return 0;
}

int small_gemm_always(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int M, int N, int K,
                      const float *A, int lda, const float *B, int ldb, float beta, float *C,
                      int ldc)
{
    return small_gemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

void small_gemm_describe(char *out, int cap)
{
    snprintf(out, (size_t)cap, "OpenBLAS (built without libxsmm)");
}
#endif
