#include "bench_rows.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench_problems.h"
#include "conv_cpu.h"
#include "conv_im2col_gemm.h"
#include "conv_naive.h"
#include "conv_prefetch.h"
#include "conv_tiled_1d.h"
#include "conv_tiled_2d.h"

void bench_ref_names(const char **names)
{
    names[BENCH_REF_SERIAL] = "serial";
    names[BENCH_REF_OPENMP] = "OpenMP";
    names[BENCH_REF_NAIVE] = "naive GPU";
    names[BENCH_REF_CUDNN] = "cuDNN";
}

/* ---- adapters to the conv_gpu_conv / conv_host_conv signatures ---- */

static conv_status host_conv1d(const conv_params *p, const float *h_x, const float *h_w, float *h_y,
                               conv_msg *msg)
{
    return conv1d_cpu_same(h_x, (size_t)p->w, h_w, p->s, h_y, msg);
}

/* Step 03's kernels read the mask from constant memory, uploaded once per
 * problem below; ctx selects the strategy. */
static const conv1d_strategy strategies_1d[CONV1D_N_STRATEGIES] = {CONV1D_NAIVE, CONV1D_NAIVE_X4,
                                                                   CONV1D_S1, CONV1D_S2, CONV1D_S3};

/* Step 06's pipelines share one workspace (the column buffer) and one cuBLAS
 * handle per problem, freed by bench_rows_release. */
static conv2d_pipeline pipelines[GEMM_VARIANT_COUNT + 1];
static float *pipeline_work;
static conv_cublas *pipeline_blas;

/* ---- the row list ---- */

static char texts[BENCH_MAX_ROWS][2]
                 [CONV_MSG_LEN + 16]; /* names and skip reasons built at run time */

static conv_row *add(conv_row *rows, int *n, int max_rows, const char *name, conv_row_kind kind,
                     int ref)
{
    static conv_row overflow; /* rows past max_rows are filled here and dropped */
    conv_row *row = *n < max_rows ? &rows[(*n)++] : &overflow;
    memset(row, 0, sizeof *row);
    row->name = name;
    row->kind = kind;
    row->ref = ref;
    return row;
}

static const char *text(int slot, int which, const char *fmt, ...)
{
    if (slot >= BENCH_MAX_ROWS)
        slot = BENCH_MAX_ROWS - 1; /* only rows past the table's end get here */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(texts[slot][which], sizeof texts[slot][which], fmt, ap);
    va_end(ap);
    return texts[slot][which];
}

static int add_step06_rows(conv_gpu_problem *pb, conv_row *rows, int n, int max_rows)
{
    const conv_params *p = &pb->p;
    conv_msg msg = {{0}};
    size_t free_bytes = 0, total_bytes = 0;
    size_t work = conv2d_im2col_gemm_workspace_elems(p);
    const char *why = NULL;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess ||
        conv2d_im2col_gemm_check(p, free_bytes, &msg) != CONV_OK ||
        conv_device_alloc(&pipeline_work, work, "im2col column buffer", &msg) != CONV_OK ||
        conv_cublas_create(&pipeline_blas, &msg) != CONV_OK)
        why = text(n, 1, "skipped: %s", msg.text[0] ? msg.text : "cudaMemGetInfo failed");
    for (int v = 0; v <= GEMM_VARIANT_COUNT; ++v) {
        int implicit = v == GEMM_VARIANT_COUNT; /* the last row: 6f */
        conv_row *row =
            add(rows, &n, max_rows,
                implicit ? "06 6f implicit GEMM"
                         : text(n, 0, "06 im2col + %s", gemm_variant_name((gemm_variant)v)),
                CONV_ROW_DEVICE, -1);
        pipelines[v] = (conv2d_pipeline){implicit ? GEMM_6E_DBUF : (gemm_variant)v, implicit,
                                         pipeline_work, work, pipeline_blas};
        row->conv = conv2d_pipeline_run;
        row->ctx = &pipelines[v];
        row->skip = implicit ? NULL : why; /* 6f needs no workspace */
    }
    return n;
}

int bench_rows_for(conv_gpu_problem *pb, unsigned steps, int have_device, conv_row *rows,
                   int max_rows)
{
    const conv_params *p = &pb->p;
    int is_1d = conv1d_is_1d_problem(p), n = 0;
    conv_row *row;
    if (steps & BENCH_STEP_01) {
        double serial_s = bench_serial_seconds(p);
        int threads = conv2d_cpu_openmp_threads();
        double omp_s = bench_openmp_seconds(p, threads);
        row = add(rows, &n, max_rows, "01 serial (CPU)", CONV_ROW_HOST, BENCH_REF_SERIAL);
        row->host = conv2d_cpu_serial;
        if (serial_s > BENCH_CPU_MAX_SECONDS)
            row->skip = text(n - 1, 1, "skipped: estimated %.0f s per run", serial_s);
        row = add(rows, &n, max_rows, text(n, 0, "01 OpenMP (%d threads)", threads), CONV_ROW_HOST,
                  BENCH_REF_OPENMP);
        row->host = conv2d_cpu_openmp;
        if (omp_s > BENCH_CPU_MAX_SECONDS)
            row->skip = text(n - 1, 1, "skipped: estimated %.0f s per run", omp_s);
        if (is_1d) {
            row = add(rows, &n, max_rows, "01 conv1d_cpu_same (CPU)", CONV_ROW_HOST, -1);
            row->host = host_conv1d;
            if (serial_s > BENCH_CPU_MAX_SECONDS)
                row->skip = text(n - 1, 1, "skipped: estimated %.0f s per run", serial_s);
        }
    }
    if (!have_device)
        return n;
    if (steps & BENCH_STEP_CUDNN)
        add(rows, &n, max_rows, "cuDNN", CONV_ROW_CUDNN, BENCH_REF_CUDNN);
    if (steps & BENCH_STEP_02) {
        row = add(rows, &n, max_rows, "02 naive grid-stride", CONV_ROW_DEVICE, BENCH_REF_NAIVE);
        row->conv = conv2d_naive_run;
        row = add(rows, &n, max_rows, "02 naive 16x16 blocks", CONV_ROW_DEVICE, -1);
        row->conv = conv2d_naive_2d_run;
    }
    if (steps & BENCH_STEP_03) {
        conv_msg msg = {{0}};
        if (!is_1d) {
            row = add(rows, &n, max_rows, "03 tiled 1D", CONV_ROW_DEVICE, -1);
            row->skip = "skipped: 1D kernels (problem conv1d: N=C=K=H=R=1, same padding)";
        } else if (conv1d_upload_mask(pb->h_w, p->s, pb->stream, &msg) != CONV_OK) {
            row = add(rows, &n, max_rows, "03 tiled 1D", CONV_ROW_DEVICE, -1);
            row->skip = text(n - 1, 1, "skipped: %s", msg.text);
        } else {
            for (int s = 0; s < CONV1D_N_STRATEGIES; ++s) {
                row = add(rows, &n, max_rows,
                          text(n, 0, "03 %s", conv1d_strategy_name(strategies_1d[s])),
                          CONV_ROW_DEVICE, -1);
                row->conv = conv1d_run_as_conv;
                row->ctx = (void *)&strategies_1d[s];
            }
        }
    }
    if (steps & BENCH_STEP_04) {
        /* the single-channel strategies where C = K = 1, the multi-channel kernel always */
        static conv_tiled_rows tiled;
        tiled.n = 0;
        if (p->c == 1 && p->k == 1)
            for (int s = CONV_TILED_S1; s <= CONV_TILED_S3; ++s)
                conv2d_tiled_add_rows(&tiled, (conv_tiled_strategy)s, p);
        conv2d_tiled_add_rows(&tiled, CONV_TILED_MC, p);
        for (int i = 0; i < tiled.n; ++i) {
            row = add(rows, &n, max_rows, text(n, 0, "04 %s", tiled.rows[i].name), CONV_ROW_DEVICE,
                      -1);
            row->conv = tiled.rows[i].conv;
            row->ctx = tiled.rows[i].ctx;
        }
    }
    if (steps & BENCH_STEP_05) {
        static const conv_prefetch_variant variants[] = {CONV_PREFETCH_5A_OC_OUTER,
                                                         CONV_PREFETCH_5A, CONV_PREFETCH_5B};
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v) {
            row = add(rows, &n, max_rows,
                      text(n, 0, "05 %s", conv_prefetch_variant_name(variants[v])), CONV_ROW_DEVICE,
                      -1);
            row->conv = conv2d_prefetch_conv;
            row->ctx = (void *)&variants[v];
        }
    }
    if (steps & BENCH_STEP_06)
        n = add_step06_rows(pb, rows, n, max_rows);
    return n;
}

void bench_rows_release(conv_row *rows, int n_rows)
{
    (void)rows;
    (void)n_rows;
    conv_device_free(pipeline_work);
    pipeline_work = NULL;
    if (pipeline_blas != NULL)
        conv_cublas_destroy(pipeline_blas);
    pipeline_blas = NULL;
}
