/* 01_cpu_serial: runs the serial 5-loop convolution and its OpenMP version on
 * one problem (default: the lecture's N=1, C=6, 768x512, K=6, 6x6), times
 * both (median of --repeat runs) and verifies both against the double
 * reference. Exit status: 0 verified, 1 wrong result or runtime error,
 * 2 bad command line. */
#include <stdio.h>
#include <string.h>

#include "conv_cli.h"
#include "conv_cpu.h"
#include "conv_gpu_run.h"
#include "conv_tensor.h"
#include "conv_timer.h"
#include "conv_verify.h"

typedef struct {
    const conv_params *p;
    const float *x, *w;
    float *y;
    conv_host_conv conv;
} cpu_run;

static conv_status run_once(void *ctx, conv_msg *msg)
{
    cpu_run *run = ctx;
    return run->conv(run->p, run->x, run->w, run->y, msg);
}

/* Times one version and verifies its (poisoned, then written) output against
 * the double reference: every output, or a sample on large problems. */
static int time_and_verify(cpu_run *run, const conv_cli_options *opt, conv_gpu_result *res)
{
    const conv_params *p = run->p;
    size_t out_elems = conv_output_elems(p);
    conv_msg msg = {{0}};
    memset(res, 0, sizeof *res);
    conv_fill_nan(run->y, out_elems);
    conv_status st = conv_time_cpu(run_once, run, opt->warmup, opt->repeat, &res->timing, &msg);
    if (st != CONV_OK) {
        fprintf(stderr, "01_cpu_serial: %s\n", msg.text);
        return 1;
    }
    res->report = conv_flops(p) <= CONV_FULL_VERIFY_MAX_FLOPS
                      ? conv_verify_full(p, run->x, run->w, run->y, conv_verify_bound(1.0))
                      : conv_verify_sampled(p, run->x, run->w, run->y, CONV_VERIFY_SAMPLES,
                                            opt->seed, conv_verify_bound(1.0));
    conv_report_describe(&res->report, res->verdict, sizeof res->verdict);
    res->canary_bad = conv_host_canary_check(run->y, out_elems);
    if (res->canary_bad != 0)
        snprintf(res->verdict, sizeof res->verdict, "FAILED: canary after the output overwritten");
    res->passed = res->report.passed && res->canary_bad == 0;
    return 0;
}

int main(int argc, char **argv)
{
    conv_cli_options opt = conv_cli_defaults();
    opt.warmup = 0; /* a serial run already takes about a second */
    opt.repeat = 3;
    conv_msg msg = {{0}};
    conv_status st = conv_cli_parse(argc, argv, "01_cpu_serial",
                                    "Step 01: the serial 5-loop convolution (loop order "
                                    "oc -> h -> w -> ic -> kh -> kw) and its OpenMP version.",
                                    NULL, 0, &opt, stdout, &msg);
    if (st == CONV_HELP_SHOWN)
        return 0;
    if (st != CONV_OK) {
        fprintf(stderr, "01_cpu_serial: %s\n", msg.text);
        return 2;
    }
    const conv_params *p = &opt.params;
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *x = conv_host_alloc(nx), *w = conv_host_alloc(nw), *y = conv_host_alloc(ny);
    if (x == NULL || w == NULL || y == NULL) {
        fprintf(stderr, "01_cpu_serial: out of host memory for %.1f MB of tensors\n",
                4.0 * ((double)nx + nw + ny) / 1e6);
        conv_host_free(x);
        conv_host_free(w);
        conv_host_free(y);
        return 1;
    }
    conv_fill_uniform(x, nx, opt.seed, -1.0f, 1.0f);
    conv_fill_uniform(w, nw, opt.seed + 1, -1.0f, 1.0f);

    printf("01_cpu_serial: serial 5-loop convolution and OpenMP (%d threads)\n",
           conv2d_cpu_openmp_threads());
    conv_cli_print_problem(stdout, p);
    printf("timing:  median of %d runs after %d warm-up; verification against a double "
           "reference (%s)\n\n",
           opt.repeat, opt.warmup,
           conv_flops(p) <= CONV_FULL_VERIFY_MAX_FLOPS ? "every output" : "sampled outputs");
    conv_table table = {.out = stdout, .flops = conv_flops(p), .n_refs = 1};
    table.ref_names[0] = "serial";
    cpu_run serial = {p, x, w, y, conv2d_cpu_serial};
    cpu_run omp = {p, x, w, y, conv2d_cpu_openmp};
    conv_gpu_result serial_res, omp_res;
    int failed = time_and_verify(&serial, &opt, &serial_res);
    failed |= time_and_verify(&omp, &opt, &omp_res);
    failed |= !serial_res.passed || !omp_res.passed;
    table.ref_ms[0] = serial_res.timing.median_ms;
    if (opt.csv_path != NULL &&
        conv_table_open_csv(&table, opt.csv_path, argc, argv, NULL, &msg) != CONV_OK) {
        fprintf(stderr, "01_cpu_serial: %s\n", msg.text);
        failed = 1;
    }
    char omp_name[32];
    snprintf(omp_name, sizeof omp_name, "openmp (%d threads)", conv2d_cpu_openmp_threads());
    conv_table_print_header(&table);
    conv_table_print_row(&table, "serial", &serial_res);
    conv_table_print_row(&table, omp_name, &omp_res);
    conv_table_close_csv(&table);

    printf("\nverdict: %s\n", failed ? "FAILED" : "OK");
    conv_host_free(x);
    conv_host_free(w);
    conv_host_free(y);
    return failed ? 1 : 0;
}
