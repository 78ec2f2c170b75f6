/* blas_family.c: which family of kernels OpenBLAS runs under the current
 * OPENBLAS_CORETYPE, told by what those kernels compute rather than by the core's name.
 *
 * OpenBLAS picks its kernels by CPU, and kernels round differently, so a training
 * outcome can hang on which ones run (src/README.md, "Training outcomes on every CPU").
 * Several core types share their kernels (0.3.21's Zen runs Haswell's products,
 * Cooperlake SkylakeX's): testing both would cost the time and prove nothing more. This
 * program computes every kind of product s2s asks OpenBLAS for -- gemm in its four
 * transpositions, gemv both ways, ger; in float and in double; with beta 0 and 1 and an
 * alpha that is not 1 -- over shapes from 1 to past the kernels' blocking sizes, and
 * prints the core OpenBLAS names and a 64-bit hash of every bit of every result:
 *
 *     Haswell 9f0c3a...
 *
 * Two core types with one hash computed the same bits on every product, so a test's
 * verdict cannot tell them apart; scripts/checks/run-checks.py runs the training outcomes once
 * per hash. Deterministic: fixed inputs, one thread. */
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a over bytes: the results' bits in order */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t k = 0; k < n; k++)
        h = (h ^ p[k]) * 1099511628211ULL;
    return h;
}

/* the inputs: fixed numbers in [-1, 1) from a 64-bit LCG (any fixed sequence does) */
static uint64_t state = 42;
static double next_uniform(void)
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(state >> 11) / 9007199254740992.0 * 2 - 1;
}

/* sizes from one to past OpenBLAS's block sizes (its gemm packs K in blocks of a few
 * hundred, which is where a kernel's order of summation shows) */
static const int sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65,
                            96, 127, 128, 129, 200, 255, 256, 257, 384, 385, 512, 640, 1024};
#define N_SIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAX_ELEMS (1024 * 1024)
#define MAX_WORK (1 << 24) /* M N K at most: the whole run stays well under a second */

static float fa[MAX_ELEMS], fb[MAX_ELEMS], fc[MAX_ELEMS];
static double da[MAX_ELEMS], db[MAX_ELEMS], dc[MAX_ELEMS];

static void fill(int n)
{
    for (int k = 0; k < n; k++) {
        da[k] = next_uniform();
        db[k] = next_uniform();
        dc[k] = next_uniform();
        fa[k] = (float)da[k];
        fb[k] = (float)db[k];
        fc[k] = (float)dc[k];
    }
}

/* C (M, N) = alpha op(A) op(B) + beta C, row-major as s2s calls it, in both precisions */
static uint64_t gemm_case(uint64_t h, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int M,
                          int N, int K, double alpha, double beta)
{
    int lda = ta == CblasNoTrans ? K : M, ldb = tb == CblasNoTrans ? N : K;
    int most = M * K > K * N ? M * K : K * N; /* A, B and C each fit in their buffer */
    fill(most > M * N ? most : M * N);
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, (float)alpha, fa, lda, fb, ldb, (float)beta, fc, N);
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, da, lda, db, ldb, beta, dc, N);
    h = hash_bytes(h, fc, (size_t)M * (size_t)N * sizeof *fc);
    return hash_bytes(h, dc, (size_t)M * (size_t)N * sizeof *dc);
}

/* y (rows or cols) = alpha op(A) x + beta y, and A += alpha x y^T */
static uint64_t vector_cases(uint64_t h, int rows, int cols)
{
    fill(rows * cols);
    for (int t = 0; t < 2; t++) {
        enum CBLAS_TRANSPOSE ta = t ? CblasTrans : CblasNoTrans;
        int out = t ? cols : rows;
        cblas_sgemv(CblasRowMajor, ta, rows, cols, 0.5f, fa, cols, fb, 1, 1, fc, 1);
        cblas_dgemv(CblasRowMajor, ta, rows, cols, 0.5, da, cols, db, 1, 1, dc, 1);
        h = hash_bytes(h, fc, (size_t)out * sizeof *fc);
        h = hash_bytes(h, dc, (size_t)out * sizeof *dc);
    }
    cblas_sger(CblasRowMajor, rows, cols, 0.25f, fb, 1, fc, 1, fa, cols);
    cblas_dger(CblasRowMajor, rows, cols, 0.25, db, 1, dc, 1, da, cols);
    h = hash_bytes(h, fa, (size_t)rows * (size_t)cols * sizeof *fa);
    return hash_bytes(h, da, (size_t)rows * (size_t)cols * sizeof *da);
}

int main(void)
{
    openblas_set_num_threads(1);
    uint64_t h = 14695981039346656037ULL;
    /* every shape would be 32^3 products: a fixed walk through them instead, each size
     * met in every position and every transposition */
    for (int k = 0; k < N_SIZES * N_SIZES; k++) {
        int M = sizes[k % N_SIZES], N = sizes[(k * 7 + 3) % N_SIZES];
        int K = sizes[(k / N_SIZES + k * 3) % N_SIZES];
        if ((double)M * N * K > MAX_WORK)
            continue;
        enum CBLAS_TRANSPOSE ta = k & 1 ? CblasTrans : CblasNoTrans;
        enum CBLAS_TRANSPOSE tb = k & 2 ? CblasTrans : CblasNoTrans;
        double beta = k & 4 ? 1 : 0, alpha = k & 8 ? 0.75 : 1;
        h = gemm_case(h, ta, tb, M, N, K, alpha, beta);
        if ((double)M * N <= MAX_ELEMS)
            h = vector_cases(h, M, N);
    }
    printf("%s %016llx\n", openblas_get_corename(), (unsigned long long)h);
    return 0;
}
