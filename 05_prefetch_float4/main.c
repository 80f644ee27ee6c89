/* 05_prefetch_float4: the blog article's direct convolution (5a, in both loop
 * orders) and the tuned kernel (5b) on one problem (default: the lecture's
 * N=1, C=6, 768x512, K=6, 6x6; or a shape given by flags, or --problem
 * NAME|all), beside cuDNN, step 02 (naive, grid-stride) and step 04 (tiled,
 * multi-channel) in the same run; the launch plan of each variant is printed
 * first. The program body, the common flags and the exit status are those of
 * every program (common/conv_program.h). */
#include <stdio.h>

#include "conv_device.h"
#include "conv_prefetch.h"
#include "conv_program.h"
#include "conv_step_texts.h"
#include "naive_rows.h"
#include "prefetch_rows.h"
#include "tiled_2d_rows.h"

enum { REF_CUDNN, REF_STEP02, REF_STEP04 };

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    int n = conv_rows_add_cudnn(r, REF_CUDNN);
    n += conv_rows_keep_ref(r + n, conv_naive_rows(p, NULL, r + n, max - n), "2a", REF_STEP02);
    n += conv_rows_keep_ref(r + n, conv_tiled_2d_rows(p, "4d", r + n, max - n), "4d", REF_STEP04);
    return n + conv_prefetch_rows(p, select, r + n, max - n);
}

static void describe(FILE *out, const conv_cli_options *opt, const conv_params *p)
{
    (void)opt;
    conv_cli_print_problem(out, p);
    size_t limit = conv_smem_limit();
    for (int v = CONV_PREFETCH_5A; v <= CONV_PREFETCH_5B; ++v) {
        conv_prefetch_plan plan;
        char line[CONV_MSG_LEN + 32];
        conv_msg msg = {{0}};
        if (conv2d_prefetch_plan((conv_prefetch_variant)v, p,
                                 limit ? limit : CONV_SMEM_DEFAULT_BYTES, &plan, &msg) == CONV_OK)
            conv_prefetch_plan_describe((conv_prefetch_variant)v, &plan, line, sizeof line);
        else
            snprintf(line, sizeof line, "%s: %s", conv_prefetch_variant_name(v), msg.text);
        fprintf(out, "plan:    %s\n", line);
    }
}

CONV_PROGRAM_MAIN(CONV_STEP_05_TEXTS, CONV_VS_CUDNN("step 02", "step 04"), .rows = rows,
                  .describe = describe)
