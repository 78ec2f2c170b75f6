/* gemm_shapes.c: replays a trace of single-precision products (sgemm_trace.c's lines
 * "ta tb M N K calls seconds", row-major) on one library and prints how long they take:
 * each shape run `calls` times in a row on its own buffers, the whole trace REPEATS times,
 * the median kept. Built once per library (run.sh):
 *
 *     -DLIB_OPENBLAS   cblas_sgemm, OpenBLAS's threads set to THREADS
 *     -DLIB_BLIS       bli_sgemm (BLIS's typed API, row and column strides), THREADS
 *     -DLIB_XSMM       libxsmm's JIT kernel of the shape (libxsmm_smmdispatch, made once)
 *                      where it makes one, else libxsmm_sgemm, which hands the product
 *                      to OpenBLAS (it does so for every product past its small-size
 *                      limit, so calling it alone would measure OpenBLAS); the kernels
 *                      run on one thread, OpenBLAS's on THREADS
 *
 * usage: gemm_shapes TRACE THREADS [REPEATS]
 * Every shape's product is first checked against a plain loop in double (exit 1 if one is
 * off by more than 1e-5 of its largest element). Prints one line per shape ("shape ta tb M N K calls seconds gflops") and a last line
 * "total SECONDS GFLOPS" (and for libxsmm "jit SHAPES FLOP_SHARE": how many shapes, and
 * what share of the flops, had a kernel of its own). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(LIB_OPENBLAS)
#include <cblas.h>
#elif defined(LIB_BLIS)
#include <blis.h>
#elif defined(LIB_XSMM)
#include <libxsmm.h>
void openblas_set_num_threads(int threads); /* the fallback's, from OpenBLAS */
#else
#error "build with -DLIB_OPENBLAS, -DLIB_BLIS or -DLIB_XSMM"
#endif

typedef struct {
    char ta, tb;
    int M, N, K;
    long calls;
    double seconds; /* measured here */
    int jit;        /* libxsmm: a kernel of its own */
#if defined(LIB_XSMM)
    libxsmm_smmfunction kernel;
#endif
} Shape;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* C (M, N) = op(A) op(B) + C, row-major, leading dimensions as tight as the shape allows
 * (s2s's products are tight too, but for a few views into wider rows). */
static void product(const Shape *s, const float *A, const float *B, float *C)
{
    const int lda = s->ta == 'N' ? s->K : s->M, ldb = s->tb == 'N' ? s->N : s->K, ldc = s->N;
    const float one = 1;
#if defined(LIB_OPENBLAS)
    cblas_sgemm(CblasRowMajor, s->ta == 'N' ? CblasNoTrans : CblasTrans,
                s->tb == 'N' ? CblasNoTrans : CblasTrans, s->M, s->N, s->K, one, A, lda, B, ldb,
                one, C, ldc);
#elif defined(LIB_BLIS)
    /* row-major: row stride the leading dimension, column stride 1 */
    bli_sgemm(s->ta == 'N' ? BLIS_NO_TRANSPOSE : BLIS_TRANSPOSE,
              s->tb == 'N' ? BLIS_NO_TRANSPOSE : BLIS_TRANSPOSE, s->M, s->N, s->K,
              (float *)&one, (float *)A, lda, 1, (float *)B, ldb, 1, (float *)&one, C, ldc, 1);
#else
    /* libxsmm is column-major: C^T (N, M) = op(B)^T op(A)^T */
    if (s->kernel) {
        s->kernel(B, A, C);
        return;
    }
    const libxsmm_blasint m = s->N, n = s->M, k = s->K, la = ldb, lb = lda, lc = ldc;
    libxsmm_sgemm(&s->tb, &s->ta, &m, &n, &k, &one, B, &la, A, &lb, &one, C, &lc);
#endif
}

static int read_trace(const char *path, Shape **out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    int n = 0, cap = 256;
    Shape *s = malloc(sizeof(Shape) * (size_t)cap);
    double traced;
    while (n < cap || (s = realloc(s, sizeof(Shape) * (size_t)(cap *= 2)))) {
        Shape *x = &s[n];
        if (fscanf(f, " %c %c %d %d %d %ld %lf", &x->ta, &x->tb, &x->M, &x->N, &x->K, &x->calls,
                   &traced) != 7)
            break;
        x->seconds = 0;
        x->jit = 0;
#if defined(LIB_XSMM)
        x->kernel = NULL;
#endif
        n++;
    }
    fclose(f);
    *out = s;
    return n;
}

/* The largest difference of one product from a plain triple loop in double, relative to
 * the largest element (A, B: the fill of main; C zeroed first). */
static double check_product(const Shape *s, const float *A, const float *B, float *C)
{
    const int lda = s->ta == 'N' ? s->K : s->M, ldb = s->tb == 'N' ? s->N : s->K;
    memset(C, 0, sizeof(float) * (size_t)s->M * s->N);
    product(s, A, B, C);
    double worst = 0, largest = 1e-30;
    for (int i = 0; i < s->M; i++)
        for (int j = 0; j < s->N; j++) {
            double sum = 0;
            for (int k = 0; k < s->K; k++)
                sum += (double)(s->ta == 'N' ? A[(size_t)i * lda + k] : A[(size_t)k * lda + i]) *
                       (double)(s->tb == 'N' ? B[(size_t)k * ldb + j] : B[(size_t)j * ldb + k]);
            const double diff = sum - C[(size_t)i * s->N + j];
            worst = diff > worst ? diff : -diff > worst ? -diff : worst;
            largest = sum > largest ? sum : -sum > largest ? -sum : largest;
        }
    return worst / largest;
}

static int by_seconds(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gemm_shapes TRACE THREADS [REPEATS]\n");
        return 2;
    }
    const int threads = atoi(argv[2]), repeats = argc > 3 ? atoi(argv[3]) : 5;
#if defined(LIB_OPENBLAS)
    openblas_set_num_threads(threads);
#elif defined(LIB_BLIS)
    bli_thread_set_num_threads(threads);
#else
    openblas_set_num_threads(threads);
    libxsmm_init();
#endif
    Shape *s;
    const int n = read_trace(argv[1], &s);
    size_t most = 1;
    for (int k = 0; k < n; k++) {
        const size_t a = (size_t)s[k].M * s[k].K, b = (size_t)s[k].K * s[k].N,
                     c = (size_t)s[k].M * s[k].N;
        most = a > most ? a : b > most ? b : c > most ? c : most;
#if defined(LIB_XSMM)
        const int flags = (s[k].tb == 'T' ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) |
                          (s[k].ta == 'T' ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
        const libxsmm_blasint la = s[k].tb == 'N' ? s[k].N : s[k].K;
        const libxsmm_blasint lb = s[k].ta == 'N' ? s[k].K : s[k].M, lc = s[k].N;
        const float one = 1;
        s[k].kernel = libxsmm_smmdispatch(s[k].N, s[k].M, s[k].K, &la, &lb, &lc, &one, &one,
                                          &flags, NULL);
        s[k].jit = s[k].kernel != NULL;
#endif
    }
    float *A = malloc(sizeof(float) * most), *B = malloc(sizeof(float) * most),
          *C = malloc(sizeof(float) * most);
    for (size_t k = 0; k < most; k++) /* small integers over 8: exact in float */
        A[k] = (float)((int)(k % 7) - 3) / 8, B[k] = (float)((int)(k % 5) - 2) / 8, C[k] = 0;
    double wrong = 0; /* every shape's product, checked once before the timing */
    for (int k = 0; k < n; k++) {
        const double e = check_product(&s[k], A, B, C);
        wrong = e > wrong ? e : wrong;
    }
    if (wrong > 1e-5) {
        fprintf(stderr, "gemm_shapes: a product is wrong, relative error %.2e\n", wrong);
        return 1;
    }
    double *totals = malloc(sizeof(double) * (size_t)repeats);
    double **times = malloc(sizeof(double *) * (size_t)n);
    for (int k = 0; k < n; k++)
        times[k] = malloc(sizeof(double) * (size_t)repeats);
    for (int r = 0; r < repeats; r++) {
        totals[r] = 0;
        for (int k = 0; k < n; k++) {
            const double t0 = now();
            for (long c = 0; c < s[k].calls; c++)
                product(&s[k], A, B, C);
            times[k][r] = now() - t0;
            totals[r] += times[k][r];
        }
    }
    double flops = 0, jit_flops = 0;
    int jit = 0;
    for (int k = 0; k < n; k++) {
        qsort(times[k], (size_t)repeats, sizeof(double), by_seconds);
        s[k].seconds = times[k][repeats / 2];
        const double f = 2.0 * s[k].M * s[k].N * s[k].K * (double)s[k].calls;
        flops += f;
        jit += s[k].jit;
        jit_flops += s[k].jit ? f : 0;
        printf("shape %c %c %d %d %d %ld %.9f %.3f\n", s[k].ta, s[k].tb, s[k].M, s[k].N, s[k].K,
               s[k].calls, s[k].seconds, f / s[k].seconds / 1e9);
    }
    qsort(totals, (size_t)repeats, sizeof(double), by_seconds);
    printf("total %.6f %.3f\n", totals[repeats / 2], flops / totals[repeats / 2] / 1e9);
#if defined(LIB_XSMM)
    printf("jit %d %.4f\n", jit, flops > 0 ? jit_flops / flops : 0);
    libxsmm_finalize();
#else
    (void)jit;
    (void)jit_flops;
#endif
    for (int k = 0; k < n; k++)
        free(times[k]);
    free(times);
    free(totals);
    free(A);
    free(B);
    free(C);
    free(s);
    return 0;
}
