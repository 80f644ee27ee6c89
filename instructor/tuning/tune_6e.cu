/* The tuning harness that chose 6e/6f's tile shape (the DBUF_* macros of
 * gemm_dbuf.cuh): times shapes of the double-buffered kernel body against
 * cuBLAS on the GEMMs of the benchmark (each result checked on sampled
 * entries) and on the lab convolution (6f). Needs a GPU; built by the
 * top-level build as the program 06_tune_6e, linking step 06's library, or
 * from this folder alone:
 *   cmake --build <build> --target 06_tune_6e && <build>/bin/06_tune_6e
 *   cmake -S instructor/tuning -B build-tune && cmake --build build-tune -j
 *
 * Usage: 06_tune_6e [CONFIG_SUBSTRING [GEMM_SHAPES]]: only the configurations
 * whose name contains the substring; with GEMM_SHAPES, only that many GEMM
 * shapes and no convolutions (for ncu). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "conv_cublas.h"
#include "conv_status.h"
#include "gemm_check.h"
#include "gemm_dbuf.cuh"

/* A failed CUDA call: one line naming it, exit status 1. */
#define TUNE_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "06_tune_6e: %s failed: %s\n", #call, cudaGetErrorString(err_));       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
/* A failed call of the project's: its one-line message, exit status 1. */
#define TUNE_OK(call)                                                                              \
    do {                                                                                           \
        if ((call) != CONV_OK) {                                                                   \
            fprintf(stderr, "06_tune_6e: %s\n", msg.text);                                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

template <int BM, int TM, int BK, int MINB, int WR>
__global__ void __launch_bounds__(16 * BM / TM, MINB)
    tune_gemm_kernel(int m, int n, int k, const float *__restrict__ a, const float *__restrict__ b,
                     float *__restrict__ c, int tiles_n)
{
    implicit_geom g = {};
    dbuf_gemm_body<BM, TM, WR, BK, true, false>(m, n, k, a, b, c, tiles_n, g);
}

template <int BM, int TM, int BK, int MINB, int WR>
__global__ void __launch_bounds__(16 * BM / TM, MINB)
    tune_implicit_kernel(int m, int n, int k, const float *__restrict__ x,
                         const float *__restrict__ w, float *__restrict__ y, int tiles_n,
                         implicit_geom g)
{
    dbuf_gemm_body<BM, TM, WR, BK, true, true>(m, n, k, x, w, y, tiles_n, g);
}

typedef void (*gemm_fn)(int, int, int, const float *, const float *, float *, int);
typedef void (*impl_fn)(int, int, int, const float *, const float *, float *, int, implicit_geom);

typedef struct {
    const char *name;
    int bm, threads;
    gemm_fn g;
    impl_fn f;
} cfg;

#define CFG(BM, TM, BK, MINB, WR)                                                                  \
    {                                                                                              \
        "bm" #BM "_tm" #TM "_bk" #BK "_minb" #MINB "_wr" #WR, BM, 16 * BM / TM,                    \
            tune_gemm_kernel<BM, TM, BK, MINB, WR>, tune_implicit_kernel<BM, TM, BK, MINB, WR>     \
    }

/* The shipped shape first (64-row tile, BK 16, 3 blocks per SM), then its
 * neighbours: the 128-row tile with one block, BK 8 with two or four blocks,
 * 16 rows per thread (BK 8 or 16, two blocks), and cuBLAS's 256 x 128 tile. */
static const cfg cfgs[] = {CFG(64, 8, 16, 3, 4),   CFG(64, 8, 16, 3, 2), CFG(128, 8, 16, 1, 4),
                           CFG(128, 8, 8, 2, 4),   CFG(64, 8, 8, 4, 4),  CFG(128, 16, 8, 2, 4),
                           CFG(128, 16, 16, 2, 4), CFG(256, 16, 8, 1, 4)};
#define NCFGS (int)(sizeof cfgs / sizeof cfgs[0])

/* Lets several blocks share an SM (the default carveout may leave too little
 * shared memory for them). */
static void prefer_shared(const cfg *cf)
{
    TUNE_CHECK(cudaFuncSetAttribute(cf->g, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared));
    TUNE_CHECK(cudaFuncSetAttribute(cf->f, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared));
    int gb = 0, fb = 0;
    TUNE_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&gb, cf->g, cf->threads, 0));
    TUNE_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fb, cf->f, cf->threads, 0));
    printf("%-26s blocks per SM: gemm %d, implicit %d\n", cf->name, gb, fb);
}

/* What time_it runs: cuBLAS, or one configuration's GEMM or implicit kernel. */
typedef enum { RUN_CUBLAS, RUN_GEMM, RUN_IMPLICIT } run_kind;

typedef struct {
    run_kind kind;
    const cfg *cf; /* RUN_GEMM, RUN_IMPLICIT */
    conv_cublas *cublas;
    int m, n, k, tiles, tiles_n;
    const float *a, *b;
    float *c;
    implicit_geom g; /* RUN_IMPLICIT */
    conv_msg *msg;
} run_args;

static void run_once(const run_args *r)
{
    switch (r->kind) {
    case RUN_CUBLAS:
        conv_cublas_sgemm(r->cublas, r->m, r->n, r->k, r->a, r->b, r->c, 0, r->msg);
        break;
    case RUN_GEMM:
        r->cf->g<<<r->tiles, r->cf->threads>>>(r->m, r->n, r->k, r->a, r->b, r->c, r->tiles_n);
        break;
    case RUN_IMPLICIT:
        r->cf->f<<<r->tiles, r->cf->threads>>>(r->m, r->n, r->k, r->a, r->b, r->c, r->tiles_n,
                                               r->g);
        break;
    }
}

static int cmp_float(const void *pa, const void *pb)
{
    float a = *(const float *)pa, b = *(const float *)pb;
    return (a > b) - (a < b);
}

#define TIME_REPS 15

/* The median of TIME_REPS timed runs after 3 warm-up runs, in ms. */
static float time_it(const run_args *r)
{
    cudaEvent_t e0, e1;
    TUNE_CHECK(cudaEventCreate(&e0));
    TUNE_CHECK(cudaEventCreate(&e1));
    for (int i = 0; i < 3; ++i)
        run_once(r);
    TUNE_CHECK(cudaGetLastError());
    float t[TIME_REPS];
    for (int i = 0; i < TIME_REPS; ++i) {
        TUNE_CHECK(cudaEventRecord(e0));
        run_once(r);
        TUNE_CHECK(cudaEventRecord(e1));
        TUNE_CHECK(cudaEventSynchronize(e1));
        TUNE_CHECK(cudaEventElapsedTime(&t[i], e0, e1));
    }
    TUNE_CHECK(cudaEventDestroy(e0));
    TUNE_CHECK(cudaEventDestroy(e1));
    qsort(t, TIME_REPS, sizeof t[0], cmp_float);
    return t[TIME_REPS / 2];
}

static int chosen(const cfg *cf, int argc, char **argv)
{
    return argc < 2 || strstr(cf->name, argv[1]) != NULL;
}

static const char usage[] =
    "usage: 06_tune_6e [CONFIG_SUBSTRING [GEMM_SHAPES]]\n"
    "Times the configurations of 6e/6f's kernel whose name contains CONFIG_SUBSTRING (all\n"
    "without it) against cuBLAS on the benchmark's GEMMs, then 6f on two convolutions;\n"
    "GEMM_SHAPES (1 to 3): only that many GEMM shapes and no convolutions. Needs a GPU.\n";

int main(int argc, char **argv)
{
    conv_msg msg = {{0}};
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    int nshapes = 3;
    if (argc > 2) {
        char *end = NULL;
        long v = strtol(argv[2], &end, 10);
        if (argc > 3 || end == argv[2] || *end != '\0' || v < 1 || v > 3) {
            fprintf(stderr, "06_tune_6e: GEMM_SHAPES must be 1, 2 or 3, with nothing after it "
                            "(see --help)\n");
            return 2;
        }
        nshapes = (int)v;
    }
    conv_cublas *cb = NULL;
    TUNE_OK(conv_cublas_create(&cb, &msg));
    for (int ci = 0; ci < NCFGS; ++ci)
        if (chosen(&cfgs[ci], argc, argv))
            prefer_shared(&cfgs[ci]);
    int shapes[3][3] = {{4096, 4096, 4096}, {1280000, 128, 1152}, {401408, 128, 1152}};
    for (int si = 0; si < nshapes && si < 3; ++si) {
        int *sh = shapes[si];
        int m = sh[0], n = sh[1], k = sh[2];
        float *a, *b, *c;
        TUNE_CHECK(cudaMalloc(&a, (size_t)m * k * 4));
        TUNE_CHECK(cudaMalloc(&b, (size_t)k * n * 4));
        TUNE_CHECK(cudaMalloc(&c, (size_t)m * n * 4));
        TUNE_OK(gemm_fill_uniform(a, (size_t)m * k, 1, -1, 1, 0, &msg));
        TUNE_OK(gemm_fill_uniform(b, (size_t)k * n, 2, -1, 1, 0, &msg));
        double fl = 2.0 * m * n * k;
        run_args r = {RUN_CUBLAS, NULL, cb, m, n, k, 0, 0, a, b, c, {}, &msg};
        float ref = time_it(&r);
        printf("GEMM %d %d %d: cuBLAS %.3f ms %.1f TFLOP/s\n", m, n, k, ref, fl / ref / 1e9);
        r.kind = RUN_GEMM;
        r.tiles_n = (n + 127) / 128;
        for (int ci = 0; ci < NCFGS; ++ci) {
            const cfg *cf = &cfgs[ci];
            if (!chosen(cf, argc, argv))
                continue;
            r.cf = cf;
            r.tiles = (m + cf->bm - 1) / cf->bm * r.tiles_n;
            TUNE_CHECK(cudaMemset(c, 0xff, (size_t)m * n * 4));
            float ms = time_it(&r);
            gemm_check_report rep;
            char verdict[256];
            TUNE_OK(
                gemm_check_sampled(m, n, k, a, b, c, 256, 5, &rep, verdict, sizeof verdict, &msg));
            printf("  %-26s %.3f ms %.1f TFLOP/s  %.1f%% of cuBLAS  %s  %s\n", cf->name, ms,
                   fl / ms / 1e9, 100.0 * ref / ms, verdict,
                   cudaGetErrorString(cudaGetLastError()));
        }
        TUNE_CHECK(cudaFree(a));
        TUNE_CHECK(cudaFree(b));
        TUNE_CHECK(cudaFree(c));
    }
    /* 6f on the lab problem and the CUTLASS problem (NHWC, 3x3 same) */
    int probs[2][4] = {{128, 100, 100, 128}, {8, 224, 224, 128}};
    for (int pi = 0; pi < 2 && argc <= 2; ++pi) {
        int *pr = probs[pi];
        int N = pr[0], H = pr[1], W = pr[2], C = pr[3], K = 128;
        implicit_geom g = {C, H, W, 3, 3, H, W, 1, 1, 1, 1, 1, 1};
        int m = N * H * W, n = K, k = C * 9;
        float *x, *w, *y;
        TUNE_CHECK(cudaMalloc(&x, (size_t)N * H * W * C * 4));
        TUNE_CHECK(cudaMalloc(&w, (size_t)k * n * 4));
        TUNE_CHECK(cudaMalloc(&y, (size_t)m * n * 4));
        TUNE_OK(gemm_fill_uniform(x, (size_t)N * H * W * C, 1, -1, 1, 0, &msg));
        TUNE_OK(gemm_fill_uniform(w, (size_t)k * n, 2, -1, 1, 0, &msg));
        run_args r = {RUN_IMPLICIT, NULL, cb, m, n, k, 0, 1, x, w, y, g, &msg};
        printf("6f N=%d %dx%d C=K=%d\n", N, H, W, C);
        for (int ci = 0; ci < NCFGS; ++ci) {
            const cfg *cf = &cfgs[ci];
            if (!chosen(cf, argc, argv))
                continue;
            r.cf = cf;
            r.tiles = (m + cf->bm - 1) / cf->bm;
            float ms = time_it(&r);
            printf("  %-26s %.3f ms %.1f TFLOP/s %s\n", cf->name, ms, 2.0 * m * n * k / ms / 1e9,
                   cudaGetErrorString(cudaGetLastError()));
        }
        TUNE_CHECK(cudaFree(x));
        TUNE_CHECK(cudaFree(w));
        TUNE_CHECK(cudaFree(y));
    }
    conv_cublas_destroy(cb);
    return 0;
}
