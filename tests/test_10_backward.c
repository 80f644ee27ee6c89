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

/* x, w and dy of p filled pseudo-randomly from stream `first` on (small integers in [-3, 3], or
 * uniform floats in [-1, 1]), then dx and dw by this step's references. */
static conv_test_grad gradients_of(const conv_params *p, uint64_t first, int small_int)
{
    conv_test_grad t = conv_test_grad_make(p, first, small_int ? 3 : 0);
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

Test(cpu_backward, the_adjoint_identity_holds_exactly_on_small_integers)
{
    conv_params table[2 * (CONV_USUAL_SHAPES + CONV_STRIDED_SHAPES)];
    const size_t count = conv_test_both_layouts(table, conv_strided_shapes(table));
    for (size_t i = 0; i < count; ++i) {
        const conv_params p = table[i];
        conv_test_grad t = gradients_of(&p, 10 * (i / 2) + 1, 1);
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
        conv_test_grad_free(&t);
    }
}

Test(cpu_backward, every_element_is_the_derivative_of_the_loss)
{
    /* Small shapes only: one forward convolution per element of x and of w. */
    enum { SHAPES = 6 };
    conv_params table[2 * SHAPES] = {
        conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1), conv_shape(2, 2, 5, 6, 3, 3, 3, 1, 1, 1),
        conv_shape(1, 2, 7, 7, 2, 3, 3, 1, 2, 1), conv_shape(1, 1, 9, 8, 2, 2, 3, 0, 3, 1),
        conv_shape(2, 1, 7, 9, 1, 3, 2, 2, 2, 2), conv_shape(1, 2, 4, 4, 1, 4, 4, 0, 1, 1),
    };
    const size_t count = conv_test_both_layouts(table, SHAPES);
    for (size_t i = 0; i < count; ++i) {
        const conv_params p = table[i];
        size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p);
        conv_test_grad t = gradients_of(&p, 7 * (i / 2) + 1, 1);
        float *e = calloc(nx > nw ? nx : nw, sizeof(float));
        double *y = malloc(conv_output_elems(&p) * sizeof *y);
        cr_assert(e != NULL && y != NULL);
        for (size_t j = 0; j < nx; ++j) { /* the loss is linear in x: its slope along e_j */
            e[j] = 1.0f;
            double want = forward_dot(&p, e, t.w, t.dy, y);
            e[j] = 0.0f;
            cr_assert_eq((double)t.dx[j], want, "%s: dx[%zu] = %g, want %g", conv_shape_name(&p), j,
                         t.dx[j], want);
        }
        for (size_t j = 0; j < nw; ++j) {
            e[j] = 1.0f;
            double want = forward_dot(&p, t.x, e, t.dy, y);
            e[j] = 0.0f;
            cr_assert_eq((double)t.dw[j], want, "%s: dw[%zu] = %g, want %g", conv_shape_name(&p), j,
                         t.dw[j], want);
        }
        free(e);
        free(y);
        conv_test_grad_free(&t);
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
    conv_test_grad ta = conv_test_grad_make(&a, 5, 0), tb = conv_test_grad_make(&b, 0, 0);
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
    conv_test_grad_free(&ta);
    conv_test_grad_free(&tb);
}

Test(cpu_backward, float_results_lie_within_their_bound_and_a_wrong_one_does_not)
{
    conv_params table[CONV_USUAL_SHAPES + CONV_STRIDED_SHAPES];
    size_t count = conv_strided_shapes(table);
    for (size_t i = 0; i < count; ++i) {
        conv_params p = table[i];
        conv_test_grad t = gradients_of(&p, 3 * i + 1, 0);
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
        conv_test_grad_free(&t);
    }
}

Test(cpu_backward, a_pointwise_tolerance_is_asked_with_each_elements_indices)
{
    for (int layout = 0; layout < 2; ++layout) {
        conv_params p = conv_shape(2, 3, 5, 4, 4, 3, 3, 1, 1, 1);
        p.layout = layout ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
        conv_test_grad t = gradients_of(&p, 91, 0);
        for (int dgrad = 0; dgrad < 2; ++dgrad) {
            conv_params q = p;
            q.pass = dgrad ? CONV_PASS_DGRAD : CONV_PASS_WGRAD;
            float *got = dgrad ? t.dx : t.dw;
            size_t total = dgrad ? conv_input_elems(&q) : conv_filter_elems(&q);
            size_t at =
                dgrad ? conv_input_offset(&q, 1, 2, 2, 1) : conv_filter_offset(&q, 1, 2, 2, 1);
            double *ref = malloc(total * sizeof *ref), *mag = malloc(total * sizeof *mag);
            cr_assert(ref && mag);
            conv_pass_reference_double(&q, t.x, t.w, t.dy, ref, mag);
            got[at] += 0.5f; /* within 0.75 there, far outside the dot product's bound */
            /* a tolerance of each element's own: 0.75 at (1, 2, 2, 1) */
            conv_test_point_tol probe = {{1, 2, 2, 1}, 0, 0};
            conv_verify_opts own = conv_verify_pointwise(conv_test_tol_of_point, &probe);
            conv_verify_report full = dgrad ? conv_backward_data_verify(&q, t.dy, t.w, got, own)
                                            : conv_backward_filter_verify(&q, t.x, t.dy, got, own);
            conv_verify_report pre = conv_pass_verify_precomputed(&q, got, ref, mag, own);
            conv_verify_report sampled =
                conv_pass_verify_sampled(&q, t.x, t.w, t.dy, got, total, 5, own);
            cr_assert(full.passed && pre.passed && sampled.passed, "%s, %s: %zu %zu %zu",
                      dgrad ? "dgrad" : "wgrad", conv_shape_name(&q), full.mismatches,
                      pre.mismatches, sampled.mismatches);
            cr_assert_geq(probe.calls, 3 * (int)total - 2);
            cr_assert_geq(probe.at_the_point, 2, "the element's indices were never asked");
            /* the same error where the tolerance is 0.25: caught by each */
            got[at] -= 0.5f;
            got[0] += 0.5f;
            pre = conv_pass_verify_precomputed(&q, got, ref, mag, own);
            full = dgrad ? conv_backward_data_verify(&q, t.dy, t.w, got, own)
                         : conv_backward_filter_verify(&q, t.x, t.dy, got, own);
            cr_assert(!full.passed && !pre.passed && full.first_index == 0 &&
                          full.first_tol == 0.25,
                      "%s: a planted error went unseen", dgrad ? "dgrad" : "wgrad");
            got[0] -= 0.5f;
            free(ref);
            free(mag);
        }
        conv_test_grad_free(&t);
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

/* The GPU versions: 10a (conv_backward_10a.cu) and 10b (conv_backward_10b_*.cu). */
typedef enum { NAIVE, IGEMM } version;

/* The SM count of the current device, for 10b's split rule. */
static int sm_count(void)
{
    int sms = 0;
    cr_assert_eq(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, conv_current_device()),
        cudaSuccess, "cannot read the SM count");
    return sms;
}

/* One run of a GPU pass on t's inputs into a NaN-poisoned device buffer with
 * a canary after it; returns the result in `got` (host). arg: 10a's grid cap
 * (max_blocks); 10b wgrad's splits (<= 0: the rule, whose workspace the test
 * sizes from the SM count), its workspace NaN-poisoned with a canary too. */
static void run_gpu(const conv_params *p, pass which, version v, const conv_test_grad *t, int arg,
                    float *got)
{
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    size_t count = which == DGRAD ? nx : nw;
    float *d_a = conv_test_device_copy(which == DGRAD ? t->dy : t->x, which == DGRAD ? ny : nx,
                                       which == DGRAD ? "dy" : "x");
    float *d_b = conv_test_device_copy(which == DGRAD ? t->w : t->dy, which == DGRAD ? nw : ny,
                                       which == DGRAD ? "w" : "dy");
    float *d_out = conv_test_device_output(count, which == DGRAD ? "dx" : "dw");
    float *d_ws = NULL;
    size_t ws_bytes = 0;
    if (v == IGEMM && which == WGRAD) {
        int splits = arg > 0 ? arg : conv2d_backward_filter_igemm_splits(p, sm_count());
        ws_bytes = conv2d_backward_filter_igemm_workspace(p, splits);
        if (ws_bytes > 0)
            d_ws = conv_test_device_output(ws_bytes / sizeof(float), "workspace");
    }
    conv_msg msg = {{0}};
    conv_status st;
    if (v == NAIVE)
        st = which == DGRAD ? conv2d_backward_data_naive(p, d_a, d_b, d_out, arg, 0, &msg)
                            : conv2d_backward_filter_naive(p, d_a, d_b, d_out, arg, 0, &msg);
    else
        st = which == DGRAD
                 ? conv2d_backward_data_igemm(p, d_a, d_b, d_out, 0, &msg)
                 : conv2d_backward_filter_igemm(p, d_a, d_b, d_out, arg, d_ws, ws_bytes, 0, &msg);
    CONV_ASSERT_OK(st, msg);
    CONV_ASSERT_OK(conv_device_download(got, d_out, count, &msg), msg);
    conv_test_assert_canary(d_out, count, "%s %s on %s, arg %d", v == NAIVE ? "10a" : "10b",
                            which == DGRAD ? "dgrad" : "wgrad", conv_shape_name(p), arg);
    if (d_ws != NULL) {
        conv_test_assert_canary(d_ws, ws_bytes / sizeof(float), "10b's workspace on %s, %d splits",
                                conv_shape_name(p), arg);
        conv_device_free(d_ws);
    }
    conv_device_free(d_a);
    conv_device_free(d_b);
    conv_device_free(d_out);
}

/* The table and more strides for 10b's phases: dilation with stride
 * (gcd(dil, stride) 1 and 2, the latter with phases no tap reaches), strides
 * per axis, and channel counts that cross its 64-wide tiles. */
#define N_IGEMM 5
static size_t igemm_table(conv_params *t)
{
    size_t n = conv_strided_shapes(t);
    t[n++] = conv_shape(1, 3, 20, 18, 5, 3, 3, 1, 3, 2);  /* stride 3, dilation 2 */
    t[n++] = conv_shape(2, 2, 21, 19, 3, 3, 3, 2, 4, 2);  /* stride 4, dilation 2: empty phases */
    t[n++] = conv_shape(2, 70, 9, 7, 67, 3, 3, 1, 2, 1);  /* C, K across tile edges */
    t[n++] = conv_shape(1, 65, 6, 5, 130, 2, 2, 0, 1, 1); /* C*R*S = 260, K = 130 */
    conv_params asym = conv_shape(3, 4, 16, 15, 3, 4, 3, 1, 3, 1);
    asym.stride_w = 2; /* phases 3 x 2 */
    asym.dil_h = 2;
    t[n++] = asym;
    return n;
}

/* Every shape of `table` in both layouts, each with every value of `args`
 * (10a's grid caps: one thread per element and grids of 1 and 3 blocks;
 * 10b wgrad's splits), exact on small integers; then within the bound on
 * floats with args[0]. */
static void check_gpu_table(pass which, version v, const conv_params *table, size_t count,
                            const int *args, int n_args)
{
    for (int layout = 0; layout < 2; ++layout)
        for (size_t i = 0; i < count; ++i) {
            conv_params p = table[i];
            p.layout = (conv_layout)layout;
            const char *what = which == DGRAD ? "dgrad" : "wgrad";
            size_t n_out = which == DGRAD ? conv_input_elems(&p) : conv_filter_elems(&p);
            float *got = malloc(n_out * sizeof *got);
            cr_assert(got != NULL);
            conv_test_grad t = gradients_of(&p, 11 * i + 1, 1); /* small integers: exact */
            const float *want = which == DGRAD ? t.dx : t.dw;
            for (int g = 0; g < n_args; ++g) {
                run_gpu(&p, which, v, &t, args[g], got);
                for (size_t e = 0; e < n_out; ++e)
                    cr_assert_eq(got[e], want[e], "%s %s on %s, arg %d: [%zu] = %g, want %g",
                                 v == NAIVE ? "10a" : "10b", what, conv_shape_name(&p), args[g], e,
                                 got[e], want[e]);
            }
            conv_test_grad_free(&t);
            if (!conv_test_under_racecheck()) {      /* the same launches on other values */
                t = gradients_of(&p, 11 * i + 5, 0); /* floats: within the bound */
                run_gpu(&p, which, v, &t, args[0], got);
                conv_verify_report rep =
                    which == DGRAD
                        ? conv_backward_data_verify(&p, t.dy, t.w, got, conv_verify_bound(1.0))
                        : conv_backward_filter_verify(&p, t.x, t.dy, got, conv_verify_bound(1.0));
                CONV_ASSERT_REPORT(rep, what, &p);
                conv_test_grad_free(&t);
            }
            free(got);
        }
}

/* The shape table (10a) or the 10b table, as check_gpu_table. */
static void check_gpu_pass(pass which, version v, const int *args, int n_args)
{
    conv_params table[CONV_USUAL_SHAPES + CONV_STRIDED_SHAPES + N_IGEMM];
    size_t count = v == NAIVE ? conv_strided_shapes(table) : igemm_table(table);
    check_gpu_table(which, v, table, count, args, n_args);
}

static const int naive_grids[3] = {0, 1, 3};

Test(gpu_backward_data_naive, matches_the_reference_on_every_shape_and_grid)
{
    CONV_TEST_REQUIRE_GPU();
    check_gpu_pass(DGRAD, NAIVE, naive_grids, 3);
}

Test(gpu_backward_filter_naive, matches_the_reference_on_every_shape_and_grid)
{
    CONV_TEST_REQUIRE_GPU();
    check_gpu_pass(WGRAD, NAIVE, naive_grids, 3);
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

/* ---- 10b: the implicit GEMMs ---- */

Test(gpu_backward_data_igemm, matches_the_reference_on_every_shape_and_stride)
{
    CONV_TEST_REQUIRE_GPU();
    const int once[1] = {0};
    check_gpu_pass(DGRAD, IGEMM, once, 1);
}

Test(gpu_backward_filter_igemm, matches_the_reference_with_every_split_count)
{
    CONV_TEST_REQUIRE_GPU();
    /* 0: the rule; 1: dw written directly; 7 and 40: more slices than the
     * depth tiles of most shapes, so some slices are empty */
    const int splits[6] = {0, 1, 2, 3, 7, 40};
    check_gpu_pass(WGRAD, IGEMM, splits, 6);
}

/* The paths of wgrad's 64 x 128 tile (conv_backward_10b_filter.cu), each
 * shape in both layouts (NCHW always loads one float at a time) with the
 * rule, one slice, 2 and 3 slices, and 40, more than the depth tiles of
 * every shape here, so that some slices are empty. */
Test(gpu_backward_filter_igemm, matches_the_reference_on_every_path_of_its_tile)
{
    CONV_TEST_REQUIRE_GPU();
    const conv_params table[] = {
        /* float4 (NHWC, C and K multiples of 4): K = 136 and C*R*S = 180 past
         * one tile, depth 126 not a multiple of 16 */
        conv_shape(2, 20, 9, 7, 136, 3, 3, 1, 1, 1),
        /* float4, C = 132: one tap spans two column tiles */
        conv_shape(1, 132, 5, 6, 8, 2, 3, 1, 1, 1),
        /* float4 with padding 2, stride 2 and dilation 2 */
        conv_shape(3, 12, 15, 13, 68, 3, 3, 2, 2, 2),
        /* scalar: C = 7, so a group of 4 columns spans two taps */
        conv_shape(2, 7, 10, 11, 72, 3, 3, 1, 1, 1),
        /* scalar: K = 66, C a multiple of 4 */
        conv_shape(1, 16, 13, 9, 66, 3, 2, 0, 1, 1),
        /* K = 4 and C*R*S = 4, both below one tile (float4) */
        conv_shape(2, 4, 6, 6, 4, 1, 1, 0, 1, 1),
        /* C = 1, K = 3 (scalar), 1x1 filter */
        conv_shape(1, 1, 5, 3, 3, 1, 1, 0, 1, 1),
        /* Q = 1: a step of 16 depth rows carries whole output rows */
        conv_shape(3, 8, 17, 1, 8, 3, 1, 1, 1, 1),
        /* P*Q = 6 < 16: a step of 16 crosses two images and a row */
        conv_shape(9, 4, 2, 3, 4, 1, 1, 0, 1, 1),
    };
    const int splits[5] = {0, 1, 2, 3, 40};
    check_gpu_table(WGRAD, IGEMM, table, sizeof table / sizeof table[0], splits, 5);
}

/* The float4 path needs x and dy on 16-byte boundaries: with either one
 * `shift` floats past its (256-byte-aligned) allocation, the launcher must
 * take the scalar path, and the result must not change. */
Test(gpu_backward_filter_igemm, falls_back_to_scalar_loads_for_unaligned_tensors)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params p = conv_shape(2, 12, 9, 8, 20, 3, 3, 1, 1, 1); /* float4 when aligned */
    p.layout = CONV_LAYOUT_NHWC;
    size_t nx = conv_input_elems(&p), ny = conv_output_elems(&p), nw = conv_filter_elems(&p);
    conv_test_grad t = gradients_of(&p, 41, 1); /* small integers: exact */
    float *got = malloc(nw * sizeof *got);
    cr_assert(got != NULL);
    const int shifts[4][2] = {{0, 0}, {1, 0}, {0, 2}, {3, 1}}; /* x, dy */
    for (int i = 0; i < 4; ++i) {
        conv_msg msg = {{0}};
        float *d_x = conv_test_device_output(nx + 4, "x"),
              *d_dy = conv_test_device_output(ny + 4, "dy");
        CONV_ASSERT_OK(conv_device_upload(d_x + shifts[i][0], t.x, nx, &msg), msg);
        CONV_ASSERT_OK(conv_device_upload(d_dy + shifts[i][1], t.dy, ny, &msg), msg);
        float *d_dw = conv_test_device_output(nw, "dw");
        size_t ws = conv2d_backward_filter_igemm_workspace(&p, 2);
        float *d_ws = conv_test_device_output(ws / sizeof(float), "workspace");
        CONV_ASSERT_OK(conv2d_backward_filter_igemm(&p, d_x + shifts[i][0], d_dy + shifts[i][1],
                                                    d_dw, 2, d_ws, ws, 0, &msg),
                       msg);
        CONV_ASSERT_OK(conv_device_download(got, d_dw, nw, &msg), msg);
        conv_test_assert_canary(d_dw, nw, "10b wgrad, x and dy shifted by %d and %d", shifts[i][0],
                                shifts[i][1]);
        for (size_t e = 0; e < nw; ++e)
            cr_assert_eq(got[e], t.dw[e], "wgrad with x, dy shifted by %d, %d: [%zu] = %g, want %g",
                         shifts[i][0], shifts[i][1], e, got[e], t.dw[e]);
        conv_device_free(d_x);
        conv_device_free(d_dy);
        conv_device_free(d_dw);
        conv_device_free(d_ws);
    }
    conv_test_grad_free(&t);
    free(got);
}

/* The depth tiles of wgrad's GEMM: ceil(N*P*Q / WGRAD_DEPTH). */
static int depth_tiles(const conv_params *p)
{
    long long depth = (long long)p->n * conv_out_h(p) * conv_out_w(p);
    return (int)((depth + CONV_BACKWARD_IGEMM_WGRAD_DEPTH - 1) / CONV_BACKWARD_IGEMM_WGRAD_DEPTH);
}

Test(gpu_backward_filter_igemm, every_split_count_gives_the_same_bits_on_every_run)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params table[2] = {conv_shape(4, 8, 33, 35, 24, 3, 3, 1, 1, 1),
                            conv_shape(2, 70, 17, 15, 67, 3, 3, 1, 2, 1)};
    for (int layout = 0; layout < 2; ++layout)
        for (int i = 0; i < 2; ++i) {
            conv_params p = table[i];
            p.layout = (conv_layout)layout;
            const int splits[7] = {1, 2, 3, 7, depth_tiles(&p) + 3, 0, 64};
            size_t nw = conv_filter_elems(&p);
            float *a = malloc(nw * sizeof *a), *b = malloc(nw * sizeof *b);
            cr_assert(a != NULL && b != NULL);
            conv_test_grad t = gradients_of(&p, 13 * i + 3, 0); /* floats: the order shows */
            /* racecheck: each launch once (it sees the same accesses on every run) */
            const int racecheck = conv_test_under_racecheck();
            for (int k = 0; k < 7; ++k) {
                run_gpu(&p, WGRAD, IGEMM, &t, splits[k], a);
                if (!racecheck)
                    run_gpu(&p, WGRAD, IGEMM, &t, splits[k], b);
                cr_assert(racecheck || memcmp(a, b, nw * sizeof *a) == 0,
                          "wgrad on %s with %d splits: two runs differ", conv_shape_name(&p),
                          splits[k]);
                conv_verify_report rep =
                    conv_backward_filter_verify(&p, t.x, t.dy, a, conv_verify_bound(1.0));
                CONV_ASSERT_REPORT(rep, "wgrad 10b", &p);
            }
            conv_test_grad_free(&t);
            t = gradients_of(&p, 13 * i + 4, 1); /* small integers: exact for every count */
            for (int k = 0; k < 7 && !racecheck; ++k) {
                run_gpu(&p, WGRAD, IGEMM, &t, splits[k], a);
                for (size_t e = 0; e < nw; ++e)
                    cr_assert_eq(a[e], t.dw[e], "wgrad on %s, %d splits: [%zu] = %g, want %g",
                                 conv_shape_name(&p), splits[k], e, a[e], t.dw[e]);
            }
            conv_test_grad_free(&t);
            free(a);
            free(b);
        }
}

Test(gpu_backward_filter_igemm, a_refused_call_writes_nothing)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params p = conv_shape_nhwc(1, 2, 6, 6, 2, 3, 3, 0, 1, 1);
    size_t nw = conv_filter_elems(&p), ws = conv2d_backward_filter_igemm_workspace(&p, 3);
    float *d_dw = conv_test_device_output(nw, "dw");
    float *d_in = conv_test_device_output(conv_input_elems(&p) + conv_output_elems(&p), "x, dy");
    float *d_ws = conv_test_device_output(ws / sizeof(float), "workspace");
    conv_msg msg = {{0}};
    cr_assert_eq(conv2d_backward_filter_igemm(&p, d_in, d_in, d_dw, 3, d_ws, ws - 4, 0, &msg),
                 CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "workspace");
    conv_test_assert_untouched(d_dw, nw);
    conv_test_assert_untouched(d_ws, ws / sizeof(float));
    conv_device_free(d_dw);
    conv_device_free(d_in);
    conv_device_free(d_ws);
}

Test(backward_igemm_validation, refuses_bad_input_in_one_line_before_any_cuda_call)
{
    const conv_params p = conv_shape(1, 1, 4, 4, 1, 3, 3, 0, 1, 1);
    conv_params no_stride = p, no_c = p;
    no_stride.stride_w = 0;
    no_c.c = -2;
    /* a grid the device cannot hold: more phases than 65535 */
    const conv_params phases = conv_shape(1, 1, 300, 300, 1, 1, 1, 0, 300, 1);
    const int too_many = CONV_BACKWARD_IGEMM_MAX_SPLITS + 1;
    const size_t need = conv2d_backward_filter_igemm_workspace(&p, 2);
    conv_msg msg = {{0}};
    CONV_ASSERT_REFUSES(conv2d_backward_data_igemm(&p, NULL, fake, fake, 0, &msg), CONV_ERR_INVALID,
                        msg, "d_dy");
    CONV_ASSERT_REFUSES(conv2d_backward_data_igemm(&p, fake, fake, NULL, 0, &msg), CONV_ERR_INVALID,
                        msg, "d_dx");
    CONV_ASSERT_REFUSES(conv2d_backward_filter_igemm(&p, NULL, fake, fake, 1, NULL, 0, 0, &msg),
                        CONV_ERR_INVALID, msg, "d_x");
    CONV_ASSERT_REFUSES(conv2d_backward_data_igemm(&no_stride, fake, fake, fake, 0, &msg),
                        CONV_ERR_INVALID, msg, "stride");
    CONV_ASSERT_REFUSES(conv2d_backward_filter_igemm(&no_c, fake, fake, fake, 1, NULL, 0, 0, &msg),
                        CONV_ERR_INVALID, msg, "--c");
    /* split-K's workspace: missing, one float short; too many splits */
    CONV_ASSERT_REFUSES(conv2d_backward_filter_igemm(&p, fake, fake, fake, 2, NULL, need, 0, &msg),
                        CONV_ERR_INVALID, msg, "workspace");
    CONV_ASSERT_REFUSES(
        conv2d_backward_filter_igemm(&p, fake, fake, fake, 2, fake, need - 4, 0, &msg),
        CONV_ERR_INVALID, msg, "workspace");
    CONV_ASSERT_REFUSES(
        conv2d_backward_filter_igemm(&p, fake, fake, fake, too_many, fake, (size_t)-1, 0, &msg),
        CONV_ERR_INVALID, msg, "splits");
    CONV_ASSERT_REFUSES(conv2d_backward_data_igemm(&phases, fake, fake, fake, 0, &msg),
                        CONV_ERR_UNSUPPORTED, msg, "65535");
}

Test(backward_igemm_validation, the_workspace_holds_one_partial_filter_per_split)
{
    conv_params p = conv_shape(2, 3, 9, 9, 5, 3, 3, 1, 1, 1);
    cr_assert_eq(conv2d_backward_filter_igemm_workspace(&p, 1), 0);
    cr_assert_eq(conv2d_backward_filter_igemm_workspace(&p, 0), 0);
    cr_assert_eq(conv2d_backward_filter_igemm_workspace(&p, 3), 3 * 5 * 3 * 3 * 3 * sizeof(float));
    cr_assert_eq(conv2d_backward_filter_igemm_workspace(NULL, 3), 0);
}

Test(backward_igemm_validation, the_split_rule_fills_the_gpu_with_slices_not_too_thin)
{
    /* the HPC101 lab's problem: 2 x 9 tiles of 64 x 128; two waves of 3
     * blocks per SM on 132 SMs need ceil(792 / 18) = 44 slices of 1.28
     * million terms / 44 */
    conv_params lab = conv_shape(128, 128, 100, 100, 128, 3, 3, 1, 1, 1);
    cr_assert_eq(conv2d_backward_filter_igemm_splits(&lab, 132), 44);
    cr_assert_eq(conv2d_backward_filter_igemm_splits(&lab, 3), 1); /* 18 tiles: 2 waves on 3 SMs */
    cr_assert_eq(conv2d_backward_filter_igemm_splits(&lab, 4), 2); /* 24 blocks: 2 slices */
    /* one output tile and a long sum: capped at RULE_MAX_SPLITS */
    conv_params thin = conv_shape(1, 1, 1000, 1000, 1, 1, 1, 0, 1, 1);
    cr_assert_eq(conv2d_backward_filter_igemm_splits(&thin, 132),
                 CONV_BACKWARD_IGEMM_RULE_MAX_SPLITS);
    /* a short sum: each slice keeps at least MIN_SLICE_TILES depth tiles */
    conv_params shallow = conv_shape(1, 1, 20, 20, 1, 3, 3, 1, 1, 1); /* 400 terms, 25 tiles */
    cr_assert_eq(conv2d_backward_filter_igemm_splits(&shallow, 132),
                 25 / CONV_BACKWARD_IGEMM_MIN_SLICE_TILES);
    conv_params one = conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1);
    cr_assert_eq(conv2d_backward_filter_igemm_splits(&one, 132), 1);
    cr_assert_eq(conv2d_backward_filter_igemm_splits(NULL, 132), 1);
    cr_assert_eq(conv2d_backward_filter_igemm_splits(&lab, 0), 1);
}
