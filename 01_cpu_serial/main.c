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
#include "conv_step_texts.h"
#include "cpu_rows.h"

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    int n = conv_cpu_rows(p, select, r, max);
    conv_rows_mark_ref(r, n, "1a", 0); /* the "vs serial" column */
    return n;
}

CONV_PROGRAM_MAIN(
    CONV_STEP_01_TEXTS,
    .cli.default_warmup = 0, /* one serial run of the lecture problem takes a second */
    .cli.default_repeat = 3, .ref_names = {"serial"}, .cpu_only = 1, .rows = rows)
