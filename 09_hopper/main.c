/* 09_hopper: one NHWC convolution (the common problem flags or --problem;
 * default: the catalogue's "cutlass-nhwc", CUTLASS's reference problem in
 * NHWC) by step 08's implicit GEMM on Hopper's tensor-core instructions:
 * TF32 through wgmma fed by cp.async (9a) and by TMA (9b), beside cuDNN in
 * FP32 and with TF32 allowed, and step 08's 8b, in the same run. The
 * program body, the common flags and the exit status are those of every
 * program (common/conv_program.h). */
#include <stdio.h>

#include "conv_program.h"
#include "conv_step_texts.h"
#include "hopper_rows.h"
#include "tc_rows.h"

enum { REF_CUDNN, REF_STEP08 };

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    int n = 0;
    /* "vs cuDNN" is against cuDNN best of the row's class: the fastest of these four
     * rows that the class allows (a TF32 row: all four) */
    r[n] = conv_row_cudnn();
    r[n++].ref = REF_CUDNN;
    r[n] = conv_row_cudnn_tf32();
    r[n++].ref = REF_CUDNN;
    r[n++] = conv_row_cudnn_graph(CONV_CLASS_FP32);
    r[n++] = conv_row_cudnn_graph(CONV_CLASS_TF32);
    int listed = conv_tc_rows(p, NULL, r + n, max - n);
    /* 8b: the mma.sync kernel 9a and 9b put on wgmma */
    n += conv_rows_keep_ref(r + n, listed, "8b", REF_STEP08);
    return n + conv_hopper_rows(p, select, r + n, max - n);
}

/* The problem, then mma.sync's rate on this GPU, measured: 8b's ceiling,
 * which only wgmma passes on Hopper. */
static void describe(FILE *out, const conv_cli_options *opt, const conv_params *p)
{
    conv_cli_print_problem(out, p);
    tc_print_mma_peak(out, opt, conv_flops(p));
}

CONV_PROGRAM_MAIN(CONV_STEP_09_TEXTS, .cli.default_problem = "cutlass-nhwc",
                  CONV_VS_CUDNN("step 08"), .rows = rows, .describe = describe)
