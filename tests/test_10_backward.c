/* Step 10: the CPU references of the backward pass, dgrad and wgrad.
 *
 * Three independent checks, on the usual shape table (both layouts) and more
 * strides:
 *   - the adjoint identity <conv(x, w), dy> = <x, dgrad(dy, w)> = <w, wgrad(x, dy)>,
 *     exact on small integers (every sum is an integer below 2^53);
 *   - column by column on small shapes: dx[i] is <conv(e_i, w), dy> for the
 *     input e_i that is 1 at i and 0 elsewhere, dw[j] is <conv(x, e_j), dy>:
 *     each element alone, not only a sum;
 *   - the float results within their bound, and a planted error outside it.
 * Then the GPU versions against these references (suites gpu_backward_*):
 * exact on small integers, within the bound on floats, with outputs poisoned
 * with NaN, a canary after each, and grids too small for one thread per
 * element; and bad input refused before any CUDA call. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_backward.h"
#include "conv_backward_cpu.h"
#include "conv_cuda.h"
#include "conv_tensor.h"
#include "conv_test_support.h"

typedef struct {
    float *x, *w, *dy, *dx, *dw;
} tensors;

static tensors alloc_tensors(const conv_params *p)
{
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    tensors t = {malloc(nx * sizeof(float)), malloc(nw * sizeof(float)), malloc(ny * sizeof(float)),
                 malloc(nx * sizeof(float)), malloc(nw * sizeof(float))};
    cr_assert(t.x && t.w && t.dy && t.dx && t.dw, "out of host memory");
    return t;
}

static void free_tensors(tensors *t)
{
    free(t->x), free(t->w), free(t->dy), free(t->dx), free(t->dw);
}

/* x, w and dy of p filled pseudo-randomly from stream `first` on (small integers in [-3, 3], or
 * uniform floats in [-1, 1]), then dx and dw by this step's references. */
static tensors gradients_of(const conv_params *p, uint64_t first, int small_int)
{
    tensors t = alloc_tensors(p);
    float *in[3] = {t.x, t.w, t.dy};
    size_t count[3] = {conv_input_elems(p), conv_filter_elems(p), conv_output_elems(p)};
    for (int i = 0; i < 3; ++i) {
        if (small_int)
            conv_fill_small_int(in[i], count[i], first + i, -3, 3);
        else
            conv_fill_uniform(in[i], count[i], first + i, -1.0f, 1.0f);
    }
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv2d_backward_data_cpu(p, t.dy, t.w, t.dx, &msg), msg);
    CONV_ASSERT_OK(conv2d_backward_filter_cpu(p, t.x, t.dy, t.dw, &msg), msg);
    return t;
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; ++i)
        s += (double)a[i] * b[i];
    return s;
}

/* <conv(a, b), dy>, the forward convolution by the double reference every step
 * is checked against (conv_reference_double, common/conv_verify.h): exact on
 * small integers. y: room for the output. */
static double forward_dot(const conv_params *p, const float *a, const float *b, const float *dy,
                          double *y)
{
    conv_reference_double(p, a, b, y, NULL);
    double s = 0.0;
    for (size_t i = 0; i < conv_output_elems(p); ++i)
        s += y[i] * dy[i];
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
            tensors t = gradients_of(&p, 10 * i + 1, 1);
            double *y = malloc(conv_output_elems(&p) * sizeof *y);
            cr_assert(y != NULL);
            double forward = forward_dot(&p, t.x, t.w, t.dy, y);
            free(y);
            double data = dot(t.x, t.dx, conv_input_elems(&p));
            double filter = dot(t.w, t.dw, conv_filter_elems(&p));
            cr_assert_eq(data, forward, "%s: <x, dgrad> = %.17g, <conv, dy> = %.17g",
                         conv_shape_name(&p), data, forward);
            cr_assert_eq(filter, forward, "%s: <w, wgrad> = %.17g, <conv, dy> = %.17g",
                         conv_shape_name(&p), filter, forward);
            free_tensors(&t);
        }
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
            tensors t = gradients_of(&p, 7 * i + 1, 1);
            float *e = calloc(nx > nw ? nx : nw, sizeof(float));
            double *y = malloc(conv_output_elems(&p) * sizeof *y);
            cr_assert(e != NULL && y != NULL);
            for (size_t j = 0; j < nx; ++j) { /* the loss is linear in x: its slope along e_j */
                e[j] = 1.0f;
                double want = forward_dot(&p, e, t.w, t.dy, y);
                e[j] = 0.0f;
                cr_assert_eq((double)t.dx[j], want, "%s: dx[%zu] = %g, want %g",
                             conv_shape_name(&p), j, t.dx[j], want);
            }
            for (size_t j = 0; j < nw; ++j) {
                e[j] = 1.0f;
                double want = forward_dot(&p, t.x, e, t.dy, y);
                e[j] = 0.0f;
                cr_assert_eq((double)t.dw[j], want, "%s: dw[%zu] = %g, want %g",
                             conv_shape_name(&p), j, t.dw[j], want);
            }
            free(e);
            free(y);
            free_tensors(&t);
        }
}

/* Which tensor an element offset belongs to: the input, the filter or the output. */
typedef enum { INPUT, FILTER, OUTPUT } tensor_kind;

/* The offset of element (a, b, c, d) of a tensor of p: (n, c, h, w) of the
 * input, (k, c, r, s) of the filter, (n, k, oh, ow) of the output. */
static size_t offset_of(const conv_params *p, tensor_kind t, int a, int b, int c, int d)
{
    if (t == INPUT)
        return conv_input_offset(p, a, b, c, d);
    if (t == FILTER)
        return conv_filter_offset(p, a, b, c, d);
    return conv_output_offset(p, a, b, c, d);
}

/* Every element of a tensor of shape p (in p's layout) against, or copied
 * to, the same element of the tensor of shape q (in q's layout). */
static void each_element(const conv_params *p, const conv_params *q, tensor_kind t,
                         const float *from, float *to, int compare)
{
    int dims[3][4] = {{p->n, p->c, p->h, p->w},
                      {p->k, p->c, p->r, p->s},
                      {p->n, p->k, conv_out_h(p), conv_out_w(p)}};
    const int *e = dims[t];
    for (int a = 0; a < e[0]; ++a)
        for (int b = 0; b < e[1]; ++b)
            for (int c = 0; c < e[2]; ++c)
                for (int d = 0; d < e[3]; ++d) {
                    float v = from[offset_of(p, t, a, b, c, d)];
                    float *w = &to[offset_of(q, t, a, b, c, d)];
                    if (!compare)
                        *w = v;
                    else
                        cr_assert_eq(*w, v, "%s[%d][%d][%d][%d]: %g in NHWC, %g in NCHW",
                                     t == INPUT ? "dx" : "dw", a, b, c, d, *w, v);
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
    each_element(&a, &b, INPUT, ta.x, tb.x, 0); /* the same tensors in the other layout */
    each_element(&a, &b, FILTER, ta.w, tb.w, 0);
    each_element(&a, &b, OUTPUT, ta.dy, tb.dy, 0);
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv2d_backward_data_cpu(&a, ta.dy, ta.w, ta.dx, &msg), msg);
    CONV_ASSERT_OK(conv2d_backward_data_cpu(&b, tb.dy, tb.w, tb.dx, &msg), msg);
    CONV_ASSERT_OK(conv2d_backward_filter_cpu(&a, ta.x, ta.dy, ta.dw, &msg), msg);
    CONV_ASSERT_OK(conv2d_backward_filter_cpu(&b, tb.x, tb.dy, tb.dw, &msg), msg);
    each_element(&a, &b, INPUT, ta.dx, tb.dx, 1);
    each_element(&a, &b, FILTER, ta.dw, tb.dw, 1);
    free_tensors(&ta);
    free_tensors(&tb);
}

Test(cpu_backward, float_results_lie_within_their_bound_and_a_wrong_one_does_not)
{
    conv_params table[CONV_USUAL_SHAPES + N_STRIDED];
    size_t count = shape_table(table);
    for (size_t i = 0; i < count; ++i) {
        conv_params p = table[i];
        tensors t = gradients_of(&p, 3 * i + 1, 0);
        size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p);
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

/* ---- the GPU versions ---- */

typedef enum { DGRAD, WGRAD } pass;

/* One run of a GPU pass on t's inputs into a NaN-poisoned device buffer with
 * a canary after it; returns the result in `got` (host). */
static void run_gpu(const conv_params *p, pass which, const tensors *t, int max_blocks, float *got)
{
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    size_t count = which == DGRAD ? nx : nw;
    float *d_a = conv_test_device_copy(which == DGRAD ? t->dy : t->x, which == DGRAD ? ny : nx,
                                       which == DGRAD ? "dy" : "x");
    float *d_b = conv_test_device_copy(which == DGRAD ? t->w : t->dy, which == DGRAD ? nw : ny,
                                       which == DGRAD ? "w" : "dy");
    float *d_out = conv_test_device_output(count, which == DGRAD ? "dx" : "dw");
    conv_msg msg = {{0}};
    conv_status st = which == DGRAD
                         ? conv2d_backward_data_naive(p, d_a, d_b, d_out, max_blocks, 0, &msg)
                         : conv2d_backward_filter_naive(p, d_a, d_b, d_out, max_blocks, 0, &msg);
    CONV_ASSERT_OK(st, msg);
    CONV_ASSERT_OK(conv_device_download(got, d_out, count, &msg), msg);
    conv_test_assert_canary(d_out, count, "%s on %s", which == DGRAD ? "dgrad" : "wgrad",
                            conv_shape_name(p));
    conv_device_free(d_a);
    conv_device_free(d_b);
    conv_device_free(d_out);
}

/* Every shape of the table in both layouts, with grids of one thread per
 * element and of 1 and 3 blocks (every thread then loops over many). */
static void check_gpu_pass(pass which)
{
    conv_params table[CONV_USUAL_SHAPES + N_STRIDED];
    size_t count = shape_table(table);
    const int grids[3] = {0, 1, 3};
    for (int layout = 0; layout < 2; ++layout)
        for (size_t i = 0; i < count; ++i) {
            conv_params p = table[i];
            p.layout = (conv_layout)layout;
            const char *what = which == DGRAD ? "dgrad" : "wgrad";
            size_t n_out = which == DGRAD ? conv_input_elems(&p) : conv_filter_elems(&p);
            float *got = malloc(n_out * sizeof *got);
            cr_assert(got != NULL);
            tensors t = gradients_of(&p, 11 * i + 1, 1); /* small integers: exact */
            const float *want = which == DGRAD ? t.dx : t.dw;
            for (int g = 0; g < 3; ++g) {
                run_gpu(&p, which, &t, grids[g], got);
                for (size_t e = 0; e < n_out; ++e)
                    cr_assert_eq(got[e], want[e], "%s on %s, grid cap %d: [%zu] = %g, want %g",
                                 what, conv_shape_name(&p), grids[g], e, got[e], want[e]);
            }
            free_tensors(&t);
            t = gradients_of(&p, 11 * i + 5, 0); /* floats: within the bound */
            run_gpu(&p, which, &t, 0, got);
            conv_verify_report rep =
                which == DGRAD
                    ? conv_backward_data_verify(&p, t.dy, t.w, got, conv_verify_bound(1.0))
                    : conv_backward_filter_verify(&p, t.x, t.dy, got, conv_verify_bound(1.0));
            CONV_ASSERT_REPORT(rep, what, &p);
            free_tensors(&t);
            free(got);
        }
}

Test(gpu_backward_data_naive, matches_the_reference_on_every_shape_and_grid)
{
    CONV_TEST_REQUIRE_GPU();
    check_gpu_pass(DGRAD);
}

Test(gpu_backward_filter_naive, matches_the_reference_on_every_shape_and_grid)
{
    CONV_TEST_REQUIRE_GPU();
    check_gpu_pass(WGRAD);
}

Test(gpu_backward_data_naive, a_refused_call_writes_nothing)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params p = conv_shape(1, 2, 6, 6, 2, 3, 3, 0, 1, 1);
    float *d_dx = conv_test_device_output(conv_input_elems(&p), "dx");
    float *d_dy = conv_test_device_output(conv_output_elems(&p), "dy");
    conv_msg msg = {{0}};
    conv_params bad = p;
    bad.dil_w = 0;
    cr_assert_eq(conv2d_backward_data_naive(&bad, d_dy, d_dy, d_dx, 0, 0, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "--dil-w");
    conv_test_assert_untouched(d_dx, conv_input_elems(&p));
    conv_device_free(d_dx);
    conv_device_free(d_dy);
}

/* Fake device pointers: validation fails before anything is dereferenced. */
static float fake[1];

Test(backward_naive_validation, refuses_bad_input_in_one_line_before_any_cuda_call)
{
    conv_params p = conv_shape(1, 1, 4, 4, 1, 3, 3, 0, 1, 1);
    conv_msg msg = {{0}};
    cr_assert_eq(conv2d_backward_data_naive(&p, NULL, fake, fake, 0, 0, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "d_dy");
    cr_assert_eq(conv2d_backward_filter_naive(&p, fake, fake, NULL, 0, 0, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "d_dw");
    conv_params bad = p;
    bad.k = 0;
    cr_assert_eq(conv2d_backward_filter_naive(&bad, fake, fake, fake, 0, 0, &msg),
                 CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "--k");
    bad = p;
    bad.pad_h = INT_MAX / 2; /* window coordinates past 2^31; a stride keeps the output small */
    bad.stride_h = 1 << 20;
    cr_assert_eq(conv2d_backward_data_naive(&bad, fake, fake, fake, 0, 0, &msg),
                 CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "2^31");
}
