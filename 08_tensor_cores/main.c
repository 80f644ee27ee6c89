/* 08_tensor_cores: one convolution (the common problem flags or --problem;
 * default: the catalogue's "cutlass-nhwc", CUTLASS's reference problem in
 * NHWC) by 6f's implicit GEMM on the tensor cores: TF32 through WMMA (8a)
 * and mma.sync (8b), 3xTF32 through mma.sync (8c; 8b and 8c in NCHW too), FP16 through
 * WMMA (8a-fp16) and mma.sync (8b-fp16), beside cuDNN in FP32, with TF32
 * allowed and in FP16, and 6f, in the same run. The program body, the common flags
 * and the exit status are those of every program (common/conv_program.h). */
#include <stdio.h>

#include "conv_program.h"
#include "conv_step_texts.h"
#include "im2col_gemm_rows.h"
#include "tc_rows.h"

enum { REF_CUDNN, REF_STEP06 };

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    int n = 0;
    /* "vs cuDNN" is against cuDNN best of the row's class: the fastest of these six
     * rows that the class allows (a TF32 row: the first four; an FP32 row: the FP32 two;
     * 8a-fp16, 8b-fp16: the FP16 two) */
    r[n] = conv_row_cudnn();
    r[n++].ref = REF_CUDNN;
    r[n] = conv_row_cudnn_tf32();
    r[n++].ref = REF_CUDNN;
    r[n++] = conv_row_cudnn_graph(CONV_CLASS_FP32);
    r[n++] = conv_row_cudnn_graph(CONV_CLASS_TF32);
    r[n++] = conv_row_cudnn_fp16();
    r[n++] = conv_row_cudnn_graph(CONV_CLASS_FP16);
    int listed = conv_im2col_gemm_rows(p, NULL, r + n, max - n);
    /* 6f: the FP32 kernel 8a puts on tensor cores */
    n += conv_rows_keep_ref(r + n, listed, "6f", REF_STEP06);
    return n + conv_tc_rows(p, select, r + n, max - n);
}

/* The problem, then mma.sync's rate on this GPU, measured: 8b's ceiling. */
static void describe(FILE *out, const conv_cli_options *opt, const conv_params *p)
{
    conv_cli_print_problem(out, p);
    tc_print_mma_peak(out, opt, conv_flops(p));
}

CONV_PROGRAM_MAIN(CONV_STEP_08_TEXTS, .cli.default_problem = "cutlass-nhwc",
                  CONV_VS_CUDNN("step 06"), .rows = rows, .describe = describe)
