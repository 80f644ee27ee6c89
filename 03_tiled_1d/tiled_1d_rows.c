#include "tiled_1d_rows.h"

#include "conv_tiled_1d.h"

static const conv1d_strategy strategies[CONV1D_N_STRATEGIES] = {CONV1D_NAIVE, CONV1D_NAIVE_X4,
                                                                CONV1D_S1, CONV1D_S2, CONV1D_S3};
static const char *const names[CONV1D_N_STRATEGIES] = {"3a naive", "3b naive x4", "3c strategy 1",
                                                       "3d strategy 2", "3e strategy 3"};
static const char *const keys[CONV1D_N_STRATEGIES] = {"3a", "3b", "3c", "3d", "3e"};

static conv_status check(void *ctx, const conv_params *p, conv_msg *msg)
{
    if (!conv1d_is_1d_problem(p))
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "the 1D kernels need a 1D problem (N = C = K = H = R = 1, an odd mask S, "
                         "same padding, stride and dilation 1)");
    return conv1d_tiled_check(*(const conv1d_strategy *)ctx, p->w, p->s, msg);
}

static conv_status upload_mask(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    (void)ctx;
    return conv1d_upload_mask(pb->h_w, pb->p.s, pb->stream, msg);
}

/* The adapter the rows hand to the harness: ctx points at a conv1d_strategy;
 * the mask is the one in constant memory (d_w is not read). */
static conv_status conv1d_tiled_conv(void *ctx, const conv_params *p, const float *d_x,
                                     const float *d_w, float *d_y, cudaStream_t stream,
                                     conv_msg *msg)
{
    (void)d_w;
    conv_status st = check(ctx, p, msg);
    if (st != CONV_OK)
        return st;
    return conv1d_tiled(*(const conv1d_strategy *)ctx, d_x, d_y, p->w, p->s, stream, msg);
}

int conv_tiled_1d_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)p;
    (void)select;
    conv_row like = conv_row_device(NULL, NULL, conv1d_tiled_conv, NULL);
    like.check = check;
    like.setup = upload_mask;
    return conv_rows_table(&like, names, keys, strategies, sizeof strategies[0],
                           CONV1D_N_STRATEGIES, rows, max_rows);
}
