#include "backward_rows.h"

#include "conv_backward.h"

/* The adapters the rows hand to the harness (conv_gpu_grad; ctx unused):
 * dgrad writes d_x from dy (in d_y) and d_w, wgrad d_w from d_x and dy. */
static conv_status dgrad_naive(void *ctx, const conv_params *p, float *d_x, float *d_w, float *d_y,
                               cudaStream_t stream, conv_msg *msg)
{
    (void)ctx;
    return conv2d_backward_data_naive(p, d_y, d_w, d_x, 0, stream, msg);
}

static conv_status wgrad_naive(void *ctx, const conv_params *p, float *d_x, float *d_w, float *d_y,
                               cudaStream_t stream, conv_msg *msg)
{
    (void)ctx;
    return conv2d_backward_filter_naive(p, d_x, d_y, d_w, 0, stream, msg);
}

int conv_backward_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)select;
    conv_row all[] = {
        conv_row_grad("10a dgrad naive", "10a", CONV_PASS_DGRAD, dgrad_naive, NULL),
        conv_row_grad("10a wgrad naive", "10a", CONV_PASS_WGRAD, wgrad_naive, NULL),
    };
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0] && n < max_rows; ++i)
        if (all[i].pass == p->pass)
            rows[n++] = all[i];
    return n;
}
