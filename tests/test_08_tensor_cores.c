/* Step 08: TF32 rounding and the error bounds, on the host; on the GPU, 8a
 * to 8c exact on small integers (which TF32 holds exactly) and within their
 * own bounds on random floats over the shape table, or, on a GPU or a build
 * without TF32 tensor cores, refused with the reason before any launch; the
 * GEMM rows and mma.sync's rates. (8a-fp16 and 8b-fp16: test_08_fp16.c; step
 * 09's wgmma kernels: test_09_hopper.c.) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_verify.h"
#include "im2col_gemm_rows.h"
#include "tc_host.h"
#include "tc_rows.h"
#include "tensor_cores.h"
#include "test_08_shapes.h"

/* ---- host ---------------------------------------------------------------- */

static uint32_t bits_of(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

Test(cpu_tf32, rounds_to_ten_mantissa_bits_to_nearest_ties_away)
{
    const float one = 1.0f, ulp = ldexpf(1.0f, -10); /* TF32's last bit at 1 */
    cr_assert_eq(tc_tf32_round(one), one);
    cr_assert_eq(tc_tf32_round(one + ulp / 2), one + ulp, "a tie goes away from zero");
    cr_assert_eq(tc_tf32_round(-(one + ulp / 2)), -(one + ulp));
    cr_assert_eq(tc_tf32_round(one + ulp / 4), one);
    cr_assert_eq(tc_tf32_round(one + 3 * ulp / 4), one + ulp);
    cr_assert(isnan(tc_tf32_round(NAN)));
    cr_assert_eq(tc_tf32_round(INFINITY), INFINITY);
    for (int i = -2048; i <= 2048; ++i)
        cr_assert_eq(tc_tf32_round((float)i), (float)i, "%d is not exact in TF32", i);
    float v[4096];
    conv_fill_uniform(v, 4096, 3, -1000.0f, 1000.0f);
    for (int i = 0; i < 4096; ++i) {
        const float r = tc_tf32_round(v[i]);
        cr_assert_eq(bits_of(r) & 0x1fffu, 0u, "%.9g kept bits below TF32's", r);
        cr_assert_leq(fabs((double)r - v[i]), ldexp(fabs(v[i]), -11), "%.9g -> %.9g", v[i], r);
    }
}

Test(cpu_tf32, truncates_to_ten_mantissa_bits)
{
    const float one = 1.0f, ulp = ldexpf(1.0f, -10);
    cr_assert_eq(tc_tf32_truncate(one + 3 * ulp / 4), one, "truncation, not rounding");
    cr_assert_eq(tc_tf32_truncate(-(one + 3 * ulp / 4)), -one, "toward zero");
    cr_assert(isnan(tc_tf32_truncate(NAN)));
    cr_assert_eq(tc_tf32_truncate(-INFINITY), -INFINITY);
    float v[4096];
    conv_fill_uniform(v, 4096, 4, -1000.0f, 1000.0f);
    for (int i = 0; i < 4096; ++i) {
        const float r = tc_tf32_truncate(v[i]);
        cr_assert_eq(bits_of(r) & 0x1fffu, 0u, "%.9g kept bits below TF32's", r);
        cr_assert_leq(fabsf(r), fabsf(v[i]), "%.9g -> %.9g", v[i], r);
        cr_assert_lt(fabs((double)r - v[i]), ldexp(fabs(v[i]), -10), "%.9g -> %.9g", v[i], r);
    }
}

/* The arithmetic of each precision on the host, in double: inputs rounded
 * (8a, 8b), split (8c) or x truncated (8b-xt; step 09's 9a, 9b) as the
 * kernel does,
 * products and sums exact. Only the accumulation's own rounding is left out,
 * so the measured error is the rounding of the inputs: what the bound adds
 * to float's. */
static double model_term(tc_precision t, float x, float w)
{
    const float xb = tc_tf32_round(x), wb = tc_tf32_round(w);
    if (t == TC_TF32)
        return (double)xb * wb;
    if (t == TC_TF32_XTRUNC)
        return (double)tc_tf32_truncate(x) * wb;
    const float xs = tc_tf32_round(x - xb), ws = tc_tf32_round(w - wb);
    return (double)xb * wb + (double)xb * ws + (double)xs * wb;
}

Test(cpu_tf32, bounds_hold_for_the_model_and_tf32_s_is_needed)
{
    const conv_params p = conv_shape(1, 64, 9, 9, 4, 3, 3, 1, 1, 1);
    conv_params q = p;
    q.layout = CONV_LAYOUT_NHWC;
    const size_t nx = conv_input_elems(&q), nw = conv_filter_elems(&q), ny = conv_output_elems(&q);
    float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
    cr_assert(x && w);
    conv_fill_uniform(x, nx, 5, -1.0f, 1.0f);
    conv_fill_uniform(w, nw, 6, -1.0f, 1.0f);
    const size_t depth = (size_t)q.c * q.r * q.s;
    int beyond_fp32 = 0;
    for (int t = 0; t < TC_PRECISION_COUNT; ++t) {
        const double factor = tc_bound_factor((tc_precision)t, depth);
        cr_assert_geq(factor, 1.0);
        double worst = 0.0;
        for (size_t at = 0; at < ny; ++at) {
            int n, k, oh, ow;
            conv_output_coords(&q, at, &n, &k, &oh, &ow);
            double want, mag, got = 0.0;
            conv_reference_point(&q, x, w, n, k, oh, ow, &want, &mag);
            for (int c = 0; c < q.c; ++c)
                for (int r = 0; r < 3; ++r)
                    for (int s = 0; s < 3; ++s) {
                        const int h = oh - 1 + r, wi = ow - 1 + s;
                        if (h >= 0 && h < q.h && wi >= 0 && wi < q.w)
                            got +=
                                model_term((tc_precision)t, x[conv_input_offset(&q, n, c, h, wi)],
                                           w[conv_filter_offset(&q, k, c, r, s)]);
                    }
            const double err = fabs(got - want), tol = factor * conv_gamma(depth) * mag;
            cr_assert_leq(err, tol, "%s: output %zu off by %g, bound %g",
                          tc_precision_name((tc_precision)t), at, err, tol);
            worst = fmax(worst, err / tol);
            if (t == TC_TF32 && err > conv_gamma(depth) * mag)
                ++beyond_fp32;
        }
        cr_log_info("%s: largest error / bound %.3g (factor %.3g of the dot product's bound)",
                    tc_precision_name((tc_precision)t), worst, factor);
    }
    cr_assert_gt(beyond_fp32, 0,
                 "TF32's rounding never left float's bound: the test shows nothing");
    free(x);
    free(w);
}

Test(cpu_tf32, three_tf32_is_near_fp32_and_tf32_is_not)
{
    /* about 2^-10 against float's n * 2^-24: hundreds of times wider for
     * n = 1152 (C = 128, 3x3); 3xTF32 within a small factor of float's */
    const size_t n = 128 * 9;
    cr_assert_gt(tc_bound_factor(TC_TF32, n), 10.0);
    cr_assert_gt(tc_bound_factor(TC_TF32_XTRUNC, n), tc_bound_factor(TC_TF32, n));
    cr_assert_lt(tc_bound_factor(TC_3XTF32, n), 8.0);
}

Test(cpu_tf32, takes_nhwc_only_and_says_why_in_one_line)
{
    conv_msg msg = {{0}};
    conv_params p = conv_shape(1, 3, 8, 8, 2, 3, 3, 1, 2, 2);
    cr_assert_eq(tc_supports(&p, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "--layout nchw");
    CONV_ASSERT_OK(tc_check_mma(&p, &msg), msg); /* 8b and 8c take it */
    p.layout = CONV_LAYOUT_NHWC;
    CONV_ASSERT_OK(tc_supports(&p, &msg), msg);
    CONV_ASSERT_OK(tc_check(&p, &msg), msg);
    CONV_ASSERT_OK(tc_check_mma(&p, &msg), msg);
}

/* NCHW: 16-byte copies of x where 4 pixels are neighbours in x, for every
 * one of their columns j: a 1x1 filter, stride 1, no padding, H W and C
 * multiples of 4; never in NHWC (its own rule: C % 4). */
Test(cpu_tf32, nchw_copies_are_wide_only_where_four_pixels_are_neighbours)
{
    conv_params p = conv_shape(2, 8, 6, 6, 12, 1, 1, 0, 1, 1);
    cr_assert(tc_nchw_copies16(&p));
    conv_params q = p;
    q.h = q.w = 7; /* H W = 49 */
    cr_assert(!tc_nchw_copies16(&q));
    q = p, q.c = 6;
    cr_assert(!tc_nchw_copies16(&q));
    q = p, q.stride_w = 2;
    cr_assert(!tc_nchw_copies16(&q));
    q = p, q.pad_h = 1;
    cr_assert(!tc_nchw_copies16(&q));
    q = p, q.r = q.s = 3;
    cr_assert(!tc_nchw_copies16(&q));
    q = p, q.layout = CONV_LAYOUT_NHWC;
    cr_assert(!tc_nchw_copies16(&q));
}

/* 8b's kernel runs three precisions; any other is refused before any CUDA
 * call (the pointers are never used). */
Test(cpu_tf32, mma_refuses_a_precision_it_does_not_run)
{
    conv_msg msg = {{0}};
    conv_params p = conv_shape_nhwc(1, 4, 8, 8, 4, 3, 3, 1, 1, 1);
    float *fake = (float *)(uintptr_t)256;
    cr_assert_eq(conv2d_tc_mma(&p, TC_PRECISION_COUNT, fake, fake, fake, fake, 1u << 20, 0, &msg),
                 CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "not precision");
}

/* 8b and 8c write the filter as KRSC into the caller's workspace, K*R*S*C
 * floats: none, or one float too few, is refused before any CUDA call. */
Test(cpu_tf32, mma_needs_a_workspace_for_the_filter)
{
    conv_msg msg = {{0}};
    conv_params p = conv_shape_nhwc(2, 5, 8, 8, 7, 3, 2, 1, 1, 1);
    const size_t need = conv2d_tc_mma_workspace_elems(&p);
    cr_assert_eq(need, conv_filter_elems(&p));
    cr_assert_eq(need, (size_t)7 * 3 * 2 * 5);
    float *fake = (float *)(uintptr_t)256;
    for (int t = 0; t < TC_PRECISION_COUNT; ++t) {
        cr_assert_eq(conv2d_tc_mma(&p, (tc_precision)t, fake, fake, fake, NULL, need, 0, &msg),
                     CONV_ERR_INVALID);
        CONV_ASSERT_ONE_LINE(msg.text, "d_work");
        cr_assert_eq(conv2d_tc_mma(&p, (tc_precision)t, fake, fake, fake, fake, need - 1, 0, &msg),
                     CONV_ERR_INVALID);
        CONV_ASSERT_ONE_LINE(msg.text, "work_elems");
    }
}

/* ---- GPU ----------------------------------------------------------------- */

/* A launcher of the step's kernels that takes no precision (8a). */
typedef conv_status (*tc_launcher)(const conv_params *p, const float *d_x, const float *d_w,
                                   float *d_y, cudaStream_t stream, conv_msg *msg);

/* Whether `launch` runs on this GPU and this build. When it does not, it
 * must say so in one line naming `needle` before any launch (asserted here:
 * the output keeps its NaN poison), and the caller has nothing more to
 * check. */
static int runs_here(tc_launcher launch, const char *needle)
{
    conv_params p = conv_shape_nhwc(1, 2, 5, 5, 3, 3, 3, 1, 1, 1);
    const size_t ny = conv_output_elems(&p);
    float *d_y = conv_test_device_output(ny, "y");
    conv_msg msg = {{0}};
    conv_status st = launch(&p, d_y, d_y, d_y, 0, &msg);
    if (st == CONV_OK)
        cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    else {
        cr_assert_eq(st, CONV_ERR_UNSUPPORTED, "%s", msg.text);
        CONV_ASSERT_ONE_LINE(msg.text, needle);
        conv_test_assert_untouched(d_y, ny);
        cr_log_info("does not run here (%s); the refusal was checked instead", msg.text);
    }
    conv_device_free(d_y);
    return st == CONV_OK;
}

/* TF32 on tensor cores (8a to 8c). */
static int tf32_runs_here(void)
{
    return runs_here(conv2d_tc_wmma, "TF32 tensor");
}

/* The GPU versions in TF32: 8a to 8c, with the precision of each. */
enum { RUN_8A, RUN_8B, RUN_8B_XT, RUN_8C, RUN_COUNT };
static const char *const run_names[RUN_COUNT] = {
    "8a WMMA TF32", "8b mma.sync TF32", "8b-xt mma.sync TF32, x truncated", "8c mma.sync 3xTF32"};

static tc_precision precision_of(int run)
{
    return run == RUN_8C ? TC_3XTF32 : run == RUN_8B_XT ? TC_TF32_XTRUNC : TC_TF32;
}

/* d_work: 8b's and 8c's workspace, work_elems floats (the others take none). */
static conv_status run_version(const conv_params *p, int run, const float *d_x, const float *d_w,
                               float *d_y, float *d_work, size_t work_elems, conv_msg *msg)
{
    if (run == RUN_8A)
        return conv2d_tc_wmma(p, d_x, d_w, d_y, 0, msg);
    return conv2d_tc_mma(p, precision_of(run), d_x, d_w, d_y, d_work, work_elems, 0, msg);
}

static void run_gpu(const conv_params *p, int run, const float *h_x, const float *h_w, float *h_y)
{
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *d_x = conv_test_device_copy(h_x, nx, "x");
    float *d_w = conv_test_device_copy(h_w, nw, "w");
    float *d_y = conv_test_device_output(ny, "y");
    /* 8b and 8c: exactly the workspace they ask for, poisoned, a canary
     * after it */
    const int mma = run == RUN_8B || run == RUN_8B_XT || run == RUN_8C;
    const size_t nwork = mma ? conv2d_tc_mma_workspace_elems(p) : 0;
    float *d_work = mma ? conv_test_device_output(nwork, "workspace") : NULL;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(run_version(p, run, d_x, d_w, d_y, d_work, nwork, &msg), msg);
    CONV_ASSERT_OK(conv_device_download(h_y, d_y, ny, &msg), msg);
    conv_test_assert_canary(d_y, ny, "%s output on %s", run_names[run], conv_shape_name(p));
    if (mma)
        conv_test_assert_canary(d_work, nwork, "%s workspace on %s", run_names[run],
                                conv_shape_name(p));
    conv_device_free(d_work);
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
}

/* Version `run` on one shape: small integers (ints) exact against the
 * reference, or random floats within the bound of its precision; `pick`
 * chooses the inputs (the generators' start, offset by it). */
static void check_version(const conv_params *p, int run, int ints, unsigned pick)
{
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float)),
          *y = malloc(ny * sizeof(float)), *want = malloc(ny * sizeof(float));
    cr_assert(x && w && y && want);
    conv_msg msg = {{0}};
    if (ints) {
        conv_fill_small_int(x, nx, 61 + pick, -3, 3);
        conv_fill_small_int(w, nw, 62 + pick, -3, 3);
        CONV_ASSERT_OK(conv_test_host_reference(p, x, w, want, &msg), msg);
    } else {
        conv_fill_uniform(x, nx, 71 + pick, -1.0f, 1.0f);
        conv_fill_uniform(w, nw, 72 + pick, -1.0f, 1.0f);
    }
    run_gpu(p, run, x, w, y);
    const size_t depth = (size_t)p->c * p->r * p->s;
    conv_verify_report rep =
        ints ? conv_compare_exact(p, y, want, ny)
             : conv_verify_full(p, x, w, y,
                                conv_verify_bound(tc_bound_factor(precision_of(run), depth)));
    CONV_ASSERT_REPORT(rep, run_names[run], p);
    free(x);
    free(w);
    free(y);
    free(want);
}

/* Every version on every shape. Under racecheck
 * (conv_test_under_racecheck) the two tests below share the shapes, the
 * integers taking the odd ones and the floats the even ones: the values do
 * not change which threads touch what, so each launch is raced once. */
static void check_versions_over_the_shapes(int ints)
{
    conv_params t[TC_TEST_SHAPES];
    const size_t count = tc_shapes(t);
    const int racecheck = conv_test_under_racecheck();
    for (int v = 0; v < RUN_COUNT; ++v)
        for (size_t i = 0; i < count; ++i)
            if (!racecheck || (int)(i % 2) == ints)
                check_version(&t[i], v, ints, (unsigned)i);
}

Test(gpu_tensor_cores, are_exact_on_small_integers)
{
    CONV_TEST_REQUIRE_GPU();
    if (tf32_runs_here())
        check_versions_over_the_shapes(1);
}

Test(gpu_tensor_cores, stay_within_their_bounds_on_random_floats)
{
    CONV_TEST_REQUIRE_GPU();
    if (tf32_runs_here())
        check_versions_over_the_shapes(0);
}

/* How a version treats its inputs, seen exactly: only the centre tap of the
 * 3x3 filter is nonzero, one weight per channel on the diagonal,
 * w[1][1][c][k] = c == k ? w_k : 0, so every output is one product,
 * y[n][h][w][k] = x[n][h][w][k] * w_k. Once with every w_k = 1 and x of
 * telling values, once with x = 1 and w_k telling values: the output is the
 * other input as the version converts it (rounded, truncated, or 8c's big +
 * small, which gives it back), exact in float, so it must equal
 * model_term() to the bit. The bounds of the tests above cannot tell a
 * truncated input from a rounded one; this does. */
static void check_input_conversion(int run, int c)
{
    conv_params p = conv_shape_nhwc(2, c, 5, 7, c, 3, 3, 1, 1, 1);
    const size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p), ny = conv_output_elems(&p);
    float *x = malloc(nx * sizeof(float)), *w = calloc(nw, sizeof(float)),
          *y = malloc(ny * sizeof(float));
    cr_assert(x && w && y);
    for (int side = 0; side < 2; ++side) { /* 0: x telling, 1: w telling */
        for (size_t i = 0; i < nx; ++i)
            x[i] = side ? 1.0f : tc_telling_value(i);
        for (int k = 0; k < c; ++k)
            w[conv_filter_offset(&p, k, k, 1, 1)] = side ? tc_telling_value((size_t)k * 5) : 1.0f;
        run_gpu(&p, run, x, w, y);
        for (size_t at = 0; at < ny; ++at) {
            int n, k, oh, ow;
            conv_output_coords(&p, at, &n, &k, &oh, &ow);
            const float xv = x[conv_input_offset(&p, n, k, oh, ow)];
            const float wv = w[conv_filter_offset(&p, k, k, 1, 1)];
            const float want = (float)model_term(precision_of(run), xv, wv);
            cr_assert_eq(bits_of(y[at]), bits_of(want),
                         "%s (%s, C = K = %d): x = %.9g, w = %.9g gave %.9g, not %.9g",
                         run_names[run], tc_precision_name(precision_of(run)), c, xv, wv, y[at],
                         want);
        }
    }
    free(x);
    free(w);
    free(y);
}

Test(gpu_tensor_cores, convert_their_inputs_as_their_precision_says)
{
    CONV_TEST_REQUIRE_GPU();
    /* the values do tell: some round up, and truncation keeps none of them */
    int up = 0;
    for (size_t i = 0; i < 56; ++i) {
        up += tc_tf32_round(tc_telling_value(i)) != tc_tf32_truncate(tc_telling_value(i));
        cr_assert_neq(tc_tf32_truncate(tc_telling_value(i)), tc_telling_value(i));
    }
    cr_assert_eq(up, 28);
    if (!tf32_runs_here())
        return;
    for (int v = 0; v < RUN_COUNT; ++v) {
        check_input_conversion(v, 8); /* C and K multiples of 4: 16-byte copies */
        check_input_conversion(v, 5);
    }
}

/* 8b (both rows) and 8c take two stages where their usual ones do not fit
 * in a block (conv2d_tc_mma's launcher): CONV_SMEM_LIMIT_KB makes this GPU
 * one of those. 8b's three stages of 32 KB and its 2 KB table of rows need
 * 98 KB, two stages 66 KB: a cap of 80 KB; 8c's three of 16 KB need 50 KB,
 * two 34 KB: 40 KB. The same shapes, exact on
 * small integers and within the bound on random floats. */
Test(gpu_tensor_cores, mma_runs_two_stages_where_a_block_has_less_shared_memory)
{
    CONV_TEST_REQUIRE_GPU();
    if (!tf32_runs_here())
        return;
    const struct {
        int run;
        const char *cap_kb;
    } caps[] = {{RUN_8B, "80"}, {RUN_8B_XT, "80"}, {RUN_8C, "40"}};
    conv_params t[TC_TEST_SHAPES];
    const size_t count = tc_shapes(t);
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; ++c) {
        cr_assert_eq(setenv(CONV_SMEM_LIMIT_ENV, caps[c].cap_kb, 1), 0);
        for (size_t i = 0; i < count; ++i)
            for (int ints = conv_test_under_racecheck(); ints < 2; ++ints)
                check_version(&t[i], caps[c].run, ints, (unsigned)(100 + i));
    }
    cr_assert_eq(unsetenv(CONV_SMEM_LIMIT_ENV), 0);
}

/* The rows through the test helpers (setup, poison, canary, tolerance). */
Test(gpu_tensor_cores, rows_pass_the_shape_table)
{
    CONV_TEST_REQUIRE_GPU();
    if (!tf32_runs_here())
        return;
    conv_test_check_rows(conv_tc_rows, conv_test_host_reference, CONV_LAYOUT_NHWC, TC_ROW_COUNT,
                         NULL);
}

/* 8b, 8b-xt and 8c in NCHW (x[N][C][H][W], w[K][C][R][S]): on their NCHW
 * table, exact on small integers and within their bounds on random floats
 * (under racecheck, each shape once, as above). */
Test(gpu_tensor_cores, mma_runs_nchw_over_its_shapes)
{
    CONV_TEST_REQUIRE_GPU();
    if (!tf32_runs_here())
        return;
    conv_params t[TC_NCHW_TEST_SHAPES];
    const size_t count = tc_nchw_shapes(t);
    const int racecheck = conv_test_under_racecheck();
    for (int v = RUN_8B; v <= RUN_8C; ++v)
        for (size_t i = 0; i < count; ++i)
            for (int ints = 0; ints < 2; ++ints)
                if (!racecheck || (int)(i % 2) == ints)
                    check_version(&t[i], v, ints, (unsigned)(200 + i));
}

/* In NCHW, 8b and 8c in two stages, as in NHWC above (a 1x1 shape with
 * 16-byte copies and a 3x3 one with 4-byte copies); their stages are
 * 8 floats a row larger: 3 x 33 KB + 2 KB for 8b, 3 x 16.5 KB + 2 KB for 8c
 * do not fit under the caps, 2 stages do. */
Test(gpu_tensor_cores, mma_runs_two_stages_in_nchw_too)
{
    CONV_TEST_REQUIRE_GPU();
    if (!tf32_runs_here())
        return;
    const conv_params shapes[] = {conv_shape(2, 72, 12, 12, 136, 1, 1, 0, 1, 1),
                                  conv_shape(2, 37, 21, 19, 70, 3, 3, 1, 1, 1)};
    const struct {
        int run;
        const char *cap_kb;
    } caps[] = {{RUN_8B, "80"}, {RUN_8C, "40"}};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; ++c) {
        cr_assert_eq(setenv(CONV_SMEM_LIMIT_ENV, caps[c].cap_kb, 1), 0);
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
            for (int ints = conv_test_under_racecheck(); ints < 2; ++ints)
                check_version(&shapes[i], caps[c].run, ints, (unsigned)(300 + i));
    }
    cr_assert_eq(unsetenv(CONV_SMEM_LIMIT_ENV), 0);
}

/* The rows in NCHW: 8b, 8b-xt and 8c run every shape; 8a and the FP16
 * rows are skipped (their check refuses NCHW). */
Test(gpu_tensor_cores, rows_pass_the_shape_table_in_nchw)
{
    CONV_TEST_REQUIRE_GPU();
    if (!tf32_runs_here())
        return;
    conv_test_check_rows(conv_tc_rows, conv_test_host_reference, CONV_LAYOUT_NCHW, TC_ROW_COUNT,
                         "8a 8a-fp16 8b-fp16");
}

/* 8a and 8b-fp16 run NHWC only: NCHW is refused in one line before any
 * launch. */
Test(gpu_tensor_cores, refuse_nchw_before_any_launch)
{
    CONV_TEST_REQUIRE_GPU();
    const conv_params p = conv_shape(1, 2, 6, 6, 2, 3, 3, 1, 1, 1); /* NCHW */
    const size_t ny = conv_output_elems(&p);
    float *d_y = conv_test_device_output(ny, "y");
    conv_msg msg = {{0}};
    cr_assert_eq(conv2d_tc_wmma(&p, d_y, d_y, d_y, 0, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "--layout nchw");
    cr_assert_eq(conv2d_tc_mma_fp16(&p, d_y, d_y, d_y, d_y, ny, 0, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "--layout nchw");
    conv_test_assert_untouched(d_y, ny);
    conv_device_free(d_y);
}

/* The GEMM alone (08_gemm): cuBLAS with TF32 allowed and every step 08 row
 * on C = A * B as a 1x1 NHWC problem, sizes not multiples of any tile. */
Test(gpu_tensor_cores, gemm_rows_pass_on_a_ragged_gemm)
{
    CONV_TEST_REQUIRE_GPU();
    if (!tf32_runs_here())
        return;
    const long long sizes[][3] = {{70, 65, 37}, {129, 130, 9}, {1, 1, 1}, {300, 260, 68}};
    const size_t count = sizeof sizes / sizeof sizes[0];
    conv_params gemms[sizeof sizes / sizeof sizes[0]];
    for (size_t s = 0; s < count; ++s)
        gemms[s] = gemm_as_conv_params(sizes[s][0], sizes[s][1], sizes[s][2]);
    /* cuBLAS TF32, then the TC_ROW_COUNT rows of step 08 */
    conv_test_check_rows_on(gemms, count, conv_tc_gemm_rows, conv_test_host_reference,
                            CONV_LAYOUT_NHWC, TC_ROW_COUNT + 1, NULL);
}

/* mma.sync's rates (tensor_cores_peak.cu): their arguments checked before
 * any CUDA call, so on any machine. */
static const tc_peak_precision peak_precisions[] = {TC_PEAK_TF32, TC_PEAK_FP16};
static const char *const peak_names[] = {"TF32", "FP16"};
static const int peak_k[] = {8, 16}; /* the k of one product */

Test(cpu_tf32, mma_peak_refuses_bad_arguments_in_one_line)
{
    conv_msg msg = {{0}};
    float *fake = (float *)(uintptr_t)256;
    cr_assert_eq(tc_mma_peak((tc_peak_precision)2, fake, 1, 1, 0, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "precision 2");
    cr_assert_eq(tc_mma_peak((tc_peak_precision)-1, fake, 1, 1, 0, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "precision -1");
    for (int p = 0; p < 2; ++p) {
        const tc_peak_precision prec = peak_precisions[p];
        cr_assert_eq(tc_mma_peak(prec, NULL, 1, 1, 0, &msg), CONV_ERR_INVALID);
        CONV_ASSERT_ONE_LINE(msg.text, "sink");
        cr_assert_eq(tc_mma_peak(prec, fake, 0, 1, 0, &msg), CONV_ERR_INVALID);
        CONV_ASSERT_ONE_LINE(msg.text, "blocks=0");
        cr_assert_eq(tc_mma_peak(prec, fake, 1, 0, 0, &msg), CONV_ERR_INVALID);
        CONV_ASSERT_ONE_LINE(msg.text, "iters=0");
        cr_assert_eq(tc_mma_peak(prec, fake, 1, TC_PEAK_ITERS_MAX + 1, 0, &msg), CONV_ERR_INVALID);
        CONV_ASSERT_ONE_LINE(msg.text, "iters=");
        /* the sums it promises are exact in float (at most 2^24, a multiple
         * of 4 k iters: whole chains of 4 accumulators gaining k a
         * product, 8 in TF32, 16 in FP16), and they count every multiply-add
         * once: a block's sums are half its operations, whatever the number
         * of chains */
        const float most = tc_mma_peak_expected(prec, TC_PEAK_ITERS_MAX);
        cr_assert(most > 0.0f && most <= 16777216.0f, "%s: %g", peak_names[p], (double)most);
        for (int iters = 1; iters <= TC_PEAK_ITERS_MAX; iters *= 8) {
            const float sum = tc_mma_peak_expected(prec, iters);
            cr_assert_eq(fmodf(sum, 4.0f * peak_k[p] * iters), 0.0f, "%s, iters %d: %g",
                         peak_names[p], iters, (double)sum);
            cr_assert_eq(tc_mma_peak_flop(prec, 1, iters), 2.0 * tc_mma_peak_threads() * sum,
                         "%s, iters %d", peak_names[p], iters);
            cr_assert_eq(tc_mma_peak_flop(prec, 3, iters), 3.0 * tc_mma_peak_flop(prec, 1, iters));
        }
    }
    /* an FP16 product is m16n8k16, twice a TF32 one (m16n8k8) */
    for (int iters = 1; iters <= TC_PEAK_ITERS_MAX; iters *= 8) {
        cr_assert_eq(tc_mma_peak_expected(TC_PEAK_FP16, iters),
                     2.0f * tc_mma_peak_expected(TC_PEAK_TF32, iters), "iters %d", iters);
        cr_assert_eq(tc_mma_peak_flop(TC_PEAK_FP16, 5, iters),
                     2.0 * tc_mma_peak_flop(TC_PEAK_TF32, 5, iters), "iters %d", iters);
    }
}

/* Every product ran, in each precision: each thread's sum is exactly
 * tc_mma_peak_expected(prec, iters) (the sink poisoned with NaN first, its
 * canary intact after), on a grid of a few blocks and on one of more blocks
 * than the GPU holds at once; the measured rate is positive and below 4096
 * operations per clock and SM in TF32, 8192 in FP16, the densest tensor
 * cores so far (Blackwell's, through tcgen05; mma.sync reaches far less).
 * Where TF32 tensor cores do not run, the refusal is one line, before any
 * launch; FP16 runs on every GPU from compute capability 7.5, and below it
 * is refused the same way. */
Test(gpu_tensor_cores, mma_peak_runs_every_product)
{
    CONV_TEST_REQUIRE_GPU();
    int device = 0, sms = 0, clock_khz = 0, major = 0, minor = 0;
    cr_assert_eq(cudaGetDevice(&device), cudaSuccess);
    cr_assert_eq(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
    cr_assert_eq(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device), cudaSuccess);
    cr_assert_eq(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                 cudaSuccess);
    cr_assert_eq(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
                 cudaSuccess);
    const int grids[2][2] = {{3, 5}, {40 * sms, 2}}; /* blocks, iters */
    const double per_clock[] = {4096.0, 8192.0};     /* the bound, TF32 and FP16 */
    for (int p = 0; p < 2; ++p) {
        const tc_peak_precision prec = peak_precisions[p];
        int refused = 0;
        for (int g = 0; g < 2 && !refused; ++g) {
            const int blocks = grids[g][0], iters = grids[g][1];
            const size_t n = (size_t)blocks * tc_mma_peak_threads();
            float *d_sink = conv_test_device_output(n, "sink");
            conv_msg msg = {{0}};
            conv_status st = tc_mma_peak(prec, d_sink, blocks, iters, 0, &msg);
            if (st != CONV_OK) {
                cr_assert(prec == TC_PEAK_TF32 || major * 10 + minor < 75,
                          "FP16 must run on sm_%d%d: %s", major, minor, msg.text);
                cr_assert_eq(st, CONV_ERR_UNSUPPORTED, "%s", msg.text);
                CONV_ASSERT_ONE_LINE(msg.text, "mma.sync peak");
                CONV_ASSERT_ONE_LINE(msg.text, peak_names[p]);
                conv_test_assert_untouched(d_sink, n);
                conv_device_free(d_sink);
                cr_log_info("%s does not run here (%s); the refusal was checked instead",
                            peak_names[p], msg.text);
                refused = 1;
                continue;
            }
            cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
            float *h = conv_host_alloc(n);
            CONV_ASSERT_OK(conv_device_download(h, d_sink, n, &msg), msg);
            const float want = tc_mma_peak_expected(prec, iters);
            for (size_t i = 0; i < n; ++i)
                cr_assert_eq(h[i], want, "%s, thread %zu of %d blocks: %g, not %g", peak_names[p],
                             i, blocks, (double)h[i], (double)want);
            conv_test_assert_canary(d_sink, n, "the mma.sync peak's sums");
            conv_host_free(h);
            conv_device_free(d_sink);
        }
        if (refused)
            continue;
        double tflops = 0.0;
        conv_msg msg = {{0}};
        CONV_ASSERT_OK(tc_mma_peak_tflops(prec, 1, 3, &tflops, &msg), msg);
        const double most = per_clock[p] * sms * clock_khz * 1e3 / 1e12;
        cr_assert(tflops > 0.0 && tflops < most, "%s: %.1f TFLOP/s, not in (0, %.1f)",
                  peak_names[p], tflops, most);
        cr_log_info("mma.sync %s: %.1f TFLOP/s", peak_names[p], tflops);
    }
}
