/* 03_tiled_1d: the 1D "same" convolution with the mask in constant memory,
 * naive (3a), its control naive x4 (3b) and the three tiling strategies
 * (3c, 3d, 3e, picked by --variant), on one width (default 2^26 floats,
 * mask 7), beside cuDNN running the same 1D convolution (as a 2D one with
 * N = C = K = H = R = 1) and the device-to-device copy of the same bytes:
 * "vs D2D copy" is each version's share of the copy bandwidth. The program
 * body, the common flags and the exit status are those of every program
 * (common/conv_program.h); the 2D problem flags do not apply here, and
 * --problem takes the place of --width and --mask (conv1d is the catalogue's
 * 1D problem; the others are 2D and rejected, or in --problem all reported
 * as not run). */
#include <stdio.h>

#include "conv_program.h"
#include "conv_step_texts.h"
#include "conv_tiled_1d.h"
#include "tiled_1d_rows.h"

enum { REF_CUDNN, REF_COPY };
enum { FLAG_WIDTH, FLAG_MASK, FLAG_STRATEGY }; /* the order of flags[] */

static int problem(const conv_cli_options *opt, conv_named_problem *out, int max, conv_msg *msg)
{
    int named = conv_program_named_problems(opt, out, max);
    if (named > 0)
        return named;
    if (conv1d_params_validate(opt->number[FLAG_WIDTH], opt->number[FLAG_MASK], msg) != CONV_OK)
        return -1;
    out[0] = (conv_named_problem){
        "", "", conv1d_as_conv_params(opt->number[FLAG_WIDTH], (int)opt->number[FLAG_MASK])};
    return 1;
}

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    conv_rows_add_cudnn(r, REF_CUDNN);
    r[0].name = "cuDNN (the same 1D conv)";
    r[1].name = "cuDNN graph (the same 1D conv)";
    r[2] = conv_row_copy();
    r[2].ref = REF_COPY;
    return 3 + conv_tiled_1d_rows(p, select, r + 3, max - 3);
}

static void describe(FILE *out, const conv_cli_options *opt, const conv_params *p)
{
    (void)opt;
    fprintf(out,
            "problem: width %d floats, mask %d; moves %.1f MB (x read once, y written once), "
            "%.3g FLOP\n",
            p->w, p->s, conv_min_bytes(p) / 1e6, conv_flops(p));
    fprintf(out,
            "tiles:   3a %d threads/block, 1 output each; 3b, 3c, 3e: %d outputs per block of "
            "%d threads; 3d: %d outputs per block of %d + %d - 1 threads\n",
            CONV1D_THREADS, CONV1D_TILE, CONV1D_THREADS, CONV1D_S2_TILE, CONV1D_S2_TILE, p->s);
}

static const conv_flag flags[] = {
    {"width", CONV_FLAG_INT, "W", "number of floats of x and y", "67108864", 1, 2147483647},
    {"mask", CONV_FLAG_INT, "M", "mask width, odd (3d: at most 769)", "7", 1,
     CONV1D_MAX_MASK_WIDTH},
};

CONV_PROGRAM_MAIN(CONV_STEP_03_TEXTS, CONV_PROGRAM_FLAGS(flags), .cli.shape = CONV_CLI_SHAPE_NONE,
                  .cli.own_shape_flags = "width|mask", .cli.default_warmup = 2,
                  .cli.default_repeat = 20, CONV_VS_CUDNN("D2D copy"), .bandwidth_column = 1,
                  .measure_copy = 1, .problems = problem, .rows = rows, .describe = describe)
