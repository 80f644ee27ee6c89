/* 10_backward: the gradients of a convolution layer, dgrad (of the input)
 * and wgrad (of the filter), picked by --pass, in step 10's versions picked
 * by --variant, on one problem (default: the lecture's; or a shape given by
 * flags, or --problem NAME|all), beside cuDNN's backward pass (its legacy and
 * graph APIs, FP32 and TF32) in the same run. The program body, the common
 * flags and the exit status are those of every program
 * (common/conv_program.h). */
#include "backward_rows.h"
#include "conv_program.h"

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

static const conv_program program = {
    .cli = {.program = "10_backward",
            .summary = "Step 10: the backward pass, the gradients of the input (dgrad) and of "
                       "the filter (wgrad), against cuDNN's."},
    .title = "the backward pass: dgrad and wgrad",
    .passes = "dgrad|wgrad|all",
    .variant = {"10a|10b|10c|10d|all",
                "which version(s) to run (10a: one thread per gradient element; 10b: "
                "implicit GEMMs, wgrad with split-K; 10c: the same on TF32 tensor cores; "
                "10d: dgrad at stride 1 as a forward convolution with the flipped filter, "
                "by steps 06 and 08)"},
    CONV_VS_CUDNN(),
    .rows = rows,
};

CONV_PROGRAM_MAIN(program)
