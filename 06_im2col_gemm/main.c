/* 06_im2col_gemm: convolution as a matrix product, and the GEMM progression.
 *
 * --mode conv (default): one convolution (the common problem flags, both
 *   layouts) through im2col -> GEMM with each chosen GEMM (6a..6e, cuBLAS) and
 *   through 6f (implicit GEMM, NHWC), next to cuDNN, all in the same run. Every
 *   version is verified (sampled on large problems); the table gives the whole
 *   pipeline's time and, in the verdict, its split into im2col, GEMM and layout
 *   change.
 * --mode gemm: C[M][N] = A[M][K] * B[K][N] alone, sizes --m --n --k (in this
 *   mode --n and --k are the GEMM's N and K), each variant against cuBLAS.
 *
 * Exit status: 0 all verified, 1 a wrong result or a runtime error, 2 a bad
 * command line or a problem this step rejects. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cli.h"
#include "conv_cublas.h"
#include "conv_cuda.h"
#include "conv_gpu_run.h"
#include "conv_im2col_gemm.h"
#include "conv_timer.h"
#include "gemm.h"
#include "gemm_check.h"
#include "im2col.h"

#define PROGRAM       "06_im2col_gemm"
#define GEMM_SAMPLES  1024
#define MAX_VERSIONS  (GEMM_VARIANT_COUNT + 1)
#define VERSION_6F    GEMM_VARIANT_COUNT /* index of 6f in the version lists */
#define DEFAULT_GEMM_ 4096

/* Which versions --gemm selects: want[v] for v in 0..GEMM_VARIANT_COUNT (6f last). */
static conv_status parse_gemm_list(const char *text, int want[MAX_VERSIONS], conv_msg *msg)
{
    memset(want, 0, sizeof(int) * MAX_VERSIONS);
    if (strcmp(text, "all") == 0) {
        for (int i = 0; i < MAX_VERSIONS; ++i)
            want[i] = 1;
        return CONV_OK;
    }
    if (strcmp(text, "6f") == 0) {
        want[VERSION_6F] = 1;
        return CONV_OK;
    }
    gemm_variant v;
    conv_status st = gemm_variant_parse(text, &v, msg);
    if (st != CONV_OK)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid value for --gemm: '%s' (expected 6a..6f, cublas or all)", text);
    want[v] = 1;
    return CONV_OK;
}

/* ---- conv mode ---- */

typedef struct {
    conv_gpu_problem *pb;
    conv2d_pipeline *pc;
    int stage; /* 0 im2col, 1 GEMM, 2 permutation */
} stage_ctx;

static conv_status run_stage(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    stage_ctx *sc = ctx;
    conv_gpu_problem *pb = sc->pb;
    conv2d_pipeline *pc = sc->pc;
    if (sc->stage == 0)
        return im2col(&pb->p, pb->d_x, pc->d_work, stream, msg);
    if (sc->stage == 1)
        return conv2d_im2col_gemm_stage_gemm(&pb->p, pb->d_w, pb->d_y, pc->d_work, pc->work_elems,
                                             pc->g, pc->cublas, stream, msg);
    return conv2d_im2col_gemm_stage_permute(&pb->p, pb->d_y, pc->d_work, pc->work_elems, stream,
                                            msg);
}

static conv_status time_stage(conv_gpu_problem *pb, conv2d_pipeline *pc, int stage,
                              const conv_cli_options *opt, double *ms, conv_msg *msg)
{
    stage_ctx sc = {pb, pc, stage};
    conv_timing t;
    conv_status st = conv_time_gpu(run_stage, &sc, pb->stream, opt->warmup, opt->repeat, &t, msg);
    *ms = t.median_ms;
    return st;
}

static int run_conv_mode(const conv_cli_options *opt, const int want[MAX_VERSIONS],
                         const conv_device_info *info, int argc, char **argv)
{
    const conv_params *p = &opt->params;
    conv_msg msg = {{0}};
    int any_im2col = 0;
    for (int v = 0; v < GEMM_VARIANT_COUNT; ++v)
        any_im2col |= want[v];
    /* The step's limits and the column buffer against the free device memory,
     * before anything is allocated or launched. */
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        fprintf(stderr, PROGRAM ": cudaMemGetInfo failed\n");
        return 1;
    }
    conv_status st = conv2d_im2col_gemm_check(p, any_im2col ? free_b : SIZE_MAX, &msg);
    if (st != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 2;
    }

    conv_gpu_problem pb;
    if ((st = conv_gpu_problem_create(&pb, p, opt->seed, &msg)) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 1;
    }
    size_t work_elems = any_im2col ? conv2d_im2col_gemm_workspace_elems(p) : 0;
    float *d_work = NULL;
    conv_cublas *cublas = NULL;
    if (any_im2col &&
        (st = conv_device_alloc(&d_work, work_elems, "im2col column buffer", &msg)) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        conv_gpu_problem_destroy(&pb);
        return 1;
    }
    if (want[GEMM_CUBLAS] && (st = conv_cublas_create(&cublas, &msg)) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        conv_device_free(d_work);
        conv_gpu_problem_destroy(&pb);
        return 1;
    }

    printf(PROGRAM ": convolution as im2col + GEMM (6a..6e, cuBLAS) and implicit GEMM (6f)\n");
    conv_print_device(stdout, info);
    conv_cli_print_problem(stdout, p);
    printf("GEMM:    %s, M=%lld N=%lld K=%lld; column buffer %.1f MB (%zu floats)\n",
           p->layout == CONV_LAYOUT_NHWC ? "col[NPQ][RSC] * w[RSC][K]"
                                         : "w[K][CRS] * col[CRS][NPQ]",
           p->layout == CONV_LAYOUT_NHWC ? (long long)p->n * conv_out_h(p) * conv_out_w(p)
                                         : (long long)p->k,
           p->layout == CONV_LAYOUT_NHWC ? (long long)p->k
                                         : (long long)p->n * conv_out_h(p) * conv_out_w(p),
           (long long)p->c * p->r * p->s, 4.0 * (double)conv_im2col_elems(p) / 1e6,
           conv_im2col_elems(p));
    printf("timing:  median of %d runs after %d warm-up; verification: %s\n\n", opt->repeat,
           opt->warmup, pb.full_verify ? "every output" : "sampled outputs");

    conv_gpu_result res[MAX_VERSIONS + 1];
    int ran[MAX_VERSIONS + 1] = {0};
    char why[MAX_VERSIONS + 1][CONV_MSG_LEN + 16];
    memset(res, 0, sizeof res);
    memset(why, 0, sizeof why);
    int failed = 0;

    /* cuDNN first: the reference of the "vs cuDNN" column. */
    conv_gpu_result cudnn;
    char algo[64] = "";
    double cudnn_ms = 0.0;
    st = conv_gpu_problem_measure_cudnn(&pb, opt->warmup, opt->repeat, &cudnn, algo, sizeof algo,
                                        &msg);
    if (st == CONV_OK) {
        cudnn_ms = cudnn.timing.median_ms;
        failed |= !cudnn.passed;
    }
    char cudnn_why[CONV_MSG_LEN + 16];
    snprintf(cudnn_why, sizeof cudnn_why, "skipped: %s", msg.text);

    double im2col_ms = 0.0, permute_ms = 0.0, gemm_ms[GEMM_VARIANT_COUNT] = {0};
    int order[MAX_VERSIONS] = {GEMM_CUBLAS,    GEMM_6A_NAIVE, GEMM_6B_SHARED, GEMM_6C_REGTILE,
                               GEMM_6D_FLOAT4, GEMM_6E_DBUF,  VERSION_6F};
    for (int oi = 0; oi < MAX_VERSIONS; ++oi) {
        int v = order[oi];
        if (!want[v])
            continue;
        conv2d_pipeline pc = {(gemm_variant)(v == VERSION_6F ? GEMM_6E_DBUF : v), v == VERSION_6F,
                              d_work, work_elems, cublas};
        if (v == VERSION_6F && p->layout != CONV_LAYOUT_NHWC) {
            snprintf(why[v], sizeof why[v], "skipped: 6f is implemented for --layout nhwc");
            continue;
        }
        st = conv_gpu_problem_measure(&pb, conv2d_pipeline_run, &pc, opt->warmup, opt->repeat,
                                      &res[v], &msg);
        if (st != CONV_OK) {
            snprintf(why[v], sizeof why[v], "error: %s", msg.text);
            failed = 1;
            continue;
        }
        ran[v] = 1;
        failed |= !res[v].passed;
        if (v == VERSION_6F)
            continue;
        /* Stage times, on the column buffer the run above filled. */
        if (im2col_ms == 0.0)
            st = time_stage(&pb, &pc, 0, opt, &im2col_ms, &msg);
        if (st == CONV_OK)
            st = time_stage(&pb, &pc, 1, opt, &gemm_ms[v], &msg);
        if (st == CONV_OK && permute_ms == 0.0 && p->layout == CONV_LAYOUT_NCHW && p->n > 1)
            st = time_stage(&pb, &pc, 2, opt, &permute_ms, &msg);
        if (st != CONV_OK) {
            fprintf(stderr, PROGRAM ": stage timing: %s\n", msg.text);
            failed = 1;
        }
        size_t len = strlen(res[v].verdict);
        if (permute_ms > 0.0)
            snprintf(res[v].verdict + len, sizeof res[v].verdict - len,
                     "; im2col %.3f + GEMM %.3f + permute %.3f ms", im2col_ms, gemm_ms[v],
                     permute_ms);
        else
            snprintf(res[v].verdict + len, sizeof res[v].verdict - len,
                     "; im2col %.3f + GEMM %.3f ms", im2col_ms, gemm_ms[v]);
    }

    conv_table t = {0};
    t.out = stdout;
    t.flops = conv_flops(p);
    t.peak_gflops = info->peak_fp32_gflops;
    t.n_refs = 2;
    t.ref_names[0] = "cuDNN";
    t.ref_ms[0] = cudnn_ms;
    t.ref_names[1] = "cuBLAS";
    t.ref_ms[1] = ran[GEMM_CUBLAS] ? res[GEMM_CUBLAS].timing.median_ms : 0.0;
    if (opt->csv_path != NULL &&
        (st = conv_table_open_csv(&t, opt->csv_path, argc, argv, info, &msg)) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        failed = 1;
    }
    printf("\"vs cuBLAS\" = (im2col + cuBLAS SGEMM) time / row time; above 1 the row is faster\n");
    conv_table_print_header(&t);
    char name[80];
    snprintf(name, sizeof name, "cuDNN %s", algo);
    if (cudnn_ms > 0.0)
        conv_table_print_row(&t, name, &cudnn);
    else
        conv_table_print_skip(&t, "cuDNN", cudnn_why);
    for (int oi = 0; oi < MAX_VERSIONS; ++oi) {
        int v = order[oi];
        if (!want[v])
            continue;
        if (v == VERSION_6F)
            snprintf(name, sizeof name, "6f implicit GEMM");
        else
            snprintf(name, sizeof name, "im2col + %s", gemm_variant_name((gemm_variant)v));
        if (ran[v])
            conv_table_print_row(&t, name, &res[v]);
        else
            conv_table_print_skip(&t, name, why[v]);
    }
    if (im2col_ms > 0.0) {
        double col_bytes = 4.0 * (double)conv_im2col_elems(p);
        printf("\nstages: im2col %.3f ms (%.1f MB column buffer written, %.0f GB/s)", im2col_ms,
               col_bytes / 1e6, col_bytes / (im2col_ms * 1e6));
        if (permute_ms > 0.0)
            printf(", permute %.3f ms", permute_ms);
        printf("\n");
        for (int v = 0; v < GEMM_VARIANT_COUNT; ++v)
            if (ran[v] && gemm_ms[v] > 0.0) {
                printf("  GEMM %-24s %9.3f ms %9.1f GFLOP/s", gemm_variant_name((gemm_variant)v),
                       gemm_ms[v], t.flops / (gemm_ms[v] * 1e6));
                if (gemm_ms[GEMM_CUBLAS] > 0.0)
                    printf("  %5.1f%% of cuBLAS", 100.0 * gemm_ms[GEMM_CUBLAS] / gemm_ms[v]);
                printf("\n");
            }
    }
    conv_table_close_csv(&t);
    printf("\nverdict: %s\n", failed ? "FAILED" : "OK");

    conv_cublas_destroy(cublas);
    conv_device_free(d_work);
    conv_gpu_problem_destroy(&pb);
    return failed ? 1 : 0;
}

/* ---- gemm mode ---- */

typedef struct {
    gemm_variant v;
    int m, n, k;
    const float *d_a, *d_b;
    float *d_c;
    conv_cublas *cublas;
} gemm_ctx;

static conv_status run_gemm(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    gemm_ctx *g = ctx;
    return gemm_sgemm(g->v, g->m, g->n, g->k, g->d_a, g->d_b, g->d_c, g->cublas, stream, msg);
}

static int run_gemm_mode(const conv_cli_options *opt, long long m, const int want[MAX_VERSIONS],
                         const conv_device_info *info, int argc, char **argv)
{
    long long n = opt->params.n, k = opt->params.k;
    conv_msg msg = {{0}};
    static const float dummy[4];
    /* Sizes and memory, before anything is allocated or launched. */
    conv_status st = gemm_validate(GEMM_6A_NAIVE, m, n, k, dummy, dummy, dummy, NULL, &msg);
    if (st != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 2;
    }
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        fprintf(stderr, PROGRAM ": cudaMemGetInfo failed\n");
        return 1;
    }
    double need = 4.0 * ((double)m * k + (double)k * n + (double)m * n);
    if (need > (double)free_b) {
        fprintf(stderr,
                PROGRAM ": GEMM operands too large: %.2f GB for A, B and C, %.2f GB of device "
                        "memory free (--m --n --k)\n",
                need / 1e9, (double)free_b / 1e9);
        return 2;
    }

    float *d_a = NULL, *d_b = NULL, *d_c = NULL;
    conv_cublas *cublas = NULL;
    cudaStream_t stream = NULL;
    int failed = 0;
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    if ((st = conv_device_alloc(&d_a, mk, "GEMM A", &msg)) != CONV_OK ||
        (st = conv_device_alloc(&d_b, kn, "GEMM B", &msg)) != CONV_OK ||
        (st = conv_device_alloc(&d_c, mn, "GEMM C", &msg)) != CONV_OK ||
        (st = conv_cublas_create(&cublas, &msg)) != CONV_OK ||
        (st = gemm_fill_uniform(d_a, mk, opt->seed, -1.0f, 1.0f, NULL, &msg)) != CONV_OK ||
        (st = gemm_fill_uniform(d_b, kn, opt->seed + 1, -1.0f, 1.0f, NULL, &msg)) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        failed = 1;
        goto done;
    }
    if (cudaStreamCreate(&stream) != cudaSuccess) {
        fprintf(stderr, PROGRAM ": cudaStreamCreate failed\n");
        failed = 1;
        goto done;
    }

    printf(PROGRAM ": GEMM C[M][N] = A[M][K] * B[K][N], FP32, row-major\n");
    conv_print_device(stdout, info);
    printf("problem: M=%lld N=%lld K=%lld, %.3f GFLOP, A+B+C = %.1f MB\n", m, n, k,
           2.0 * m * n * k / 1e9, need / 1e6);
    printf("timing:  median of %d runs after %d warm-up; verification: %d sampled entries in "
           "double\n\n",
           opt->repeat, opt->warmup, GEMM_SAMPLES);

    conv_gpu_result res[GEMM_VARIANT_COUNT];
    int ran[GEMM_VARIANT_COUNT] = {0};
    char why[GEMM_VARIANT_COUNT][CONV_MSG_LEN + 16];
    memset(res, 0, sizeof res);
    int order[GEMM_VARIANT_COUNT] = {GEMM_CUBLAS,     GEMM_6A_NAIVE,  GEMM_6B_SHARED,
                                     GEMM_6C_REGTILE, GEMM_6D_FLOAT4, GEMM_6E_DBUF};
    for (int oi = 0; oi < GEMM_VARIANT_COUNT; ++oi) {
        int v = order[oi];
        if (!want[v])
            continue;
        gemm_ctx g = {(gemm_variant)v, (int)m, (int)n, (int)k, d_a, d_b, d_c, cublas};
        gemm_check_report rep;
        if ((st = conv_device_poison(d_c, mn, &msg)) != CONV_OK ||
            (st = run_gemm(&g, stream, &msg)) != CONV_OK ||
            (st = gemm_check_sampled((int)m, (int)n, (int)k, d_a, d_b, d_c, GEMM_SAMPLES, opt->seed,
                                     &rep, res[v].verdict, sizeof res[v].verdict, &msg)) !=
                CONV_OK ||
            (st = conv_device_canary_check(d_c, mn, &res[v].canary_bad, &msg)) != CONV_OK ||
            (st = conv_time_gpu(run_gemm, &g, stream, opt->warmup, opt->repeat, &res[v].timing,
                                &msg)) != CONV_OK) {
            snprintf(why[v], sizeof why[v], "error: %s", msg.text);
            failed = 1;
            continue;
        }
        res[v].passed = rep.mismatches == 0 && res[v].canary_bad == 0;
        if (res[v].canary_bad != 0)
            snprintf(res[v].verdict, sizeof res[v].verdict,
                     "FAILED: %zu canary floats after C overwritten", res[v].canary_bad);
        failed |= !res[v].passed;
        ran[v] = 1;
    }

    conv_table t = {0};
    t.out = stdout;
    t.flops = 2.0 * m * n * k;
    t.peak_gflops = info->peak_fp32_gflops;
    t.n_refs = 1;
    t.ref_names[0] = "cuBLAS";
    t.ref_ms[0] = ran[GEMM_CUBLAS] ? res[GEMM_CUBLAS].timing.median_ms : 0.0;
    if (opt->csv_path != NULL &&
        (st = conv_table_open_csv(&t, opt->csv_path, argc, argv, info, &msg)) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        failed = 1;
    }
    conv_table_print_header(&t);
    for (int oi = 0; oi < GEMM_VARIANT_COUNT; ++oi) {
        int v = order[oi];
        if (!want[v])
            continue;
        if (ran[v])
            conv_table_print_row(&t, gemm_variant_name((gemm_variant)v), &res[v]);
        else
            conv_table_print_skip(&t, gemm_variant_name((gemm_variant)v), why[v]);
    }
    conv_table_close_csv(&t);
    printf("\nverdict: %s\n", failed ? "FAILED" : "OK");

done:
    if (stream != NULL)
        cudaStreamDestroy(stream);
    conv_cublas_destroy(cublas);
    conv_device_free(d_a);
    conv_device_free(d_b);
    conv_device_free(d_c);
    return failed ? 1 : 0;
}

/* 1 when argv asks for --mode gemm (looked at before parsing, so that the
 * GEMM defaults for --n and --k can be set first). */
static int argv_says_gemm(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--mode=gemm") == 0)
            return 1;
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc && strcmp(argv[i + 1], "gemm") == 0)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    conv_cli_options opt = conv_cli_defaults();
    int gemm_mode = argv_says_gemm(argc, argv);
    if (gemm_mode)
        opt.params.n = opt.params.k = DEFAULT_GEMM_;
    conv_cli_extra extras[] = {
        {"mode", "conv|gemm", "conv: a convolution; gemm: C = A*B alone (--m --n --k)", "conv"},
        {"gemm", "6a..6f|cublas|all", "which GEMM versions to run", "all"},
        {"m", "M", "GEMM rows in --mode gemm, where --n and --k are its N and K", "4096"},
    };
    conv_msg msg = {{0}};
    conv_status st = conv_cli_parse(
        argc, argv, PROGRAM,
        "Step 06: im2col + GEMM (6a naive .. 6e double-buffered register tiles, cuBLAS) and "
        "implicit GEMM (6f), NCHW and NHWC; or the GEMMs alone (--mode gemm).",
        extras, 3, &opt, stdout, &msg);
    if (st == CONV_HELP_SHOWN)
        return 0;
    if (st != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 2;
    }
    if (strcmp(extras[0].value, "conv") != 0 && strcmp(extras[0].value, "gemm") != 0) {
        fprintf(stderr, PROGRAM ": invalid value for --mode: '%s' (expected conv or gemm)\n",
                extras[0].value);
        return 2;
    }
    int want[MAX_VERSIONS];
    if (parse_gemm_list(extras[1].value, want, &msg) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 2;
    }
    long long m = 0;
    if (conv_cli_parse_ll("--m", extras[2].value, 1, GEMM_MAX_DIM, &m, &msg) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 2;
    }
    want[GEMM_CUBLAS] = 1; /* the reference of every "vs cuBLAS" ratio */
    conv_device_info info;
    if (conv_cuda_device_info(0, &info, &msg) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 1;
    }
    if (gemm_mode) {
        if (want[VERSION_6F] && !want[GEMM_6A_NAIVE]) {
            fprintf(stderr, PROGRAM ": --gemm 6f is a convolution (implicit GEMM); use --mode "
                                    "conv\n");
            return 2;
        }
        return run_gemm_mode(&opt, m, want, &info, argc, argv);
    }
    return run_conv_mode(&opt, want, &info, argc, argv);
}
