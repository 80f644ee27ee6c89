/* 02_naive_gpu: the two one-thread-per-output kernels, 2a (grid-stride loop)
 * and 2b (16x16 blocks), picked by --variant, on one problem (default: the
 * lecture's N=1, C=6, 768x512, K=6, 6x6; or a shape given by flags, or
 * --problem NAME|all), beside step 01 (serial and OpenMP) and cuDNN in the
 * same run. The program body, the common flags and the exit status are
 * those of every program (common/conv_program.h). */
#include "conv_program.h"
#include "conv_step_texts.h"
#include "cpu_rows.h"
#include "naive_rows.h"

enum { REF_CUDNN, REF_SERIAL, REF_OPENMP };
enum { FLAG_VARIANT, FLAG_HOST_REPEAT }; /* the order of flags[] */

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    int n = conv_cpu_rows(p, NULL, r, max);
    conv_rows_mark_ref(r, n, "1a", REF_SERIAL);
    conv_rows_mark_ref(r, n, "1b", REF_OPENMP);
    for (int i = 0; i < n; ++i)
        if (opt->number[FLAG_HOST_REPEAT] == 0)
            conv_row_skip(&r[i], "--host-repeat 0");
    if (n + 1 < max)
        n += conv_rows_add_cudnn(r + n, REF_CUDNN);
    return n + conv_naive_rows(p, select, r + n, max - n);
}

static const conv_flag flags[] = {
    /* --variant first, then --host-repeat: declared here, in that order */
    CONV_STEP_02_VARIANT_FLAG,
    {"host-repeat", CONV_FLAG_INT, "N", "timed runs of the CPU versions (0: skip them)", "3", 0,
     100},
};

CONV_PROGRAM_MAIN(CONV_STEP_02_TEXTS, CONV_PROGRAM_FLAGS(flags), CONV_VS_CUDNN("serial", "OpenMP"),
                  .bandwidth_column = 1, .rows = rows)
