/* 05_prefetch_float4: the blog article's direct convolution (5a, in both loop
 * orders) and the tuned kernel (5b) on one problem (default: the lecture's
 * N=1, C=6, 768x512, K=6, 6x6), measured in the same run as cuDNN (FP32,
 * CUDNN_FMA_MATH, its fastest algorithm, set-up excluded), step 02 (naive,
 * grid-stride) and step 04 (tiled, multi-channel). Each version is verified
 * (NaN-poisoned output, every output against the double reference or a
 * sample on large problems, canary) and timed (median of --repeat runs).
 * Exit status: 0 all verified, 1 wrong result or runtime error, 2 bad
 * command line. */
#include <stdio.h>
#include <string.h>

#include "conv_cli.h"
#include "conv_gpu_run.h"
#include "conv_prefetch.h"
#ifdef CONV05_HAVE_STEP02
#include "conv_naive.h"
#endif
#ifdef CONV05_HAVE_STEP04
#include "conv_tiled_2d.h"
#endif

#define PROGRAM "05_prefetch_float4"

enum { REF_CUDNN, REF_STEP02, REF_STEP04, N_REFS };

#ifdef CONV05_HAVE_STEP02
static conv_status run_step02(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                              float *d_y, cudaStream_t stream, conv_msg *msg)
{
    (void)ctx;
    return conv2d_naive(p, d_x, d_w, d_y, 0, stream, msg);
}
#endif

/* Measures one reference; on failure leaves ms at 0 (the "vs" column prints
 * "-") and the reason in why. Returns 1 for a runtime failure. */
static int measure_ref(conv_gpu_problem *pb, conv_gpu_conv conv, void *ctx,
                       const conv_cli_options *opt, conv_gpu_result *res, int *have, char *why,
                       size_t why_len)
{
    conv_msg msg = {{0}};
    conv_status st = conv_gpu_problem_measure(pb, conv, ctx, opt->warmup, opt->repeat, res, &msg);
    *have = st == CONV_OK;
    if (st != CONV_OK)
        snprintf(why, why_len, "%s: %s",
                 st == CONV_ERR_UNSUPPORTED || st == CONV_ERR_INVALID ? "skipped" : "error",
                 msg.text);
    return st == CONV_ERR_CUDA || st == CONV_ERR_OUT_OF_MEMORY;
}

int main(int argc, char **argv)
{
    conv_cli_options opt = conv_cli_defaults();
    conv_cli_extra extras[] = {
        {"variant", "5a|5b|all", "which step 05 kernels to run (5a includes its oc-outer order)",
         "all"},
    };
    conv_msg msg = {{0}};
    conv_status st = conv_cli_parse(argc, argv, PROGRAM,
                                    "Step 05: the direct convolution of the blog article (one-warp "
                                    "blocks, equal split of float4 loads, filter in shared memory, "
                                    "register accumulators, prefetch of the next channel) and its "
                                    "tuned version, against cuDNN and steps 02 and 04.",
                                    extras, 1, &opt, stdout, &msg);
    if (st == CONV_HELP_SHOWN)
        return 0;
    const char *variant = extras[0].value;
    if (st == CONV_OK && strcmp(variant, "all") != 0 && strcmp(variant, "5a") != 0 &&
        strcmp(variant, "5b") != 0)
        st = conv_fail(&msg, CONV_ERR_INVALID,
                       "invalid value for --variant: '%s' (expected 5a, 5b or all)", variant);
    const conv_params *p = &opt.params;
    /* step 05's own limits, before any CUDA call */
    conv_prefetch_plan plans[3];
    for (int v = 0; v < 3 && st == CONV_OK; ++v)
        st = conv2d_prefetch_plan((conv_prefetch_variant)v, p, &plans[v], &msg);
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
    conv_gpu_problem pb;
    st = conv_gpu_problem_create(&pb, p, opt.seed, &msg);
    if (st != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 1;
    }

    printf(PROGRAM ": direct convolution with float4 loads, shared tiles, register "
                   "accumulators and prefetching\n");
    conv_print_device(stdout, &info);
    conv_cli_print_problem(stdout, p);
    for (int v = 0; v < 3; ++v) {
        char line[CONV_MSG_LEN];
        conv_prefetch_plan_describe((conv_prefetch_variant)v, &plans[v], line, sizeof line);
        printf("plan:    %s\n", line);
    }
    printf("timing:  median of %d runs after %d warm-up; verification: %s\n\n", opt.repeat,
           opt.warmup, pb.full_verify ? "every output vs a double reference" : "sampled outputs");

    /* The references first: their times fill the "vs" columns of every row. */
    conv_gpu_result cudnn = {0}, step02 = {0}, step04 = {0};
    int have_cudnn = 0, have02 = 0, have04 = 0, failed = 0;
    char cudnn_why[CONV_MSG_LEN + 16], why02[CONV_MSG_LEN + 16], why04[CONV_MSG_LEN + 16];
    char algo[128] = "";
    st = conv_gpu_problem_measure_cudnn(&pb, opt.warmup, opt.repeat, &cudnn, algo, sizeof algo,
                                        &msg);
    have_cudnn = st == CONV_OK;
    if (st != CONV_OK)
        snprintf(cudnn_why, sizeof cudnn_why, "%s: %s",
                 st == CONV_ERR_UNAVAILABLE ? "skipped" : "error", msg.text);
    if (st == CONV_ERR_CUDA || st == CONV_ERR_OUT_OF_MEMORY)
        failed = 1;
#ifdef CONV05_HAVE_STEP02
    failed |= measure_ref(&pb, run_step02, NULL, &opt, &step02, &have02, why02, sizeof why02);
#else
    /* built without step 02 (-DCONV05_COMPARE_STEPS=OFF, or no 02_naive_gpu/) */
    snprintf(why02, sizeof why02, "skipped: step 02 not built with this step");
#endif
#ifdef CONV05_HAVE_STEP04
    conv_tiled_choice tiled = {CONV_TILED_MC, 0, CONV_TILED_WEIGHTS_AUTO};
    failed |=
        measure_ref(&pb, conv2d_tiled_conv, &tiled, &opt, &step04, &have04, why04, sizeof why04);
#else
    /* built without step 04 (-DCONV05_COMPARE_STEPS=OFF, or no 04_tiled_2d/) */
    snprintf(why04, sizeof why04, "skipped: step 04 not built with this step");
#endif
    (void)measure_ref;

    conv_table t = {0};
    t.out = stdout;
    t.flops = conv_flops(p);
    t.peak_gflops = info.peak_fp32_gflops;
    t.n_refs = N_REFS;
    t.ref_names[REF_CUDNN] = "cuDNN";
    t.ref_names[REF_STEP02] = "step 02";
    t.ref_names[REF_STEP04] = "step 04";
    t.ref_ms[REF_CUDNN] = have_cudnn ? cudnn.timing.median_ms : 0.0;
    t.ref_ms[REF_STEP02] = have02 ? step02.timing.median_ms : 0.0;
    t.ref_ms[REF_STEP04] = have04 ? step04.timing.median_ms : 0.0;
    if (opt.csv_path != NULL &&
        conv_table_open_csv(&t, opt.csv_path, argc, argv, &info, &msg) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        conv_gpu_problem_destroy(&pb);
        return 1;
    }
    conv_table_print_header(&t);

    char name[160];
    if (have_cudnn) {
        snprintf(name, sizeof name, "cuDNN (%s)", algo);
        conv_table_print_row(&t, name, &cudnn);
        failed |= !cudnn.passed;
    } else {
        conv_table_print_skip(&t, "cuDNN", cudnn_why);
    }
    if (have02) {
        conv_table_print_row(&t, "step 02 naive grid-stride", &step02);
        failed |= !step02.passed;
    } else {
        conv_table_print_skip(&t, "step 02 naive grid-stride", why02);
    }
    if (have04) {
        conv_table_print_row(&t, "step 04 tiled multi-channel", &step04);
        failed |= !step04.passed;
    } else {
        conv_table_print_skip(&t, "step 04 tiled multi-channel", why04);
    }

    const struct {
        conv_prefetch_variant v;
        const char *key, *name;
    } versions[] = {
        {CONV_PREFETCH_5A_OC_OUTER, "5a", "5a lecture (oc outer, ic inner)"},
        {CONV_PREFETCH_5A, "5a", "5a lecture (ic outer, 8 oc in regs)"},
        {CONV_PREFETCH_5B, "5b", "5b tuned"},
    };
    double ms_5b = 0.0;
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; ++i) {
        if (strcmp(variant, "all") != 0 && strcmp(variant, versions[i].key) != 0)
            continue;
        conv_prefetch_variant v = versions[i].v;
        conv_gpu_result res;
        st = conv_gpu_problem_measure(&pb, conv2d_prefetch_conv, &v, opt.warmup, opt.repeat, &res,
                                      &msg);
        if (st != CONV_OK) {
            char why[CONV_MSG_LEN + 8];
            snprintf(why, sizeof why, "error: %s", msg.text);
            conv_table_print_skip(&t, versions[i].name, why);
            failed = 1;
            continue;
        }
        conv_table_print_row(&t, versions[i].name, &res);
        failed |= !res.passed;
        if (v == CONV_PREFETCH_5B)
            ms_5b = res.timing.median_ms;
    }

    if (ms_5b > 0.0 && have_cudnn)
        printf("\n5b vs cuDNN: %.2fx (%.4f ms vs %.4f ms)\n", cudnn.timing.median_ms / ms_5b, ms_5b,
               cudnn.timing.median_ms);
    printf("\nverdict: %s\n", failed ? "FAILED" : "OK");
    conv_table_close_csv(&t);
    conv_gpu_problem_destroy(&pb);
    return failed ? 1 : 0;
}
