/* common/conv_cudnn: the cuDNN reference (its plan, the filter in both
 * layouts, the bound factor of its algorithms), and what it says without
 * cuDNN or without a device. The GPU suite is gpu_reference: NVIDIA's closed
 * code, kept out of the sanitizer runs (cmake/ConvProject.cmake). */
#include <string.h>

#include "conv_cuda.h"
#include "conv_cudnn.h"
#include "conv_tensor.h"
#include "conv_test_support.h"

Test(cudnn, reports_itself_unavailable_when_not_built)
{
    if (conv_cudnn_compiled())
        cr_skip_test("built with cuDNN; the GPU suite tests it");
    conv_cudnn_plan *plan = NULL;
    conv_msg msg = {{0}};
    conv_params p = conv_params_default();
    cr_assert_eq(conv_cudnn_plan_create(&plan, &p, &msg), CONV_ERR_UNAVAILABLE);
    cr_assert(strstr(msg.text, "cuDNN") != NULL);
}

Test(cudnn, its_version_is_known_exactly_when_it_is_built)
{
    long v = conv_cudnn_version();
    if (conv_cudnn_compiled())
        cr_assert(v >= 80000 && v < 1000000, "cuDNN version %ld", v);
    else
        cr_assert_eq(v, 0);
}

Test(cudnn, a_plan_without_a_device_is_an_error_not_a_crash)
{
    conv_test_hide_gpus();
    conv_cudnn_plan *plan = (conv_cudnn_plan *)&plan; /* not NULL */
    conv_msg msg = {{0}};
    conv_params p = conv_shape(1, 2, 9, 9, 2, 3, 3, 1, 1, 1);
    conv_status st = conv_cudnn_plan_create(&plan, &p, &msg);
    cr_assert_null(plan);
    if (!conv_cudnn_compiled()) {
        cr_assert_eq(st, CONV_ERR_UNAVAILABLE);
        return;
    }
    cr_assert_eq(st, CONV_ERR_NO_DEVICE, "status %s: %s", conv_status_name(st), msg.text);
    cr_assert(strncmp(msg.text, "no CUDA device", 14) == 0, "%s", msg.text);
}

Test(cudnn, an_empty_plan_is_handled_without_cuda)
{
    conv_msg msg = {{0}};
    cr_assert_neq(conv_cudnn_forward(NULL, NULL, NULL, NULL, &msg), CONV_OK);
    cr_assert(strstr(msg.text, "cuDNN") != NULL, "%s", msg.text);
    msg.text[0] = '\0';
    cr_assert_neq(conv_cudnn_run(NULL, NULL, NULL, NULL, NULL, &msg), CONV_OK);
    cr_assert(strstr(msg.text, "cuDNN") != NULL, "%s", msg.text);
    msg.text[0] = '\0';
    cr_assert_neq(conv_cudnn_finish(NULL, NULL, NULL, &msg), CONV_OK);
    cr_assert(strstr(msg.text, "cuDNN") != NULL, "%s", msg.text);
    cr_assert_eq(conv_cudnn_workspace_bytes(NULL), 0);
    cr_assert_not_null(conv_cudnn_algo_name(NULL));
    cr_assert_str_eq(conv_cudnn_math_type(NULL), "none");
    cr_assert_eq(conv_cudnn_plan_pass(NULL), CONV_PASS_FORWARD);
    conv_cudnn_plan_destroy(NULL);
}

/* A plan of every pass: without a device, an error and no plan; a pass out of
 * range is refused in one line before any CUDA call. */
Test(cudnn, plans_of_every_pass_need_a_device_and_a_pass_in_range)
{
    conv_test_hide_gpus();
    conv_params p = conv_shape(2, 3, 9, 8, 4, 3, 3, 1, 2, 1);
    conv_msg msg = {{0}};
    for (int pass = 0; pass < CONV_PASS_COUNT; ++pass)
        for (int math = 0; math < 2; ++math) {
            conv_cudnn_plan *plan = (conv_cudnn_plan *)&plan; /* not NULL */
            conv_status st = conv_cudnn_plan_create_pass(&plan, &p, (conv_pass)pass,
                                                         (conv_cudnn_math)math, &msg);
            cr_assert_null(plan);
            cr_assert_eq(st, conv_cudnn_compiled() ? CONV_ERR_NO_DEVICE : CONV_ERR_UNAVAILABLE,
                         "%s: status %s: %s", conv_pass_name((conv_pass)pass), conv_status_name(st),
                         msg.text);
        }
    if (!conv_cudnn_compiled())
        return;
    conv_cudnn_plan *plan = (conv_cudnn_plan *)&plan;
    cr_assert_eq(conv_cudnn_plan_create_pass(&plan, &p, CONV_PASS_COUNT, CONV_CUDNN_FP32, &msg),
                 CONV_ERR_INVALID);
    cr_assert_null(plan);
    CONV_ASSERT_ONE_LINE(msg.text, "pass must be forward, dgrad or wgrad");
    cr_assert_eq(conv_cudnn_plan_create_pass(&plan, &p, (conv_pass)-1, CONV_CUDNN_FP32, &msg),
                 CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "pass");
    cr_assert_eq(conv_cudnn_plan_create_pass(&plan, &p, CONV_PASS_DGRAD, (conv_cudnn_math)7, &msg),
                 CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "math");
}

/* FFT and Winograd are not plain dot products (conv_cudnn.h). */
Test(cudnn, bound_factor_is_the_transform_factor_for_fft_and_winograd_only)
{
    const char *loose[] = {"FFT",
                           "FFT_TILING",
                           "WINOGRAD",
                           "WINOGRAD_NONFUSED",
                           "BWD_DATA_ALGO_FFT",
                           "BWD_DATA_ALGO_FFT_TILING",
                           "BWD_DATA_ALGO_WINOGRAD",
                           "BWD_DATA_ALGO_WINOGRAD_NONFUSED",
                           "BWD_FILTER_ALGO_FFT",
                           "BWD_FILTER_ALGO_FFT_TILING",
                           "BWD_FILTER_ALGO_WINOGRAD",
                           "BWD_FILTER_ALGO_WINOGRAD_NONFUSED"};
    const char *plain[] = {"IMPLICIT_GEMM",
                           "IMPLICIT_PRECOMP_GEMM",
                           "GEMM",
                           "DIRECT",
                           "unknown",
                           "BWD_DATA_ALGO_0",
                           "BWD_DATA_ALGO_1",
                           "BWD_FILTER_ALGO_0",
                           "BWD_FILTER_ALGO_1",
                           "BWD_FILTER_ALGO_3"};
    for (size_t i = 0; i < sizeof loose / sizeof loose[0]; ++i)
        cr_assert_eq(conv_cudnn_bound_factor(loose[i]), CONV_CUDNN_TRANSFORM_FACTOR, "%s",
                     loose[i]);
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; ++i)
        cr_assert_eq(conv_cudnn_bound_factor(plain[i]), 1.0, "%s", plain[i]);
    cr_assert_eq(conv_cudnn_bound_factor(NULL), 1.0);
}

/* ---------------------------------------------------------------- GPU */

/* Runs cuDNN on one problem and checks it against the double reference. */
static void check_cudnn(conv_params p)
{
    conv_msg msg = {{0}};
    size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p), ny = conv_output_elems(&p);
    float *x = conv_host_alloc(nx), *w = conv_host_alloc(nw), *y = conv_host_alloc(ny);
    conv_fill_uniform(x, nx, 11, -1, 1);
    conv_fill_uniform(w, nw, 12, -1, 1);
    float *d_x = conv_test_device_copy(x, nx, "x"), *d_w = conv_test_device_copy(w, nw, "w");
    float *d_y = conv_test_device_output(ny, "y");
    conv_cudnn_plan *plan = NULL;
    CONV_ASSERT_OK(conv_cudnn_plan_create(&plan, &p, &msg), msg);
    CONV_ASSERT_OK(conv_cudnn_set_filter(plan, d_w, &msg), msg);
    CONV_ASSERT_OK(conv_cudnn_forward(plan, d_x, d_y, 0, &msg), msg);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    CONV_ASSERT_OK(conv_device_download(y, d_y, ny, &msg), msg);
    const char *algo = conv_cudnn_algo_name(plan);
    double factor = conv_cudnn_bound_factor(algo);
    conv_verify_report rep = conv_verify_full(&p, x, w, y, conv_verify_bound(factor));
    char what[128];
    snprintf(what, sizeof what, "cuDNN (%s)", algo);
    CONV_ASSERT_REPORT(rep, what, &p);
    conv_test_assert_canary(d_y, ny, "%s on %s", what, conv_shape_name(&p));
    conv_cudnn_plan_destroy(plan);
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
    conv_host_free(x);
    conv_host_free(w);
    conv_host_free(y);
}

Test(gpu_reference, cudnn_matches_the_double_reference_in_both_layouts)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params shapes[] = {
        conv_shape(1, 6, 96, 64, 6, 6, 6, 0, 1, 1), conv_shape(2, 3, 29, 31, 5, 3, 3, 1, 1, 1),
        conv_shape(1, 2, 31, 29, 3, 5, 5, 2, 2, 1), conv_shape(3, 4, 23, 17, 2, 3, 3, 2, 1, 2),
        conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1),
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        check_cudnn(shapes[i]);
        shapes[i].layout = CONV_LAYOUT_NHWC;
        check_cudnn(shapes[i]);
    }
}

/* cuDNN with TF32 allowed: verified within the TF32 bound where it has a
 * tensor-core algorithm, refused with one line where it has none (below
 * compute capability 8.0 it never has). */
Test(gpu_reference, cudnn_tf32_is_within_the_tf32_bound_or_refused_in_one_line)
{
    CONV_TEST_REQUIRE_CUDNN();
    int major = 0;
    cr_assert_eq(
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, conv_current_device()),
        cudaSuccess);
    for (int layout = 0; layout < 2; ++layout) {
        conv_params p = conv_shape(2, 32, 20, 22, 64, 3, 3, 1, 1, 1);
        p.layout = layout ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
        conv_gpu_problem pb = conv_test_device_problem(p, 3);
        conv_gpu_result res;
        char algo[64];
        conv_msg msg = {{0}};
        conv_status st = conv_gpu_problem_measure_cudnn_math(&pb, CONV_CUDNN_TF32, 1, 2, &res, algo,
                                                             sizeof algo, &msg);
        if (st == CONV_OK) {
            cr_assert_geq(major, 8, "a TF32 algorithm below compute capability 8.0");
            cr_assert(res.passed, "cuDNN TF32 (%s) on %s: %s", algo, conv_shape_name(&p),
                      res.verdict);
            cr_log_info("cuDNN TF32 %s on %s: %s", algo, conv_shape_name(&p), res.verdict);
        } else {
            cr_assert_eq(st, CONV_ERR_UNSUPPORTED, "%s", msg.text);
            CONV_ASSERT_ONE_LINE(msg.text, "no TF32 tensor-core");
        }
        conv_gpu_problem_destroy(&pb);
    }
}

/* cuDNN with TF32 allowed rounds each input to TF32: on an NHWC 3x3 problem
 * whose filter has one nonzero tap (the centre, weight 1 from channel k to
 * output channel k), every output is one product, the probe
 * (conv_test_support.h) times 1; run with the probe in x, then with the probe
 * as that weight and x = 1. The TF32 bound of the reference rows assumes it.
 * An FFT or Winograd algorithm mixes the inputs in its transforms (no single
 * product to read): then the algorithm is named and nothing is asserted. */
Test(gpu_reference, cudnn_tf32_rounds_both_inputs_to_nearest)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params p = conv_shape_nhwc(8, 128, 32, 32, 128, 3, 3, 1, 1, 1);
    size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p), ny = conv_output_elems(&p);
    float *h = conv_host_alloc(nx > ny ? nx : ny); /* x, then w, then y: nw < nx */
    float *d_x = conv_test_device_output(nx, "x"), *d_w = conv_test_device_output(nw, "w");
    float *d_y = conv_test_device_output(ny, "y");
    conv_msg msg = {{0}};
    for (int side = 0; side < 2; ++side) {
        for (size_t i = 0; i < nx; ++i)
            h[i] = side ? 1.0f : CONV_TEST_TF32_PROBE;
        CONV_ASSERT_OK(conv_device_upload(d_x, h, nx, &msg), msg);
        memset(h, 0, nw * sizeof *h);
        for (int k = 0; k < p.k; ++k) /* the centre tap (1, 1), from channel k to k */
            h[conv_filter_offset(&p, k, k, 1, 1)] = side ? CONV_TEST_TF32_PROBE : 1.0f;
        CONV_ASSERT_OK(conv_device_upload(d_w, h, nw, &msg), msg);
        CONV_ASSERT_OK(conv_device_poison(d_y, ny, &msg), msg);
        conv_cudnn_plan *plan = NULL;
        conv_status st = conv_cudnn_plan_create_math(&plan, &p, CONV_CUDNN_TF32, &msg);
        if (st != CONV_OK) {
            cr_assert_eq(st, CONV_ERR_UNSUPPORTED, "%s", msg.text);
            CONV_ASSERT_ONE_LINE(msg.text, "no TF32 tensor-core");
            continue;
        }
        CONV_ASSERT_OK(conv_cudnn_set_filter(plan, d_w, &msg), msg);
        CONV_ASSERT_OK(conv_cudnn_forward(plan, d_x, d_y, 0, &msg), msg);
        cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
        CONV_ASSERT_OK(conv_device_download(h, d_y, ny, &msg), msg);
        const char *algo = conv_cudnn_algo_name(plan);
        char what[96];
        snprintf(what, sizeof what, "cuDNN TF32 (%s), the probe in %s", algo, side ? "w" : "x");
        if (conv_cudnn_bound_factor(algo) == 1.0)
            conv_test_assert_tf32_rounded(h, ny, what);
        else
            cr_log_info("%s: a transform algorithm, no single product to read", what);
        conv_test_assert_canary(d_y, ny, "%s", what);
        conv_cudnn_plan_destroy(plan);
    }
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
    conv_host_free(h);
}
