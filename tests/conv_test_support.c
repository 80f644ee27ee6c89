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

void conv_test_run_row(conv_gpu_problem *pb, conv_row *row, const char *what)
{
    const conv_params *p = &pb->p;
    conv_msg msg = {{0}};
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    size_t bad = 0;
    CONV_ASSERT_OK(conv_device_upload(pb->d_x, pb->h_x, nx, &msg), msg);
    CONV_ASSERT_OK(conv_device_upload(pb->d_w, pb->h_w, nw, &msg), msg);
    if (row->setup != NULL)
        CONV_ASSERT_OK(row->setup(row->ctx, pb, &msg), msg);
    CONV_ASSERT_OK(conv_device_poison(pb->d_y, ny, &msg), msg);
    conv_status st = row->conv(row->ctx, p, pb->d_x, pb->d_w, pb->d_y, pb->stream, &msg);
    cr_assert_eq(st, CONV_OK, "%s on %s: %s", what, conv_shape_name(p), msg.text);
    cudaError_t e = cudaStreamSynchronize(pb->stream);
    cr_assert_eq(e, cudaSuccess, "%s on %s: %s", what, conv_shape_name(p), cudaGetErrorString(e));
    CONV_ASSERT_OK(conv_device_download(pb->h_y, pb->d_y, ny, &msg), msg);
    CONV_ASSERT_OK(conv_device_canary_check(pb->d_y, ny, &bad, &msg), msg);
    cr_assert_eq(bad, 0, "%s on %s: wrote %zu floats past the end of the output", what,
                 conv_shape_name(p), bad);
    if (row->teardown != NULL)
        row->teardown(row->ctx);
}

int conv_test_check_row(const conv_params *p, conv_row *row, conv_host_conv reference)
{
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_params_validate(p, &msg), msg);
    if (row->check != NULL && row->check(row->ctx, p, &msg) != CONV_OK)
        return 0;
    conv_gpu_problem pb;
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    CONV_ASSERT_OK(conv_gpu_problem_create(&pb, p, 1, &msg), msg);
    float *want = conv_host_alloc(ny);
    cr_assert(want != NULL, "out of host memory for %s", conv_shape_name(p));
    uint64_t seed = conv_rng_hash(0x5eed, nx * 31 + nw * 7 + ny);
    char label[CONV_MSG_LEN];

    /* 1. small integers: exact against the host reference (step 01) */
    conv_fill_small_int(pb.h_x, nx, seed, -3, 3);
    conv_fill_small_int(pb.h_w, nw, seed + 1, -3, 3);
    CONV_ASSERT_OK(reference(p, pb.h_x, pb.h_w, want, &msg), msg);
    conv_test_run_row(&pb, row, row->name);
    conv_verify_report rep = conv_compare_exact(p, pb.h_y, want, ny);
    snprintf(label, sizeof label, "%s (small integers, exact vs step 01)", row->name);
    CONV_ASSERT_REPORT(rep, label, p);

    /* 2. uniform floats: within the dot-product error bound */
    conv_fill_uniform(pb.h_x, nx, seed + 2, -1.0f, 1.0f);
    conv_fill_uniform(pb.h_w, nw, seed + 3, -1.0f, 1.0f);
    conv_test_run_row(&pb, row, row->name);
    rep = conv_verify_full(p, pb.h_x, pb.h_w, pb.h_y, conv_verify_bound(1.0));
    snprintf(label, sizeof label, "%s (uniform floats, within gamma_n bound)", row->name);
    CONV_ASSERT_REPORT(rep, label, p);

    conv_host_free(want);
    conv_gpu_problem_destroy(&pb);
    return 1;
}

void conv_test_check_gpu_conv(const conv_params *p, conv_gpu_conv conv, void *ctx,
                              conv_host_conv reference, const char *what)
{
    conv_row row = conv_row_device(what, NULL, conv, ctx);
    conv_test_check_row(p, &row, reference);
}
