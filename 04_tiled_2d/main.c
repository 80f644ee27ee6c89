/* 04_tiled_2d: the tiled 2D convolutions of step 04 on one problem (default:
 * the lecture's N=1, C=6, 768x512, K=6, 6x6 valid; or a shape given by
 * flags, or --problem NAME|all), beside cuDNN and step 02's naive 2D kernel
 * in the same run.
 *
 * --variant 4a|4b|4c|4d|all picks the kernels: 4a, 4b, 4c are the lecture's
 * single-channel strategies 1, 2, 3 (every tile configuration; they need
 * C = K = 1), 4d the multi-channel kernel (every configuration; weights from
 * constant memory when they fit, and from global memory for comparison).
 * "all" runs 4a to 4d when C = K = 1, and 4d alone otherwise. The program
 * body, the common flags and the exit status are those of every program
 * (common/conv_program.h). */
#include "conv_program.h"
#include "naive_rows.h"
#include "tiled_2d_rows.h"

enum { REF_CUDNN, REF_STEP02 };

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    /* of step 02, only its 2D kernel, the reference */
    int kept = conv_rows_keep_ref(r, conv_naive_rows(p, NULL, r, max), "2b", REF_STEP02);
    kept += conv_rows_add_cudnn(r + kept, REF_CUDNN);
    return kept + conv_tiled_2d_rows(p, select, r + kept, max - kept);
}

static const conv_program program = {
    .cli = {.program = "04_tiled_2d",
            .summary = "Step 04: tiled 2D convolution with halos (strategies 1, 2, 3 of ECE408 "
                       "lecture 8, mask in constant memory) and its multi-channel extension, "
                       "against step 02 and cuDNN.",
            .renamed = "--strategy=--variant|1=4a|2=4b|3=4c|mc=4d"},
    .title = "tiled 2D convolution with halos (strategies 1, 2, 3; multi-channel)",
    .variant = {"4a|4b|4c|4d|all",
                "4a, 4b, 4c: the lecture's strategies 1, 2, 3 (single channel, C = K = 1); "
                "4d: the multi-channel kernel"},
    CONV_VS_CUDNN("step 02"),
    .bandwidth_column = 1,
    .rows = rows,
};

CONV_PROGRAM_MAIN(program)
