/* Step 10: the CPU references of the backward pass, dgrad and wgrad.
 *
 * Three independent checks, on the usual shape table (both layouts) and more
 * strides:
 *   - the adjoint identity <conv(x, w), dy> = <x, dgrad(dy, w)> = <w, wgrad(x, dy)>,
 *     exact on small integers (every sum is an integer below 2^53);
 *   - column by column on small shapes: dx[i] is <conv(e_i, w), dy> for the
 *     input e_i that is 1 at i and 0 elsewhere, dw[j] is <conv(x, e_j), dy>,
 *     with step 01's forward convolution: each element alone, not only a sum;
 *   - the float results within their bound, and a planted error outside it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_backward_cpu.h"
#include "conv_cpu.h"
#include "conv_tensor.h"
#include "conv_test_support.h"

typedef struct {
    float *x, *w, *y, *dy, *dx, *dw;
} tensors;

static tensors alloc_tensors(const conv_params *p)
{
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    tensors t = {malloc(nx * sizeof(float)), malloc(nw * sizeof(float)),
                 malloc(ny * sizeof(float)), malloc(ny * sizeof(float)),
                 malloc(nx * sizeof(float)), malloc(nw * sizeof(float))};
    cr_assert(t.x && t.w && t.y && t.dy && t.dx && t.dw, "out of host memory");
    return t;
}

static void free_tensors(tensors *t)
{
    free(t->x), free(t->w), free(t->y), free(t->dy), free(t->dx), free(t->dw);
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; ++i)
        s += (double)a[i] * b[i];
    return s;
}

/* The table: the usual shapes and their strided kin, in both layouts. */
#define N_STRIDED 5
static size_t shape_table(conv_params *t)
{
    size_t n = conv_usual_shapes(t);
    t[n++] = conv_shape(2, 3, 11, 13, 2, 3, 3, 1, 2, 1); /* stride 2 over an odd image */
    t[n++] = conv_shape(1, 2, 16, 16, 3, 4, 4, 1, 2, 1); /* even filter, even stride */
    t[n++] = conv_shape(1, 2, 17, 14, 2, 3, 3, 0, 3, 1); /* stride 3: rows no tap reaches */
    t[n++] = conv_shape(2, 1, 15, 15, 2, 2, 2, 0, 4, 1); /* stride > filter: gaps */
    t[n++] = conv_shape(1, 2, 19, 17, 2, 3, 3, 2, 2, 2); /* stride and dilation 2 */
    return n;
}

Test(cpu_backward, the_adjoint_identity_holds_exactly_on_small_integers)
{
    conv_params table[CONV_USUAL_SHAPES + N_STRIDED];
    size_t count = shape_table(table);
    for (int layout = 0; layout < 2; ++layout)
        for (size_t i = 0; i < count; ++i) {
            conv_params p = table[i];
            p.layout = (conv_layout)layout;
            tensors t = alloc_tensors(&p);
            conv_fill_small_int(t.x, conv_input_elems(&p), 10 * i + 1, -3, 3);
            conv_fill_small_int(t.w, conv_filter_elems(&p), 10 * i + 2, -3, 3);
            conv_fill_small_int(t.dy, conv_output_elems(&p), 10 * i + 3, -3, 3);
            conv_msg msg = {{0}};
            CONV_ASSERT_OK(conv2d_cpu_serial(&p, t.x, t.w, t.y, &msg), msg);
            CONV_ASSERT_OK(conv2d_backward_data_cpu(&p, t.dy, t.w, t.dx, &msg), msg);
            CONV_ASSERT_OK(conv2d_backward_filter_cpu(&p, t.x, t.dy, t.dw, &msg), msg);
            double forward = dot(t.y, t.dy, conv_output_elems(&p));
            double data = dot(t.x, t.dx, conv_input_elems(&p));
            double filter = dot(t.w, t.dw, conv_filter_elems(&p));
            cr_assert_eq(data, forward, "%s: <x, dgrad> = %.17g, <conv, dy> = %.17g",
                         conv_shape_name(&p), data, forward);
            cr_assert_eq(filter, forward, "%s: <w, wgrad> = %.17g, <conv, dy> = %.17g",
                         conv_shape_name(&p), filter, forward);
            free_tensors(&t);
        }
}

/* <conv(a, b), dy> with step 01's forward convolution. */
static double forward_dot(const conv_params *p, const float *a, const float *b, const float *dy,
                          float *y)
{
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv2d_cpu_serial(p, a, b, y, &msg), msg);
    return dot(y, dy, conv_output_elems(p));
}

Test(cpu_backward, every_element_is_the_derivative_of_the_loss)
{
    /* Small shapes only: one forward convolution per element of x and of w. */
    conv_params table[] = {
        conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1), conv_shape(2, 2, 5, 6, 3, 3, 3, 1, 1, 1),
        conv_shape(1, 2, 7, 7, 2, 3, 3, 1, 2, 1), conv_shape(1, 1, 9, 8, 2, 2, 3, 0, 3, 1),
        conv_shape(2, 1, 7, 9, 1, 3, 2, 2, 2, 2), conv_shape(1, 2, 4, 4, 1, 4, 4, 0, 1, 1),
    };
    for (int layout = 0; layout < 2; ++layout)
        for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
            conv_params p = table[i];
            p.layout = (conv_layout)layout;
            size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p);
            tensors t = alloc_tensors(&p);
            conv_fill_small_int(t.x, nx, 7 * i + 1, -3, 3);
            conv_fill_small_int(t.w, nw, 7 * i + 2, -3, 3);
            conv_fill_small_int(t.dy, conv_output_elems(&p), 7 * i + 3, -3, 3);
            conv_msg msg = {{0}};
            CONV_ASSERT_OK(conv2d_backward_data_cpu(&p, t.dy, t.w, t.dx, &msg), msg);
            CONV_ASSERT_OK(conv2d_backward_filter_cpu(&p, t.x, t.dy, t.dw, &msg), msg);
            float *e = calloc(nx > nw ? nx : nw, sizeof(float));
            cr_assert(e != NULL);
            for (size_t j = 0; j < nx; ++j) { /* the loss is linear in x: its slope along e_j */
                e[j] = 1.0f;
                double want = forward_dot(&p, e, t.w, t.dy, t.y);
                e[j] = 0.0f;
                cr_assert_eq((double)t.dx[j], want, "%s: dx[%zu] = %g, want %g",
                             conv_shape_name(&p), j, t.dx[j], want);
            }
            for (size_t j = 0; j < nw; ++j) {
                e[j] = 1.0f;
                double want = forward_dot(&p, t.x, e, t.dy, t.y);
                e[j] = 0.0f;
                cr_assert_eq((double)t.dw[j], want, "%s: dw[%zu] = %g, want %g",
                             conv_shape_name(&p), j, t.dw[j], want);
            }
            free(e);
            free_tensors(&t);
        }
}

Test(cpu_backward, the_layouts_hold_the_same_gradients)
{
    conv_params a = conv_shape(2, 3, 11, 13, 4, 3, 5, 2, 2, 1), b = a;
    b.layout = CONV_LAYOUT_NHWC;
    tensors ta = alloc_tensors(&a), tb = alloc_tensors(&b);
    conv_fill_uniform(ta.x, conv_input_elems(&a), 5, -1.0f, 1.0f);
    conv_fill_uniform(ta.w, conv_filter_elems(&a), 6, -1.0f, 1.0f);
    conv_fill_uniform(ta.dy, conv_output_elems(&a), 7, -1.0f, 1.0f);
    /* the same tensors, element by element, in the other layout */
    for (int n = 0; n < a.n; ++n)
        for (int c = 0; c < a.c; ++c)
            for (int h = 0; h < a.h; ++h)
                for (int w = 0; w < a.w; ++w)
                    tb.x[conv_input_offset(&b, n, c, h, w)] =
                        ta.x[conv_input_offset(&a, n, c, h, w)];
    for (int k = 0; k < a.k; ++k)
        for (int c = 0; c < a.c; ++c)
            for (int r = 0; r < a.r; ++r)
                for (int s = 0; s < a.s; ++s)
                    tb.w[conv_filter_offset(&b, k, c, r, s)] =
                        ta.w[conv_filter_offset(&a, k, c, r, s)];
    for (int n = 0; n < a.n; ++n)
        for (int k = 0; k < a.k; ++k)
            for (int oh = 0; oh < conv_out_h(&a); ++oh)
                for (int ow = 0; ow < conv_out_w(&a); ++ow)
                    tb.dy[conv_output_offset(&b, n, k, oh, ow)] =
                        ta.dy[conv_output_offset(&a, n, k, oh, ow)];
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv2d_backward_data_cpu(&a, ta.dy, ta.w, ta.dx, &msg), msg);
    CONV_ASSERT_OK(conv2d_backward_data_cpu(&b, tb.dy, tb.w, tb.dx, &msg), msg);
    CONV_ASSERT_OK(conv2d_backward_filter_cpu(&a, ta.x, ta.dy, ta.dw, &msg), msg);
    CONV_ASSERT_OK(conv2d_backward_filter_cpu(&b, tb.x, tb.dy, tb.dw, &msg), msg);
    for (int n = 0; n < a.n; ++n)
        for (int c = 0; c < a.c; ++c)
            for (int h = 0; h < a.h; ++h)
                for (int w = 0; w < a.w; ++w)
                    cr_assert_eq(tb.dx[conv_input_offset(&b, n, c, h, w)],
                                 ta.dx[conv_input_offset(&a, n, c, h, w)], "dx[%d][%d][%d][%d]", n,
                                 c, h, w);
    for (int k = 0; k < a.k; ++k)
        for (int c = 0; c < a.c; ++c)
            for (int r = 0; r < a.r; ++r)
                for (int s = 0; s < a.s; ++s)
                    cr_assert_eq(tb.dw[conv_filter_offset(&b, k, c, r, s)],
                                 ta.dw[conv_filter_offset(&a, k, c, r, s)], "dw[%d][%d][%d][%d]", k,
                                 c, r, s);
    free_tensors(&ta);
    free_tensors(&tb);
}

Test(cpu_backward, float_results_lie_within_their_bound_and_a_wrong_one_does_not)
{
    conv_params table[CONV_USUAL_SHAPES + N_STRIDED];
    size_t count = shape_table(table);
    for (size_t i = 0; i < count; ++i) {
        conv_params p = table[i];
        tensors t = alloc_tensors(&p);
        size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p);
        conv_fill_uniform(t.x, nx, 3 * i + 1, -1.0f, 1.0f);
        conv_fill_uniform(t.w, nw, 3 * i + 2, -1.0f, 1.0f);
        conv_fill_uniform(t.dy, conv_output_elems(&p), 3 * i + 3, -1.0f, 1.0f);
        conv_msg msg = {{0}};
        CONV_ASSERT_OK(conv2d_backward_data_cpu(&p, t.dy, t.w, t.dx, &msg), msg);
        CONV_ASSERT_OK(conv2d_backward_filter_cpu(&p, t.x, t.dy, t.dw, &msg), msg);
        conv_verify_report rep =
            conv_backward_data_verify(&p, t.dy, t.w, t.dx, conv_verify_bound(1.0));
        CONV_ASSERT_REPORT(rep, "dgrad", &p);
        rep = conv_backward_filter_verify(&p, t.x, t.dy, t.dw, conv_verify_bound(1.0));
        CONV_ASSERT_REPORT(rep, "wgrad", &p);
        /* one element off by far more than its bound: the check must see it */
        t.dx[nx / 2] += 0.01f;
        rep = conv_backward_data_verify(&p, t.dy, t.w, t.dx, conv_verify_bound(1.0));
        cr_assert(!rep.passed && rep.first_index == (long long)(nx / 2),
                  "%s: a planted dgrad error went unseen", conv_shape_name(&p));
        t.dw[nw - 1] = NAN;
        rep = conv_backward_filter_verify(&p, t.x, t.dy, t.dw, conv_verify_bound(1.0));
        cr_assert(!rep.passed && rep.nan_count == 1, "%s: a NaN in dw went unseen",
                  conv_shape_name(&p));
        free_tensors(&t);
    }
}

Test(cpu_backward, the_depth_counts_only_the_taps_that_reach_an_output)
{
    conv_params p = conv_shape(2, 3, 9, 9, 4, 3, 3, 1, 1, 1);
    cr_assert_eq(conv_backward_data_depth(&p), (size_t)4 * 3 * 3);
    cr_assert_eq(conv_backward_filter_depth(&p), (size_t)2 * 9 * 9);
    p.stride_h = p.stride_w = 2; /* rows 0, 2, 4 of a 3-tap filter alternate: 2 and 1 taps */
    cr_assert_eq(conv_backward_data_depth(&p), (size_t)4 * 2 * 2);
    cr_assert_eq(conv_backward_filter_depth(&p), (size_t)2 * 5 * 5);
    p.stride_h = p.stride_w = 4; /* stride above the filter: one tap at most */
    cr_assert_eq(conv_backward_data_depth(&p), (size_t)4);
}

Test(cpu_backward, bad_input_is_refused_with_one_line_before_any_work)
{
    conv_params p = conv_shape(1, 1, 4, 4, 1, 3, 3, 0, 1, 1);
    float buf[16] = {0};
    conv_msg msg = {{0}};
    cr_assert_eq(conv2d_backward_data_cpu(&p, NULL, buf, buf, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "dy");
    cr_assert_eq(conv2d_backward_filter_cpu(&p, buf, buf, NULL, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "dw");
    conv_params bad = p;
    bad.stride_h = 0;
    float dx[16];
    for (int i = 0; i < 16; ++i)
        dx[i] = -7.0f;
    cr_assert_eq(conv2d_backward_data_cpu(&bad, buf, buf, dx, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "stride");
    for (int i = 0; i < 16; ++i)
        cr_assert_eq(dx[i], -7.0f, "dx[%d] written before the refusal", i);
    bad = p;
    bad.r = 5; /* a filter larger than the padded image: no output */
    cr_assert_eq(conv2d_backward_filter_cpu(&bad, buf, buf, buf, &msg), CONV_ERR_INVALID);
    cr_assert(strchr(msg.text, '\n') == NULL, "more than one line: %s", msg.text);
}
