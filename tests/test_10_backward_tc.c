/* Step 10, version 10c: dgrad and wgrad on TF32 tensor cores
 * (10_backward/conv_backward_10c.cu), against the double references of
 * common/conv_verify_backward.h, in NHWC:
 *   - small integers in [-4, 4] (at most 3 significant bits, exact in TF32;
 *     every sum an integer below 2^24): exact, on the usual shapes and a table
 *     of strides 1, 2 and 3 with dilation and padding, and tiles cut by M, N
 *     and the sum;
 *   - uniform floats: within the TF32 bound of each gradient's depth
 *     (conv_tf32_bound_factor);
 *   - outputs poisoned with NaN, a canary after them and after the workspace;
 *   - wgrad with several split counts, the same bits on a second run;
 *   - inputs rounded to TF32, not truncated;
 *   - bad input refused before any CUDA call; NCHW refused as unsupported; a
 *     GPU below compute capability 8.0 refused with the reason (the GPU tests
 *     are then skipped with it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_backward.h"
#include "conv_cuda.h"
#include "conv_device.h"
#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_verify_backward.h"

typedef enum { DGRAD, WGRAD } pass;

/* The table: the usual shapes, strides 1, 2 and 3 with dilation and
 * padding, shapes with several tiles along every GEMM dimension, and
 * channel counts that take 16-byte loads. */
#define N_EXTRA 16
static size_t shape_table(conv_params *t)
{
    size_t n = conv_strided_shapes(t);                    /* the usual shapes, strides 2, 3 and 4 */
    t[n++] = conv_shape(1, 3, 20, 22, 5, 5, 5, 4, 3, 2);  /* stride 3, dilation 2 */
    t[n++] = conv_shape(2, 2, 13, 18, 3, 4, 3, 3, 2, 3);  /* stride 2, dilation 3 */
    t[n++] = conv_shape(1, 70, 9, 10, 37, 3, 3, 1, 1, 1); /* C, K past a tile, K % 16 != 0 */
    t[n++] = conv_shape(3, 65, 12, 11, 130, 2, 2, 1, 2, 1);     /* 2 and 3 tiles of C and K */
    t[n++] = conv_shape(2, 4, 37, 41, 17, 1, 1, 0, 1, 1);       /* 1x1: one tap, many pixel tiles */
    conv_params a = conv_shape(1, 5, 23, 19, 6, 3, 4, 1, 1, 1); /* per-axis strides */
    a.stride_h = 3, a.stride_w = 2, a.dil_w = 2;
    t[n++] = a;
    t[n++] = conv_shape(1, 1, 3, 3, 1, 3, 3, 0, 3, 1); /* filter = image, stride 3: one output */
    /* C and K multiples of 4: the 16-byte loads */
    t[n++] = conv_shape(2, 8, 19, 23, 12, 3, 3, 1, 2, 1);
    t[n++] = conv_shape(1, 68, 9, 7, 72, 2, 3, 1, 3, 2); /* with tiles cut, stride 3, dilation 2 */
    t[n++] = conv_shape(3, 4, 10, 10, 8, 1, 1, 0, 1, 1);
    t[n++] = conv_shape(2, 4, 9, 1, 4, 3, 1, 1, 1, 1); /* Q = 1: wgrad's terms wrap rows at once */
    return n;
}

/* The tensor a gradient reads first and second, and the one it writes. */
static size_t count_of(const conv_params *p, pass which, int operand)
{
    if (operand == 0)
        return which == DGRAD ? conv_output_elems(p) : conv_input_elems(p);
    if (operand == 1)
        return which == DGRAD ? conv_filter_elems(p) : conv_output_elems(p);
    return which == DGRAD ? conv_input_elems(p) : conv_filter_elems(p);
}

/* One run of a gradient on host inputs a, b into a NaN-poisoned device
 * output with a canary after it (wgrad: `splits` parts, through a poisoned
 * workspace with its own canary); the result into got. */
static void run(const conv_params *p, pass which, const float *a, const float *b, int splits,
                float *got)
{
    const size_t na = count_of(p, which, 0), nb = count_of(p, which, 1),
                 nout = count_of(p, which, 2);
    float *d_a = conv_test_device_copy(a, na, "first input");
    float *d_b = conv_test_device_copy(b, nb, "second input");
    float *d_out = conv_test_device_output(nout, "gradient");
    const size_t ws = which == WGRAD ? conv2d_backward_filter_tf32_workspace(p, splits) : 0;
    float *d_ws = ws > 0 ? conv_test_device_output(ws / sizeof(float), "workspace") : NULL;
    conv_msg msg = {{0}};
    conv_status st =
        which == DGRAD ? conv2d_backward_data_tf32(p, d_a, d_b, d_out, 0, &msg)
                       : conv2d_backward_filter_tf32(p, d_a, d_b, d_out, splits, d_ws, ws, 0, &msg);
    CONV_ASSERT_OK(st, msg);
    CONV_ASSERT_OK(conv_device_download(got, d_out, nout, &msg), msg);
    conv_test_assert_canary(d_out, nout, "%s on %s", which == DGRAD ? "dgrad" : "wgrad",
                            conv_shape_name(p));
    if (d_ws != NULL)
        conv_test_assert_canary(d_ws, ws / sizeof(float), "wgrad's workspace on %s",
                                conv_shape_name(p));
    conv_device_free(d_a);
    conv_device_free(d_b);
    conv_device_free(d_out);
    conv_device_free(d_ws);
}

/* The GPU tests need TF32 tensor cores. Without them the launchers must
 * refuse in one line, writing nothing, and the test is skipped with that
 * line: on a GPU below compute capability 8.0, or with a build that has no
 * code for one (it then says to rebuild). */
static void require_tf32(void)
{
    CONV_TEST_REQUIRE_GPU();
    conv_device_info info;
    conv_msg msg = {{0}}, msg_w = {{0}};
    CONV_ASSERT_OK(conv_cuda_device_info(conv_current_device(), &info, &msg), msg);
    conv_params p = conv_shape_nhwc(1, 2, 5, 5, 3, 3, 3, 1, 1, 1);
    float *d_in = conv_test_device_output(conv_input_elems(&p), "x");
    float *d_w = conv_test_device_output(conv_filter_elems(&p), "w");
    float *d_dy = conv_test_device_output(conv_output_elems(&p), "dy");
    conv_status sd = conv2d_backward_data_tf32(&p, d_dy, d_w, d_in, 0, &msg);
    conv_status sw = conv2d_backward_filter_tf32(&p, d_in, d_dy, d_w, 1, NULL, 0, 0, &msg_w);
    float first;
    conv_msg sync = {{0}};
    CONV_ASSERT_OK(conv_device_download(&first, d_in, 1, &sync), sync); /* the runs end */
    if (info.cc_major < 8 || sd == CONV_ERR_UNSUPPORTED) {
        cr_assert_eq(sd, CONV_ERR_UNSUPPORTED, "dgrad ran on sm_%d%d", info.cc_major,
                     info.cc_minor);
        cr_assert_eq(sw, CONV_ERR_UNSUPPORTED, "wgrad ran on sm_%d%d", info.cc_major,
                     info.cc_minor);
        CONV_ASSERT_ONE_LINE(msg.text, info.cc_major < 8 ? "8.0" : "rebuild");
        CONV_ASSERT_ONE_LINE(msg_w.text, info.cc_major < 8 ? "8.0" : "rebuild");
        conv_test_assert_untouched(d_in, conv_input_elems(&p));
        conv_test_assert_untouched(d_w, conv_filter_elems(&p));
        cr_skip_test("TF32 test skipped: %s", msg.text);
    }
    CONV_ASSERT_OK(sd, msg);
    CONV_ASSERT_OK(sw, msg_w);
    conv_device_free(d_in);
    conv_device_free(d_w);
    conv_device_free(d_dy);
}

/* One gradient on every shape of the table in NHWC: exact on small
 * integers (wgrad with each of `nsplits` split counts), within the TF32
 * bound on floats. */
static void check_pass(pass which, const int *splits, int nsplits)
{
    conv_params table[CONV_USUAL_SHAPES + N_EXTRA];
    size_t count = shape_table(table);
    const char *what = which == DGRAD ? "dgrad" : "wgrad";
    for (size_t i = 0; i < count; ++i) {
        conv_params p = table[i];
        p.layout = CONV_LAYOUT_NHWC;
        const size_t nout = count_of(&p, which, 2);
        double *want = malloc(nout * sizeof *want);
        cr_assert(want != NULL, "out of host memory");
        conv_test_grad t = conv_test_grad_make(&p, 13 * i + 1, 4); /* integers in [-4, 4] */
        float *got = which == DGRAD ? t.dx : t.dw;
        if (which == DGRAD)
            conv_backward_data_double(&p, t.dy, t.w, want, NULL);
        else
            conv_backward_filter_double(&p, t.x, t.dy, want, NULL);
        for (int s = 0; s < nsplits; ++s) {
            run(&p, which, which == DGRAD ? t.dy : t.x, which == DGRAD ? t.w : t.dy, splits[s],
                got);
            for (size_t e = 0; e < nout; ++e)
                cr_assert(got[e] == want[e], "%s on %s, %d splits: [%zu] = %g, want %g", what,
                          conv_shape_name(&p), splits[s], e, got[e], want[e]);
        }
        conv_test_grad_free(&t);
        if (conv_test_under_racecheck()) { /* the same launches on other values */
            free(want);
            continue;
        }
        t = conv_test_grad_make(&p, 13 * i + 7, 0); /* floats in [-1, 1) */
        got = which == DGRAD ? t.dx : t.dw;
        run(&p, which, which == DGRAD ? t.dy : t.x, which == DGRAD ? t.w : t.dy,
            splits[nsplits - 1], got);
        conv_verify_report rep =
            which == DGRAD
                ? conv_backward_data_verify(
                      &p, t.dy, t.w, got,
                      conv_verify_bound(conv_tf32_bound_factor(conv_backward_data_depth(&p))))
                : conv_backward_filter_verify(
                      &p, t.x, t.dy, got,
                      conv_verify_bound(conv_tf32_bound_factor(conv_backward_filter_depth(&p))));
        CONV_ASSERT_REPORT(rep, what, &p);
        conv_test_grad_free(&t);
        free(want);
    }
}

Test(gpu_backward_tf32, runs_on_tensor_cores_or_says_why_not)
{
    require_tf32();
}

Test(gpu_backward_data_tf32, matches_the_reference_on_every_shape_and_stride)
{
    require_tf32();
    const int one[1] = {1};
    check_pass(DGRAD, one, 1);
}

Test(gpu_backward_filter_tf32, matches_the_reference_with_every_split_count)
{
    require_tf32();
    const int splits[4] = {1, 2, 3, 7}; /* 7: more parts than some sums have steps */
    check_pass(WGRAD, splits, 4);
}

Test(gpu_backward_filter_tf32, gives_the_same_bits_on_every_run)
{
    require_tf32();
    conv_params p = conv_shape_nhwc(4, 24, 30, 30, 40, 3, 3, 1, 1, 1);
    const size_t nw = conv_filter_elems(&p);
    conv_test_grad t = conv_test_grad_make(&p, 99, 0);
    float *again = malloc(nw * sizeof *again);
    cr_assert(again != NULL, "out of host memory");
    conv_device_info info;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_cuda_device_info(conv_current_device(), &info, &msg), msg);
    const int splits[4] = {1, 5, 16, conv2d_backward_filter_tf32_splits(&p, info.sm_count)};
    const int racecheck = conv_test_under_racecheck(); /* each launch once: same accesses */
    for (int s = 0; s < 4; ++s) {
        run(&p, WGRAD, t.x, t.dy, splits[s], t.dw); /* the first run */
        if (racecheck)
            continue;
        run(&p, WGRAD, t.x, t.dy, splits[s], again);
        cr_assert(memcmp(t.dw, again, nw * sizeof *again) == 0,
                  "wgrad with %d splits: two runs differ", splits[s]);
    }
    conv_test_grad_free(&t);
    free(again);
}

/* A device buffer of count + 1 floats holding h's count from its second
 * float on (free the buffer, not the tensor). */
static float *shifted_copy(const float *h, size_t count, const char *what)
{
    float *d = NULL;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_device_alloc(&d, count + 1, what, &msg), msg);
    CONV_ASSERT_OK(conv_device_upload(d + 1, h, count, &msg), msg);
    return d;
}

/* Inputs one float past a 16-byte boundary: channel counts that would take
 * 16-byte loads get the loads of one float, with the same sums. */
Test(gpu_backward_tf32, takes_inputs_not_aligned_to_16_bytes)
{
    require_tf32();
    conv_params p = conv_shape_nhwc(2, 8, 19, 23, 12, 3, 3, 1, 2, 1);
    const size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p), ny = conv_output_elems(&p);
    conv_test_grad t = conv_test_grad_make(&p, 77, 4);
    float *dx = t.dx, *dw = t.dw;
    double *want_dx = malloc(nx * sizeof *want_dx), *want_dw = malloc(nw * sizeof *want_dw);
    cr_assert(want_dx && want_dw, "out of host memory");
    conv_backward_data_double(&p, t.dy, t.w, want_dx, NULL);
    conv_backward_filter_double(&p, t.x, t.dy, want_dw, NULL);
    conv_msg msg = {{0}};
    float *d_x = shifted_copy(t.x, nx, "x"), *d_w = shifted_copy(t.w, nw, "w");
    float *d_dy = shifted_copy(t.dy, ny, "dy");
    float *d_dx = conv_test_device_output(nx, "dx"), *d_dw = conv_test_device_output(nw, "dw");
    CONV_ASSERT_OK(conv2d_backward_data_tf32(&p, d_dy + 1, d_w + 1, d_dx, 0, &msg), msg);
    CONV_ASSERT_OK(conv2d_backward_filter_tf32(&p, d_x + 1, d_dy + 1, d_dw, 1, NULL, 0, 0, &msg),
                   msg);
    CONV_ASSERT_OK(conv_device_download(dx, d_dx, nx, &msg), msg);
    CONV_ASSERT_OK(conv_device_download(dw, d_dw, nw, &msg), msg);
    for (size_t e = 0; e < nx; ++e)
        cr_assert(dx[e] == want_dx[e], "dgrad: dx[%zu] = %g, want %g", e, dx[e], want_dx[e]);
    for (size_t e = 0; e < nw; ++e)
        cr_assert(dw[e] == want_dw[e], "wgrad: dw[%zu] = %g, want %g", e, dw[e], want_dw[e]);
    conv_device_free(d_x), conv_device_free(d_w), conv_device_free(d_dy);
    conv_device_free(d_dx), conv_device_free(d_dw);
    conv_test_grad_free(&t);
    free(want_dx), free(want_dw);
}

/* CONV_TEST_TF32_PROBE times 1, one product: rounded to TF32 it is 1 + 2^-10. */
Test(gpu_backward_tf32, rounds_its_inputs_to_tf32)
{
    require_tf32();
    conv_params p = conv_shape_nhwc(1, 1, 1, 1, 1, 1, 1, 0, 1, 1);
    const float probe = CONV_TEST_TF32_PROBE, one = 1.0f;
    float got;
    run(&p, DGRAD, &probe, &one, 1, &got); /* dx = dy w */
    cr_assert_eq(conv_test_assert_tf32_rounded(&got, 1, "10c dgrad, dy"), 1);
    run(&p, WGRAD, &one, &probe, 1, &got); /* dw = x dy */
    cr_assert_eq(conv_test_assert_tf32_rounded(&got, 1, "10c wgrad, dy"), 1);
}

Test(backward_tf32_splits, suggests_a_valid_count_and_sizes_its_workspace)
{
    conv_params p = conv_shape_nhwc(8, 64, 56, 56, 64, 3, 3, 1, 1, 1);
    int s = conv2d_backward_filter_tf32_splits(&p, 132);
    cr_assert(s > 1 && s <= 64, "%d splits for a long sum on 132 SMs", s);
    cr_assert_eq(conv2d_backward_filter_tf32_workspace(&p, s),
                 (size_t)s * conv_filter_elems(&p) * sizeof(float));
    cr_assert_eq(conv2d_backward_filter_tf32_workspace(&p, 1), 0, "one split writes dw itself");
    conv_params tiny = conv_shape(1, 1, 3, 3, 1, 3, 3, 0, 1, 1); /* a sum of one term */
    cr_assert_eq(conv2d_backward_filter_tf32_splits(&tiny, 132), 1);
    cr_assert_eq(conv2d_backward_filter_tf32_splits(&p, 0), 1, "no SMs: one split");
    conv_params bad = p;
    bad.k = 0;
    cr_assert_eq(conv2d_backward_filter_tf32_splits(&bad, 132), 1);
    cr_assert_eq(conv2d_backward_filter_tf32_workspace(&bad, 4), 0);
}

/* Fake device pointers: validation fails before anything is dereferenced. */
static float fake[1];

Test(backward_tf32_validation, refuses_bad_input_in_one_line_before_any_cuda_call)
{
    conv_params p = conv_shape_nhwc(1, 2, 8, 8, 3, 3, 3, 0, 1, 1);
    conv_params no_stride = p, nchw = p, phases = p;
    no_stride.stride_w = 0;
    nchw.layout = CONV_LAYOUT_NCHW;
    phases.stride_h = phases.stride_w = 300; /* 90000 phases: more than a grid dimension holds */
    phases.h = phases.w = 301;
    const size_t need = conv2d_backward_filter_tf32_workspace(&p, 4);
    conv_msg msg = {{0}};
    CONV_ASSERT_REFUSES(conv2d_backward_data_tf32(&p, NULL, fake, fake, 0, &msg), CONV_ERR_INVALID,
                        msg, "d_dy");
    CONV_ASSERT_REFUSES(conv2d_backward_filter_tf32(&p, fake, fake, NULL, 1, NULL, 0, 0, &msg),
                        CONV_ERR_INVALID, msg, "d_dw");
    CONV_ASSERT_REFUSES(conv2d_backward_filter_tf32(&p, fake, fake, fake, 0, NULL, 0, 0, &msg),
                        CONV_ERR_INVALID, msg, "splits");
    CONV_ASSERT_REFUSES(conv2d_backward_filter_tf32(&p, fake, fake, fake, 4, NULL, 0, 0, &msg),
                        CONV_ERR_INVALID, msg, "d_workspace");
    CONV_ASSERT_REFUSES(
        conv2d_backward_filter_tf32(&p, fake, fake, fake, 4, fake, need - 1, 0, &msg),
        CONV_ERR_INVALID, msg, "workspace_bytes");
    CONV_ASSERT_REFUSES(conv2d_backward_data_tf32(&no_stride, fake, fake, fake, 0, &msg),
                        CONV_ERR_INVALID, msg, "stride");
    CONV_ASSERT_REFUSES(conv2d_backward_data_tf32(&nchw, fake, fake, fake, 0, &msg),
                        CONV_ERR_UNSUPPORTED, msg, "NHWC");
    CONV_ASSERT_REFUSES(conv2d_backward_filter_tf32(&nchw, fake, fake, fake, 1, NULL, 0, 0, &msg),
                        CONV_ERR_UNSUPPORTED, msg, "NHWC");
    CONV_ASSERT_REFUSES(conv2d_backward_data_tf32(&phases, fake, fake, fake, 0, &msg),
                        CONV_ERR_UNSUPPORTED, msg, "phases");
}
