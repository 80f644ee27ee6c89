/* Step 01: the serial and OpenMP convolutions and the 1D "same" convolution. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cpu.h"
#include "conv_tensor.h"
#include "cpu_rows.h"
#include "conv_test_support.h"

/* conv2d_cpu_serial on p (at most 4 outputs) must give exactly want. */
static void expect_serial(conv_params p, const float *x, const float *w, const float *want)
{
    float y[4];
    size_t ny = conv_output_elems(&p);
    cr_assert_leq(ny, 4);
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv2d_cpu_serial(&p, x, w, y, &msg), msg);
    for (size_t i = 0; i < ny; ++i)
        cr_assert_eq(y[i], want[i], "%s: y[%zu] = %g, want %g", conv_shape_name(&p), i, y[i],
                     want[i]);
}

Test(cpu_serial, matches_a_hand_computed_3x3_image_with_a_2x2_filter)
{
    /* x = 1..9 in a 3x3 image, w = [[1, 0], [0, 2]]: y[p][q] = x[p][q] + 2*x[p+1][q+1] */
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float w[4] = {1, 0, 0, 2};
    const float want[4] = {1 + 2 * 5, 2 + 2 * 6, 4 + 2 * 8, 5 + 2 * 9};
    expect_serial(conv_shape(1, 1, 3, 3, 1, 2, 2, 0, 1, 1), x, w, want);
}

Test(cpu_serial, pads_with_zeros_strides_and_dilates_by_hand)
{
    /* 3x3 image of 1..9, 3x3 filter of ones, pad 1, stride 2: four outputs, each
     * the sum of the in-image part of a 3x3 window centred on a corner. */
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    float w[9];
    for (int i = 0; i < 9; ++i)
        w[i] = 1;
    const float want[4] = {1 + 2 + 4 + 5, 2 + 3 + 5 + 6, 4 + 5 + 7 + 8, 5 + 6 + 8 + 9};
    expect_serial(conv_shape(1, 1, 3, 3, 1, 3, 3, 1, 2, 1), x, w, want);

    /* Dilation 2 on a 2x2 filter over the same image: corners only. */
    const float w2[4] = {1, 10, 100, 1000};
    const float want2[1] = {1 * 1 + 3 * 10 + 7 * 100 + 9 * 1000};
    expect_serial(conv_shape(1, 1, 3, 3, 1, 2, 2, 0, 1, 2), x, w2, want2);
}

Test(cpu_serial, sums_over_channels_and_keeps_batches_apart)
{
    /* N=2, C=2, 1x1 images, K=2, 1x1 filters: y[n][k] = sum_c x[n][c] * w[k][c] */
    const float x[4] = {1, 2, 3, 4}; /* x[0] = (1, 2), x[1] = (3, 4) */
    const float w[4] = {1, 10, 100, 1000};
    const float want[4] = {21, 2100, 43, 4300};
    expect_serial(conv_shape(2, 2, 1, 1, 2, 1, 1, 0, 1, 1), x, w, want);
}

/* The usual shape table: 1x1 images, primes, filters from 1x1
 * to the whole image, even and odd, padding/stride/dilation, batch > 1. */
static const conv_params *shape_table(size_t *count)
{
    static conv_params t[CONV_USUAL_SHAPES];
    *count = conv_usual_shapes(t);
    return t;
}

typedef struct {
    float *x, *w, *y_serial, *y_omp;
} tensors;

static tensors make_tensors(const conv_params *p, int small_int, uint64_t seed)
{
    tensors t = {conv_host_alloc(conv_input_elems(p)), conv_host_alloc(conv_filter_elems(p)),
                 conv_host_alloc(conv_output_elems(p)), conv_host_alloc(conv_output_elems(p))};
    cr_assert(t.x && t.w && t.y_serial && t.y_omp, "host allocation failed");
    if (small_int) {
        conv_fill_small_int(t.x, conv_input_elems(p), seed, -3, 3);
        conv_fill_small_int(t.w, conv_filter_elems(p), seed + 1, -3, 3);
    } else {
        conv_fill_uniform(t.x, conv_input_elems(p), seed, -1.0f, 1.0f);
        conv_fill_uniform(t.w, conv_filter_elems(p), seed + 1, -1.0f, 1.0f);
    }
    conv_fill_nan(t.y_serial, conv_output_elems(p));
    conv_fill_nan(t.y_omp, conv_output_elems(p));
    return t;
}

static void free_tensors(tensors *t)
{
    conv_host_free(t->x);
    conv_host_free(t->w);
    conv_host_free(t->y_serial);
    conv_host_free(t->y_omp);
}

static void check_table(conv_layout layout, int small_int)
{
    size_t count;
    const conv_params *table = shape_table(&count);
    for (size_t i = 0; i < count; ++i) {
        conv_params p = table[i];
        p.layout = layout;
        conv_msg msg = {{0}};
        cr_assert_eq(conv_params_validate(&p, &msg), CONV_OK, "table shape %zu invalid: %s", i,
                     msg.text);
        tensors t = make_tensors(&p, small_int, 100 + i);
        CONV_ASSERT_OK(conv2d_cpu_serial(&p, t.x, t.w, t.y_serial, &msg), msg);
        CONV_ASSERT_OK(conv2d_cpu_openmp(&p, t.x, t.w, t.y_omp, &msg), msg);
        conv_verify_opts opts = small_int ? conv_verify_exact() : conv_verify_bound(1.0);
        conv_verify_report rep = conv_verify_full(&p, t.x, t.w, t.y_serial, opts);
        CONV_ASSERT_REPORT(rep, "serial vs double reference", &p);
        rep = conv_compare_exact(&p, t.y_omp, t.y_serial, conv_output_elems(&p));
        CONV_ASSERT_REPORT(rep, "OpenMP vs serial (bit-identical)", &p);
        cr_assert_eq(conv_host_canary_check(t.y_serial, conv_output_elems(&p)), 0,
                     "serial wrote past the output on %s", conv_shape_name(&p));
        cr_assert_eq(conv_host_canary_check(t.y_omp, conv_output_elems(&p)), 0,
                     "OpenMP wrote past the output on %s", conv_shape_name(&p));
        free_tensors(&t);
    }
}

Test(cpu_serial, is_exact_on_small_integers_over_the_shape_table_nchw)
{
    check_table(CONV_LAYOUT_NCHW, 1);
}

Test(cpu_serial, is_exact_on_small_integers_over_the_shape_table_nhwc)
{
    check_table(CONV_LAYOUT_NHWC, 1);
}

Test(cpu_serial, stays_within_the_error_bound_on_random_floats)
{
    check_table(CONV_LAYOUT_NCHW, 0);
    check_table(CONV_LAYOUT_NHWC, 0);
}

Test(cpu_serial, nhwc_and_nchw_agree_after_reordering)
{
    conv_params p = conv_shape(2, 3, 11, 13, 4, 3, 5, 1, 1, 1), q = p;
    q.layout = CONV_LAYOUT_NHWC;
    tensors a = make_tensors(&p, 1, 7), b = make_tensors(&q, 1, 8);
    /* fill b with a's values at the same logical coordinates */
    for (int n = 0; n < p.n; ++n)
        for (int c = 0; c < p.c; ++c)
            for (int h = 0; h < p.h; ++h)
                for (int w = 0; w < p.w; ++w)
                    b.x[conv_input_offset(&q, n, c, h, w)] = a.x[conv_input_offset(&p, n, c, h, w)];
    for (int k = 0; k < p.k; ++k)
        for (int c = 0; c < p.c; ++c)
            for (int r = 0; r < p.r; ++r)
                for (int s = 0; s < p.s; ++s)
                    b.w[conv_filter_offset(&q, k, c, r, s)] =
                        a.w[conv_filter_offset(&p, k, c, r, s)];
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv2d_cpu_serial(&p, a.x, a.w, a.y_serial, &msg), msg);
    CONV_ASSERT_OK(conv2d_cpu_serial(&q, b.x, b.w, b.y_serial, &msg), msg);
    for (int n = 0; n < p.n; ++n)
        for (int k = 0; k < p.k; ++k)
            for (int oh = 0; oh < conv_out_h(&p); ++oh)
                for (int ow = 0; ow < conv_out_w(&p); ++ow)
                    cr_assert_eq(a.y_serial[conv_output_offset(&p, n, k, oh, ow)],
                                 b.y_serial[conv_output_offset(&q, n, k, oh, ow)],
                                 "layouts disagree at n=%d k=%d p=%d q=%d", n, k, oh, ow);
    free_tensors(&a);
    free_tensors(&b);
}

Test(cpu_serial, rejects_bad_input_with_one_line_naming_the_problem)
{
    float buf[64] = {0};
    conv_msg msg = {{0}};
    conv_params p = conv_shape(1, 1, 0, 4, 1, 1, 1, 0, 1, 1);
    cr_assert_eq(conv2d_cpu_serial(&p, buf, buf, buf, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--h") != NULL, "message: %s", msg.text);
    p = conv_shape(1, 1, 4, 4, 1, 5, 5, 0, 1, 1);
    cr_assert_eq(conv2d_cpu_openmp(&p, buf, buf, buf, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "larger than the padded image") != NULL, "message: %s", msg.text);
    p = conv_shape(1, 1, 4, 4, 1, 3, 3, 0, 1, 1);
    cr_assert_eq(conv2d_cpu_serial(&p, NULL, buf, buf, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "input is NULL") != NULL, "message: %s", msg.text);
    cr_assert_eq(conv2d_cpu_serial(&p, buf, buf, NULL, &msg), CONV_ERR_INVALID);
    cr_assert(strchr(msg.text, '\n') == NULL, "one line: %s", msg.text);
}

Test(cpu_conv1d, matches_a_hand_computed_same_convolution)
{
    const float x[5] = {1, 2, 3, 4, 5}, mask[3] = {1, 10, 100};
    /* y[i] = x[i-1] + 10 x[i] + 100 x[i+1], zeros outside */
    const float want[5] = {0 + 10 + 200, 1 + 20 + 300, 2 + 30 + 400, 3 + 40 + 500, 4 + 50 + 0};
    float y[5];
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv1d_cpu_same(x, 5, mask, 3, y, &msg), msg);
    for (int i = 0; i < 5; ++i)
        cr_assert_eq(y[i], want[i], "y[%d] = %g, want %g", i, y[i], want[i]);
}

Test(cpu_conv1d, is_exact_for_widths_and_masks_of_every_kind)
{
    const size_t widths[] = {1, 2, 3, 7, 31, 255, 256, 257, 1009};
    const int masks[] = {1, 3, 5, 7, 9, 31};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i)
        for (size_t j = 0; j < sizeof masks / sizeof masks[0]; ++j) {
            size_t width = widths[i];
            int m = masks[j];
            float *x = conv_host_alloc(width), *y = conv_host_alloc(width);
            float *mask = conv_host_alloc((size_t)m);
            conv_fill_small_int(x, width, i, -4, 4);
            conv_fill_small_int(mask, (size_t)m, j, -4, 4);
            conv_fill_nan(y, width);
            conv_msg msg = {{0}};
            CONV_ASSERT_OK(conv1d_cpu_same(x, width, mask, m, y, &msg), msg);
            conv_verify_report rep = conv1d_verify_full(x, width, mask, m, y, conv_verify_exact());
            char desc[CONV_MSG_LEN];
            conv_report_describe(&rep, desc, sizeof desc);
            cr_assert(rep.passed, "width %zu mask %d: %s", width, m, desc);
            cr_assert_eq(conv_host_canary_check(y, width), 0, "canary, width %zu", width);
            conv_host_free(x);
            conv_host_free(y);
            conv_host_free(mask);
        }
}

Test(cpu_conv1d, rejects_even_masks_zero_width_and_null_pointers)
{
    float buf[8] = {0};
    conv_msg msg = {{0}};
    cr_assert_eq(conv1d_cpu_same(buf, 8, buf, 4, buf, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--mask") && strstr(msg.text, "odd"), "message: %s", msg.text);
    cr_assert_eq(conv1d_cpu_same(buf, 0, buf, 3, buf, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--width") != NULL, "message: %s", msg.text);
    cr_assert_eq(conv1d_cpu_same(buf, 8, buf, 0, buf, &msg), CONV_ERR_INVALID);
    cr_assert_eq(conv1d_cpu_same(buf, 8, NULL, 3, buf, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "mask is NULL") != NULL, "message: %s", msg.text);
}

/* The rows name each version by its key, the value of the program's --variant
 * that picks it: 1a serial, 1b OpenMP, and on a 1D problem 1c. */
Test(cpu_rows, name_each_version_by_its_key)
{
    static const char *const named[][2] = {
        {"1a", "1a serial (CPU)"}, {"1b", "1b OpenMP ("}, {"1c", "1c conv1d_cpu_same (CPU)"}};
    conv_params p = conv_params_default(), one_d = conv1d_as_conv_params(1000, 7);
    conv_test_assert_rows(conv_cpu_rows, &p, named, 2);
    conv_test_assert_rows(conv_cpu_rows, &one_d, named, 3);
}
