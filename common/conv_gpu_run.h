/* The harness every GPU step program shares: one problem set up once (seeded
 * host tensors, device copies with canaries, a stream, the verification
 * reference), then any number of device convolutions measured on it the same
 * way: poison the output with NaN, run once, verify (every output against the
 * double reference, or a sample on large problems), check the canary, then time
 * (warm-up, median of repeats, CUDA events). cuDNN is measured through the same
 * call, so "ratio to cuDNN" always means "the same problem, the same run".
 *
 * Naming chain of a step: <kernel>_kernel  <-  launcher conv2d_<step>(), which
 * validates, launches and checks the launch  <-  a conv_gpu_conv adapter in the
 * step program and the tests. */
#ifndef CONV_GPU_RUN_H
#define CONV_GPU_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "conv_cli.h"
#include "conv_cuda.h"
#include "conv_params.h"
#include "conv_timer.h"
#include "conv_verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A 2D convolution on the device, as the harness and the tests call it: ctx
 * carries what the step needs (a variant, a tile choice, a workspace). It must
 * only enqueue work on `stream` and report launch errors; it must not
 * synchronise (the timer does). */
typedef conv_status (*conv_gpu_conv)(void *ctx, const conv_params *p, const float *d_x,
                                     const float *d_w, float *d_y, cudaStream_t stream,
                                     conv_msg *msg);

/* A 2D convolution on the host (step 01's signature). */
typedef conv_status (*conv_host_conv)(const conv_params *p, const float *h_x, const float *h_w,
                                      float *h_y, conv_msg *msg);

/* Above this many FLOPs the double reference of every output would take long
 * on one CPU core, so a sample of outputs is verified instead. */
#define CONV_FULL_VERIFY_MAX_FLOPS 2e10
#define CONV_VERIFY_SAMPLES        4096

typedef struct {
    conv_params p;
    uint64_t seed;
    float *h_x, *h_w, *h_y; /* host input and filter (seeded uniform in [-1, 1)), output */
    float *d_x, *d_w, *d_y; /* device copies, each followed by a canary */
    cudaStream_t stream;
    int full_verify; /* 1: every output is checked; 0: CONV_VERIFY_SAMPLES of them */
    double *ref;     /* double reference of every output (full_verify only) */
    double *ref_abs; /* and its sum |x*w|, for the tolerance */
} conv_gpu_problem;

typedef struct {
    conv_timing timing;
    conv_verify_report report;
    size_t canary_bad; /* canary floats overwritten after the output */
    int passed;        /* verified and canary intact */
    char verdict[CONV_MSG_LEN];
} conv_gpu_result;

/* Allocates and fills everything (input and filter uniform in [-1, 1) from the
 * seed) and, for problems of at most CONV_FULL_VERIFY_MAX_FLOPS, computes the
 * double reference once. Errors: no device, out of (host or device) memory,
 * invalid parameters. On error nothing stays allocated. */
conv_status conv_gpu_problem_create(conv_gpu_problem *pb, const conv_params *p, uint64_t seed,
                                    conv_msg *msg);
/* The host half only (tensors and reference, no device, no stream): for
 * measuring host rows on a machine without a GPU. Device measurements on such
 * a problem return CONV_ERR_NO_DEVICE. */
conv_status conv_gpu_problem_create_host(conv_gpu_problem *pb, const conv_params *p, uint64_t seed,
                                         conv_msg *msg);
void conv_gpu_problem_destroy(conv_gpu_problem *pb);

/* Measures one device convolution on the problem (see the top of this file).
 * Returns an error only when something failed to run; a wrong result is
 * CONV_OK with res->passed == 0 and the reason in res->verdict. A result that
 * fails verification is still timed, so the table shows it, marked FAILED. */
conv_status conv_gpu_problem_measure(conv_gpu_problem *pb, conv_gpu_conv conv, void *ctx,
                                     int warmup, int repeat, conv_gpu_result *res, conv_msg *msg);

/* The same for cuDNN (FP32, CUDNN_FMA_MATH, its fastest algorithm; plan
 * creation and the algorithm search are outside the timed region). The
 * algorithm's name goes to algo. CONV_ERR_UNAVAILABLE without cuDNN. */
conv_status conv_gpu_problem_measure_cudnn(conv_gpu_problem *pb, int warmup, int repeat,
                                           conv_gpu_result *res, char *algo, size_t algo_len,
                                           conv_msg *msg);

/* Times a host convolution (step 01 serial or OpenMP) on the problem's host
 * tensors and verifies it like the device ones. */
conv_status conv_gpu_problem_measure_host(conv_gpu_problem *pb, conv_host_conv conv, int warmup,
                                          int repeat, conv_gpu_result *res, conv_msg *msg);

/* The result table of the GPU step programs. One row per measured version:
 *   version   median ms   GFLOP/s   % peak   [GB/s]   vs <ref1>   vs <ref2> ...   verdict
 * Each "vs" column is reference_ms / row_ms (above 1: the row is faster); a
 * reference of 0 ms prints "-". peak_gflops <= 0 prints "-" for % peak. */
#define CONV_TABLE_MAX_REFS 4
typedef struct {
    FILE *out;
    FILE *csv;          /* optional: the same rows as CSV (conv_table_open_csv) */
    double flops;       /* per run */
    double peak_gflops; /* the device's FP32 peak */
    double bytes;       /* > 0: also a GB/s column, bytes / time (e.g. conv_min_bytes) */
    /* Non-NULL when conv_table_open_csv runs: the CSV gets a first column
     * "problem", and each row carries the value problem has when it is printed
     * (one CSV for several problems, as conv_bench writes). */
    const char *problem;
    int n_refs;
    const char *ref_names[CONV_TABLE_MAX_REFS]; /* e.g. "cuDNN", "serial", "step 02" */
    double ref_ms[CONV_TABLE_MAX_REFS];
    int csv_problem_column; /* set by conv_table_open_csv */
} conv_table;

void conv_table_print_header(const conv_table *t);
void conv_table_print_row(const conv_table *t, const char *version, const conv_gpu_result *res);
/* A row for a version that did not run, e.g. "skipped: cuDNN not built". */
void conv_table_print_skip(const conv_table *t, const char *version, const char *why);

/* Opens `path` for the CSV copy of the table and writes its header: comment
 * lines "# gpu: ...", "# date: ...", "# command: ..." (argv joined), then
 *   version,median_ms,gflops,pct_peak,[gbps,]vs_<ref1>,...,passed,verdict
 * The reference names must be set before. scripts/doc_tables.py turns such a
 * file into the results table of a lecture note. */
conv_status conv_table_open_csv(conv_table *t, const char *path, int argc, char **argv,
                                const conv_device_info *info, conv_msg *msg);
void conv_table_close_csv(conv_table *t);

/* The current time, "2026-11-23 05:41 UTC" ("unknown" if the clock fails). */
void conv_format_utc_now(char *buf, size_t size);
/* The software versions behind a measurement, as one phrase:
 * "driver 580.159.04 (CUDA 13.0), runtime 13.0, cuDNN 9.13.0". */
void conv_format_versions(const conv_device_info *info, char *buf, size_t size);
/* Prints the device line: name, SMs, clock, FP32 peak, DRAM peak, versions. */
void conv_print_device(FILE *out, const conv_device_info *info);

/* ---- the rows of a step program (and of bench/conv_bench) ----
 *
 * A program lists what it measures as rows: its own kernels, and references
 * (step 01 on the CPU, cuDNN, an earlier step) whose times fill the table's
 * "vs" columns. conv_rows_run measures the reference rows first, then the
 * others, and prints them in the order given. */
typedef enum {
    CONV_ROW_DEVICE, /* conv(ctx, ...) through conv_gpu_problem_measure */
    CONV_ROW_HOST,   /* host(...) through conv_gpu_problem_measure_host */
    CONV_ROW_CUDNN   /* conv_gpu_problem_measure_cudnn; the algorithm joins the name */
} conv_row_kind;

typedef struct {
    /* set by the program */
    const char *name;
    conv_row_kind kind;
    conv_gpu_conv conv;
    conv_host_conv host;
    void *ctx;
    int ref;          /* >= 0: this row's median fills the table's ref_ms[ref] */
    const char *skip; /* non-NULL: not run; printed as the verdict (e.g. "skipped: ...") */
    /* filled by conv_rows_run */
    conv_status status; /* CONV_OK when measured */
    conv_gpu_result res;
    char label[96];              /* name as printed */
    char why[CONV_MSG_LEN + 16]; /* "skipped: ..." or "error: ..." when not measured */
} conv_row;

typedef struct {
    int warmup, repeat; /* device rows */
    int host_repeat;    /* host rows (no warm-up: one serial run can take seconds) */
} conv_run_opts;

/* Measures and prints the rows (see above). A row whose launcher rejects the
 * problem (CONV_ERR_UNSUPPORTED, CONV_ERR_INVALID, or CONV_ERR_UNAVAILABLE for
 * a library not built) is printed as skipped with the launcher's message; a
 * runtime error or a failed verification is a failure. Returns the number of
 * failed rows. */
int conv_rows_run(conv_gpu_problem *pb, conv_row *rows, int n_rows, conv_table *t,
                  const conv_run_opts *o);

/* The whole body of a GPU step program after its flags are parsed: device
 * info (or "no CUDA device" and exit status 1), the problem, a header, the
 * rows (conv_rows_run) with reference columns ref_names, the CSV when
 * opt->csv_path is set, and the verdict line. Returns the exit status: 0 all
 * verified, 1 a wrong result or a runtime error. */
int conv_step_program_run(const char *program, const char *title, int argc, char **argv,
                          const conv_cli_options *opt, int host_repeat, conv_row *rows, int n_rows,
                          const char *const *ref_names, int n_refs);

#ifdef __cplusplus
}
#endif

#endif /* CONV_GPU_RUN_H */
