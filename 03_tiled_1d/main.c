/* 03_tiled_1d: the 1D "same" convolution with the mask in constant memory:
 * the naive kernel, its 4-outputs-per-thread control (naive x4) and the three
 * tiling strategies, on one width (default 2^26 floats, mask 7). Measures the
 * device-to-device copy bandwidth in the same run and reports each version's
 * effective bandwidth (bytes read + written over its time) and its share of
 * the copy's. Every version is verified (NaN-poisoned output, every output
 * against a double reference or a sample of them on huge problems, canary
 * after the output) before it is timed.
 * Exit status: 0 all verified, 1 wrong result or runtime error, 2 bad command line. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "conv_bandwidth.h"
#include "conv_cli.h"
#include "conv_cpu.h"
#include "conv_cuda.h"
#include "conv_gpu_run.h"
#include "conv_tensor.h"
#include "conv_timer.h"
#include "conv_tiled_1d.h"
#include "conv_verify.h"

#define PROGRAM "03_tiled_1d"
/* Above width * mask = 2e9 multiply-adds the double reference of every output
 * takes long on one CPU core: a sample of outputs is verified instead. */
#define FULL_VERIFY_MAX_MACS 2e9
#define VERIFY_SAMPLES       4096

typedef struct {
    conv1d_strategy s;
    const float *d_x;
    float *d_y;
    long long width;
    int mask_width;
} run1d;

static conv_status run_once(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    const run1d *r = ctx;
    return conv1d_run(r->s, r->d_x, r->d_y, r->width, r->mask_width, stream, msg);
}

/* Sampled verification: the first and last `half`+1 outputs (the padded
 * edges) and random ones, each against a double sum, within gamma_M. */
static conv_verify_report verify_sampled(const float *x, size_t width, const float *mask, int m,
                                         const float *got, uint64_t seed)
{
    conv_verify_report rep = conv_report_init();
    const long long half = m / 2, w = (long long)width;
    for (size_t i = 0; i < VERIFY_SAMPLES; ++i) {
        long long at;
        if (i < 64)
            at = (long long)i < w ? (long long)i : w - 1;
        else if (i < 128)
            at = w - 1 - (long long)(i - 64) >= 0 ? w - 1 - (long long)(i - 64) : 0;
        else
            at = (long long)(conv_rng_hash(seed, i) % width);
        double want = 0.0, mag = 0.0;
        for (int j = 0; j < m; ++j) {
            long long k = at - half + j;
            if (k >= 0 && k < w) {
                want += (double)x[k] * mask[j];
                mag += (double)(x[k] < 0 ? -x[k] : x[k]) * (mask[j] < 0 ? -mask[j] : mask[j]);
            }
        }
        conv_report_add(&rep, (size_t)at, got[at], want, conv_gamma((size_t)m) * mag, 0);
    }
    conv_report_finish(&rep);
    return rep;
}

/* The result table: printed, and (with --csv) written as CSV with the same
 * "# gpu / # date / # command" header as the 2D steps' conv_table. */
static void print_header(void)
{
    printf("%-28s %10s %9s %10s %9s  %s\n", "version", "median ms", "GB/s", "% of copy", "GFLOP/s",
           "verdict");
}

static void print_row(FILE *csv, const char *version, double ms, double bytes, double flops,
                      double copy_gbps, int passed, const char *verdict)
{
    double gbps = conv_effective_gbps(bytes, ms);
    double share = copy_gbps > 0.0 ? 100.0 * gbps / copy_gbps : 0.0;
    double gflops = ms > 0.0 ? flops / (ms * 1e6) : 0.0;
    printf("%-28s %10.4f %9.1f %9.1f%% %9.1f  %s\n", version, ms, gbps, share, gflops, verdict);
    if (csv == NULL)
        return;
    fprintf(csv, "\"%s\",%.6f,%.1f,%.1f,%.1f,%d,\"", version, ms, gbps, share, gflops, passed);
    for (const char *c = verdict; *c; ++c)
        fputc(*c == '"' ? '\'' : *c, csv);
    fprintf(csv, "\"\n");
    fflush(csv);
}

static FILE *open_csv(const char *path, int argc, char **argv, const conv_device_info *info)
{
    FILE *csv = fopen(path, "w");
    if (csv == NULL)
        return NULL;
    char date[64] = "unknown";
    time_t now = time(NULL);
    struct tm tm_utc;
    if (gmtime_r(&now, &tm_utc) != NULL)
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm_utc);
    fprintf(csv, "# gpu: %s, %d SMs, %.0f MHz, DRAM peak %.0f GB/s, driver %d, runtime %d\n",
            info->name, info->sm_count, info->sm_clock_khz / 1e3, info->peak_dram_gbps,
            info->driver_version, info->runtime_version);
    fprintf(csv, "# date: %s\n# command:", date);
    for (int i = 0; i < argc; ++i) {
        const char *arg = argv[i];
        const char *slash = i == 0 ? strrchr(arg, '/') : NULL;
        fprintf(csv, " %s", slash ? slash + 1 : arg);
    }
    fprintf(csv, "\nversion,median_ms,gbps,pct_of_copy,gflops,passed,verdict\n");
    return csv;
}

/* Verifies, checks the canary, then times one strategy; prints its row. */
static int measure(const run1d *r, const conv_cli_options *opt, cudaStream_t stream,
                   const float *h_x, const float *h_mask, float *h_y, double copy_gbps, FILE *csv)
{
    const char *name = conv1d_strategy_name(r->s);
    const size_t width = (size_t)r->width;
    conv_msg msg = {{0}};
    size_t bad = 0;
    conv_timing t;
    conv_status st = conv_device_poison(r->d_y, width, &msg);
    if (st == CONV_OK)
        st = conv1d_run(r->s, r->d_x, r->d_y, r->width, r->mask_width, stream, &msg);
    if (st == CONV_OK) {
        cudaError_t e = cudaStreamSynchronize(stream);
        if (e != cudaSuccess)
            st = conv_cuda_fail(&msg, e, "cudaStreamSynchronize", __FILE__, __LINE__);
    }
    if (st == CONV_OK)
        st = conv_device_download(h_y, r->d_y, width, &msg);
    if (st == CONV_OK)
        st = conv_device_canary_check(r->d_y, width, &bad, &msg);
    if (st == CONV_OK)
        st = conv_time_gpu(run_once, (void *)r, stream, opt->warmup, opt->repeat, &t, &msg);
    if (st != CONV_OK) {
        printf("%-28s error: %s\n", name, msg.text);
        return 1;
    }
    conv_verify_report rep =
        (double)width * r->mask_width <= FULL_VERIFY_MAX_MACS
            ? conv1d_verify_full(h_x, width, h_mask, r->mask_width, h_y, conv_verify_bound(1.0))
            : verify_sampled(h_x, width, h_mask, r->mask_width, h_y, opt->seed);
    char verdict[CONV_MSG_LEN];
    conv_report_describe(&rep, verdict, sizeof verdict);
    if (bad != 0) {
        rep.passed = 0;
        snprintf(verdict, sizeof verdict, "FAILED: %zu canary floats after the output overwritten",
                 bad);
    }
    print_row(csv, name, t.median_ms, 2.0 * sizeof(float) * (double)width,
              2.0 * (double)width * r->mask_width, copy_gbps, rep.passed, verdict);
    return rep.passed ? 0 : 1;
}

int main(int argc, char **argv)
{
    conv_cli_options opt = conv_cli_defaults();
    opt.repeat = 20;
    conv_cli_extra extras[] = {
        {"width", "W", "number of floats of x and y", "67108864"},
        {"mask", "M", "mask width (odd, <= 16383; strategy 2: <= 769)", "7"},
        {"strategy", "naive|naive4|1|2|3|all", "which kernel(s) to run", "all"},
    };
    conv_msg msg = {{0}};
    conv_status st = conv_cli_parse(argc, argv, PROGRAM,
                                    "Step 03: 1D \"same\" convolution, mask in constant memory; "
                                    "naive and the three tiling strategies, against the "
                                    "device-to-device copy bandwidth. (The 2D problem flags are "
                                    "ignored.)",
                                    extras, 3, &opt, stdout, &msg);
    if (st == CONV_HELP_SHOWN)
        return 0;
    long long width = 0, mask_width = 0;
    if (st == CONV_OK)
        st = conv_cli_parse_ll("width", extras[0].value, 1, CONV1D_MAX_WIDTH, &width, &msg);
    if (st == CONV_OK)
        st =
            conv_cli_parse_ll("mask", extras[1].value, 1, CONV1D_MAX_MASK_WIDTH, &mask_width, &msg);
    if (st == CONV_OK)
        st = conv1d_params_validate(width, mask_width, &msg);
    int wanted[CONV1D_N_STRATEGIES] = {0};
    const char *which = extras[2].value;
    if (st == CONV_OK) {
        if (strcmp(which, "all") == 0)
            for (int k = 0; k < CONV1D_N_STRATEGIES; ++k)
                wanted[k] = 1;
        else if (strcmp(which, "naive") == 0)
            wanted[CONV1D_NAIVE] = 1;
        else if (strcmp(which, "naive4") == 0)
            wanted[CONV1D_NAIVE_X4] = 1;
        else if (strcmp(which, "1") == 0)
            wanted[CONV1D_S1] = 1;
        else if (strcmp(which, "2") == 0)
            wanted[CONV1D_S2] = 1;
        else if (strcmp(which, "3") == 0)
            wanted[CONV1D_S3] = 1;
        else
            st = conv_fail(
                &msg, CONV_ERR_INVALID,
                "invalid value for --strategy: '%s' (expected naive, naive4, 1, 2, 3 or all)",
                which);
    }
    if (st == CONV_OK && strcmp(which, "2") == 0 && mask_width > CONV1D_S2_MAX_MASK_WIDTH)
        st = conv_fail(&msg, CONV_ERR_INVALID,
                       "invalid value for --mask: strategy 2 takes at most %d (its block holds "
                       "the input tile)",
                       CONV1D_S2_MAX_MASK_WIDTH);
    if (st != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 2;
    }

    conv_device_info info;
    if (conv_cuda_require_device(&msg) != CONV_OK ||
        conv_cuda_device_info(0, &info, &msg) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 1;
    }
    const size_t n = (size_t)width;
    const int m = (int)mask_width;
    float *h_x = conv_host_alloc(n), *h_y = conv_host_alloc(n), *h_mask = conv_host_alloc(m);
    float *d_x = NULL, *d_y = NULL;
    cudaStream_t stream = NULL;
    FILE *csv = NULL;
    int failed = 1;
    if (h_x == NULL || h_y == NULL || h_mask == NULL) {
        fprintf(stderr, PROGRAM ": out of host memory for %.1f MB\n", 8.0 * (double)n / 1e6);
        goto done;
    }
    conv_fill_uniform(h_x, n, opt.seed, -1.0f, 1.0f);
    conv_fill_uniform(h_mask, (size_t)m, opt.seed + 1, -1.0f, 1.0f);
    conv_bandwidth copy;
    if ((st = conv_device_alloc(&d_x, n, "x", &msg)) != CONV_OK ||
        (st = conv_device_alloc(&d_y, n, "y", &msg)) != CONV_OK ||
        (st = conv_device_upload(d_x, h_x, n, &msg)) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        goto done;
    }
    /* A blocking stream: it orders with the default-stream memset and copies of common/. */
    cudaError_t e = cudaStreamCreate(&stream);
    if (e != cudaSuccess) {
        conv_cuda_fail(&msg, e, "cudaStreamCreate", __FILE__, __LINE__);
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        goto done;
    }
    if ((st = conv1d_upload_mask(h_mask, m, stream, &msg)) != CONV_OK ||
        (st = conv_bandwidth_d2d(n * sizeof(float), opt.warmup, opt.repeat, stream, &copy, &msg)) !=
            CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        goto done;
    }
    if (opt.csv_path != NULL && (csv = open_csv(opt.csv_path, argc, argv, &info)) == NULL) {
        fprintf(stderr, PROGRAM ": cannot write --csv file '%s'\n", opt.csv_path);
        goto done;
    }

    printf(PROGRAM ": 1D \"same\" convolution, mask in constant memory\n");
    conv_print_device(stdout, &info);
    printf("problem: width %lld floats, mask %d; moves %.1f MB (x read once, y written once), "
           "%.3g FLOP\n",
           width, m, 8.0 * (double)n / 1e6, 2.0 * (double)n * m);
    printf("tiles:   naive %d threads/block, 1 output each; naive x4, strategies 1 and 3: %d "
           "outputs per block of %d threads; strategy 2: %d outputs per block of %d + %d - 1 "
           "threads\n",
           CONV1D_THREADS, CONV1D_TILE, CONV1D_THREADS, CONV1D_S2_TILE, CONV1D_S2_TILE, m);
    printf("timing:  median of %d runs after %d warm-up; verification: %s\n\n", opt.repeat,
           opt.warmup,
           (double)n * m <= FULL_VERIFY_MAX_MACS ? "every output vs a double reference"
                                                 : "sampled outputs vs a double reference");
    print_header();
    char copy_name[64];
    snprintf(copy_name, sizeof copy_name, "D2D copy (%zu MiB)", copy.bytes >> 20);
    print_row(csv, copy_name, copy.timing.median_ms, 2.0 * (double)copy.bytes, 0.0, copy.gbps, 1,
              "cudaMemcpyAsync device-to-device: the reference bandwidth");

    failed = 0;
    for (int s = 0; s < CONV1D_N_STRATEGIES; ++s) {
        if (!wanted[s])
            continue;
        if (m > conv1d_max_mask_width((conv1d_strategy)s)) {
            printf("%-28s skipped: mask %d > %d (the block would exceed 1024 threads)\n",
                   conv1d_strategy_name((conv1d_strategy)s), m,
                   conv1d_max_mask_width((conv1d_strategy)s));
            continue;
        }
        run1d r = {(conv1d_strategy)s, d_x, d_y, width, m};
        failed |= measure(&r, &opt, stream, h_x, h_mask, h_y, copy.gbps, csv);
    }
    printf("\nverdict: %s\n", failed ? "FAILED" : "OK");

done:
    if (csv != NULL)
        fclose(csv);
    if (stream != NULL)
        cudaStreamDestroy(stream);
    conv_device_free(d_x);
    conv_device_free(d_y);
    conv_host_free(h_x);
    conv_host_free(h_y);
    conv_host_free(h_mask);
    return failed ? 1 : 0;
}
