#include "conv_test_support.h"

#include <stdio.h>

#include "conv_cuda.h"

int conv_test_gpu_available(char *reason, size_t len)
{
    conv_msg msg = {{0}};
    if (conv_cuda_require_device(&msg) != CONV_OK) {
        snprintf(reason, len, "%s", msg.text);
        return 0;
    }
    return 1;
}

conv_params conv_shape(int n, int c, int h, int w, int k, int r, int s, int pad, int stride,
                       int dil)
{
    conv_params p = {.n = n,
                     .c = c,
                     .h = h,
                     .w = w,
                     .k = k,
                     .r = r,
                     .s = s,
                     .pad_h = pad,
                     .pad_w = pad,
                     .stride_h = stride,
                     .stride_w = stride,
                     .dil_h = dil,
                     .dil_w = dil,
                     .layout = CONV_LAYOUT_NCHW};
    return p;
}

const char *conv_shape_name(const conv_params *p)
{
    static char buf[256]; /* each Criterion test runs in its own process */
    conv_params_describe(p, buf, sizeof buf);
    return buf;
}
