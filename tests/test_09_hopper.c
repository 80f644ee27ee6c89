/* Step 09: which problems a TMA tensor map describes and how 9c splits a
 * sum, on the host; on the GPU, 9a, 9b and 9c exact on small integers
 * (which TF32 holds exactly) and within their bound (x truncated to TF32) on
 * random floats over step 08's shape table, each input converted as that
 * bound says, 9b's and 9c's persistent blocks walking many work items, 9c's
 * sums the same bits on every run and its workspace checked, and the rows
 * (the GEMM rows too); or, on a GPU or a build without wgmma (compute
 * capability 9.0, sm_90a code), refused with the reason before any launch. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_verify.h"
#include "hopper.h"
#include "hopper_rows.h"
#include "im2col_gemm_rows.h"
#include "tc_host.h"
#include "test_08_shapes.h"

/* ---- host ---------------------------------------------------------------- */

Test(cpu_hopper, tma_takes_the_problems_a_tensor_map_describes)
{
    const float *x = (const float *)(uintptr_t)256, *w = (const float *)(uintptr_t)512;
    const float *y = (const float *)(uintptr_t)1024;
    conv_params p = conv_shape_nhwc(128, 128, 100, 100, 128, 3, 3, 1, 1, 1);
    cr_assert(tc_tma_fits(&p, x, w, y), "hpc101's problem");
    conv_params q = p;
    q.c = 3; /* rows of 12 bytes */
    cr_assert_not(tc_tma_fits(&q, x, w, y));
    q = p, q.k = 6;
    cr_assert_not(tc_tma_fits(&q, x, w, y));
    cr_assert_not(tc_tma_fits(&p, x + 1, w, y), "x not 16-byte aligned");
    cr_assert_not(tc_tma_fits(&p, x, w + 2, y), "w not 16-byte aligned");
    cr_assert_not(tc_tma_fits(&p, x, w, y + 3), "y not 16-byte aligned");
    q = p, q.stride_w = 9;
    cr_assert_not(tc_tma_fits(&q, x, w, y));
    q.stride_w = 8;
    cr_assert(tc_tma_fits(&q, x, w, y));
    /* window corners from -pad to pad - (R - 1) * dil_h: each in [-128, 127] */
    q = p, q.pad_h = 129, q.r = 259; /* -129, -129 */
    cr_assert_not(tc_tma_fits(&q, x, w, y));
    q.pad_h = 128; /* -128, -130 */
    cr_assert_not(tc_tma_fits(&q, x, w, y));
    q.r = 257; /* -128, -128 */
    cr_assert(tc_tma_fits(&q, x, w, y));
    q = p, q.dil_w = 65; /* -1, 1 - 130 */
    cr_assert_not(tc_tma_fits(&q, x, w, y));
    q.dil_w = 64; /* -1, 1 - 128 */
    cr_assert(tc_tma_fits(&q, x, w, y));
    q = p, q.pad_w = 128, q.s = 1; /* -128, 128 */
    cr_assert_not(tc_tma_fits(&q, x, w, y));
    q.pad_w = 127; /* -127, 127 */
    cr_assert(tc_tma_fits(&q, x, w, y));
}

/* The rows: their keys and names, nothing run. */
Test(cpu_hopper, rows_are_named_by_their_keys)
{
    const conv_params p = conv_shape_nhwc(1, 8, 9, 9, 8, 3, 3, 1, 1, 1);
    const char *const named[][2] = {{"9a", "9a wgmma TF32"},
                                    {"9b", "9b wgmma TF32, TMA"},
                                    {"9c", "9c wgmma TF32, TMA, split-K"},
                                    {"9a-fp16", "9a-fp16 wgmma FP16"},
                                    {"9b-fp16", "9b-fp16 wgmma FP16, TMA"}};
    conv_test_assert_rows(conv_hopper_rows, &p, named, HOPPER_ROW_COUNT);
}

/* 9c's rule: one wave of work items, slices at least TC9C_MIN_SLICE_STAGES
 * deep, each slice an output's worth of workspace. */
Test(cpu_hopper, split_rule_fills_one_wave)
{
    /* ResNet-50's layer4.0.conv2 at batch 32: 7 x 4 = 28 tiles of 256 x 128,
     * 9 taps x 16 slices of 32 channels = 144 stages */
    conv_params p = conv_shape_nhwc(32, 512, 14, 14, 512, 3, 3, 1, 2, 1);
    const size_t out = conv_output_elems(&p) * sizeof(float);
    cr_assert_eq(conv2d_tc_tma_splits(&p, 132), 4);
    cr_assert_eq(conv2d_tc_tma_splits(&p, 56), 2);
    cr_assert_eq(conv2d_tc_tma_splits(&p, 55), 1, "55 / 28 = 1 slice");
    /* at most TC9C_MAX_SPLITS = 16 asked: spans of 144 / 16 = 9 stages, made
     * even (10), so 15 slices */
    cr_assert_eq(conv2d_tc_tma_splits(&p, 10000), 15);
    cr_assert_eq(conv2d_tc_tma_split_workspace(&p, 4), 4 * out);
    cr_assert_eq(conv2d_tc_tma_split_workspace(&p, 1), 0);
    cr_assert_eq(conv2d_tc_tma_split_workspace(&p, 0), 0);
    /* asked for more than TC9C_MAX_SPLITS: as 16, so 15 slices */
    cr_assert_eq(conv2d_tc_tma_split_workspace(&p, 1000), 15 * out);
    /* 1x1, C = 64: 2 stages, too shallow to split whatever the SMs */
    conv_params q = conv_shape_nhwc(1, 64, 7, 7, 64, 1, 1, 0, 1, 1);
    cr_assert_eq(conv2d_tc_tma_splits(&q, 132), 1);
    cr_assert_eq(conv2d_tc_tma_split_workspace(&q, 8), 0, "2 stages: one slice");
    /* 1x1, C = 256: 8 stages; slices of 2: 4 at most, 3 asked give spans 4, 4 */
    q.c = 256;
    cr_assert_eq(conv2d_tc_tma_splits(&q, 132), 1, "8 stages: one slice of 8");
    cr_assert_eq(conv2d_tc_tma_split_workspace(&q, 3), 2 * conv_output_elems(&q) * sizeof(float));
    cr_assert_eq(conv2d_tc_tma_split_workspace(&q, 9), 4 * conv_output_elems(&q) * sizeof(float));
    /* hpc101-nhwc: 40,000 tiles */
    q = conv_shape_nhwc(128, 128, 100, 100, 128, 3, 3, 1, 1, 1);
    cr_assert_eq(conv2d_tc_tma_splits(&q, 132), 1);
    /* no tensor map (C = 6), or no problem: no workspace, one slice */
    q = p, q.c = 6;
    cr_assert_eq(conv2d_tc_tma_split_workspace(&q, 4), 0);
    cr_assert_eq(conv2d_tc_tma_splits(NULL, 132), 1);
    cr_assert_eq(conv2d_tc_tma_splits(&p, 0), 1);
    cr_assert_eq(conv2d_tc_tma_split_workspace(NULL, 4), 0);
}

/* NCHW is refused by step 08's checks, in one line and before any CUDA call
 * (the pointers are never used). */
Test(cpu_hopper, refuse_nchw_in_one_line)
{
    const conv_params p = conv_shape(1, 8, 8, 8, 8, 3, 3, 1, 1, 1); /* NCHW */
    float *fake = (float *)(uintptr_t)256;
    conv_msg msg = {{0}};
    cr_assert_eq(conv2d_tc_wgmma(&p, fake, fake, fake, 0, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "--layout nchw");
    cr_assert_eq(conv2d_tc_tma(&p, fake, fake, fake, 0, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "--layout nchw");
}

/* ---- GPU ----------------------------------------------------------------- */

/* A launcher of the step: 9a or 9b. */
typedef conv_status (*hopper_launcher)(const conv_params *p, const float *d_x, const float *d_w,
                                       float *d_y, cudaStream_t stream, conv_msg *msg);

/* Whether `launch` runs on this GPU and this build. When it does not, it
 * must say so in one line naming wgmma before any launch (asserted here: the
 * output keeps its NaN poison), and the caller has nothing more to check. */
static int runs_here(hopper_launcher launch)
{
    conv_params p = conv_shape_nhwc(1, 4, 5, 5, 4, 3, 3, 1, 1, 1);
    const size_t ny = conv_output_elems(&p);
    float *d_x = conv_test_device_output(conv_input_elems(&p), "x"); /* NaNs: values unused */
    float *d_w = conv_test_device_output(conv_filter_elems(&p), "w");
    float *d_y = conv_test_device_output(ny, "y");
    conv_msg msg = {{0}};
    conv_status st = launch(&p, d_x, d_w, d_y, 0, &msg);
    if (st == CONV_OK)
        cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    else {
        cr_assert_eq(st, CONV_ERR_UNSUPPORTED, "%s", msg.text);
        CONV_ASSERT_ONE_LINE(msg.text, "wgmma");
        conv_test_assert_untouched(d_y, ny);
        cr_log_info("does not run here (%s); the refusal was checked instead", msg.text);
    }
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
    return st == CONV_OK;
}

/* 9a and 9b run (and so 9c, 9b's kernel): compute capability 9.0, sm_90a
 * code, their shared memory. */
static int wgmma_runs_here(void)
{
    return runs_here(conv2d_tc_wgmma) && runs_here(conv2d_tc_tma);
}

/* 9c in TEST_SPLITS slices (fewer where the stages are few), its
 * workspace made here and freed after the launch's work. */
#define TEST_SPLITS 3
static conv_status split_in_three(const conv_params *p, const float *d_x, const float *d_w,
                                  float *d_y, cudaStream_t stream, conv_msg *msg)
{
    const size_t bytes = conv2d_tc_tma_split_workspace(p, TEST_SPLITS);
    float *d_work =
        bytes > 0 ? conv_test_device_output(bytes / sizeof(float), "9c's slices") : NULL;
    conv_status st = conv2d_tc_tma_split(p, d_x, d_w, d_y, TEST_SPLITS, d_work, bytes, stream, msg);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    conv_device_free(d_work);
    return st;
}

/* The GPU versions, all of one precision: x truncated, w rounded. */
enum { RUN_9A, RUN_9B, RUN_9C, RUN_COUNT };
static const hopper_launcher run_launchers[RUN_COUNT] = {conv2d_tc_wgmma, conv2d_tc_tma,
                                                         split_in_three};
static const char *const run_names[RUN_COUNT] = {"9a wgmma TF32", "9b wgmma TF32, TMA",
                                                 "9c wgmma TF32, TMA, split-K"};

/* One product as 9a and 9b compute it, in double: x truncated to TF32, w
 * rounded to it, the product exact. */
static double model_term(float x, float w)
{
    return (double)tc_tf32_truncate(x) * tc_tf32_round(w);
}

static void run_gpu(const conv_params *p, int run, const float *h_x, const float *h_w, float *h_y)
{
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *d_x = conv_test_device_copy(h_x, nx, "x");
    float *d_w = conv_test_device_copy(h_w, nw, "w");
    float *d_y = conv_test_device_output(ny, "y");
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(run_launchers[run](p, d_x, d_w, d_y, 0, &msg), msg);
    CONV_ASSERT_OK(conv_device_download(h_y, d_y, ny, &msg), msg);
    conv_test_assert_canary(d_y, ny, "%s output on %s", run_names[run], conv_shape_name(p));
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
}

/* Version `run` on one shape: small integers (ints) exact against the
 * reference, or random floats within the bound of x truncated; `pick`
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
                                conv_verify_bound(tc_bound_factor(TC_TF32_XTRUNC, depth)));
    CONV_ASSERT_REPORT(rep, run_names[run], p);
    free(x);
    free(w);
    free(y);
    free(want);
}

/* Every version on every shape of step 08's table. Under racecheck
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

Test(gpu_hopper, are_exact_on_small_integers)
{
    CONV_TEST_REQUIRE_GPU();
    if (wgmma_runs_here())
        check_versions_over_the_shapes(1);
}

Test(gpu_hopper, stay_within_their_bound_on_random_floats)
{
    CONV_TEST_REQUIRE_GPU();
    if (wgmma_runs_here())
        check_versions_over_the_shapes(0);
}

/* How a version treats its inputs, seen exactly (as step 08's test of the
 * same name): only the centre tap of the 3x3 filter is nonzero, one weight
 * per channel on the diagonal, so every output is one product, y[n][h][w][k]
 * = x[n][h][w][k] * w_k. Once with every w_k = 1 and x of telling values,
 * once with x = 1 and w_k telling values: the output is the other input as
 * the version converts it (x truncated, w rounded), exact in float, so it
 * must equal model_term() to the bit. */
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
            const float want = (float)model_term(xv, wv);
            cr_assert(y[at] == want, "%s (C = K = %d): x = %.9g, w = %.9g gave %.9g, not %.9g",
                      run_names[run], c, xv, wv, y[at], want);
        }
    }
    free(x);
    free(w);
    free(y);
}

Test(gpu_hopper, convert_their_inputs_as_their_precision_says)
{
    CONV_TEST_REQUIRE_GPU();
    if (!wgmma_runs_here())
        return;
    for (int v = 0; v < RUN_COUNT; ++v) {
        check_input_conversion(v, 8); /* C and K multiples of 4: 16-byte copies, TMA */
        check_input_conversion(v, 5); /* 4-byte copies; 9b hands it to 9a */
    }
}

/* 9b's blocks are persistent: as many as the GPU holds at once, each taking
 * every gridDim.x-th tile, with its ring of stages running on from one tile
 * into the next. A problem of at least 3 tiles per SM checks that walk:
 * K = 132, two channel tiles (the second of 4 channels); 63 x 65 pixels an
 * image, so the last pixel tile is partial; C = 4, 9 stages a tile and a
 * padding stage. Exact on small integers, within 9b's bound on random
 * floats. */
Test(gpu_hopper, tma_blocks_walk_many_tiles)
{
    CONV_TEST_REQUIRE_GPU();
    if (!wgmma_runs_here())
        return;
    int sms = 0;
    cr_assert_eq(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, conv_current_device()),
        cudaSuccess);
    const int per_image = 63 * 65, tile = 256, k_tiles = 2;
    const int n = (3 * sms * tile + k_tiles * per_image - 1) / (k_tiles * per_image) + 1;
    conv_params p = conv_shape_nhwc(n, 4, 63, 65, 132, 3, 3, 1, 1, 1);
    const long long tiles = ((long long)n * per_image + tile - 1) / tile * k_tiles;
    cr_assert_geq(tiles, 3LL * sms, "%lld tiles for %d SMs", tiles, sms);
    check_version(&p, RUN_9B, 1, 90);
    check_version(&p, RUN_9B, 0, 91);
    /* 9c in 3 slices (10 stages: 4, 4 and 2): three times the work items,
     * each block's ring running on across tiles and slices */
    check_version(&p, RUN_9C, 1, 92);
    check_version(&p, RUN_9C, 0, 93);
}

/* 9c's sum is added in slice order: two runs give the same bits. Too small
 * a workspace, or none, is refused in one line before any launch (the
 * output keeps its poison). On ResNet-50's layer4.0.conv2 shrunk to 2
 * images (1 x 4 tiles, 144 stages), with the rule's slices (15 on an H100) and with 5. */
Test(gpu_hopper, split_sums_are_deterministic_and_their_workspace_checked)
{
    CONV_TEST_REQUIRE_GPU();
    if (!wgmma_runs_here())
        return;
    conv_params p = conv_shape_nhwc(2, 512, 14, 14, 512, 3, 3, 1, 2, 1);
    const size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p), ny = conv_output_elems(&p);
    float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float)),
          *y0 = malloc(ny * sizeof(float)), *y1 = malloc(ny * sizeof(float));
    cr_assert(x && w && y0 && y1);
    conv_fill_uniform(x, nx, 81, -1.0f, 1.0f);
    conv_fill_uniform(w, nw, 82, -1.0f, 1.0f);
    float *d_x = conv_test_device_copy(x, nx, "x"), *d_w = conv_test_device_copy(w, nw, "w");
    float *d_y = conv_test_device_output(ny, "y");
    conv_msg msg = {{0}};
    const int asked[] = {0, 5};
    for (int a = 0; a < 2; ++a) {
        int splits = asked[a];
        if (splits == 0) {
            int sms = 0;
            cr_assert_eq(
                cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, conv_current_device()),
                cudaSuccess);
            splits = conv2d_tc_tma_splits(&p, sms);
        }
        const size_t bytes = conv2d_tc_tma_split_workspace(&p, splits);
        cr_assert_gt(bytes, 0, "%d slices", splits);
        float *d_work = conv_test_device_output(bytes / sizeof(float), "9c's slices");
        CONV_ASSERT_OK(conv_device_poison(d_y, ny, &msg), msg);
        cr_assert_eq(conv2d_tc_tma_split(&p, d_x, d_w, d_y, splits, d_work, bytes - 16, 0, &msg),
                     CONV_ERR_INVALID);
        CONV_ASSERT_ONE_LINE(msg.text, "workspace");
        cr_assert_eq(conv2d_tc_tma_split(&p, d_x, d_w, d_y, splits, NULL, 0, 0, &msg),
                     CONV_ERR_INVALID);
        CONV_ASSERT_ONE_LINE(msg.text, "workspace");
        conv_test_assert_untouched(d_y, ny);
        float *out[2] = {y0, y1};
        for (int run = 0; run < 2; ++run) {
            CONV_ASSERT_OK(conv_device_poison(d_y, ny, &msg), msg);
            CONV_ASSERT_OK(
                asked[a] == 0
                    ? conv2d_tc_tma_split(&p, d_x, d_w, d_y, 0, d_work, bytes, 0, &msg)
                    : conv2d_tc_tma_split(&p, d_x, d_w, d_y, splits, d_work, bytes, 0, &msg),
                msg);
            CONV_ASSERT_OK(conv_device_download(out[run], d_y, ny, &msg), msg);
        }
        cr_assert(memcmp(y0, y1, ny * sizeof(float)) == 0, "%d slices: two runs differ", splits);
        const size_t depth = (size_t)p.c * p.r * p.s;
        conv_verify_report rep = conv_verify_full(
            &p, x, w, y0, conv_verify_bound(tc_bound_factor(TC_TF32_XTRUNC, depth)));
        CONV_ASSERT_REPORT(rep, "9c wgmma TF32, TMA, split-K", &p);
        conv_device_free(d_work);
    }
    conv_test_assert_canary(d_y, ny, "9c output");
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
    free(x);
    free(w);
    free(y0);
    free(y1);
}

/* The rows through the test helpers (poison, canary, tolerance). Their
 * check takes every NHWC problem; where wgmma does not run, their
 * launchers' refusal is what wgmma_runs_here() checks. */
Test(gpu_hopper, rows_pass_the_shape_table)
{
    CONV_TEST_REQUIRE_GPU();
    if (wgmma_runs_here())
        conv_test_check_rows(conv_hopper_rows, conv_test_host_reference, CONV_LAYOUT_NHWC,
                             HOPPER_ROW_COUNT, NULL);
}

/* The GEMM alone (09_gemm): cuBLAS with TF32 allowed, step 08's 8b and the
 * two rows of step 09 on C = A * B as a 1x1 NHWC problem, sizes not
 * multiples of any tile. */
Test(gpu_hopper, gemm_rows_pass_on_a_ragged_gemm)
{
    CONV_TEST_REQUIRE_GPU();
    if (!wgmma_runs_here())
        return;
    const long long sizes[][3] = {{70, 65, 37}, {129, 130, 9}, {1, 1, 1}, {300, 260, 68}};
    const size_t count = sizeof sizes / sizeof sizes[0];
    conv_params gemms[sizeof sizes / sizeof sizes[0]];
    for (size_t s = 0; s < count; ++s)
        gemms[s] = gemm_as_conv_params(sizes[s][0], sizes[s][1], sizes[s][2]);
    conv_test_check_rows_on(gemms, count, conv_hopper_gemm_rows, conv_test_host_reference,
                            CONV_LAYOUT_NHWC, 2 + HOPPER_ROW_COUNT, NULL);
}
