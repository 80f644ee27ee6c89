/* Step 10, version 10d: dgrad at stride 1 as a forward convolution of dy
 * with the flipped filter (10_backward/conv_backward_10d.cu), run by step
 * 06's 6f, step 07's 7b, step 08's 8b and step 09's 9b:
 *   - on the CPU, in both layouts: the forward problem's sizes (its output is
 *     H x W), and the forward convolution's double reference on dy and the
 *     flipped filter equal to dgrad's double reference on every stride-1
 *     shape of the table, exactly on small integers: the identity itself,
 *     checked without a GPU;
 *   - 7b's tolerance (backward_rows.h): Winograd's bound of the forward
 *     problem from dy and the flipped filter, whole table or tile by tile;
 *   - the filter transform on the GPU against a CPU transform written with
 *     conv_filter_offset, exactly, both layouts;
 *   - 10d's dx against dgrad's double reference on the stride-1 shapes of the
 *     table and more (1x1 images, primes, even and odd filters, filter =
 *     image, dilation, padding 0, "same" and full, batch > 1, channels across
 *     the tiles, 16-byte loads), NHWC: exactly on small integers, within
 *     float's bound (6f) or the TF32 bounds (8b: inputs rounded; 9b: dy
 *     truncated) on floats; dx poisoned with NaN and a canary after dx and
 *     after the workspace;
 *   - a stride > 1 or a padding beyond dil*(filter-1) refused as unsupported,
 *     a missing or short workspace as invalid, NCHW as unsupported, all
 *     before any launch (nothing written). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backward_rows.h"
#include "conv_backward.h"
#include "conv_backward_cpu.h"
#include "conv_cuda.h"
#include "conv_device.h"
#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_verify_backward.h"
#include "hopper.h"
#include "tc_host.h"
#include "tensor_cores.h"
#include "winograd.h"

/* The shapes 10d takes: the usual table's shapes at stride 1 (with a padding
 * the flipped filter can take), then shapes of its own. */
#define N_EXTRA 11
static size_t shape_table(conv_params *t)
{
    conv_params usual[CONV_USUAL_SHAPES];
    size_t count = conv_usual_shapes(usual), n = 0;
    for (size_t i = 0; i < count; ++i)
        if (usual[i].stride_h == 1 && usual[i].stride_w == 1)
            t[n++] = usual[i];
    cr_assert_geq(n, 11, "the usual table lost its stride-1 shapes");
    t[n++] = conv_shape(1, 2, 5, 7, 3, 3, 3, 2, 1, 1);          /* pad = R-1: pad' = 0, P > H */
    t[n++] = conv_shape(1, 3, 20, 22, 5, 3, 3, 2, 1, 2);        /* dilation 2, "same" */
    t[n++] = conv_shape(2, 2, 13, 18, 3, 4, 3, 0, 1, 3);        /* dilation 3, no padding */
    conv_params a = conv_shape(1, 5, 23, 19, 6, 3, 5, 1, 1, 1); /* per-axis padding, dilation */
    a.pad_w = 2, a.dil_h = 2;
    t[n++] = a;
    t[n++] = conv_shape(1, 70, 9, 10, 37, 3, 3, 1, 1, 1);   /* C, K past a tile */
    t[n++] = conv_shape(3, 65, 12, 11, 130, 2, 2, 1, 1, 1); /* even filter, pad' 0; tiles */
    t[n++] = conv_shape(3, 4, 10, 10, 8, 1, 1, 0, 1, 1);    /* 1x1: the identity's flip */
    t[n++] = conv_shape(2, 8, 19, 23, 12, 3, 3, 1, 1, 1);   /* multiples of 4: 16-byte loads */
    t[n++] = conv_shape(1, 68, 9, 7, 72, 2, 3, 1, 1, 2);    /* the same, dilation, tiles cut */
    t[n++] = conv_shape(2, 129, 6, 5, 3, 3, 3, 1, 1,
                        1); /* C = 129: dx's channels cut 8b's 128-wide tile */
    t[n++] = conv_shape(1, 3, 16, 16, 129, 5, 5, 2, 1, 1); /* a sum past 8b's 32-deep stage */
    return n;
}

static conv_params forward_of(const conv_params *p)
{
    conv_params f;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv2d_backward_data_forward_params(p, &f, &msg), msg);
    return f;
}

Test(backward_forward, the_forward_problem_has_the_image_as_its_output)
{
    conv_params p = conv_shape(2, 3, 13, 11, 4, 3, 5, 1, 1, 2);
    p.pad_w = 3;
    p.layout = CONV_LAYOUT_NHWC;
    p.pass = CONV_PASS_DGRAD;
    conv_params f = forward_of(&p);
    cr_assert_eq(f.n, 2);
    cr_assert_eq(f.c, 4, "the forward input is dy: K channels");
    cr_assert_eq(f.k, 3, "the forward output is dx: C channels");
    cr_assert_eq(f.h, conv_out_h(&p));
    cr_assert_eq(f.w, conv_out_w(&p));
    cr_assert_eq(f.pad_h, 2 * 2 - 1, "pad' = dil*(R-1) - pad");
    cr_assert_eq(f.pad_w, 2 * 4 - 3);
    cr_assert(f.r == 3 && f.s == 5 && f.dil_h == 2 && f.dil_w == 2 && f.stride_h == 1 &&
              f.stride_w == 1);
    cr_assert_eq(f.layout, CONV_LAYOUT_NHWC);
    cr_assert_eq(f.pass, CONV_PASS_FORWARD);
    conv_params table[CONV_USUAL_SHAPES + N_EXTRA];
    size_t count = shape_table(table);
    for (size_t i = 0; i < count; ++i) {
        conv_params g = forward_of(&table[i]);
        cr_assert(conv_out_h(&g) == table[i].h && conv_out_w(&g) == table[i].w,
                  "on %s the forward output is %dx%d", conv_shape_name(&table[i]), conv_out_h(&g),
                  conv_out_w(&g));
    }
}

Test(backward_forward, refuses_strides_and_paddings_the_flip_cannot_take)
{
    conv_params p = conv_shape(1, 2, 9, 9, 3, 3, 3, 1, 2, 1), f;
    conv_msg msg = {{0}};
    cr_assert_eq(conv2d_backward_data_forward_params(&p, &f, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "10d needs stride 1");
    CONV_ASSERT_ONE_LINE(msg.text, "10b");
    p = conv_shape(1, 2, 9, 9, 3, 3, 3, 1, 1, 1);
    p.stride_w = 3;
    cr_assert_eq(conv2d_backward_data_forward_params(&p, &f, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "stride 1");
    p = conv_shape(1, 2, 9, 9, 3, 1, 1, 1, 1, 1); /* 1x1 filter, padding 1: pad' = -1 */
    cr_assert_eq(conv2d_backward_data_forward_params(&p, &f, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "pad");
    p = conv_shape(1, 2, 9, 9, 3, 3, 3, 1, 1, 1);
    p.pad_w = 3;
    cr_assert_eq(conv2d_backward_data_forward_params(&p, &f, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "pad");
    p.pad_w = 2; /* = dil*(S-1): pad' = 0 */
    CONV_ASSERT_OK(conv2d_backward_data_forward_params(&p, &f, &msg), msg);
    cr_assert_eq(f.pad_w, 0);
    p.k = 0;
    cr_assert_eq(conv2d_backward_data_forward_params(&p, &f, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "k");
    cr_assert_eq(conv2d_backward_data_forward_params(NULL, &f, &msg), CONV_ERR_INVALID);
    const conv_backward_forward_kernel f6 = CONV_BACKWARD_FORWARD_6F;
    cr_assert_eq(conv2d_backward_data_forward_workspace(&p, f6), 0,
                 "no workspace for a bad problem");
    cr_assert_eq(conv2d_backward_data_forward_workspace(NULL, f6), 0);
}

/* The identity on the CPU: the forward double reference of (dy, w') is
 * dgrad's double reference of (dy, w), exactly on small integers, in both
 * layouts, on every shape of the table. */
Test(backward_forward, the_forward_convolution_of_the_flipped_filter_is_dgrad)
{
    conv_params table[2 * (CONV_USUAL_SHAPES + N_EXTRA)];
    const size_t count = conv_test_both_layouts(table, shape_table(table));
    for (size_t j = 0; j < count; ++j) {
        const size_t i = j / 2; /* the shape's index: the same numbers in both layouts */
        const conv_params p = table[j];
        conv_params f = forward_of(&p);
        size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p), ny = conv_output_elems(&p);
        cr_assert_eq(conv_input_elems(&f), ny);
        cr_assert_eq(conv_output_elems(&f), nx);
        float *w = malloc(nw * sizeof *w), *wf = malloc(nw * sizeof *wf);
        float *dy = malloc(ny * sizeof *dy);
        double *want = malloc(nx * sizeof *want), *got = malloc(nx * sizeof *got);
        cr_assert(w && wf && dy && want && got, "out of host memory");
        conv_fill_small_int(w, nw, 3 * i + 1, -3, 3);
        conv_fill_small_int(dy, ny, 3 * i + 2, -3, 3);
        conv2d_backward_data_flip_filter_cpu(&p, &f, w, wf);
        conv_backward_data_double(&p, dy, w, want, NULL);
        conv_reference_double(&f, dy, wf, got, NULL);
        for (size_t e = 0; e < nx; ++e)
            cr_assert(got[e] == want[e], "%s: dx[%zu] = %g, want %g", conv_shape_name(&p), e,
                      got[e], want[e]);
        free(w), free(wf), free(dy), free(want), free(got);
    }
}

/* Fake device pointers: validation fails before anything is dereferenced. */
static float fake[4];

Test(backward_forward_validation, refuses_bad_input_in_one_line_before_any_cuda_call)
{
    conv_params p = conv_shape_nhwc(1, 2, 8, 8, 3, 3, 3, 1, 1, 1);
    const conv_backward_forward_kernel f6 = CONV_BACKWARD_FORWARD_6F;
    const size_t need = conv2d_backward_data_forward_workspace(&p, f6);
    const size_t kcrs = conv_filter_elems(&p), flipped = (kcrs + 63) / 64 * 64;
    cr_assert_eq(need, flipped * sizeof(float), "the flipped filter, rounded up to 64 floats");
    cr_assert_eq(conv2d_backward_data_forward_workspace(&p, CONV_BACKWARD_FORWARD_8B),
                 (flipped + kcrs) * sizeof(float), "and 8b's copy of it");
    cr_assert_eq(conv2d_backward_data_forward_workspace(&p, CONV_BACKWARD_FORWARD_7B),
                 (flipped + wino_workspace_elems(&p, WINO_F4)) * sizeof(float),
                 "and 7b's U, V and M (the forward problem has p's sizes here: C = K, P = H)");
    cr_assert_eq(conv2d_backward_data_forward_workspace(&p, CONV_BACKWARD_FORWARD_COUNT), 0);
    conv_params stride_2 = p, pad_3 = p, dilated = p, no_dil = p, nchw = p;
    stride_2.stride_h = 2;
    pad_3.pad_h = 3;
    dilated.dil_h = dilated.dil_w = 2;
    no_dil.dil_w = 0;
    nchw.layout = CONV_LAYOUT_NCHW;
    const conv_params five = conv_shape(1, 2, 8, 8, 3, 5, 5, 2, 1, 1);
    const conv_backward_forward_kernel f7 = CONV_BACKWARD_FORWARD_7B;
    const size_t need7 = conv2d_backward_data_forward_workspace(&p, f7);
    conv_msg msg = {{0}};
    CONV_ASSERT_REFUSES(conv2d_backward_data_forward(&p, f6, NULL, fake, fake, fake, need, 0, &msg),
                        CONV_ERR_INVALID, msg, "d_dy");
    CONV_ASSERT_REFUSES(conv2d_backward_data_forward(&p, f6, fake, fake, NULL, fake, need, 0, &msg),
                        CONV_ERR_INVALID, msg, "d_dx");
    CONV_ASSERT_REFUSES(conv2d_backward_data_forward(&p, CONV_BACKWARD_FORWARD_COUNT, fake, fake,
                                                     fake, fake, need, 0, &msg),
                        CONV_ERR_INVALID, msg, "which");
    CONV_ASSERT_REFUSES(conv2d_backward_data_forward(&p, f6, fake, fake, fake, NULL, need, 0, &msg),
                        CONV_ERR_INVALID, msg, "d_workspace");
    CONV_ASSERT_REFUSES(
        conv2d_backward_data_forward(&p, f6, fake, fake, fake, fake, need - 1, 0, &msg),
        CONV_ERR_INVALID, msg, "workspace_bytes");
    /* problems it refuses, every pointer and the workspace of p given */
    const struct {
        const conv_params *p;
        conv_backward_forward_kernel which;
        conv_status want;
        const char *text;
    } problems[] = {
        {&stride_2, f6, CONV_ERR_UNSUPPORTED, "stride 1"},
        {&pad_3, f6, CONV_ERR_UNSUPPORTED, "pad"},
        /* 7b: a 3x3 filter without dilation, or no Winograd */
        {&dilated, f7, CONV_ERR_UNSUPPORTED, "Winograd"},
        {&five, f7, CONV_ERR_UNSUPPORTED, "3x3"},
        {&no_dil, f6, CONV_ERR_INVALID, "dil"},
    };
    for (size_t i = 0; i < CONV_COUNT(problems); ++i) {
        const size_t bytes = problems[i].which == f7 ? need7 : need;
        CONV_ASSERT_REFUSES(conv2d_backward_data_forward(problems[i].p, problems[i].which, fake,
                                                         fake, fake, fake, bytes, 0, &msg),
                            problems[i].want, msg, problems[i].text);
    }
    for (int k = 0; k < CONV_BACKWARD_FORWARD_COUNT; ++k) {
        if (k == CONV_BACKWARD_FORWARD_7B)
            continue; /* 7b takes both layouts */
        const conv_backward_forward_kernel which = (conv_backward_forward_kernel)k;
        CONV_ASSERT_REFUSES(conv2d_backward_data_forward(
                                &nchw, which, fake, fake, fake, fake,
                                conv2d_backward_data_forward_workspace(&nchw, which), 0, &msg),
                            CONV_ERR_UNSUPPORTED, msg, "nhwc");
    }
    CONV_ASSERT_REFUSES(conv2d_backward_data_flip_filter(&p, NULL, fake, 0, &msg), CONV_ERR_INVALID,
                        msg, "d_w");
    CONV_ASSERT_REFUSES(conv2d_backward_data_flip_filter(&p, fake, fake, 0, &msg), CONV_ERR_INVALID,
                        msg, "d_wf");
}

/* ---- on the GPU ---- */

/* Skips the test with the reason where `which` cannot run here, after
 * checking that its launcher then refuses in one line and writes nothing. */
static void require_kernel(conv_backward_forward_kernel which)
{
    CONV_TEST_REQUIRE_GPU();
    if (which == CONV_BACKWARD_FORWARD_6F || which == CONV_BACKWARD_FORWARD_7B)
        return;
    conv_msg why = {{0}};
    conv_status avail =
        which == CONV_BACKWARD_FORWARD_8B ? tc_available(&why) : tc_tma_available(&why);
    if (avail == CONV_OK)
        return;
    cr_assert_eq(avail, CONV_ERR_UNSUPPORTED, "%s", why.text);
    conv_params p = conv_shape_nhwc(1, 4, 6, 6, 4, 3, 3, 1, 1, 1);
    const size_t ws = conv2d_backward_data_forward_workspace(&p, which);
    float *d_dy = conv_test_device_output(conv_output_elems(&p), "dy");
    float *d_w = conv_test_device_output(conv_filter_elems(&p), "w");
    float *d_dx = conv_test_device_output(conv_input_elems(&p), "dx");
    float *d_ws = conv_test_device_output(ws / sizeof(float), "workspace");
    conv_msg msg = {{0}};
    cr_assert_eq(conv2d_backward_data_forward(&p, which, d_dy, d_w, d_dx, d_ws, ws, 0, &msg),
                 CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "");
    conv_test_assert_untouched(d_dx, conv_input_elems(&p));
    conv_test_assert_untouched(d_ws, ws / sizeof(float));
    conv_device_free(d_dy), conv_device_free(d_w), conv_device_free(d_dx), conv_device_free(d_ws);
    cr_skip_test("%s", msg.text);
}

Test(gpu_backward_forward, flips_the_filter_exactly_in_both_layouts)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params shapes[2 * 4] = {
        conv_shape(1, 3, 9, 9, 5, 3, 3, 1, 1, 1), conv_shape(1, 7, 9, 9, 2, 2, 5, 0, 1, 1),
        conv_shape(1, 1, 9, 9, 1, 1, 1, 0, 1, 1), conv_shape(1, 130, 9, 9, 67, 4, 1, 0, 1, 1)};
    const size_t count = conv_test_both_layouts(shapes, 4);
    for (size_t j = 0; j < count; ++j) {
        const int i = (int)(j / 2); /* the shape's index: the same numbers in both layouts */
        const conv_params p = shapes[j];
        conv_params f = forward_of(&p);
        const size_t nw = conv_filter_elems(&p);
        float *w = malloc(nw * sizeof *w), *want = malloc(nw * sizeof *want),
              *got = malloc(nw * sizeof *got);
        cr_assert(w && want && got, "out of host memory");
        conv_fill_uniform(w, nw, 40 + i, -1.0f, 1.0f);
        conv2d_backward_data_flip_filter_cpu(&p, &f, w, want);
        float *d_w = conv_test_device_copy(w, nw, "w");
        float *d_wf = conv_test_device_output(nw, "w'");
        conv_msg msg = {{0}};
        CONV_ASSERT_OK(conv2d_backward_data_flip_filter(&p, d_w, d_wf, 0, &msg), msg);
        CONV_ASSERT_OK(conv_device_download(got, d_wf, nw, &msg), msg);
        conv_test_assert_canary(d_wf, nw, "the flip on %s", conv_shape_name(&p));
        cr_assert(memcmp(got, want, nw * sizeof *got) == 0, "the flip differs on %s",
                  conv_shape_name(&p));
        conv_device_free(d_w), conv_device_free(d_wf);
        free(w), free(want), free(got);
    }
}

/* One run of 10d into a NaN-poisoned dx with a canary after it, through a
 * NaN-poisoned workspace with its own canary. */
static void run(const conv_params *p, conv_backward_forward_kernel which, const float *dy,
                const float *w, float *got)
{
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    const size_t ws = conv2d_backward_data_forward_workspace(p, which);
    float *d_dy = conv_test_device_copy(dy, ny, "dy");
    float *d_w = conv_test_device_copy(w, nw, "w");
    float *d_dx = conv_test_device_output(nx, "dx");
    float *d_ws = conv_test_device_output(ws / sizeof(float), "workspace");
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv2d_backward_data_forward(p, which, d_dy, d_w, d_dx, d_ws, ws, 0, &msg), msg);
    CONV_ASSERT_OK(conv_device_download(got, d_dx, nx, &msg), msg);
    conv_test_assert_canary(d_dx, nx, "10d (%d) on %s", (int)which, conv_shape_name(p));
    conv_test_assert_canary(d_ws, ws / sizeof(float), "10d's workspace on %s", conv_shape_name(p));
    conv_device_free(d_dy), conv_device_free(d_w), conv_device_free(d_dx), conv_device_free(d_ws);
}

/* The bound of each kernel's arithmetic, as a factor of gamma_depth. */
static double bound_factor(conv_backward_forward_kernel which, size_t depth)
{
    if (which == CONV_BACKWARD_FORWARD_8B)
        return conv_tf32_bound_factor(depth);
    if (which == CONV_BACKWARD_FORWARD_9B)
        return tc_bound_factor(TC_TF32_XTRUNC, depth);
    return 1.0;
}

/* 10d on every shape of the table in NHWC: exact on small integers in
 * [-4, 4] (exact in TF32, truncated or rounded, and every sum an integer
 * below 2^24), within the kernel's bound on uniform floats. */
static void check_kernel(conv_backward_forward_kernel which)
{
    conv_params table[CONV_USUAL_SHAPES + N_EXTRA];
    size_t count = shape_table(table);
    for (size_t i = 0; i < count; ++i) {
        conv_params p = table[i];
        p.layout = CONV_LAYOUT_NHWC;
        p.pass = CONV_PASS_DGRAD;
        const size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p),
                     ny = conv_output_elems(&p);
        float *w = malloc(nw * sizeof *w), *dy = malloc(ny * sizeof *dy);
        float *got = malloc(nx * sizeof *got);
        double *want = malloc(nx * sizeof *want);
        cr_assert(w && dy && got && want, "out of host memory");
        conv_fill_small_int(w, nw, 17 * i + 1, -4, 4);
        conv_fill_small_int(dy, ny, 17 * i + 2, -4, 4);
        conv_backward_data_double(&p, dy, w, want, NULL);
        run(&p, which, dy, w, got);
        for (size_t e = 0; e < nx; ++e)
            cr_assert(got[e] == want[e], "10d (%d) on %s: dx[%zu] = %g, want %g", (int)which,
                      conv_shape_name(&p), e, got[e], want[e]);
        conv_fill_uniform(w, nw, 17 * i + 5, -1.0f, 1.0f);
        conv_fill_uniform(dy, ny, 17 * i + 6, -1.0f, 1.0f);
        run(&p, which, dy, w, got);
        conv_verify_report rep = conv_backward_data_verify(
            &p, dy, w, got, conv_verify_bound(bound_factor(which, conv_backward_data_depth(&p))));
        CONV_ASSERT_REPORT(rep, "10d", &p);
        free(w), free(dy), free(got), free(want);
    }
}

Test(gpu_backward_forward, dgrad_by_6f_matches_the_reference_on_every_shape)
{
    require_kernel(CONV_BACKWARD_FORWARD_6F);
    check_kernel(CONV_BACKWARD_FORWARD_6F);
}

Test(gpu_backward_forward, dgrad_by_8b_matches_the_reference_within_tf32)
{
    require_kernel(CONV_BACKWARD_FORWARD_8B);
    check_kernel(CONV_BACKWARD_FORWARD_8B);
}

Test(gpu_backward_forward, dgrad_by_9b_matches_the_reference_within_tf32)
{
    require_kernel(CONV_BACKWARD_FORWARD_9B);
    check_kernel(CONV_BACKWARD_FORWARD_9B);
}

/* The table's problems 10d runs by 7b (3x3 filters without dilation) as
 * dgrad, in both layouts. */
static size_t winograd_problems(conv_params *t)
{
    conv_params table[CONV_USUAL_SHAPES + N_EXTRA];
    size_t count = shape_table(table), n = 0;
    for (int layout = 0; layout < 2; ++layout)
        for (size_t i = 0; i < count; ++i) {
            conv_params p = table[i];
            p.layout = (conv_layout)layout;
            p.pass = CONV_PASS_DGRAD;
            const conv_params f = forward_of(&p);
            conv_msg msg = {{0}};
            if (wino_supports(&f, WINO_F4, &msg) == CONV_OK)
                t[n++] = p;
        }
    cr_assert_geq(n, 10, "only %zu shapes of the table are 3x3 without dilation", n);
    return n;
}

/* 7b's tolerance (backward_rows.h) at dx[n][c][ih][iw] is Winograd's bound
 * (step 07) at the forward problem's output (n, c, ih, iw), from dy and the
 * flipped filter: the table's entry when every element is verified, the
 * tile's own bound otherwise; a stride it cannot flip is refused. */
Test(backward_forward, winograd_tolerance_is_the_forward_problem_s_bound)
{
    conv_params t[2 * (CONV_USUAL_SHAPES + N_EXTRA)];
    const size_t count = winograd_problems(t);
    conv_backward_wino_tolerance tol = {0};
    for (size_t i = 0; i < count; ++i) {
        const conv_params p = t[i], f = forward_of(&p);
        const size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p),
                     ny = conv_output_elems(&p);
        float *w = malloc(nw * sizeof *w), *wf = malloc(nw * sizeof *wf);
        float *dy = malloc(ny * sizeof *dy);
        cr_assert(w && wf && dy, "out of host memory");
        conv_fill_uniform(w, nw, 29 * i + 1, -1.0f, 1.0f);
        conv_fill_uniform(dy, ny, 29 * i + 2, -1.0f, 1.0f);
        conv2d_backward_data_flip_filter_cpu(&p, &f, w, wf);
        conv_msg msg = {{0}};
        for (int full = 0; full < 2; ++full) {
            const conv_gpu_problem pb = {.p = p, .h_w = w, .h_y = dy, .full_verify = full};
            conv_verify_opts opts = conv_verify_exact();
            CONV_ASSERT_OK(conv_backward_wino_tolerance_prepare(&tol, &pb, &opts, &msg), msg);
            cr_assert(opts.mode == CONV_VERIFY_BOUND && opts.point_tol != NULL);
            for (size_t j = 0; j < nx; ++j) {
                int n, c, ih, iw;
                conv_output_coords(&f, j, &n, &c, &ih, &iw); /* dx is f's output */
                const double at = opts.point_tol(opts.point_ctx, n, c, ih, iw),
                             want = wino_error_bound_point(&f, WINO_F4, dy, wf, n, c, ih, iw);
                cr_assert(fabs(at - want) <= 1e-12 * want,
                          "%s (full %d): dx %zu: %.17g, the forward problem's bound %.17g",
                          conv_shape_name(&p), full, j, at, want);
            }
        }
        conv_backward_wino_tolerance_free(&tol);
        cr_assert(tol.h_wf == NULL && tol.wino.bound == NULL);
        free(w), free(wf), free(dy);
    }
    conv_params strided = conv_shape(1, 3, 9, 9, 4, 3, 3, 1, 2, 1);
    strided.pass = CONV_PASS_DGRAD;
    const conv_gpu_problem pb = {.p = strided};
    conv_verify_opts opts;
    conv_msg msg = {{0}};
    cr_assert_eq(conv_backward_wino_tolerance_prepare(&tol, &pb, &opts, &msg), CONV_ERR_UNSUPPORTED,
                 "stride 2 accepted");
    cr_assert(tol.h_wf == NULL, "a refused problem holds no filter");
}

/* 10d through 7b on the table's shapes that Winograd F(4x4, 3x3) takes, in
 * both layouts: within Winograd's own bound (its transforms are not exact
 * even on small integers), checked through the pointwise tolerance of the
 * backward verification. */
Test(gpu_backward_forward, dgrad_by_7b_matches_the_reference_within_winograds_bound)
{
    require_kernel(CONV_BACKWARD_FORWARD_7B);
    conv_params t[2 * (CONV_USUAL_SHAPES + N_EXTRA)];
    const size_t count = winograd_problems(t);
    for (size_t i = 0; i < count; ++i) {
        const conv_params p = t[i];
        const size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p),
                     ny = conv_output_elems(&p);
        float *w = malloc(nw * sizeof *w), *dy = malloc(ny * sizeof *dy);
        float *got = malloc(nx * sizeof *got);
        cr_assert(w && dy && got, "out of host memory");
        /* Winograd's bound at every element, from dy and the flipped filter */
        const conv_gpu_problem pb = {.p = p, .h_w = w, .h_y = dy, .full_verify = 1};
        conv_backward_wino_tolerance tol = {0};
        for (int kind = 0; kind < 2; ++kind) {
            if (kind == 0) {
                conv_fill_small_int(w, nw, 23 * i + 1, -4, 4);
                conv_fill_small_int(dy, ny, 23 * i + 2, -4, 4);
            } else {
                conv_fill_uniform(w, nw, 23 * i + 3, -1.0f, 1.0f);
                conv_fill_uniform(dy, ny, 23 * i + 4, -1.0f, 1.0f);
            }
            conv_msg msg = {{0}};
            conv_verify_opts within;
            CONV_ASSERT_OK(conv_backward_wino_tolerance_prepare(&tol, &pb, &within, &msg), msg);
            run(&p, CONV_BACKWARD_FORWARD_7B, dy, w, got);
            conv_verify_report rep = conv_backward_data_verify(&p, dy, w, got, within);
            CONV_ASSERT_REPORT(rep, kind == 0 ? "10d 7b, small integers" : "10d 7b", &p);
        }
        conv_backward_wino_tolerance_free(&tol);
        free(w), free(dy), free(got);
    }
}

/* A refused call launches nothing: dx and the workspace keep their poison. */
Test(gpu_backward_forward, a_refused_call_writes_nothing)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params p = conv_shape_nhwc(1, 4, 9, 9, 4, 3, 3, 1, 1, 1);
    size_t ws = 0; /* room for the hungriest kernel */
    for (int k = 0; k < CONV_BACKWARD_FORWARD_COUNT; ++k) {
        size_t need = conv2d_backward_data_forward_workspace(&p, (conv_backward_forward_kernel)k);
        ws = need > ws ? need : ws;
    }
    conv_params strided = p;
    strided.stride_h = strided.stride_w = 2; /* the same tensors hold its smaller dy */
    conv_params padded = p;
    padded.pad_w = 3;
    conv_params nchw = p;
    nchw.layout = CONV_LAYOUT_NCHW;
    conv_params dilated = p; /* 7b's refusal: Winograd takes no dilation */
    dilated.dil_h = dilated.dil_w = 2;
    float *d_dy = conv_test_device_output(conv_output_elems(&p), "dy");
    float *d_w = conv_test_device_output(conv_filter_elems(&p), "w");
    float *d_dx = conv_test_device_output(conv_input_elems(&p), "dx");
    float *d_ws = conv_test_device_output(ws / sizeof(float), "workspace");
    const conv_params *refused[3] = {&strided, &padded, &nchw};
    conv_msg msg = {{0}};
    for (int k = 0; k < CONV_BACKWARD_FORWARD_COUNT; ++k) {
        const conv_backward_forward_kernel which = (conv_backward_forward_kernel)k;
        refused[2] = which == CONV_BACKWARD_FORWARD_7B ? &dilated : &nchw;
        for (int i = 0; i < 3; ++i)
            cr_assert_eq(
                conv2d_backward_data_forward(refused[i], which, d_dy, d_w, d_dx, d_ws, ws, 0, &msg),
                CONV_ERR_UNSUPPORTED, "%s: %s", conv_shape_name(refused[i]), msg.text);
        const size_t need = conv2d_backward_data_forward_workspace(&p, which);
        cr_assert_eq(
            conv2d_backward_data_forward(&p, which, d_dy, d_w, d_dx, d_ws, need - 4, 0, &msg),
            CONV_ERR_INVALID);
        CONV_ASSERT_ONE_LINE(msg.text, "workspace_bytes");
    }
    conv_test_assert_untouched(d_dx, conv_input_elems(&p));
    conv_test_assert_untouched(d_ws, ws / sizeof(float));
    conv_device_free(d_dy), conv_device_free(d_w), conv_device_free(d_dx), conv_device_free(d_ws);
}
