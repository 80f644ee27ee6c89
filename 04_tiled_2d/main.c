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
#include "conv_step_texts.h"
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

CONV_PROGRAM_MAIN(CONV_STEP_04_TEXTS, CONV_VS_CUDNN("step 02"), .bandwidth_column = 1, .rows = rows)
