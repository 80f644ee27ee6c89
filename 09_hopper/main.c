/* 09_hopper: one NHWC convolution (the common problem flags or --problem;
 * default: the catalogue's "cutlass-nhwc", CUTLASS's reference problem in
 * NHWC) by step 08's implicit GEMM on Hopper's tensor-core instructions:
 * TF32 through wgmma fed by cp.async (9a), by TMA (9b) and by TMA with its
 * sum split (9c), FP16 fed by cp.async (9a-fp16) and by TMA (9b-fp16), beside cuDNN in FP32, with
 * TF32 allowed and in FP16, and step 08's 8b and 8b-fp16, in the same run. The program body, the
 * common flags and the exit status are those of every program (common/conv_program.h). */
#include <stdio.h>
#include <string.h>

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
    /* "vs cuDNN" is against cuDNN best of the row's class: the fastest of these six
     * rows that the class allows (a TF32 row: the first four; an FP16 row: the FP16 two) */
    r[n] = conv_row_cudnn();
    r[n++].ref = REF_CUDNN;
    r[n] = conv_row_cudnn_tf32();
    r[n++].ref = REF_CUDNN;
    r[n++] = conv_row_cudnn_graph(CONV_CLASS_FP32);
    r[n++] = conv_row_cudnn_graph(CONV_CLASS_TF32);
    r[n] = conv_row_cudnn_fp16();
    r[n++].ref = REF_CUDNN;
    r[n++] = conv_row_cudnn_graph(CONV_CLASS_FP16);
    /* 8b and 8b-fp16: the mma.sync kernels 9a, 9b, 9c and 9b-fp16 put on wgmma */
    const int listed = conv_tc_rows(p, NULL, r + n, max - n);
    int kept = 0;
    for (int i = 0; i < listed; ++i)
        if (strcmp(r[n + i].key, "8b") == 0 || strcmp(r[n + i].key, "8b-fp16") == 0) {
            r[n + kept] = r[n + i];
            r[n + kept++].ref = REF_STEP08;
        }
    n += kept;
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
