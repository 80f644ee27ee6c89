#include "naive_rows.h"

#include "conv_naive.h"

/* The adapters the rows hand to the harness (conv_gpu_conv; ctx unused). */
static conv_status conv2d_naive_conv(void *ctx, const conv_params *p, const float *d_x,
                                     const float *d_w, float *d_y, cudaStream_t stream,
                                     conv_msg *msg)
{
    (void)ctx;
    return conv2d_naive(p, d_x, d_w, d_y, 0, stream, msg); /* the default grid cap */
}

static conv_status conv2d_naive_2d_conv(void *ctx, const conv_params *p, const float *d_x,
                                        const float *d_w, float *d_y, cudaStream_t stream,
                                        conv_msg *msg)
{
    (void)ctx;
    return conv2d_naive_2d(p, d_x, d_w, d_y, stream, msg);
}

static conv_status check(void *ctx, const conv_params *p, conv_msg *msg)
{
    (void)ctx;
    return conv2d_naive_check(p, msg);
}

int conv_naive_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)p;
    (void)select;
    conv_row all[2] = {
        conv_row_device("2a naive grid-stride", "2a", conv2d_naive_conv, NULL),
        conv_row_device("2b naive 16x16 blocks", "2b", conv2d_naive_2d_conv, NULL),
    };
    int n = 0;
    for (; n < 2 && n < max_rows; ++n) {
        rows[n] = all[n];
        rows[n].check = check;
    }
    return n;
}
