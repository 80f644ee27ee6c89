/* 08_gemm: the GEMM alone on the tensor cores, C[M][N] = A[M][K] * B[K][N]
 * (row-major; default 4096^3) by 8a to 8e, beside cuBLAS SGEMM (FP32)
 * and cuBLAS with TF32 allowed, in the same run. As in 06_gemm the GEMM is
 * measured as a 1x1 NHWC convolution (gemm_as_conv_params), so the harness
 * verifies every version against a double reference, each within the bound
 * of its arithmetic. The program body, the measurement flags and the exit
 * status are those of every program (common/conv_program.h). */
#include <stdio.h>

#include "conv_program.h"
#include "im2col_gemm_rows.h"
#include "tc_rows.h"

enum { REF_CUBLAS, REF_CUBLAS_TF32 };
enum { FLAG_M, FLAG_N, FLAG_K, FLAG_VARIANT }; /* the order of flags[] */

static int problem(const conv_cli_options *opt, conv_named_problem *out, int max, conv_msg *msg)
{
    (void)max;
    out[0] = (conv_named_problem){
        "", "", gemm_as_conv_params(opt->number[FLAG_M], opt->number[FLAG_N], opt->number[FLAG_K])};
    return conv_params_validate(&out[0].params, msg) == CONV_OK ? 1 : -1;
}

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
    long long m = opt->number[FLAG_M], n = opt->number[FLAG_N], k = opt->number[FLAG_K];
    fprintf(out, "problem: GEMM M=%lld N=%lld K=%lld, %.3f GFLOP, A+B+C = %.1f MB\n", m, n, k,
            2.0 * m * n * k / 1e9, 4.0 * ((double)m * k + (double)k * n + (double)m * n) / 1e6);
    tc_print_mma_peak(out, opt, 2.0 * m * n * k);
}

int main(int argc, char **argv)
{
    static const conv_flag flags[] = {
        {"m", CONV_FLAG_INT, "M", "rows of A and C", "4096", 1, GEMM_MAX_DIM},
        {"n", CONV_FLAG_INT, "N", "columns of B and C", "4096", 1, GEMM_MAX_DIM},
        {"k", CONV_FLAG_INT, "K", "columns of A, rows of B", "4096", 1, GEMM_MAX_DIM},
        {"variant", CONV_FLAG_CHOICE, "8a|8b|8b-xt|8c|8d|8e|cublas-tf32|all",
         "which versions to run (cuBLAS SGEMM always runs: it is the reference)", "all", 0, 0},
    };
    static const conv_program prog = {
        .cli = {.program = "08_gemm",
                .summary = "Step 08's kernels on the GEMM alone: C = A * B on the tensor cores "
                           "(8a, 8b: TF32; 8b-xt, 8d, 8e: TF32 with A truncated; 8c: 3xTF32), "
                           "against cuBLAS SGEMM (FP32) and "
                           "cuBLAS with TF32 allowed.",
                CONV_FLAGS(flags),
                .shape = CONV_CLI_SHAPE_NONE},
        .title = "GEMM C[M][N] = A[M][K] * B[K][N] on the tensor cores, row-major",
        .select_flag = "variant",
        .ref_names = {"cuBLAS", "cuBLAS TF32"},
        .problems = problem,
        .rows = rows,
        .describe = describe,
    };
    return conv_program_main(&prog, argc, argv);
}
