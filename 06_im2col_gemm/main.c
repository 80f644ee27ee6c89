/* 06_im2col_gemm: one convolution (the common problem flags or --problem,
 * both layouts) through im2col -> GEMM with each GEMM of the progression
 * (6a..6e) and cuBLAS, and through 6f (implicit GEMM, NHWC), beside cuDNN in
 * the same run. Each row's verdict splits its time into im2col, GEMM and
 * (NCHW, N > 1) the layout change; after the table, each GEMM stage against
 * cuBLAS's. The GEMMs alone: the 06_gemm program. The program body, the
 * common flags and the exit status are those of every program
 * (common/conv_program.h). */
#include <stdio.h>

#include "conv_program.h"
#include "conv_step_texts.h"
#include "im2col_gemm_rows.h"

enum { REF_CUDNN, REF_CUBLAS };

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    int n = conv_rows_add_cudnn(r, REF_CUDNN);
    n += conv_im2col_gemm_rows(p, select, r + n, max - n);
    conv_rows_mark_ref(r, n, "cublas", REF_CUBLAS); /* im2col + cuBLAS: "vs cuBLAS" */
    return n;
}

static void describe(FILE *out, const conv_cli_options *opt, const conv_params *p)
{
    (void)opt;
    conv_cli_print_problem(out, p);
    long long npq = (long long)p->n * conv_out_h(p) * conv_out_w(p),
              crs = (long long)p->c * p->r * p->s;
    int nhwc = p->layout == CONV_LAYOUT_NHWC;
    fprintf(out, "GEMM:    %s, M=%lld N=%lld K=%lld; column buffer %.1f MB\n",
            nhwc ? "col[NPQ][RSC] * w[RSC][K]" : "w[K][CRS] * col[CRS][NPQ]", nhwc ? npq : p->k,
            nhwc ? (long long)p->k : npq, crs, 4.0 * (double)conv_im2col_elems(p) / 1e6);
}

/* Each GEMM stage beside cuBLAS's, from the stage times in the rows. */
static void footer(FILE *out, const conv_params *p, const conv_row *r, int n)
{
    im2col_gemm_stages s[CONV_PROGRAM_MAX_ROWS], cublas = {GEMM_CUBLAS, 0, 0, 0};
    int count = 0;
    for (int i = 0; i < n; ++i)
        if (r[i].state == CONV_ROW_OK && conv_im2col_gemm_row_stages(&r[i], &s[count]) &&
            s[count].gemm_ms > 0.0)
            if (s[count++].gemm == GEMM_CUBLAS)
                cublas = s[count - 1];
    if (count == 0)
        return;
    double col_bytes = 4.0 * (double)conv_im2col_elems(p);
    fprintf(out, "stages:  im2col %.3f ms (%.1f MB column buffer written, %.0f GB/s)\n",
            s[0].im2col_ms, col_bytes / 1e6, col_bytes / (s[0].im2col_ms * 1e6));
    for (int i = 0; i < count; ++i) {
        fprintf(out, "  GEMM %-24s %9.3f ms %9.1f GFLOP/s", gemm_variant_name(s[i].gemm),
                s[i].gemm_ms, conv_flops(p) / (s[i].gemm_ms * 1e6));
        if (cublas.gemm_ms > 0.0)
            fprintf(out, "  %5.1f%% of cuBLAS", 100.0 * cublas.gemm_ms / s[i].gemm_ms);
        fprintf(out, "\n");
    }
}

CONV_PROGRAM_MAIN(CONV_STEP_06_TEXTS, CONV_VS_CUDNN("cuBLAS"), .rows = rows, .describe = describe,
                  .footer = footer)
