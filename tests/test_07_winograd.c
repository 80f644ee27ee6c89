/* Step 07: the Winograd transforms, the host model of the whole convolution
 * and its error bound (CPU suites); the GPU convolution against the double
 * reference within that bound, exactly on small integers for F(2x2, 3x3)
 * (GPU suite). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_verify.h"
#include "winograd.h"
#include "winograd_host.h"
#include "winograd_rows.h"
#include "winograd_transforms.h"

/* Shapes Winograd takes (3x3 filters, stride 1): 1x1 and 2x2 images with
 * padding, the filter as large as the image, primes and sizes that are not a
 * multiple of either tile (2 or 4 outputs a side), one channel and many,
 * batches, padding 0, 1, 2 and different per axis. */
static size_t winograd_shapes(conv_params *t)
{
    size_t n = 0;
    t[n++] = conv_shape(1, 1, 1, 1, 1, 3, 3, 1, 1, 1);   /* 1x1 image, same padding */
    t[n++] = conv_shape(1, 2, 2, 2, 3, 3, 3, 1, 1, 1);   /* 2x2 image */
    t[n++] = conv_shape(1, 1, 3, 3, 1, 3, 3, 0, 1, 1);   /* filter = image: one output */
    t[n++] = conv_shape(2, 3, 7, 11, 5, 3, 3, 0, 1, 1);  /* primes, batch */
    t[n++] = conv_shape(1, 17, 13, 5, 4, 3, 3, 1, 1, 1); /* many channels, 13 rows */
    t[n++] = conv_shape(3, 4, 9, 10, 2, 3, 3, 2, 1, 1);  /* padding 2: output larger */
    t[n++] = conv_shape(1, 5, 16, 16, 6, 3, 3, 1, 1, 1); /* whole tiles of both sizes */
    conv_params a = conv_shape(2, 3, 6, 9, 3, 3, 3, 0, 1, 1);
    a.pad_h = 2; /* padding differs per axis */
    a.pad_w = 1;
    t[n++] = a;
    return n;
}

#define WINO_SHAPES 8

/* The host tensors of one test problem, each asserted to be made: x and w
 * filled from the start values `start` and `start + 1` (small integers, x in
 * [-4, 4] and w in [-3, 3], or uniform floats in [-1, 1)), the outputs y and
 * want poisoned with NaN; ref, ref_abs and bound (a double per output) are
 * the caller's to compute. */
typedef struct {
    size_t nx, nw, ny;
    float *x, *w, *y, *want;
    double *ref, *ref_abs, *bound;
} wino_host;

static wino_host wino_host_make(const conv_params *p, uint64_t start, int small_int)
{
    wino_host h = {0};
    h.nx = conv_input_elems(p);
    h.nw = conv_filter_elems(p);
    h.ny = conv_output_elems(p);
    h.x = malloc(h.nx * sizeof(float));
    h.w = malloc(h.nw * sizeof(float));
    h.y = malloc(h.ny * sizeof(float));
    h.want = malloc(h.ny * sizeof(float));
    h.ref = malloc(h.ny * sizeof(double));
    h.ref_abs = malloc(h.ny * sizeof(double));
    h.bound = malloc(h.ny * sizeof(double));
    cr_assert(h.x && h.w && h.y && h.want && h.ref && h.ref_abs && h.bound);
    if (small_int) {
        conv_fill_small_int(h.x, h.nx, start, -4, 4);
        conv_fill_small_int(h.w, h.nw, start + 1, -3, 3);
    } else {
        conv_fill_uniform(h.x, h.nx, start, -1.0f, 1.0f);
        conv_fill_uniform(h.w, h.nw, start + 1, -1.0f, 1.0f);
    }
    conv_fill_nan(h.y, h.ny);
    conv_fill_nan(h.want, h.ny);
    return h;
}

static void wino_host_free(wino_host *h)
{
    void *buffers[] = {h->x, h->w, h->y, h->want, h->ref, h->ref_abs, h->bound};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; ++i)
        free(buffers[i]);
}

/* The unrolled 1D transforms, applied to the unit vectors, give their
 * matrices column by column; the bound's tables must hold their absolute
 * values (so that the bound is the bound of this code). */
typedef void (*transform_1d)(const float *in, int is, float *out, int os);

static void matrix_of(transform_1d f, int rows, int cols, double *m)
{
    float e[6], col[6];
    for (int j = 0; j < cols; ++j) {
        memset(e, 0, sizeof e);
        e[j] = 1.0f;
        f(e, 1, col, 1);
        for (int i = 0; i < rows; ++i)
            m[i * cols + j] = col[i];
    }
}

/* y[i] = sum_j d[i + j] g[j] for m outputs (the correlation), exactly in double. */
static void correlate(const double *d, const double *g, int m, double *y)
{
    for (int i = 0; i < m; ++i)
        y[i] = d[i] * g[0] + d[i + 1] * g[1] + d[i + 2] * g[2];
}

/* A^T [ (G g) .* (B^T d) ] with the three matrices read off the code, in double. */
static void winograd_1d(const double *at, const double *g_m, const double *bt, int m, int alpha,
                        const double *d, const double *g, double *y)
{
    double u[6], v[6];
    for (int i = 0; i < alpha; ++i) {
        u[i] = g_m[i * 3] * g[0] + g_m[i * 3 + 1] * g[1] + g_m[i * 3 + 2] * g[2];
        v[i] = 0;
        for (int j = 0; j < alpha; ++j)
            v[i] += bt[i * alpha + j] * d[j];
    }
    for (int i = 0; i < m; ++i) {
        y[i] = 0;
        for (int j = 0; j < alpha; ++j)
            y[i] += at[i * alpha + j] * u[j] * v[j];
    }
}

Test(cpu_winograd_transforms, compute_the_correlation_with_the_matrices_of_the_code)
{
    struct {
        transform_1d filter, input, output;
        int m;
    } f[2] = {{wino_f2_filter_1d, wino_f2_input_1d, wino_f2_output_1d, 2},
              {wino_f4_filter_1d, wino_f4_input_1d, wino_f4_output_1d, 4}};
    for (int t = 0; t < 2; ++t) {
        const int m = f[t].m, alpha = m + 2;
        double g_m[6 * 3], bt[6 * 6], at[4 * 6];
        matrix_of(f[t].filter, alpha, 3, g_m);
        matrix_of(f[t].input, alpha, alpha, bt);
        matrix_of(f[t].output, m, alpha, at);
        for (int trial = 0; trial < 200; ++trial) {
            double d[6], g[3], y[4], want[4];
            for (int j = 0; j < alpha; ++j)
                d[j] = (double)((int)(conv_rng_hash(7, (uint64_t)(trial * 16 + j)) % 19) - 9);
            for (int j = 0; j < 3; ++j)
                g[j] = (double)((int)(conv_rng_hash(8, (uint64_t)(trial * 16 + j)) % 19) - 9);
            winograd_1d(at, g_m, bt, m, alpha, d, g, y);
            correlate(d, g, m, want);
            for (int i = 0; i < m; ++i) /* exact but for G's 1/6, 1/12, 1/24 rounded to float */
                cr_assert(fabs(y[i] - want[i]) <= 1e-5 * (1 + fabs(want[i])),
                          "F(%d,3) trial %d: y[%d] = %.9g, want %.9g", m, trial, i, y[i], want[i]);
        }
    }
}

/* F(2x2, 3x3) on every shape of the table in both layouts, small integers:
 * the host model (on_gpu 0) or the GPU pipeline equals the double reference
 * rounded to float (step 01's result; an oracle no exercise touches). */
static void f2_exact_over_the_shapes(int on_gpu);

Test(cpu_winograd_transforms, f2_is_exact_on_small_integers)
{
    /* F(2,3)'s constants are 0, 1 and 1/2: on small integers every
     * intermediate is a multiple of 1/2 that float holds exactly, so the
     * whole convolution equals step 01's. */
    f2_exact_over_the_shapes(0);
}

/* The host model of tile t on p with random floats in [-1, 1]: every output
 * within wino_error_bound of the double reference. Returns the largest
 * error / bound and the largest bound / (gamma_{9C} sum |x*w|), the factor by
 * which the transforms widen the direct convolution's bound. */
static void check_within_bound(conv_params p, wino_tile t, uint64_t start, double *worst,
                               double *widening)
{
    wino_host h = wino_host_make(&p, start, 0);
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(wino_conv_host(&p, t, h.x, h.w, h.y, &msg), msg);
    CONV_ASSERT_OK(wino_error_bound(&p, t, h.x, h.w, h.bound, &msg), msg);
    conv_reference_double(&p, h.x, h.w, h.ref, h.ref_abs);
    const double direct = conv_gamma((size_t)p.c * 9);
    conv_verify_report rep = conv_report_init();
    for (size_t i = 0; i < h.ny; ++i) {
        const double err = fabs((double)h.y[i] - h.ref[i]);
        conv_report_add(&rep, i, h.y[i], h.ref[i], h.bound[i], 0);
        if (h.bound[i] > 0) {
            *worst = fmax(*worst, err / h.bound[i]);
            if (h.ref_abs[i] > 0)
                *widening = fmax(*widening, h.bound[i] / (direct * h.ref_abs[i]));
        }
    }
    conv_report_finish(&rep);
    CONV_ASSERT_REPORT(rep, wino_tile_name(t), &p);
    wino_host_free(&h);
}

Test(cpu_winograd, stays_within_its_error_bound_on_random_floats)
{
    conv_params t[2 * WINO_SHAPES];
    const size_t count = conv_test_both_layouts(t, winograd_shapes(t));
    double widening[2] = {0, 0};
    for (int f = 0; f < 2; ++f) {
        double worst = 0;
        for (size_t j = 0; j < count; ++j)
            check_within_bound(t[j], (wino_tile)f, 100 + j / 2, &worst, &widening[f]);
        cr_log_info("%s: largest error / bound %.3g, bound up to %.3g times the direct one",
                    wino_tile_name((wino_tile)f), worst, widening[f]);
        cr_assert_lt(worst, 1.0);
    }
    /* The larger tile's constants widen the bound more. */
    cr_assert_gt(widening[WINO_F4], widening[WINO_F2], "F(4x4) %.3g, F(2x2) %.3g",
                 widening[WINO_F4], widening[WINO_F2]);
}

Test(cpu_winograd, bound_catches_a_wrong_filter_value)
{
    /* One filter tap off by one part in a thousand (a transform constant
     * typed wrong does the same to every tap it multiplies): outputs of that
     * filter leave the bound, so the bound can fail. */
    for (int f = 0; f < 2; ++f) {
        conv_params p = conv_shape(1, 4, 12, 12, 2, 3, 3, 1, 1, 1);
        wino_host h = wino_host_make(&p, 5, 0);
        conv_msg msg = {{0}};
        CONV_ASSERT_OK(wino_error_bound(&p, (wino_tile)f, h.x, h.w, h.bound, &msg), msg);
        conv_reference_double(&p, h.x, h.w, h.ref, NULL);
        h.w[conv_filter_offset(&p, 0, 0, 1, 1)] *= 1.001f;
        CONV_ASSERT_OK(wino_conv_host(&p, (wino_tile)f, h.x, h.w, h.y, &msg), msg);
        size_t outside = 0;
        for (size_t i = 0; i < h.ny; ++i)
            outside += fabs((double)h.y[i] - h.ref[i]) > h.bound[i];
        cr_assert_gt(outside, 0, "%s: no output left the bound", wino_tile_name((wino_tile)f));
        wino_host_free(&h);
    }
}

/* The bound at one output, from its tile alone, is the table's entry; the
 * tolerance a row verifies within (wino_tolerance_prepare) gives the table's
 * entry when every output is verified, the tile's bound otherwise. */
Test(cpu_winograd, bound_at_one_output_is_the_table_s_entry)
{
    conv_params t[2 * WINO_SHAPES];
    const size_t count = conv_test_both_layouts(t, winograd_shapes(t));
    wino_tolerance table = {0}, tile = {0};
    for (int f = 0; f < 2; ++f)
        for (size_t j = 0; j < count; ++j) {
            const conv_params p = t[j];
            wino_host h = wino_host_make(&p, 41 + j / 2, 0);
            conv_msg msg = {{0}};
            CONV_ASSERT_OK(wino_error_bound(&p, (wino_tile)f, h.x, h.w, h.bound, &msg), msg);
            conv_verify_opts full, sampled;
            CONV_ASSERT_OK(
                wino_tolerance_prepare(&table, &p, (wino_tile)f, h.x, h.w, 1, &full, &msg), msg);
            CONV_ASSERT_OK(
                wino_tolerance_prepare(&tile, &p, (wino_tile)f, h.x, h.w, 0, &sampled, &msg), msg);
            cr_assert(table.bound != NULL && tile.bound == NULL);
            for (size_t o = 0; o < h.ny; ++o) {
                int n, k, oh, ow;
                conv_output_coords(&p, o, &n, &k, &oh, &ow);
                const double at = wino_error_bound_point(&p, (wino_tile)f, h.x, h.w, n, k, oh, ow);
                const double entry = h.bound[o];
                cr_assert(fabs(at - entry) <= 1e-12 * entry && entry > 0.0,
                          "%s on %s: output %zu: %.17g from its tile, %.17g in the table",
                          wino_tile_name((wino_tile)f), conv_shape_name(&p), o, at, entry);
                cr_assert(full.point_tol(full.point_ctx, n, k, oh, ow) == entry &&
                              sampled.point_tol(sampled.point_ctx, n, k, oh, ow) == at,
                          "%s on %s: output %zu: the tolerance is not the bound",
                          wino_tile_name((wino_tile)f), conv_shape_name(&p), o);
            }
            wino_tolerance_free(&table);
            wino_tolerance_free(&tile);
            cr_assert(table.bound == NULL && table.x == NULL && table.w == NULL);
            wino_host_free(&h);
        }
}

Test(cpu_winograd, bound_tables_are_the_code_s_matrices)
{
    /* The bound uses |B^T|, |G|, |A^T| as tables; read the signed matrices
     * off the unrolled transforms and compare (F(2,3) on a 4x4 tile of ones:
     * the bound's bracket is then a sum of the tables' entries). Checked
     * through the bound of a 4x4 all-ones problem: one tile, one channel. */
    conv_params p = conv_shape(1, 1, 4, 4, 1, 3, 3, 0, 1, 1);
    float x[16], w[9];
    for (int i = 0; i < 16; ++i)
        x[i] = 1.0f;
    for (int i = 0; i < 9; ++i)
        w[i] = 1.0f;
    double bound[4];
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(wino_error_bound(&p, WINO_F2, x, w, bound, &msg), msg);
    double g_m[4 * 3], bt[4 * 4], at[2 * 4];
    matrix_of(wino_f2_filter_1d, 4, 3, g_m);
    matrix_of(wino_f2_input_1d, 4, 4, bt);
    matrix_of(wino_f2_output_1d, 2, 4, at);
    /* With all-ones inputs: |G| 1 |G^T| = (row sums of |G|) outer itself, the
     * same for |B^T|, so bracket(i, j) = sum_a sum_b |A^T|ia |A^T|jb
     * gs_a gs_b bs_a bs_b, with gs, bs the row sums of |G| and |B^T|. */
    double gs[4] = {0}, bs[4] = {0};
    for (int a = 0; a < 4; ++a) {
        for (int j = 0; j < 3; ++j)
            gs[a] += fabs(g_m[a * 3 + j]);
        for (int j = 0; j < 4; ++j)
            bs[a] += fabs(bt[a * 4 + j]);
    }
    const double gamma = conv_gamma(wino_error_roundings(WINO_F2, 1));
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
            double want = 0;
            for (int a = 0; a < 4; ++a)
                for (int b = 0; b < 4; ++b)
                    want +=
                        fabs(at[i * 4 + a]) * fabs(at[j * 4 + b]) * gs[a] * gs[b] * bs[a] * bs[b];
            cr_assert(fabs(bound[i * 2 + j] - gamma * want) <= 1e-12 * gamma * want,
                      "bound[%d][%d] = %.17g, want %.17g", i, j, bound[i * 2 + j], gamma * want);
        }
}

Test(cpu_winograd, takes_3x3_stride_1_only_and_says_why_in_one_line)
{
    conv_msg msg = {{0}};
    conv_params ok = conv_shape_nhwc(2, 3, 5, 7, 4, 3, 3, 2, 1, 1);
    CONV_ASSERT_OK(wino_supports(&ok, WINO_F4, &msg), msg);
    const conv_params bad[] = {
        conv_shape(1, 1, 8, 8, 1, 5, 5, 0, 1, 1), conv_shape(1, 1, 8, 8, 1, 3, 1, 0, 1, 1),
        conv_shape(1, 1, 8, 8, 1, 3, 3, 0, 2, 1), conv_shape(1, 1, 8, 8, 1, 3, 3, 0, 1, 2)};
    const char *const flag[] = {"--r 5 --s 5:", "--r 3 --s 1:", "--stride 2x2:", "--dilation 2x2:"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        conv_status st = wino_supports(&bad[i], WINO_F2, &msg);
        cr_assert_eq(st, CONV_ERR_UNSUPPORTED, "%s", conv_shape_name(&bad[i]));
        CONV_ASSERT_ONE_LINE(msg.text, "needs a 3x3 filter, stride 1 and dilation 1");
        cr_assert(strncmp(msg.text, flag[i], strlen(flag[i])) == 0, "'%s' does not start with '%s'",
                  msg.text, flag[i]);
    }
    conv_params invalid = conv_shape(1, 1, 2, 2, 1, 3, 3, 0, 1, 1); /* filter larger */
    cr_assert_eq(wino_supports(&invalid, WINO_F2, &msg), CONV_ERR_INVALID);
    /* 5x7 with padding 2: a 7x9 output, 2x3 tiles of 4x4 or 4x5 tiles of 2x2 */
    cr_assert_eq(wino_tiles(&ok, WINO_F4), 2 * 3);
    cr_assert_eq(wino_tiles(&ok, WINO_F2), 4 * 5);
}

/* ---- GPU ---------------------------------------------------------------- */

/* The GPU versions of step 07: the non-fused pipeline with each tile, and
 * the fused F(4x4, 3x3). */
enum { RUN_F2, RUN_F4, RUN_F4_FUSED, RUN_COUNT };
static const char *const run_names[RUN_COUNT] = {"7a F(2x2,3x3)", "7b F(4x4,3x3)",
                                                 "7c fused F(4x4,3x3)"};

static wino_tile tile_of(int run)
{
    return run == RUN_F2 ? WINO_F2 : WINO_F4;
}

/* Version `run` on p with the host inputs h_x, h_w: the output poisoned with
 * NaN before, the canaries after the output and the workspace checked after.
 * Writes the result to h_y; returns the launcher's status (the test fails on
 * any other error than `expect`). */
static conv_status run_gpu_status(const conv_params *p, int run, const float *h_x, const float *h_w,
                                  float *h_y, conv_status expect)
{
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    const size_t nwork =
        run == RUN_F4_FUSED ? wino_fused_workspace_elems(p) : wino_workspace_elems(p, tile_of(run));
    float *d_x = conv_test_device_copy(h_x, nx, "x");
    float *d_w = conv_test_device_copy(h_w, nw, "w");
    float *d_y = conv_test_device_output(ny, "y");
    float *d_work = conv_test_device_output(nwork, "workspace");
    conv_msg msg = {{0}};
    conv_status st = run == RUN_F4_FUSED
                         ? conv2d_winograd_fused(p, d_x, d_w, d_y, d_work, nwork, 0, &msg)
                         : conv2d_winograd(p, tile_of(run), d_x, d_w, d_y, d_work, nwork, 0, &msg);
    if (st != expect)
        cr_assert_fail("%s on %s: %s", run_names[run], conv_shape_name(p), msg.text);
    if (st == CONV_OK) {
        CONV_ASSERT_OK(conv_device_download(h_y, d_y, ny, &msg), msg);
        conv_test_assert_canary(d_y, ny, "%s output on %s", run_names[run], conv_shape_name(p));
        conv_test_assert_canary(d_work, nwork, "%s workspace on %s", run_names[run],
                                conv_shape_name(p));
    }
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
    conv_device_free(d_work);
    return st;
}

static void run_gpu(const conv_params *p, int run, const float *h_x, const float *h_w, float *h_y)
{
    run_gpu_status(p, run, h_x, h_w, h_y, CONV_OK);
}

static void f2_exact_over_the_shapes(int on_gpu)
{
    conv_params t[2 * WINO_SHAPES];
    const size_t count = conv_test_both_layouts(t, winograd_shapes(t));
    for (size_t j = 0; j < count; ++j) {
        const conv_params p = t[j];
        wino_host h = wino_host_make(&p, 11 + j / 2, 1);
        conv_msg msg = {{0}};
        CONV_ASSERT_OK(conv_test_host_reference(&p, h.x, h.w, h.want, &msg), msg);
        if (on_gpu)
            run_gpu(&p, RUN_F2, h.x, h.w, h.y);
        else
            CONV_ASSERT_OK(wino_conv_host(&p, WINO_F2, h.x, h.w, h.y, &msg), msg);
        conv_verify_report rep = conv_compare_exact(&p, h.y, h.want, h.ny);
        CONV_ASSERT_REPORT(rep,
                           on_gpu ? "F(2x2,3x3) on the GPU, small integers"
                                  : "F(2x2,3x3) host model, small integers",
                           &p);
        wino_host_free(&h);
    }
}

Test(gpu_winograd, f2_equals_step_01_exactly_on_small_integers)
{
    CONV_TEST_REQUIRE_GPU();
    f2_exact_over_the_shapes(1);
}

Test(gpu_winograd, every_version_stays_within_the_bound_on_random_floats)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params t[2 * (WINO_SHAPES + 3)];
    size_t count = winograd_shapes(t);
    /* and larger ones: where the GEMM takes its float4 path (C and T
     * multiples of 4) and where it does not; for the fused kernel, several
     * blocks of output channels and of tiles, each with a partial last one,
     * and a partial last chunk of channels */
    t[count++] = conv_shape(2, 8, 30, 30, 12, 3, 3, 1, 1, 1);
    t[count++] = conv_shape(1, 7, 33, 21, 9, 3, 3, 1, 1, 1);
    t[count++] = conv_shape(2, 11, 19, 23, 37, 3, 3, 1, 1, 1);
    count = conv_test_both_layouts(t, count);
    const size_t last = conv_test_under_sanitizer() ? 2 * (WINO_SHAPES + 1) : count;
    for (int f = 0; f < RUN_COUNT; ++f)
        for (size_t j = 0; j < last; ++j) {
            const conv_params p = t[j];
            wino_host h = wino_host_make(&p, 31 + j / 2, 0);
            conv_msg msg = {{0}};
            CONV_ASSERT_OK(wino_error_bound(&p, tile_of(f), h.x, h.w, h.bound, &msg), msg);
            conv_reference_double(&p, h.x, h.w, h.ref, NULL);
            run_gpu(&p, f, h.x, h.w, h.y);
            conv_verify_report rep = conv_report_init();
            for (size_t o = 0; o < h.ny; ++o)
                conv_report_add(&rep, o, h.y[o], h.ref[o], h.bound[o], 0);
            conv_report_finish(&rep);
            CONV_ASSERT_REPORT(rep, run_names[f], &p);
            wino_host_free(&h);
        }
}

Test(gpu_winograd, rejects_what_it_cannot_compute_before_any_launch)
{
    CONV_TEST_REQUIRE_GPU();
    const conv_params p5 = conv_shape(1, 2, 8, 8, 2, 5, 5, 0, 1, 1); /* 5x5 filter */
    const conv_params p3 = conv_shape(1, 2, 8, 8, 2, 3, 3, 0, 1, 1); /* the larger output */
    const size_t ny = conv_output_elems(&p3);
    float *d_y = conv_test_device_output(ny, "y");
    float *d_work = conv_test_device_output(16, "workspace");
    const float *d_any = d_work;
    conv_msg msg = {{0}};
    cr_assert_eq(conv2d_winograd(&p5, WINO_F2, d_any, d_any, d_y, d_work, 16, 0, &msg),
                 CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "needs a 3x3 filter");
    cr_assert_eq(conv2d_winograd(&p3, WINO_F4, d_any, d_any, d_y, d_work, 16, 0, &msg),
                 CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "the workspace holds 16 floats");
    cr_assert_eq(conv2d_winograd_fused(&p5, d_any, d_any, d_y, d_work, 16, 0, &msg),
                 CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "needs a 3x3 filter");
    cr_assert_eq(conv2d_winograd_fused(&p3, d_any, d_any, d_y, d_work, 16, 0, &msg),
                 CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "the workspace holds 16 floats");
    /* nothing ran: the output still holds its NaN poison */
    conv_test_assert_untouched(d_y, ny);
    conv_device_free(d_y);
    conv_device_free(d_work);
}

/* The fused kernel takes 8 channels per chunk where a block may have 54 KB
 * of shared memory and 4 below that; both sum the channels in the same order,
 * so their results are the same bits. Below 27 KB it refuses, with the limit,
 * before any launch. */
Test(gpu_winograd, fused_gives_the_same_bits_with_the_smaller_chunk_and_names_the_limit)
{
    CONV_TEST_REQUIRE_GPU();
    const conv_params p = conv_shape(2, 13, 17, 22, 35, 3, 3, 1, 1, 1);
    wino_host h = wino_host_make(&p, 51, 0);
    const size_t ny = h.ny;
    cr_assert_eq(unsetenv(CONV_SMEM_LIMIT_ENV), 0);
    run_gpu(&p, RUN_F4_FUSED, h.x, h.w, h.want);           /* 8-channel chunks */
    cr_assert_eq(setenv(CONV_SMEM_LIMIT_ENV, "32", 1), 0); /* 27 KB fits, 54 KB does not */
    run_gpu(&p, RUN_F4_FUSED, h.x, h.w, h.y);              /* 4-channel chunks */
    conv_verify_report rep = conv_compare_exact(&p, h.y, h.want, ny);
    CONV_ASSERT_REPORT(rep, "fused F(4x4,3x3), 4-channel chunks against 8", &p);

    cr_assert_eq(setenv(CONV_SMEM_LIMIT_ENV, "16", 1), 0);
    conv_msg msg = {{0}};
    const size_t nwork = wino_fused_workspace_elems(&p);
    float *d_y = conv_test_device_output(ny, "y");
    float *d_work = conv_test_device_output(nwork, "workspace");
    cr_assert_eq(conv2d_winograd_fused(&p, d_work, d_work, d_y, d_work, nwork, 0, &msg),
                 CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "wino_fused_kernel: needs 27.0 KB of shared memory");
    conv_test_assert_untouched(d_y, ny);
    cr_assert_eq(unsetenv(CONV_SMEM_LIMIT_ENV), 0);
    conv_device_free(d_y);
    conv_device_free(d_work);
    wino_host_free(&h);
}

/* The rows (winograd_rows.h) as every program measures them: the usual shapes
 * of every step and this step's own, in both layouts, each within its own
 * bound on small integers and on floats (conv_test_check_row); shapes other
 * than 3x3 stride 1 skipped. */
static void check_rows_on(conv_layout layout)
{
    conv_test_check_rows(conv_winograd_rows, conv_test_host_reference, layout, WINO_ROW_COUNT, "*");
    conv_params t[WINO_SHAPES];
    const size_t count = winograd_shapes(t);
    conv_test_check_rows_on(t, count, conv_winograd_rows, conv_test_host_reference, layout,
                            WINO_ROW_COUNT, NULL);
}

Test(gpu_winograd_rows, pass_the_shape_tables_in_nchw)
{
    CONV_TEST_REQUIRE_GPU();
    check_rows_on(CONV_LAYOUT_NCHW);
}

Test(gpu_winograd_rows, pass_the_shape_tables_in_nhwc)
{
    CONV_TEST_REQUIRE_GPU();
    check_rows_on(CONV_LAYOUT_NHWC);
}

/* Through the harness (conv_rows_run): verified within the bound, timed, the
 * four stage times in the verdict and in conv_winograd_row_stages; a 5x5
 * problem skipped with the reason. */
Test(gpu_winograd_rows, measure_verify_and_split_their_time_into_stages)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params p = conv_shape(2, 9, 21, 18, 7, 3, 3, 1, 1, 1);
    conv_row r[WINO_ROW_COUNT];
    cr_assert_eq(conv_winograd_rows(&p, NULL, r, WINO_ROW_COUNT), WINO_ROW_COUNT);
    cr_assert_eq(conv_rows_check(r, WINO_ROW_COUNT, &p, NULL, 0), WINO_ROW_COUNT);
    conv_gpu_problem pb = conv_test_device_problem(p, 5);
    conv_run_opts o = {.warmup = 1, .repeat = 3, .host_warmup = 0, .host_repeat = 1};
    double ref_ms[CONV_MAX_REFS] = {0};
    cr_assert_eq(conv_rows_run(&pb, r, WINO_ROW_COUNT, &o, ref_ms), 0);
    for (int k = 0; k < WINO_ROW_COUNT; ++k) {
        cr_assert_eq(r[k].state, CONV_ROW_OK, "%s: %s %s", r[k].name, r[k].res.verdict, r[k].why);
        cr_assert(strstr(r[k].res.verdict, "filter") &&
                      strstr(r[k].res.verdict, k == 2 ? "fused" : "GEMMs"),
                  "%s", r[k].res.verdict);
        wino_tile t;
        int fused;
        double ms[WINO_STAGE_COUNT];
        cr_assert(conv_winograd_row_stages(&r[k], &t, &fused, ms));
        cr_assert_eq(t, k == 2 ? WINO_F4 : (wino_tile)k);
        cr_assert_eq(fused, k == 2);
        for (int s = 0; s < (fused ? 2 : WINO_STAGE_COUNT); ++s)
            cr_assert(ms[s] > 0.0 && isfinite(ms[s]), "%s: stage %d took %g ms", r[k].name, s,
                      ms[s]);
    }
    conv_gpu_problem_destroy(&pb);

    conv_params p5 = conv_shape(1, 2, 9, 9, 2, 5, 5, 2, 1, 1);
    cr_assert_eq(conv_winograd_rows(&p5, NULL, r, WINO_ROW_COUNT), WINO_ROW_COUNT);
    char why[CONV_MSG_LEN] = "";
    cr_assert_eq(conv_rows_check(r, WINO_ROW_COUNT, &p5, why, sizeof why), 0);
    cr_assert(strstr(why, "needs a 3x3 filter") != NULL, "%s", why);
    for (int k = 0; k < WINO_ROW_COUNT; ++k)
        cr_assert_eq(r[k].state, CONV_ROW_SKIPPED);
}

/* The tolerance a row gives the harness can fail: one output moved by a
 * little more than its bound is caught. */
Test(gpu_winograd_rows, tolerance_catches_an_output_just_outside_it)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params p = conv_shape(1, 4, 10, 10, 3, 3, 3, 1, 1, 1);
    conv_row r[WINO_ROW_COUNT];
    conv_winograd_rows(&p, NULL, r, WINO_ROW_COUNT);
    conv_gpu_problem pb = conv_test_device_problem(p, 9);
    for (int k = 0; k < WINO_ROW_COUNT; ++k) {
        conv_test_run_row(&pb, &r[k], r[k].name);
        conv_verify_report rep = conv_test_verify_row(&r[k], &pb);
        CONV_ASSERT_REPORT(rep, r[k].name, &p);
        const size_t at = conv_output_offset(&p, 0, 1, 4, 5);
        const wino_tile t = k == 2 ? WINO_F4 : (wino_tile)k;
        const double bound = wino_error_bound_point(&p, t, pb.h_x, pb.h_w, 0, 1, 4, 5);
        double want;
        conv_reference_point(&p, pb.h_x, pb.h_w, 0, 1, 4, 5, &want, NULL);
        pb.h_y[at] = (float)(want + 2.0 * bound + 1e-6);
        rep = conv_test_verify_row(&r[k], &pb);
        cr_assert(!rep.passed && rep.first_index == (long long)at, "%s: moved output passed",
                  r[k].name);
    }
    conv_gpu_problem_destroy(&pb);
}
