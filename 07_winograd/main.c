/* 07_winograd: one 3x3, stride-1 convolution (the common problem flags or
 * --problem, both layouts; default: the catalogue's "cutlass", CUTLASS's
 * reference problem) by Winograd F(2x2, 3x3) (7a) and F(4x4, 3x3) (7b),
 * beside cuDNN and step 06 in the same run (6f, the implicit GEMM, in NHWC;
 * im2col + 6e in NCHW). Each row's verdict splits its time into the four
 * stages; after the table, where the time goes. The program body, the common
 * flags and the exit status are those of every program
 * (common/conv_program.h). */
#include <stdio.h>

#include "conv_program.h"
#include "conv_step_texts.h"
#include "im2col_gemm_rows.h"
#include "winograd.h"
#include "winograd_rows.h"

enum { REF_CUDNN, REF_STEP06 };

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    int n = conv_rows_add_cudnn(r, REF_CUDNN);
    /* step 06's best for the layout, as the "vs step 06" column */
    const char *best06 = p->layout == CONV_LAYOUT_NHWC ? "6f" : "6e";
    int listed = conv_im2col_gemm_rows(p, NULL, r + n, max - n);
    n += conv_rows_keep_ref(r + n, listed, best06, REF_STEP06);
    return n + conv_winograd_rows(p, select, r + n, max - n);
}

static void describe(FILE *out, const conv_cli_options *opt, const conv_params *p)
{
    (void)opt;
    conv_cli_print_problem(out, p);
    for (int t = 0; t < WINO_TILE_COUNT; ++t) {
        const long long tiles = (long long)p->n * wino_tiles(p, (wino_tile)t);
        const int a = wino_alpha((wino_tile)t);
        const double products = (double)a * a * p->k * (double)p->c * (double)tiles;
        fprintf(out,
                "%s: %d GEMMs of %d x %d times %d x %lld (tiles); %.2f times fewer "
                "multiplications than direct; workspace %.1f MB\n",
                wino_tile_name((wino_tile)t), a * a, p->k, p->c, p->c, tiles,
                conv_flops(p) / (2.0 * products),
                4.0 * (double)wino_workspace_elems(p, (wino_tile)t) / 1e6);
    }
}

/* Where each row's time goes, from the stage times in the rows. */
static void footer(FILE *out, const conv_params *p, const conv_row *r, int n)
{
    (void)p;
    for (int i = 0; i < n; ++i) {
        wino_tile t;
        int fused;
        double ms[WINO_STAGE_COUNT], sum = 0.0;
        if (r[i].state != CONV_ROW_OK || !conv_winograd_row_stages(&r[i], &t, &fused, ms))
            continue;
        const int stages = fused ? 2 : WINO_STAGE_COUNT;
        for (int s = 0; s < stages; ++s)
            sum += ms[s];
        if (sum <= 0.0)
            continue;
        fprintf(out, "stages of %s:", r[i].name);
        for (int s = 0; s < stages; ++s)
            fprintf(out, "%s %s %.0f%%", s ? "," : "",
                    fused && s == 1 ? "fused kernel" : wino_stage_name((wino_stage)s),
                    100.0 * ms[s] / sum);
        fprintf(out, "\n");
    }
}

CONV_PROGRAM_MAIN(CONV_STEP_07_TEXTS, .cli.default_problem = "cutlass", CONV_VS_CUDNN("step 06"),
                  .rows = rows, .describe = describe, .footer = footer)
