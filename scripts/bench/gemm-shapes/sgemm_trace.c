/* sgemm_trace.c: an LD_PRELOAD shim that records the single-precision products a program
 * makes through OpenBLAS -- each cblas_sgemm's shape (row-major: the transposes of A and
 * B, M, N, K), how many times it came and the seconds spent in it -- and writes them
 * when the program exits to the file S2S_SGEMM_TRACE names, one shape a line:
 *
 *     ta tb M N K calls seconds          (ta, tb: N or T)
 *
 * run.sh builds it and runs `s2s bench` under it, so that gemm_shapes.c replays the very
 * products of a training step on each library. A product of one row or one column goes
 * to gemv in s2s (nn/real.h's matmul) and is not traced: gemm is what the libraries
 * compete on. */
#define _GNU_SOURCE
#include <cblas.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*SgemmFn)(const enum CBLAS_ORDER, const enum CBLAS_TRANSPOSE,
                        const enum CBLAS_TRANSPOSE, const blasint, const blasint, const blasint,
                        const float, const float *, const blasint, const float *, const blasint,
                        const float, float *, const blasint);

enum { MAX_SHAPES = 4096 };

typedef struct {
    int row_major, ta, tb, M, N, K;
    long calls;
    double seconds;
} Shape;

static Shape shapes[MAX_SHAPES];
static int n_shapes, overflowed;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The shape's entry, added if new (NULL when the table is full). */
static Shape *shape_of(int row_major, int ta, int tb, int M, int N, int K)
{
    for (int k = 0; k < n_shapes; k++) {
        Shape *s = &shapes[k];
        if (s->row_major == row_major && s->ta == ta && s->tb == tb && s->M == M && s->N == N &&
            s->K == K)
            return s;
    }
    if (n_shapes == MAX_SHAPES) {
        overflowed = 1;
        return NULL;
    }
    shapes[n_shapes] = (Shape){row_major, ta, tb, M, N, K, 0, 0};
    return &shapes[n_shapes++];
}

void cblas_sgemm(const enum CBLAS_ORDER order, const enum CBLAS_TRANSPOSE ta,
                 const enum CBLAS_TRANSPOSE tb, const blasint M, const blasint N,
                 const blasint K, const float alpha, const float *A, const blasint lda,
                 const float *B, const blasint ldb, const float beta, float *C,
                 const blasint ldc)
{
    static SgemmFn next;
    if (!next) {
        next = (SgemmFn)dlsym(RTLD_NEXT, "cblas_sgemm");
        if (!next) {
            fprintf(stderr, "sgemm_trace: no cblas_sgemm after the shim\n");
            abort();
        }
    }
    const double t0 = now();
    next(order, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    const double t1 = now();
    Shape *s = shape_of(order == CblasRowMajor, ta != CblasNoTrans, tb != CblasNoTrans, (int)M,
                        (int)N, (int)K);
    if (s) {
        s->calls++;
        s->seconds += t1 - t0;
    }
}

__attribute__((destructor)) static void write_trace(void)
{
    const char *path = getenv("S2S_SGEMM_TRACE");
    if (!path)
        return;
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return;
    }
    for (int k = 0; k < n_shapes; k++) {
        const Shape *s = &shapes[k];
        if (!s->row_major) /* s2s multiplies row-major only */
            fprintf(stderr, "sgemm_trace: a column-major product, left out\n");
        else
            fprintf(f, "%c %c %d %d %d %ld %.9f\n", s->ta ? 'T' : 'N', s->tb ? 'T' : 'N', s->M,
                    s->N, s->K, s->calls, s->seconds);
    }
    if (overflowed)
        fprintf(stderr, "sgemm_trace: more than %d shapes; the rest left out\n", MAX_SHAPES);
    fclose(f);
}
