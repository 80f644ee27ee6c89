/* 01_cpu_serial: the serial five-loop convolution and its OpenMP version on
 * one problem (default: the lecture's N=1, C=6, 768x512, K=6, 6x6; or a shape
 * given by flags, or --problem NAME|all), each timed (median of --repeat
 * runs) and verified against the double reference (the output poisoned with
 * NaN first, a canary after it). --variant picks the versions: 1a the
 * serial loops (always run: the reference of the "vs serial" column), 1b the
 * OpenMP ones, and on a 1D problem "all" adds 1c, conv1d_cpu_same (step 03's
 * reference). The program body, the flags and the exit status are those of
 * every program (common/conv_program.h). */
#include "conv_program.h"
#include "cpu_rows.h"

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    int n = conv_cpu_rows(p, select, r, max);
    conv_rows_mark_ref(r, n, "1a", 0); /* the "vs serial" column */
    return n;
}

static const conv_program program = {
    .cli = {.program = "01_cpu_serial",
            .summary = "Step 01: the serial 5-loop convolution (loop order oc -> h -> w -> ic "
                       "-> kh -> kw) and its OpenMP version, on the CPU.",
            .default_warmup = 0, /* one serial run of the lecture problem takes a second */
            .default_repeat = 3},
    .title = "the serial five-loop convolution and its OpenMP version (CPU)",
    .variant = {"1a|1b|all", "which versions to run (1a: serial, 1b: OpenMP; all adds 1c, the 1D "
                             "convolution, on a 1D problem; 1a always runs, the reference)"},
    .ref_names = {"serial"},
    .cpu_only = 1,
    .rows = rows,
};

CONV_PROGRAM_MAIN(program)
