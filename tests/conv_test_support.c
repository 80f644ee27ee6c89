#include "conv_test_support.h"

#include <stdio.h>
#include <stdlib.h>

#include "conv_tensor.h"

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

size_t conv_usual_shapes(conv_params *t)
{
    size_t n = 0;
    t[n++] = conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1);   /* 1x1 image, 1x1 filter */
    t[n++] = conv_shape(1, 3, 1, 1, 2, 3, 3, 1, 1, 1);   /* 1x1 image, padded 3x3 */
    t[n++] = conv_shape(1, 2, 29, 31, 3, 3, 3, 0, 1, 1); /* primes */
    t[n++] = conv_shape(2, 3, 31, 29, 4, 3, 3, 1, 1, 1); /* batch 2, padded */
    t[n++] = conv_shape(1, 1, 97, 97, 1, 7, 7, 3, 1, 1);
    t[n++] = conv_shape(1, 6, 40, 33, 6, 6, 6, 0, 1, 1); /* the lecture's 6x6, small */
    t[n++] = conv_shape(3, 2, 17, 19, 5, 6, 6, 2, 1, 1); /* even filter, padded */
    t[n++] = conv_shape(1, 2, 7, 7, 3, 7, 7, 0, 1, 1);   /* filter = image */
    t[n++] = conv_shape(1, 1, 5, 8, 2, 5, 8, 0, 1, 1);   /* filter = image, not square */
    t[n++] = conv_shape(2, 3, 29, 31, 2, 3, 3, 1, 2, 1); /* stride 2 */
    t[n++] = conv_shape(1, 2, 31, 29, 3, 3, 3, 2, 1, 2); /* dilation 2 */
    t[n++] = conv_shape(2, 2, 23, 29, 2, 5, 4, 3, 3, 2); /* all of them at once */
    t[n++] = conv_shape(4, 1, 9, 13, 1, 2, 2, 0, 1, 1);
    conv_params asym = conv_shape(1, 2, 13, 11, 2, 3, 5, 0, 1, 1); /* per-axis settings */
    asym.pad_h = 2;
    asym.stride_w = 2;
    asym.dil_h = 3;
    t[n++] = asym;
    return n;
}

const char *conv_shape_name(const conv_params *p)
{
    static char buf[256]; /* each Criterion test runs in its own process */
    conv_params_describe(p, buf, sizeof buf);
    return buf;
}

int conv_test_under_sanitizer(void)
{
    const char *v = getenv("CONV_UNDER_SANITIZER");
    return v != NULL && v[0] != '\0';
}

/* One device run on given host inputs: poison, upload, run, download, canary. */
static void run_on_device(const conv_params *p, conv_gpu_conv conv, void *ctx, const float *h_x,
                          const float *h_w, float *h_y, const char *what)
{
    conv_msg msg = {{0}};
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *d_x = NULL, *d_w = NULL, *d_y = NULL;
    size_t bad = 0;
    CONV_ASSERT_OK(conv_device_alloc(&d_x, nx, "x", &msg), msg);
    CONV_ASSERT_OK(conv_device_alloc(&d_w, nw, "w", &msg), msg);
    CONV_ASSERT_OK(conv_device_alloc(&d_y, ny, "y", &msg), msg);
    CONV_ASSERT_OK(conv_device_upload(d_x, h_x, nx, &msg), msg);
    CONV_ASSERT_OK(conv_device_upload(d_w, h_w, nw, &msg), msg);
    CONV_ASSERT_OK(conv_device_poison(d_y, ny, &msg), msg);
    conv_status st = conv(ctx, p, d_x, d_w, d_y, 0, &msg);
    cr_assert_eq(st, CONV_OK, "%s on %s: %s", what, conv_shape_name(p), msg.text);
    cudaError_t e = cudaDeviceSynchronize();
    cr_assert_eq(e, cudaSuccess, "%s on %s: %s", what, conv_shape_name(p), cudaGetErrorString(e));
    CONV_ASSERT_OK(conv_device_download(h_y, d_y, ny, &msg), msg);
    CONV_ASSERT_OK(conv_device_canary_check(d_y, ny, &bad, &msg), msg);
    cr_assert_eq(bad, 0, "%s on %s: wrote %zu floats past the end of the output", what,
                 conv_shape_name(p), bad);
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
}

void conv_test_check_gpu_conv(const conv_params *p, conv_gpu_conv conv, void *ctx,
                              conv_host_conv reference, const char *what)
{
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_params_validate(p, &msg), msg);
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *x = conv_host_alloc(nx), *w = conv_host_alloc(nw);
    float *got = conv_host_alloc(ny), *want = conv_host_alloc(ny);
    cr_assert(x && w && got && want, "out of host memory for %s", conv_shape_name(p));
    uint64_t seed = conv_rng_hash(0x5eed, nx * 31 + nw * 7 + ny);
    char label[CONV_MSG_LEN];

    /* 1. small integers: exact against the host reference (step 01) */
    conv_fill_small_int(x, nx, seed, -3, 3);
    conv_fill_small_int(w, nw, seed + 1, -3, 3);
    CONV_ASSERT_OK(reference(p, x, w, want, &msg), msg);
    run_on_device(p, conv, ctx, x, w, got, what);
    conv_verify_report rep = conv_compare_exact(p, got, want, ny);
    snprintf(label, sizeof label, "%s (small integers, exact vs step 01)", what);
    CONV_ASSERT_REPORT(rep, label, p);

    /* 2. uniform floats: within the dot-product error bound */
    conv_fill_uniform(x, nx, seed + 2, -1.0f, 1.0f);
    conv_fill_uniform(w, nw, seed + 3, -1.0f, 1.0f);
    run_on_device(p, conv, ctx, x, w, got, what);
    rep = conv_verify_full(p, x, w, got, conv_verify_bound(1.0));
    snprintf(label, sizeof label, "%s (uniform floats, within gamma_n bound)", what);
    CONV_ASSERT_REPORT(rep, label, p);

    conv_host_free(x);
    conv_host_free(w);
    conv_host_free(got);
    conv_host_free(want);
}
