/* 01_cpu_serial: runs the serial 5-loop convolution and its OpenMP version on
 * one problem (default: the lecture's N=1, C=6, 768x512, K=6, 6x6), times
 * both (median of --repeat runs) and verifies both against the double
 * reference. Exit status: 0 verified, 1 wrong result or runtime error,
 * 2 bad command line. */
#include <stdio.h>

#include "conv_cli.h"
#include "conv_cpu.h"
#include "conv_tensor.h"
#include "conv_timer.h"
#include "conv_verify.h"

/* Above this many FLOPs the full double reference would take long on one
 * core, so a sample of outputs is verified instead. */
#define FULL_VERIFY_MAX_FLOPS 2e10
#define VERIFY_SAMPLES        4096

typedef struct {
    const conv_params *p;
    const float *x, *w;
    float *y;
    conv_status (*conv)(const conv_params *, const float *, const float *, float *, conv_msg *);
} cpu_run;

static conv_status run_once(void *ctx, conv_msg *msg)
{
    cpu_run *run = ctx;
    return run->conv(run->p, run->x, run->w, run->y, msg);
}

/* Times one version and verifies its (poisoned, then written) output. */
static int time_and_verify(const char *name, cpu_run *run, const conv_cli_options *opt,
                           double baseline_ms, double *median_ms)
{
    const conv_params *p = run->p;
    size_t out_elems = conv_output_elems(p);
    conv_msg msg = {{0}};
    conv_timing t;
    conv_fill_nan(run->y, out_elems);
    conv_status st = conv_time_cpu(run_once, run, opt->warmup, opt->repeat, &t, &msg);
    if (st != CONV_OK) {
        fprintf(stderr, "01_cpu_serial: %s: %s\n", name, msg.text);
        return 1;
    }
    conv_verify_report rep =
        conv_flops(p) <= FULL_VERIFY_MAX_FLOPS
            ? conv_verify_full(p, run->x, run->w, run->y, conv_verify_bound(1.0))
            : conv_verify_sampled(p, run->x, run->w, run->y, VERIFY_SAMPLES, opt->seed,
                                  conv_verify_bound(1.0));
    char verdict[CONV_MSG_LEN];
    conv_report_describe(&rep, verdict, sizeof verdict);
    if (conv_host_canary_check(run->y, out_elems) != 0) {
        rep.passed = 0;
        snprintf(verdict, sizeof verdict, "FAILED: canary after the output overwritten");
    }
    conv_cli_print_row(stdout, name, t.median_ms, conv_flops(p),
                       baseline_ms > 0 ? baseline_ms : t.median_ms, verdict);
    *median_ms = t.median_ms;
    return rep.passed ? 0 : 1;
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
           conv_flops(p) <= FULL_VERIFY_MAX_FLOPS ? "every output" : "sampled outputs");
    conv_cli_print_table_header(stdout, "vs serial");

    double serial_ms = 0.0, omp_ms = 0.0;
    cpu_run serial = {p, x, w, y, conv2d_cpu_serial};
    cpu_run omp = {p, x, w, y, conv2d_cpu_openmp};
    int failed = time_and_verify("serial", &serial, &opt, 0.0, &serial_ms);
    char omp_name[32];
    snprintf(omp_name, sizeof omp_name, "openmp (%d threads)", conv2d_cpu_openmp_threads());
    failed |= time_and_verify(omp_name, &omp, &opt, serial_ms, &omp_ms);

    printf("\nverdict: %s\n", failed ? "FAILED" : "OK");
    conv_host_free(x);
    conv_host_free(w);
    conv_host_free(y);
    return failed ? 1 : 0;
}
