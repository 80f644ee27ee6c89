/* Step 08 in half precision: rounding to FP16 and its range on the host, the
 * bound of the FP16 kernels (conv_fp16.h) against a model of their
 * arithmetic (and a coarser model the bound must catch); on the GPU, 8a-fp16
 * and 8b-fp16 exact on small integers, within the bound on random floats
 * (some below FP16's normal range) and rounding each input to the nearest
 * FP16 value, on every GPU of the course. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_fp16.h"
#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_verify.h"
#include "tensor_cores.h"
#include "test_08_shapes.h"

/* ---- host ---------------------------------------------------------------- */

Test(cpu_fp16, rounds_to_eleven_significant_bits_to_nearest_ties_even)
{
    const float ulp = ldexpf(1.0f, -10); /* FP16's last bit at 1 */
    cr_assert_eq(conv_round_fp16(1.0f), 1.0f);
    cr_assert_eq(conv_round_fp16(1.0f + ulp / 2), 1.0f, "a tie goes to the even neighbour");
    cr_assert_eq(conv_round_fp16(1.0f + 3 * ulp / 2), 1.0f + 2 * ulp);
    cr_assert_eq(conv_round_fp16(-(1.0f + 3 * ulp / 4)), -(1.0f + ulp));
    cr_assert_eq(conv_round_fp16(0.1f), 0x1.998p-4f);
    cr_assert_eq(conv_round_fp16(65504.0f), 65504.0f);
    cr_assert_eq(conv_round_fp16(65519.0f), 65504.0f);
    cr_assert_eq(conv_round_fp16(65520.0f), INFINITY);
    cr_assert_eq(conv_round_fp16(-1e6f), -INFINITY);
    cr_assert(isnan(conv_round_fp16(NAN)));
    /* below 2^-14 the subnormals, all 2^-24 apart */
    cr_assert_eq(conv_round_fp16(ldexpf(1.0f, -24)), ldexpf(1.0f, -24));
    cr_assert_eq(conv_round_fp16(ldexpf(1.0f, -25)), 0.0f, "a tie with 0 goes to 0");
    cr_assert_eq(conv_round_fp16(ldexpf(3.0f, -26)), ldexpf(1.0f, -24));
    cr_assert_eq(conv_round_fp16(ldexpf(1.0f, -14) + ldexpf(1.0f, -26)), ldexpf(1.0f, -14));
    for (int i = -2048; i <= 2048; ++i)
        cr_assert_eq(conv_round_fp16((float)i), (float)i, "%d is not exact in FP16", i);
}

Test(cpu_fp16, refuses_inputs_beyond_its_range_naming_the_tensor)
{
    float v[5] = {1.0f, -65504.0f, 3.0f, 65505.0f, 0.0f};
    conv_msg msg = {{0}};
    cr_assert_eq(conv_fp16_check_range(v, 3, "x", &msg), CONV_OK);
    cr_assert_eq(conv_fp16_check_range(v, 5, "w", &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "w[3] = 65505");
    v[3] = NAN;
    cr_assert_eq(conv_fp16_check_range(v, 5, "x", &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "x[3]");
}

/* v with `bits` significant bits, to nearest (a model of a coarser format). */
static float round_bits(float v, int bits)
{
    int e = 0;
    frexp(v, &e);
    const double spacing = ldexp(1.0, e - bits);
    return (float)(nearbyint(v / spacing) * spacing);
}

/* The output of a kernel that rounds its inputs with `round` (bits < 0:
 * to FP16) and sums exactly, then rounds to float. */
static void model(const conv_params *p, const float *x, const float *w, int bits, float *y)
{
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *xr = malloc(nx * sizeof *xr), *wr = malloc(nw * sizeof *wr);
    double *yd = malloc(ny * sizeof *yd);
    cr_assert(xr && wr && yd);
    for (size_t i = 0; i < nx; ++i)
        xr[i] = bits < 0 ? conv_round_fp16(x[i]) : round_bits(x[i], bits);
    for (size_t i = 0; i < nw; ++i)
        wr[i] = bits < 0 ? conv_round_fp16(w[i]) : round_bits(w[i], bits);
    conv_reference_double(p, xr, wr, yd, NULL);
    for (size_t i = 0; i < ny; ++i)
        y[i] = (float)yd[i];
    free(xr), free(wr), free(yd);
}

Test(cpu_fp16, the_bound_holds_for_fp16_inputs_and_catches_8_bit_ones)
{
    conv_params t[2 * CONV_USUAL_SHAPES];
    const size_t count = conv_test_both_layouts(t, conv_usual_shapes(t));
    size_t caught = 0;
    for (size_t i = 0; i < count; ++i) {
        const conv_params *p = &t[i];
        const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
        float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *y = malloc(ny * sizeof *y);
        cr_assert(x && w && y);
        tc_fill_with_subnormals(x, nx, 300 + i, 7);
        tc_fill_with_subnormals(w, nw, 400 + i, 5);
        const conv_verify_opts opts = conv_fp16_bound((size_t)p->c * p->r * p->s, x, nx, w, nw);
        model(p, x, w, -1, y);
        conv_verify_report rep = conv_verify_full(p, x, w, y, opts);
        CONV_ASSERT_REPORT(rep, "FP16 inputs, exact sums", p);
        model(p, x, w, 8, y);
        caught += !conv_verify_full(p, x, w, y, opts).passed;
        free(x), free(w), free(y);
    }
    cr_assert_gt(caught, count / 2, "the bound caught 8-bit inputs on %zu of %zu shapes", caught,
                 count);
}

/* ---- GPU ------------------------------------------------------------------ */

/* The FP16 kernels of the step: 8a-fp16 (WMMA) and 8b-fp16 (mma.sync, with
 * its workspace for the FP16 copies). */
#define KERNELS 2
static const char *const kernel_names[KERNELS] = {"8a-fp16", "8b-fp16"};

/* Kernel `which` on h_x and h_w into h_y (NaN-poisoned output, canary checked). */
static void run_gpu(int which, const conv_params *p, const float *h_x, const float *h_w, float *h_y)
{
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *d_x = conv_test_device_copy(h_x, nx, "x");
    float *d_w = conv_test_device_copy(h_w, nw, "w");
    float *d_y = conv_test_device_output(ny, "y");
    conv_msg msg = {{0}};
    if (which == 0) {
        CONV_ASSERT_OK(conv2d_tc_wmma_fp16(p, d_x, d_w, d_y, 0, &msg), msg);
    } else {
        const size_t nwork = conv2d_tc_fp16_workspace_elems(p);
        float *d_work = conv_test_device_output(nwork, "8b-fp16's workspace");
        CONV_ASSERT_OK(conv2d_tc_mma_fp16(p, d_x, d_w, d_y, d_work, nwork, 0, &msg), msg);
        conv_test_assert_canary(d_work, nwork, "8b-fp16's workspace on %s", conv_shape_name(p));
        conv_device_free(d_work);
    }
    CONV_ASSERT_OK(conv_device_download(h_y, d_y, ny, &msg), msg);
    conv_test_assert_canary(d_y, ny, "%s output on %s", kernel_names[which], conv_shape_name(p));
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
}

Test(gpu_tensor_cores_fp16, is_exact_on_small_integers_and_within_its_bound_on_floats)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params t[TC_FP16_TEST_SHAPES];
    const size_t count = tc_fp16_shapes(t);
    for (size_t i = 0; i < KERNELS * count; ++i) {
        const int which = (int)(i / count);
        const conv_params *p = &t[i % count];
        const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
        float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *y = malloc(ny * sizeof *y),
              *want = malloc(ny * sizeof *want);
        char what[64];
        cr_assert(x && w && y && want);
        conv_msg msg = {{0}};
        /* small integers: FP16 holds each, float each product and partial sum */
        conv_fill_small_int(x, nx, 500 + i, -3, 3);
        conv_fill_small_int(w, nw, 600 + i, -3, 3);
        CONV_ASSERT_OK(conv_test_host_reference(p, x, w, want, &msg), msg);
        run_gpu(which, p, x, w, y);
        conv_verify_report exact = conv_compare_exact(p, y, want, ny);
        snprintf(what, sizeof what, "%s, small integers", kernel_names[which]);
        CONV_ASSERT_REPORT(exact, what, p);
        if (!conv_test_under_racecheck()) { /* the same launch on other values */
            tc_fill_with_subnormals(x, nx, 700 + i, 7);
            tc_fill_with_subnormals(w, nw, 800 + i, 5);
            run_gpu(which, p, x, w, y);
            conv_verify_report rep = conv_verify_full(
                p, x, w, y, conv_fp16_bound((size_t)p->c * p->r * p->s, x, nx, w, nw));
            snprintf(what, sizeof what, "%s, floats within the FP16 bound", kernel_names[which]);
            CONV_ASSERT_REPORT(rep, what, p);
        }
        free(x), free(w), free(y), free(want);
    }
}

/* Only the centre tap of a 3x3 filter is nonzero, w[1][1][c][k] = (c == k),
 * so every output is one input times 1: y = x as the kernel rounds it, which
 * must be conv_round_fp16(x) to the bit, ties and subnormals included (x
 * scaled by 1/4, 1/2 or 1: 65519 stays below infinity, whose product with a
 * zero weight would be NaN). With 4 channels and with 8 (8b-fp16 rounds x as
 * it copies it, or, where C % 8 == 0 on compute capability 8.0 and newer,
 * in a copy of x first). */
Test(gpu_tensor_cores_fp16, rounds_each_input_to_the_nearest_fp16_value)
{
    CONV_TEST_REQUIRE_GPU();
    for (int c_n = 4; c_n <= 8; c_n += 4) {
        conv_params p = conv_shape_nhwc(2, c_n, 5, 7, c_n, 3, 3, 1, 1, 1);
        const size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p),
                     ny = conv_output_elems(&p);
        float *x = malloc(nx * sizeof *x), *w = calloc(nw, sizeof *w), *y = malloc(ny * sizeof *y);
        cr_assert(x && w && y);
        for (int c = 0; c < c_n; ++c) /* w[1][1][c][c] */
            w[((size_t)(1 * 3 + 1) * c_n + (size_t)c) * c_n + (size_t)c] = 1.0f;
        const float ulp = ldexpf(1.0f, -10);
        for (size_t i = 0; i < nx; ++i) {
            const float kinds[6] = {1.0f + ulp / 2,    1.0f + 3 * ulp / 2, 0.1f,
                                    ldexpf(3.0f, -26), ldexpf(1.0f, -25),  65519.0f};
            x[i] = (i / 6 % 2 ? -1.0f : 1.0f) * kinds[i % 6] * ldexpf(1.0f, (int)(i / 12 % 3) - 2);
        }
        for (int which = 0; which < KERNELS; ++which) {
            run_gpu(which, &p, x, w, y);
            for (size_t i = 0; i < ny; ++i) /* stride 1, same padding: y and x share offsets */
                cr_assert_eq(y[i], conv_round_fp16(x[i]),
                             "%s, C = %d: x[%zu] = %a became %a, not %a", kernel_names[which], c_n,
                             i, x[i], y[i], conv_round_fp16(x[i]));
        }
        free(x), free(w), free(y);
    }
}

/* 8b-fp16 without its workspace, or with one too small: refused before any
 * launch, naming what is missing (no GPU needed). */
Test(cpu_fp16, refuses_8b_fp16_without_its_workspace)
{
    const conv_params p = conv_shape_nhwc(1, 8, 5, 5, 8, 3, 3, 1, 1, 1);
    float one = 0.0f, *some = &one; /* never read: the checks come first */
    conv_msg msg = {{0}};
    cr_assert_eq(conv2d_tc_mma_fp16(&p, some, some, some, NULL, 0, 0, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "workspace") != NULL, "%s", msg.text);
    const size_t need = conv2d_tc_fp16_workspace_elems(&p);
    cr_assert_geq(need, (conv_input_elems(&p) + conv_filter_elems(&p)) / 2);
    cr_assert_eq(conv2d_tc_mma_fp16(&p, some, some, some, some, need - 1, 0, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "work_elems") != NULL, "%s", msg.text);
}
