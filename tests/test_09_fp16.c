/* Step 09 in half precision: which problems 9a-fp16 and 9b-fp16 take (9b-fp16:
 * those its tensor maps describe) and their refusals, on the host; on the
 * GPU, each exact on small integers and within the FP16 bound on random
 * floats (some below FP16's normal range) over the FP16 shape table,
 * rounding each input to the nearest FP16 value, 9b-fp16's persistent
 * blocks walking many tiles, and each one's two parts (the copies, then the
 * convolution) giving what its one call gives; or, on a GPU or a build
 * without wgmma, refused with the reason before any launch. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_fp16.h"
#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_verify.h"
#include "hopper.h"
#include "tensor_cores.h"
#include "test_08_shapes.h"

/* The two kernels: the one call (copies and convolution) and the second
 * part alone (the convolution on the copies). */
typedef struct {
    const char *name;
    conv_status (*once)(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                        float *d_work, size_t work_elems, cudaStream_t stream, conv_msg *msg);
    conv_status (*run)(const conv_params *p, const float *d_x, const float *d_work,
                       size_t work_elems, float *d_y, cudaStream_t stream, conv_msg *msg);
} fp16_kernel;
static const fp16_kernel kernels[2] = {{"9a-fp16", conv2d_tc_wgmma_fp16, conv2d_tc_wgmma_fp16_run},
                                       {"9b-fp16", conv2d_tc_tma_fp16, conv2d_tc_tma_fp16_run}};
static const fp16_kernel *const k9a = &kernels[0], *const k9b = &kernels[1];

/* ---- host ---------------------------------------------------------------- */

Test(cpu_hopper_fp16, wgmma_takes_channels_in_eights)
{
    conv_params p = conv_shape_nhwc(2, 8, 5, 5, 3, 3, 3, 1, 1, 1);
    cr_assert(tc_wgmma_fp16_fits(&p), "C = 8, any K");
    p.c = 12; /* 8 columns of the GEMM span two taps */
    cr_assert_not(tc_wgmma_fp16_fits(&p));
    p.c = 72;
    cr_assert(tc_wgmma_fp16_fits(&p));
}

Test(cpu_hopper_fp16, tma_takes_the_problems_a_tensor_map_describes)
{
    const float *y = (const float *)(uintptr_t)1024;
    conv_params p = conv_shape_nhwc(128, 128, 100, 100, 128, 3, 3, 1, 1, 1);
    cr_assert(tc_tma_fp16_fits(&p, y), "hpc101's problem");
    conv_params q = p;
    q.c = 12; /* rows of 24 bytes */
    cr_assert_not(tc_tma_fp16_fits(&q, y));
    q.c = 8;
    cr_assert(tc_tma_fp16_fits(&q, y));
    q = p, q.k = 6; /* y's rows of 24 bytes */
    cr_assert_not(tc_tma_fp16_fits(&q, y));
    q.k = 4;
    cr_assert(tc_tma_fp16_fits(&q, y));
    cr_assert_not(tc_tma_fp16_fits(&p, y + 2), "y not 16-byte aligned");
    q = p, q.stride_h = 9;
    cr_assert_not(tc_tma_fp16_fits(&q, y));
    q = p, q.pad_w = 128, q.s = 1; /* window corners -128, 128 */
    cr_assert_not(tc_tma_fp16_fits(&q, y));
    q.pad_w = 127;
    cr_assert(tc_tma_fp16_fits(&q, y));
    q = p, q.n = 214749; /* N P Q = 2,147,490,000: past INT_MAX */
    cr_assert_not(tc_tma_fp16_fits(&q, y));
    q.n = 214748; /* 2,147,480,000 */
    cr_assert(tc_tma_fp16_fits(&q, y));
}

/* Refusals before any CUDA call, by each kernel: NCHW, then a missing or
 * short workspace (the pointers are never used). */
Test(cpu_hopper_fp16, refuses_nchw_and_a_missing_workspace_in_one_line)
{
    for (int i = 0; i < 2; ++i) {
        const fp16_kernel *kn = &kernels[i];
        conv_params p = conv_shape(1, 8, 8, 8, 8, 3, 3, 1, 1, 1); /* NCHW */
        float one = 0.0f, *some = &one;
        conv_msg msg = {{0}};
        cr_assert_eq(kn->once(&p, some, some, some, some, 1 << 20, 0, &msg), CONV_ERR_UNSUPPORTED,
                     "%s", kn->name);
        CONV_ASSERT_ONE_LINE(msg.text, "--layout nchw");
        p.layout = CONV_LAYOUT_NHWC;
        cr_assert_eq(kn->once(&p, some, some, some, NULL, 0, 0, &msg), CONV_ERR_INVALID, "%s",
                     kn->name);
        CONV_ASSERT_ONE_LINE(msg.text, "workspace");
        const size_t need = conv2d_tc_fp16_workspace_elems(&p);
        cr_assert_eq(kn->run(&p, some, some, need - 1, some, 0, &msg), CONV_ERR_INVALID, "%s",
                     kn->name);
        CONV_ASSERT_ONE_LINE(msg.text, "work_elems");
    }
}

/* ---- GPU ----------------------------------------------------------------- */

/* Whether kernel kn runs on this GPU and this build; when it does not, its
 * refusal names wgmma in one line before any launch (the output keeps its
 * NaN poison), and the caller has nothing more to check. */
static int runs_here(const fp16_kernel *kn)
{
    conv_params p = conv_shape_nhwc(1, 8, 5, 5, 8, 3, 3, 1, 1, 1);
    const size_t ny = conv_output_elems(&p), nwork = conv2d_tc_fp16_workspace_elems(&p);
    float *d_x = conv_test_device_output(conv_input_elems(&p), "x"); /* NaNs: values unused */
    float *d_w = conv_test_device_output(conv_filter_elems(&p), "w");
    float *d_y = conv_test_device_output(ny, "y");
    float *d_work = conv_test_device_output(nwork, "work");
    conv_msg msg = {{0}};
    conv_status st = kn->once(&p, d_x, d_w, d_y, d_work, nwork, 0, &msg);
    if (st == CONV_OK)
        cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    else {
        cr_assert_eq(st, CONV_ERR_UNSUPPORTED, "%s", msg.text);
        CONV_ASSERT_ONE_LINE(msg.text, "wgmma");
        conv_test_assert_untouched(d_y, ny);
        cr_log_info("%s does not run here (%s); the refusal was checked instead", kn->name,
                    msg.text);
    }
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
    conv_device_free(d_work);
    return st == CONV_OK;
}

/* kn on h_x and h_w into h_y (NaN-poisoned output, canaries after the
 * output and the workspace); `split`: the copies and the convolution as two
 * calls. */
static void run_gpu(const fp16_kernel *kn, const conv_params *p, int split, const float *h_x,
                    const float *h_w, float *h_y)
{
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    const size_t nwork = conv2d_tc_fp16_workspace_elems(p);
    float *d_x = conv_test_device_copy(h_x, nx, "x");
    float *d_w = conv_test_device_copy(h_w, nw, "w");
    float *d_y = conv_test_device_output(ny, "y");
    float *d_work = conv_test_device_output(nwork, "the FP16 workspace");
    conv_msg msg = {{0}};
    if (split) {
        CONV_ASSERT_OK(conv2d_tc_fp16_copies(p, d_x, d_w, d_work, nwork, 0, &msg), msg);
        CONV_ASSERT_OK(kn->run(p, d_x, d_work, nwork, d_y, 0, &msg), msg);
    } else {
        CONV_ASSERT_OK(kn->once(p, d_x, d_w, d_y, d_work, nwork, 0, &msg), msg);
    }
    CONV_ASSERT_OK(conv_device_download(h_y, d_y, ny, &msg), msg);
    conv_test_assert_canary(d_y, ny, "%s output on %s", kn->name, conv_shape_name(p));
    conv_test_assert_canary(d_work, nwork, "%s's workspace on %s", kn->name, conv_shape_name(p));
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
    conv_device_free(d_work);
}

/* One shape: small integers exact; then (but under racecheck, where one
 * launch a shape is enough) random floats with subnormals within the FP16
 * bound, through the two calls. */
static void check_shape(const fp16_kernel *kn, const conv_params *p, unsigned pick)
{
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *y = malloc(ny * sizeof *y),
          *want = malloc(ny * sizeof *want);
    cr_assert(x && w && y && want);
    conv_msg msg = {{0}};
    conv_fill_small_int(x, nx, 900 + pick, -3, 3);
    conv_fill_small_int(w, nw, 950 + pick, -3, 3);
    CONV_ASSERT_OK(conv_test_host_reference(p, x, w, want, &msg), msg);
    run_gpu(kn, p, 0, x, w, y);
    conv_verify_report exact = conv_compare_exact(p, y, want, ny);
    CONV_ASSERT_REPORT(exact, kn->name, p);
    if (!conv_test_under_racecheck()) {
        tc_fill_with_subnormals(x, nx, 1000 + pick, 7);
        tc_fill_with_subnormals(w, nw, 1100 + pick, 5);
        run_gpu(kn, p, 1, x, w, y);
        conv_verify_report rep =
            conv_verify_full(p, x, w, y, conv_fp16_bound((size_t)p->c * p->r * p->s, x, nx, w, nw));
        CONV_ASSERT_REPORT(rep, kn->name, p);
    }
    free(x), free(w), free(y), free(want);
}

/* The shape table through kernel kn. */
static void check_table(const fp16_kernel *kn)
{
    if (!runs_here(kn))
        return;
    conv_params t[TC_FP16_TEST_SHAPES];
    const size_t count = tc_fp16_shapes(t);
    for (size_t i = 0; i < count; ++i)
        check_shape(kn, &t[i], (unsigned)i);
}

Test(gpu_hopper_fp16, wgmma_is_exact_on_small_integers_and_within_its_bound_on_floats)
{
    CONV_TEST_REQUIRE_GPU();
    check_table(k9a);
}

Test(gpu_hopper_fp16, tma_is_exact_on_small_integers_and_within_its_bound_on_floats)
{
    CONV_TEST_REQUIRE_GPU();
    check_table(k9b);
}

/* The centre tap of a 3x3 filter alone, w[1][1][c][k] = (c == k): y = x as
 * the copies round it, which must be conv_round_fp16(x) to the bit, ties
 * and subnormals included, through kernel kn. C = 8 (the kernel itself) and
 * C = 4 (8b-fp16 on the copies). */
static void check_rounding(const fp16_kernel *kn)
{
    for (int c_n = 4; c_n <= 8; c_n += 4) {
        conv_params p = conv_shape_nhwc(2, c_n, 5, 7, c_n, 3, 3, 1, 1, 1);
        const size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p),
                     ny = conv_output_elems(&p);
        float *x = malloc(nx * sizeof *x), *w = calloc(nw, sizeof *w), *y = malloc(ny * sizeof *y);
        cr_assert(x && w && y);
        for (int c = 0; c < c_n; ++c)
            w[conv_filter_offset(&p, c, c, 1, 1)] = 1.0f;
        const float ulp = ldexpf(1.0f, -10);
        for (size_t i = 0; i < nx; ++i) {
            const float kinds[6] = {1.0f + ulp / 2,    1.0f + 3 * ulp / 2, 0.1f,
                                    ldexpf(3.0f, -26), ldexpf(1.0f, -25),  65519.0f};
            x[i] = (i / 6 % 2 ? -1.0f : 1.0f) * kinds[i % 6] * ldexpf(1.0f, (int)(i / 12 % 3) - 2);
        }
        run_gpu(kn, &p, 0, x, w, y);
        for (size_t i = 0; i < ny; ++i) /* stride 1, same padding: y and x share offsets */
            cr_assert_eq(y[i], conv_round_fp16(x[i]), "%s, C = %d: x[%zu] = %a became %a, not %a",
                         kn->name, c_n, i, x[i], y[i], conv_round_fp16(x[i]));
        free(x), free(w), free(y);
    }
}

Test(gpu_hopper_fp16, rounds_each_input_to_the_nearest_fp16_value)
{
    CONV_TEST_REQUIRE_GPU();
    for (int i = 0; i < 2; ++i)
        if (runs_here(&kernels[i]))
            check_rounding(&kernels[i]);
}

/* Persistent blocks walking at least 3 tiles per SM, the last pixel tile
 * partial, K = 136 (a second channel tile of 8), C = 16 (one stage a tap,
 * 48 of 64 channels read as zeros). */
Test(gpu_hopper_fp16, tma_blocks_walk_many_tiles)
{
    CONV_TEST_REQUIRE_GPU();
    if (!runs_here(k9b))
        return;
    int sms = 0;
    cr_assert_eq(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, conv_current_device()),
        cudaSuccess);
    const int per_image = 63 * 65, tile = 256, k_tiles = 2;
    const int n = (3 * sms * tile + k_tiles * per_image - 1) / (k_tiles * per_image) + 1;
    conv_params p = conv_shape_nhwc(n, 16, 63, 65, 136, 3, 3, 1, 1, 1);
    const long long tiles = ((long long)n * per_image + tile - 1) / tile * k_tiles;
    cr_assert_geq(tiles, 3LL * sms, "%lld tiles for %d SMs", tiles, sms);
    check_shape(k9b, &p, 77);
}
