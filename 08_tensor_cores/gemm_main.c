/* 08_gemm: the GEMM alone on the tensor cores, C[M][N] = A[M][K] * B[K][N]
 * (row-major; default 4096^3) by 8a to 8c, beside cuBLAS SGEMM (FP32)
 * and cuBLAS with TF32 allowed, in the same run. As in 06_gemm the GEMM is
 * measured as a 1x1 NHWC convolution (gemm_as_conv_params), so the harness
 * verifies every version against a double reference, each within the bound
 * of its arithmetic. The program body, the measurement flags and the exit
 * status are those of every program (common/conv_program.h). */
#include <stdio.h>

#include "gemm_program.h"
#include "im2col_gemm_rows.h"
#include "tc_rows.h"

enum { REF_CUBLAS, REF_CUBLAS_TF32 };

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    /* cuBLAS SGEMM, FP32: the reference */
    int n = conv_rows_keep_ref(r, conv_gemm_rows(p, NULL, r, max), "cublas", REF_CUBLAS);
    int first = n;
    n += conv_tc_gemm_rows(p, select, r + n, max - n);
    conv_rows_mark_ref(r + first, n - first, "cublas-tf32", REF_CUBLAS_TF32);
    return n;
}

/* The GEMM, then mma.sync's rate on this GPU, measured: 8b's ceiling. */
static void describe(FILE *out, const conv_cli_options *opt, const conv_params *p)
{
    (void)p;
    gemm_program_print_problem(out, opt, "");
    tc_print_mma_peak(out, opt,
                      2.0 * opt->number[GEMM_FLAG_M] * opt->number[GEMM_FLAG_N] *
                          opt->number[GEMM_FLAG_K]);
}

int main(int argc, char **argv)
{
    static const conv_flag flags[] = {GEMM_SHAPE_FLAGS};
    static const conv_program prog = {
        .cli = {.program = "08_gemm",
                .summary = "Step 08's kernels on the GEMM alone: C = A * B on the tensor cores "
                           "(8a, 8b: TF32; 8b-xt: TF32 with A truncated; 8c: 3xTF32), "
                           "against cuBLAS SGEMM (FP32) and "
                           "cuBLAS with TF32 allowed.",
                CONV_FLAGS(flags),
                .shape = CONV_CLI_SHAPE_NONE},
        .title = "GEMM C[M][N] = A[M][K] * B[K][N] on the tensor cores, row-major",
        .variant = {"8a|8b|8b-xt|8c|cublas-tf32|all",
                    "which versions to run (cuBLAS SGEMM always runs: it is the reference)"},
        .ref_names = {"cuBLAS", "cuBLAS TF32"},
        .problems = gemm_program_problem,
        .rows = rows,
        .describe = describe,
    };
    return conv_program_main(&prog, argc, argv);
}
