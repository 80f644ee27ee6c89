/* 10_backward: the gradients of a convolution layer, dgrad (of the input)
 * and wgrad (of the filter), picked by --pass, in step 10's versions picked
 * by --variant, on one problem (default: the lecture's; or a shape given by
 * flags, or --problem NAME|all), beside cuDNN's backward pass (its legacy and
 * graph APIs, FP32 and TF32) in the same run. The program body, the common
 * flags and the exit status are those of every program
 * (common/conv_program.h). */
#include "backward_rows.h"
#include "conv_program.h"
#include "conv_step_texts.h"

enum { REF_CUDNN };

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    int n = 0;
    if (max >= 4) {
        n += conv_rows_add_cudnn(r, REF_CUDNN);
        r[n++] = conv_row_cudnn_tf32();
        r[n++] = conv_row_cudnn_graph(CONV_CLASS_TF32);
    }
    return n + conv_backward_rows(p, select, r + n, max - n);
}

CONV_PROGRAM_MAIN(CONV_STEP_10_TEXTS, .passes = "dgrad|wgrad|all", CONV_VS_CUDNN(), .rows = rows)
