/* 03_tiled_1d: the 1D "same" convolution with the mask in constant memory,
 * naive and the three tiling strategies, on one width (default 2^26 floats,
 * mask 7), beside cuDNN running the same 1D convolution (as a 2D one with
 * N = C = K = H = R = 1). Measures the device-to-device copy bandwidth in the
 * same run: the column "vs D2D copy" is each version's effective bandwidth
 * (x read once, y written once, over its time) as a share of the copy's.
 * Every version is verified (NaN-poisoned output, every output against a
 * double reference or a sample of them on huge problems, canary) before it is
 * timed. Exit status: 0 all verified, 1 wrong result or runtime error, 2 bad
 * command line. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "conv_bandwidth.h"
#include "conv_cli.h"
#include "conv_gpu_run.h"
#include "conv_tiled_1d.h"

#define PROGRAM "03_tiled_1d"

enum { REF_CUDNN, REF_COPY, N_REFS };

static const conv1d_strategy strategies[CONV1D_N_STRATEGIES] = {CONV1D_NAIVE, CONV1D_NAIVE_X4,
                                                                CONV1D_S1, CONV1D_S2, CONV1D_S3};
static const char *const strategy_keys[CONV1D_N_STRATEGIES] = {"naive", "naive4", "1", "2", "3"};

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
                                    "device-to-device copy bandwidth and cuDNN. (The 2D problem "
                                    "flags are ignored.)",
                                    extras, 3, &opt, stdout, &msg);
    if (st == CONV_HELP_SHOWN)
        return 0;
    long long width = 0, mask_width = 0;
    if (st == CONV_OK)
        st = conv_cli_parse_ll("width", extras[0].value, 1, INT_MAX, &width, &msg);
    if (st == CONV_OK)
        st =
            conv_cli_parse_ll("mask", extras[1].value, 1, CONV1D_MAX_MASK_WIDTH, &mask_width, &msg);
    if (st == CONV_OK)
        st = conv1d_params_validate(width, mask_width, &msg);
    const char *which = extras[2].value;
    int known = strcmp(which, "all") == 0;
    for (int s = 0; s < CONV1D_N_STRATEGIES; ++s)
        known |= strcmp(which, strategy_keys[s]) == 0;
    if (st == CONV_OK && !known)
        st = conv_fail(
            &msg, CONV_ERR_INVALID,
            "invalid value for --strategy: '%s' (expected naive, naive4, 1, 2, 3 or all)", which);
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
    conv_params p = conv1d_as_conv_params(width, (int)mask_width);
    conv_gpu_problem pb;
    if (conv_cuda_require_device(&msg) != CONV_OK ||
        conv_cuda_device_info(0, &info, &msg) != CONV_OK ||
        conv_gpu_problem_create(&pb, &p, opt.seed, &msg) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 1;
    }
    conv_bandwidth copy;
    if (conv1d_upload_mask(pb.h_w, p.s, pb.stream, &msg) != CONV_OK ||
        conv_bandwidth_d2d((size_t)width * sizeof(float), opt.warmup, opt.repeat, pb.stream, &copy,
                           &msg) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        conv_gpu_problem_destroy(&pb);
        return 1;
    }

    /* The copy's column: the time the copy bandwidth needs for this problem's
     * bytes, so that "vs D2D copy" = this row's GB/s over the copy's. */
    conv_table t = {.out = stdout,
                    .flops = conv_flops(&p),
                    .peak_gflops = info.peak_fp32_gflops,
                    .bytes = conv_min_bytes(&p),
                    .n_refs = N_REFS};
    t.ref_names[REF_CUDNN] = "cuDNN";
    t.ref_names[REF_COPY] = "D2D copy";
    t.ref_ms[REF_COPY] = conv_min_bytes(&p) / (copy.gbps * 1e6);
    conv_row rows[1 + CONV1D_N_STRATEGIES];
    int n = 0;
    rows[n++] =
        (conv_row){.name = "cuDNN (the same 1D conv)", .kind = CONV_ROW_CUDNN, .ref = REF_CUDNN};
    for (int s = 0; s < CONV1D_N_STRATEGIES; ++s)
        if (strcmp(which, "all") == 0 || strcmp(which, strategy_keys[s]) == 0)
            rows[n++] = (conv_row){.name = conv1d_strategy_name(strategies[s]),
                                   .kind = CONV_ROW_DEVICE,
                                   .conv = conv1d_run_as_conv,
                                   .ctx = (void *)&strategies[s],
                                   .ref = -1};
    int failed = 0;
    if (opt.csv_path != NULL &&
        conv_table_open_csv(&t, opt.csv_path, argc, argv, &info, &msg) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        failed = 1;
    } else {
        if (t.csv != NULL)
            fprintf(t.csv, "# d2d_gbps: %.1f\n", copy.gbps);
        printf(PROGRAM ": 1D \"same\" convolution, mask in constant memory\n");
        conv_print_device(stdout, &info);
        printf("problem: width %lld floats, mask %d; moves %.1f MB (x read once, y written "
               "once), %.3g FLOP\n",
               width, p.s, conv_min_bytes(&p) / 1e6, conv_flops(&p));
        printf("tiles:   naive %d threads/block, 1 output each; naive x4, strategies 1 and 3: %d "
               "outputs per block of %d threads; strategy 2: %d outputs per block of %d + %d - 1 "
               "threads\n",
               CONV1D_THREADS, CONV1D_TILE, CONV1D_THREADS, CONV1D_S2_TILE, CONV1D_S2_TILE, p.s);
        printf("memory:  device-to-device copy (cudaMemcpyAsync, %zu MiB) %.0f GB/s, read + "
               "write\n",
               copy.bytes >> 20, copy.gbps);
        printf("timing:  median of %d runs after %d warm-up; verification: %s\n\n", opt.repeat,
               opt.warmup,
               pb.full_verify ? "every output vs a double reference"
                              : "sampled outputs vs a double reference");
        conv_run_opts o = {opt.warmup, opt.repeat, 1};
        failed = conv_rows_run(&pb, rows, n, &t, &o) != 0;
        printf("\nverdict: %s\n", failed ? "FAILED" : "OK");
    }
    conv_table_close_csv(&t);
    conv_gpu_problem_destroy(&pb);
    return failed ? 1 : 0;
}
