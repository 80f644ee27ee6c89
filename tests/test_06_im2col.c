/* Step 06, the lowering: im2col against a CPU im2col written from the
 * definition, col2im as its adjoint (<im2col(x), y> = <x, col2im(y)>, with the
 * CPU im2col on the left, so that col2im is proved on its own), in both
 * layouts, and every bad input rejected before a launch. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "conv_tensor.h"
#include "conv_test_support.h"
#include "im2col.h"
#include "test_06_shapes.h"

/* ---------------------------------------------------------------------------
 * CPU tests: everything rejected before any CUDA call. */

static const float fake[8]; /* a non-NULL pointer for arguments that are never reached */

Test(im2col_validation, rejects_a_column_buffer_whose_size_overflows)
{
    conv_msg msg = {{0}};
    /* (C*R*S)*(N*P*Q)*4 bytes = 2^40 * 2^42 * 4 overflows size_t, the tensors do not */
    conv_params q = conv_shape(4096, 1 << 20, 1024, 1024, 1, 1024, 1024, 16384, 1, 1);
    cr_assert_eq(im2col(&q, fake, (float *)fake, NULL, &msg), CONV_ERR_INVALID);
}

Test(im2col_validation, rejects_null_pointers_and_invalid_shapes)
{
    conv_msg msg = {{0}};
    conv_params p = conv_shape(2, 3, 9, 9, 4, 3, 3, 1, 1, 1);
    float *f = (float *)fake;
    cr_assert_eq(im2col(&p, NULL, f, NULL, &msg), CONV_ERR_INVALID);
    cr_assert_eq(col2im(&p, f, NULL, NULL, &msg), CONV_ERR_INVALID);
    p.h = 0;
    cr_assert_eq(im2col(&p, fake, f, NULL, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--h") != NULL, "message: %s", msg.text);
}

/* ---------------------------------------------------------------------------
 * im2col against the CPU; col2im as its adjoint. */

/* The CPU im2col, straight from the definition. */
static void cpu_im2col(const conv_params *p, const float *x, float *col)
{
    int P = conv_out_h(p), Q = conv_out_w(p);
    size_t npq = (size_t)p->n * P * Q, rsc = (size_t)p->r * p->s * p->c;
    for (int n = 0; n < p->n; ++n)
        for (int c = 0; c < p->c; ++c)
            for (int r = 0; r < p->r; ++r)
                for (int s = 0; s < p->s; ++s)
                    for (int op = 0; op < P; ++op)
                        for (int oq = 0; oq < Q; ++oq) {
                            int h = op * p->stride_h - p->pad_h + r * p->dil_h;
                            int w = oq * p->stride_w - p->pad_w + s * p->dil_w;
                            float v = (h >= 0 && h < p->h && w >= 0 && w < p->w)
                                          ? x[conv_input_offset(p, n, c, h, w)]
                                          : 0.0f;
                            size_t row = ((size_t)n * P + op) * Q + oq;
                            if (p->layout == CONV_LAYOUT_NCHW)
                                col[(((size_t)c * p->r + r) * p->s + s) * npq + row] = v;
                            else
                                col[row * rsc + ((size_t)r * p->s + s) * p->c + c] = v;
                        }
}

static void check_im2col_table(conv_layout layout)
{
    CONV_TEST_REQUIRE_GPU();
    size_t count;
    const conv_params *table = shape_table(&count);
    conv_msg msg = {{0}};
    for (size_t i = 0; i < count; ++i) {
        conv_params p = table[i];
        p.layout = layout;
        size_t nx = conv_input_elems(&p), ncol = conv_im2col_elems(&p);
        float *h_x = conv_host_alloc(nx), *h_col = conv_host_alloc(ncol),
              *want = conv_host_alloc(ncol);
        cr_assert(h_x && h_col && want, "host allocation failed");
        conv_fill_uniform(h_x, nx, 7 + i, -1.0f, 1.0f);
        cpu_im2col(&p, h_x, want);
        float *d_x = conv_test_device_copy(h_x, nx, "x");
        float *d_col = conv_test_device_output(ncol, "col");
        CONV_ASSERT_OK(im2col(&p, d_x, d_col, NULL, &msg), msg);
        CONV_ASSERT_OK(conv_device_download(h_col, d_col, ncol, &msg), msg);
        for (size_t j = 0; j < ncol; ++j)
            cr_assert(memcmp(&h_col[j], &want[j], sizeof(float)) == 0,
                      "im2col on %s: col[%zu] = %g, want %g", conv_shape_name(&p), j, h_col[j],
                      want[j]);
        conv_test_assert_canary(d_col, ncol, "im2col on %s, the column buffer",
                                conv_shape_name(&p));
        conv_device_free(d_x);
        conv_device_free(d_col);
        conv_host_free(h_x);
        conv_host_free(h_col);
        conv_host_free(want);
    }
}

Test(gpu_im2col, nchw_matches_a_cpu_im2col_on_the_shape_table)
{
    check_im2col_table(CONV_LAYOUT_NCHW);
}

Test(gpu_im2col, nhwc_matches_a_cpu_im2col_on_the_shape_table)
{
    check_im2col_table(CONV_LAYOUT_NHWC);
}

/* Random shapes with padding, stride and dilation (valid ones only). */
static int pick(uint64_t *h, int lo, int hi)
{
    *h = conv_rng_hash(*h, 1);
    return lo + (int)(*h % (uint64_t)(hi - lo + 1));
}

static conv_params random_shape(uint64_t seed, conv_layout layout)
{
    conv_msg msg = {{0}};
    for (uint64_t t = 0;; ++t) {
        uint64_t h = conv_rng_hash(seed, t);
        conv_params p = conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1);
        p.n = pick(&h, 1, 3), p.c = pick(&h, 1, 6);
        p.h = pick(&h, 1, 23), p.w = pick(&h, 1, 23);
        p.r = pick(&h, 1, 5), p.s = pick(&h, 1, 5);
        p.pad_h = pick(&h, 0, 3), p.pad_w = pick(&h, 0, 3);
        p.stride_h = pick(&h, 1, 3), p.stride_w = pick(&h, 1, 3);
        p.dil_h = pick(&h, 1, 3), p.dil_w = pick(&h, 1, 3);
        p.layout = layout;
        if (conv_params_validate(&p, &msg) == CONV_OK)
            return p;
    }
}

/* <im2col(x), y> = <x, col2im(y)>, im2col by the CPU (cpu_im2col: the GPU's
 * im2col is checked against it above, and col2im's test must not depend on
 * it). On small integers both sides are exact; on floats col2im's float sums
 * are within gamma_{R*S} * col2im(|y|) of exact per element, which bounds the
 * difference of the two dot products. */
static void check_adjoint(conv_layout layout, int exact)
{
    CONV_TEST_REQUIRE_GPU();
    conv_msg msg = {{0}};
    for (uint64_t t = 0; t < 24; ++t) {
        conv_params p = random_shape(100 * layout + t, layout);
        size_t nx = conv_input_elems(&p), ncol = conv_im2col_elems(&p);
        float *h_x = conv_host_alloc(nx), *h_y = conv_host_alloc(ncol);
        float *h_ax = conv_host_alloc(ncol), *h_aty = conv_host_alloc(nx);
        float *h_absy = conv_host_alloc(ncol), *h_atabs = conv_host_alloc(nx);
        cr_assert(h_x && h_y && h_ax && h_aty && h_absy && h_atabs, "host allocation failed");
        if (exact) {
            conv_fill_small_int(h_x, nx, t, -3, 3);
            conv_fill_small_int(h_y, ncol, t + 1, -3, 3);
        } else {
            conv_fill_uniform(h_x, nx, t, -1.0f, 1.0f);
            conv_fill_uniform(h_y, ncol, t + 1, -1.0f, 1.0f);
        }
        for (size_t j = 0; j < ncol; ++j)
            h_absy[j] = fabsf(h_y[j]);
        cpu_im2col(&p, h_x, h_ax);
        float *d_y = conv_test_device_copy(h_y, ncol, "y");
        float *d_aty = conv_test_device_output(nx, "col2im(y)");
        CONV_ASSERT_OK(col2im(&p, d_y, d_aty, NULL, &msg), msg);
        CONV_ASSERT_OK(conv_device_download(h_aty, d_aty, nx, &msg), msg);
        conv_test_assert_canary(d_aty, nx, "col2im on %s, x", conv_shape_name(&p));
        /* col2im(|y|) for the bound */
        CONV_ASSERT_OK(conv_device_upload(d_y, h_absy, ncol, &msg), msg);
        CONV_ASSERT_OK(col2im(&p, d_y, d_aty, NULL, &msg), msg);
        CONV_ASSERT_OK(conv_device_download(h_atabs, d_aty, nx, &msg), msg);

        double lhs = 0.0, rhs = 0.0, bound = 0.0, mag = 0.0;
        for (size_t j = 0; j < ncol; ++j) {
            lhs += (double)h_ax[j] * h_y[j];
            mag += fabs((double)h_ax[j] * h_y[j]);
        }
        for (size_t j = 0; j < nx; ++j) {
            cr_assert(isfinite(h_aty[j]), "col2im left x[%zu] unwritten on %s", j,
                      conv_shape_name(&p));
            rhs += (double)h_x[j] * h_aty[j];
            bound += fabs((double)h_x[j]) * h_atabs[j];
        }
        double tol =
            exact ? 0.0 : conv_gamma((size_t)p.r * p.s) * 1.0001 * bound + 1e-12 * (mag + bound);
        cr_assert(fabs(lhs - rhs) <= tol,
                  "adjoint on %s (%s): <im2col(x), y> = %.17g, <x, col2im(y)> = %.17g (tol %.3g)",
                  conv_shape_name(&p), exact ? "small integers" : "floats", lhs, rhs, tol);
        conv_device_free(d_aty);
        conv_device_free(d_y);
        conv_host_free(h_x);
        conv_host_free(h_y);
        conv_host_free(h_ax);
        conv_host_free(h_aty);
        conv_host_free(h_absy);
        conv_host_free(h_atabs);
    }
}

Test(gpu_col2im, nchw_is_the_adjoint_of_im2col_exactly_on_small_integers)
{
    check_adjoint(CONV_LAYOUT_NCHW, 1);
}
Test(gpu_col2im, nchw_is_the_adjoint_of_im2col_within_rounding_on_floats)
{
    check_adjoint(CONV_LAYOUT_NCHW, 0);
}
Test(gpu_col2im, nhwc_is_the_adjoint_of_im2col_exactly_on_small_integers)
{
    check_adjoint(CONV_LAYOUT_NHWC, 1);
}
Test(gpu_col2im, nhwc_is_the_adjoint_of_im2col_within_rounding_on_floats)
{
    check_adjoint(CONV_LAYOUT_NHWC, 0);
}
