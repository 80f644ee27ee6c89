/* 06_gemm: the GEMM progression alone, C[M][N] = A[M][K] * B[K][N] (FP32,
 * row-major; default 4096^3), each version beside cuBLAS SGEMM in the same
 * run. The GEMM is measured as what it is, a 1x1 convolution in NHWC
 * (gemm_as_conv_params), so that the harness verifies every version against
 * a double reference (sampled on large sizes) with NaN-poisoned output and a
 * canary, exactly as it does the convolutions. The program body, the
 * measurement flags and the exit status are those of every program
 * (common/conv_program.h). */
#include <stdio.h>

#include "gemm_program.h"
#include "im2col_gemm_rows.h"

enum { REF_CUBLAS };

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    int n = conv_gemm_rows(p, select, r, max);
    conv_rows_mark_ref(r, n, "cublas", REF_CUBLAS);
    return n;
}

static void describe(FILE *out, const conv_cli_options *opt, const conv_params *p)
{
    (void)p;
    char as_conv[96];
    snprintf(as_conv, sizeof as_conv,
             " (as a 1x1 NHWC convolution: %lld pixels, %lld channels, %lld filters)",
             opt->number[GEMM_FLAG_M], opt->number[GEMM_FLAG_K], opt->number[GEMM_FLAG_N]);
    gemm_program_print_problem(out, opt, as_conv);
}

int main(int argc, char **argv)
{
    static const conv_flag flags[] = {GEMM_SHAPE_FLAGS};
    static const conv_program prog = {
        .cli = {.program = "06_gemm",
                .summary = "Step 06's GEMMs alone: C = A * B with 6a naive .. 6e double-buffered "
                           "register tiles, against cuBLAS SGEMM (FP32, no TF32).",
                CONV_FLAGS(flags),
                .shape = CONV_CLI_SHAPE_NONE,
                .renamed = "--gemm=--variant"},
        .title = "GEMM C[M][N] = A[M][K] * B[K][N], FP32, row-major",
        .variant = {"6a|6b|6c|6d|6e|cublas|all",
                    "which versions to run (6a naive, 6b shared, 6c register tiles, 6d float4, "
                    "6e double buffered; cuBLAS SGEMM always runs: it is the reference)"},
        .ref_names = {"cuBLAS"},
        .problems = gemm_program_problem,
        .rows = rows,
        .describe = describe,
    };
    return conv_program_main(&prog, argc, argv);
}
