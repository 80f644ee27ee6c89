/* common/conv_harness: one problem set up once (seeded tensors, the double
 * reference), the memory it needs checked before anything is allocated, and
 * convolutions measured on it: host ones on any machine, device ones and
 * cuDNN in the GPU suites. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cuda.h"
#include "conv_cudnn.h"
#include "conv_harness.h"
#include "conv_tensor.h"
#include "conv_test_support.h"

Test(harness, problem_memory_counts_tensors_and_the_reference)
{
    conv_params p = conv_shape(2, 3, 29, 31, 4, 3, 3, 1, 1, 1);
    size_t host = 0, device = 0;
    conv_problem_memory(&p, &host, &device);
    size_t floats = conv_input_elems(&p) + conv_filter_elems(&p) + conv_output_elems(&p);
    cr_assert_eq(device, 4 * floats);
    cr_assert_eq(host, 4 * floats + 16 * conv_output_elems(&p), "tensors + double reference");
    /* above the full-verification limit there is no reference to keep */
    conv_params big = conv_shape(1, 4096, 32, 32, 4096, 1, 1, 0, 1, 1);
    cr_assert_gt(conv_flops(&big), CONV_FULL_VERIFY_MAX_FLOPS);
    conv_problem_memory(&big, &host, &device);
    cr_assert_eq(host, device);
    cr_assert_eq(device,
                 4 * (conv_input_elems(&big) + conv_filter_elems(&big) + conv_output_elems(&big)));
}

Test(harness, a_problem_larger_than_the_machine_is_refused_naming_both_sizes)
{
    /* 2^44 floats of input: 70 TB */
    conv_params p = conv_shape(2048, 2048, 2048, 2048, 1, 1, 1, 0, 1, 1);
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_params_validate(&p, &msg), msg);
    cr_assert_eq(conv_problem_check_memory(&p, 0, &msg), CONV_ERR_UNSUPPORTED);
    size_t host, device;
    conv_problem_memory(&p, &host, &device);
    char need[64], have[64];
    snprintf(need, sizeof need, "needs %.1f GB on the host", host / 1e9);
    snprintf(have, sizeof have, "this machine has %.1f GB", conv_host_memory_bytes() / 1e9);
    CONV_ASSERT_ONE_LINE(msg.text, need);
    CONV_ASSERT_ONE_LINE(msg.text, have);
}

Test(harness, a_small_problem_fits_and_free_device_memory_is_respected)
{
    conv_params p = conv_shape(2, 3, 29, 31, 4, 3, 3, 1, 1, 1);
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_problem_check_memory(&p, 0, &msg), msg);
    size_t host, device;
    conv_problem_memory(&p, &host, &device);
    CONV_ASSERT_OK(conv_problem_check_memory(&p, device, &msg), msg);
    cr_assert_eq(conv_problem_check_memory(&p, device - 1, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "out of device memory: the problem needs ");
    cr_assert(strstr(msg.text, "GB on the GPU") && strstr(msg.text, "GB are free"), "%s", msg.text);
}

Test(harness, host_problem_holds_the_seeded_tensors_and_their_reference)
{
    conv_params p = conv_shape(2, 3, 13, 11, 4, 3, 3, 1, 1, 1);
    conv_msg msg = {{0}};
    conv_gpu_problem pb;
    CONV_ASSERT_OK(conv_gpu_problem_create_host(&pb, &p, 42, &msg), msg);
    size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p), ny = conv_output_elems(&p);
    float *x = conv_host_alloc(nx), *w = conv_host_alloc(nw);
    cr_assert(x != NULL && w != NULL);
    conv_fill_uniform(x, nx, 42, -1.0f, 1.0f);
    conv_fill_uniform(w, nw, 43, -1.0f, 1.0f);
    cr_assert(memcmp(pb.h_x, x, nx * sizeof *x) == 0, "input from the seed");
    cr_assert(memcmp(pb.h_w, w, nw * sizeof *w) == 0, "filter from seed + 1");
    cr_assert(pb.full_verify && pb.ref != NULL && pb.ref_abs != NULL);
    double *ref = malloc(ny * sizeof *ref);
    cr_assert_not_null(ref);
    conv_reference_double(&p, x, w, ref, NULL);
    cr_assert(memcmp(pb.ref, ref, ny * sizeof *ref) == 0);
    cr_assert(pb.d_x == NULL && pb.d_w == NULL && pb.d_y == NULL && pb.stream == NULL,
              "no device half");
    cr_assert_eq(pb.seed, 42);
    free(ref);
    conv_host_free(x);
    conv_host_free(w);
    conv_gpu_problem_destroy(&pb);
    cr_assert_null(pb.h_x, "destroy leaves the problem empty");
}

Test(harness, invalid_parameters_allocate_nothing)
{
    conv_params p = conv_shape(1, 1, 4, 4, 1, 5, 5, 0, 1, 1);
    conv_msg msg = {{0}};
    conv_gpu_problem pb;
    memset(&pb, 0x5a, sizeof pb);
    cr_assert_eq(conv_gpu_problem_create_host(&pb, &p, 1, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "larger than the padded image");
    cr_assert(pb.h_x == NULL && pb.ref == NULL);
    memset(&pb, 0x5a, sizeof pb);
    cr_assert_eq(conv_gpu_problem_create(&pb, &p, 1, &msg), CONV_ERR_INVALID,
                 "parameters are checked before the device");
    cr_assert(pb.h_x == NULL && pb.d_x == NULL);
    conv_gpu_problem_destroy(&pb); /* on an empty problem: nothing to free */
}

Test(harness, a_problem_without_a_device_is_refused_with_nothing_left_allocated)
{
    conv_test_hide_gpus();
    conv_params p = conv_shape(1, 2, 9, 9, 2, 3, 3, 1, 1, 1);
    conv_msg msg = {{0}};
    conv_gpu_problem pb;
    cr_assert_eq(conv_gpu_problem_create(&pb, &p, 1, &msg), CONV_ERR_NO_DEVICE, "%s", msg.text);
    cr_assert(strncmp(msg.text, "no CUDA device", 14) == 0, "%s", msg.text);
    cr_assert(pb.h_x == NULL && pb.d_x == NULL && pb.ref == NULL);
}

static conv_status zero_host(const conv_params *p, const float *h_x, const float *h_w, float *h_y,
                             conv_msg *msg)
{
    (void)h_x;
    (void)h_w;
    (void)msg;
    memset(h_y, 0, conv_output_elems(p) * sizeof *h_y);
    return CONV_OK;
}

static conv_status one_too_many_host(const conv_params *p, const float *h_x, const float *h_w,
                                     float *h_y, conv_msg *msg)
{
    conv_status st = conv_test_host_reference(p, h_x, h_w, h_y, msg);
    h_y[conv_output_elems(p)] = 0.0f; /* the first canary float */
    return st;
}

static conv_status forgets_the_last_host(const conv_params *p, const float *h_x, const float *h_w,
                                         float *h_y, conv_msg *msg)
{
    size_t ny = conv_output_elems(p);
    float last = h_y[ny - 1];
    conv_status st = conv_test_host_reference(p, h_x, h_w, h_y, msg);
    h_y[ny - 1] = last; /* still the NaN poison */
    return st;
}

static conv_status failing_host(const conv_params *p, const float *h_x, const float *h_w,
                                float *h_y, conv_msg *msg)
{
    (void)p, (void)h_x, (void)h_w, (void)h_y;
    return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the workspace");
}

Test(harness, host_convolutions_are_timed_and_verified_like_device_ones)
{
    conv_gpu_problem pb = conv_test_host_problem(conv_shape(2, 3, 29, 31, 4, 3, 3, 1, 1, 1), 7);
    conv_msg msg = {{0}};
    conv_gpu_result res;
    CONV_ASSERT_OK(conv_gpu_problem_measure_host(&pb, conv_test_host_reference, 1, 3, &res, &msg),
                   msg);
    cr_assert(res.passed, "a correct result: %s", res.verdict);
    cr_assert(strncmp(res.verdict, "OK (", 4) == 0, "%s", res.verdict);
    cr_assert_eq(res.timing.repeats, 3);
    cr_assert_eq(res.report.checked, conv_output_elems(&pb.p), "every output");

    CONV_ASSERT_OK(conv_gpu_problem_measure_host(&pb, zero_host, 0, 1, &res, &msg), msg);
    cr_assert_not(res.passed, "zeros passed verification: %s", res.verdict);
    cr_assert(strncmp(res.verdict, "FAILED", 6) == 0, "%s", res.verdict);
    cr_assert_eq(res.timing.repeats, 1, "a wrong result is still timed");

    CONV_ASSERT_OK(conv_gpu_problem_measure_host(&pb, forgets_the_last_host, 0, 1, &res, &msg),
                   msg);
    cr_assert_not(res.passed, "an unwritten output passed: %s", res.verdict);
    cr_assert_eq(res.report.nan_count, 1, "%s", res.verdict);

    CONV_ASSERT_OK(conv_gpu_problem_measure_host(&pb, one_too_many_host, 0, 1, &res, &msg), msg);
    cr_assert_not(res.passed, "a write past the output went unnoticed: %s", res.verdict);
    cr_assert(strstr(res.verdict, "canary") != NULL, "%s", res.verdict);
    /* the canary is re-armed: the next correct run passes again */
    CONV_ASSERT_OK(conv_gpu_problem_measure_host(&pb, conv_test_host_reference, 0, 1, &res, &msg),
                   msg);
    cr_assert(res.passed, "after a canary failure: %s", res.verdict);

    cr_assert_eq(conv_gpu_problem_measure_host(&pb, failing_host, 0, 1, &res, &msg),
                 CONV_ERR_OUT_OF_MEMORY);
    cr_assert_str_eq(msg.text, "out of host memory for the workspace");
    conv_gpu_problem_destroy(&pb);
}

Test(harness, device_measurements_on_a_host_problem_say_there_is_no_device)
{
    conv_gpu_problem pb = conv_test_host_problem(conv_shape(1, 2, 9, 9, 2, 3, 3, 1, 1, 1), 7);
    conv_msg msg = {{0}};
    conv_gpu_result res;
    cr_assert_eq(
        conv_gpu_problem_measure(&pb, conv_test_device_zeros, NULL, NULL, 0, 1, &res, &msg),
        CONV_ERR_NO_DEVICE);
    CONV_ASSERT_ONE_LINE(msg.text, "no CUDA device: the problem is host-only");
    char algo[64] = "stale";
    cr_assert_eq(conv_gpu_problem_measure_cudnn(&pb, 0, 1, &res, algo, sizeof algo, &msg),
                 CONV_ERR_NO_DEVICE);
    cr_assert_str_empty(algo);
    conv_gpu_problem_destroy(&pb);
}

Test(harness, the_date_is_utc_to_the_minute)
{
    char date[64];
    conv_format_utc_now(date, sizeof date);
    int y, mo, d, h, mi;
    char zone[8];
    cr_assert_eq(sscanf(date, "%4d-%2d-%2d %2d:%2d %3s", &y, &mo, &d, &h, &mi, zone), 6, "%s",
                 date);
    cr_assert_str_eq(zone, "UTC");
    cr_assert_eq(strlen(date), 20, "%s", date);
    cr_assert(y >= 2024 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && mi < 60, "%s",
              date);
}

/* ---------------------------------------------------------------- GPU */

/* A correct result, then one float written past the output (the canary). */
static conv_status one_too_many_device(void *ctx, const conv_params *p, const float *d_x,
                                       const float *d_w, float *d_y, cudaStream_t stream,
                                       conv_msg *msg)
{
    conv_status st = conv_test_device_through_host(ctx, p, d_x, d_w, d_y, stream, msg);
    if (st != CONV_OK)
        return st;
    CONV_CUDA_CHECK(cudaMemsetAsync(d_y + conv_output_elems(p), 0, sizeof(float), stream), msg);
    return CONV_OK;
}

Test(gpu_harness, measures_a_correct_convolution_as_passed_and_a_wrong_one_as_failed)
{
    CONV_TEST_REQUIRE_GPU();
    conv_gpu_problem pb = conv_test_device_problem(conv_shape(2, 3, 29, 31, 4, 3, 3, 1, 1, 1), 7);
    conv_msg msg = {{0}};
    cr_assert(pb.full_verify);
    conv_gpu_result res;
    CONV_ASSERT_OK(
        conv_gpu_problem_measure(&pb, conv_test_device_through_host, NULL, NULL, 1, 3, &res, &msg),
        msg);
    cr_assert(res.passed, "a correct result: %s", res.verdict);
    cr_assert_gt(res.timing.median_ms, 0.0);
    CONV_ASSERT_OK(
        conv_gpu_problem_measure(&pb, conv_test_device_zeros, NULL, NULL, 0, 1, &res, &msg), msg);
    cr_assert_not(res.passed, "zeros passed verification: %s", res.verdict);
    cr_assert(strstr(res.verdict, "FAILED") != NULL, "%s", res.verdict);
    CONV_ASSERT_OK(conv_gpu_problem_measure(&pb, one_too_many_device, NULL, NULL, 0, 1, &res, &msg),
                   msg);
    cr_assert_not(res.passed, "a write past the output went unnoticed: %s", res.verdict);
    cr_assert(strstr(res.verdict, "canary") != NULL, "%s", res.verdict);
    /* the canary is re-armed: the next correct run passes again */
    CONV_ASSERT_OK(
        conv_gpu_problem_measure(&pb, conv_test_device_through_host, NULL, NULL, 0, 1, &res, &msg),
        msg);
    cr_assert(res.passed, "after a canary failure: %s", res.verdict);
    CONV_ASSERT_OK(conv_gpu_problem_measure_host(&pb, conv_test_host_reference, 0, 1, &res, &msg),
                   msg);
    cr_assert(res.passed, "host reference: %s", res.verdict);
    conv_gpu_problem_destroy(&pb);
}
Test(gpu_harness, large_problems_are_verified_by_sampling)
{
    CONV_TEST_REQUIRE_GPU();
    /* 34 GFLOP on only 96 MB of tensors: above the full-verification limit */
    conv_params p = conv_shape(1, 4096, 32, 32, 4096, 1, 1, 0, 1, 1);
    cr_assert_gt(conv_flops(&p), CONV_FULL_VERIFY_MAX_FLOPS);
    conv_gpu_problem pb = conv_test_device_problem(p, 7);
    conv_msg msg = {{0}};
    cr_assert_not(pb.full_verify);
    cr_assert_null(pb.ref);
    conv_gpu_result res;
    CONV_ASSERT_OK(
        conv_gpu_problem_measure(&pb, conv_test_device_zeros, NULL, NULL, 0, 1, &res, &msg), msg);
    cr_assert_not(res.passed, "%s", res.verdict);
    cr_assert_eq(res.report.checked, CONV_VERIFY_SAMPLES);
    conv_gpu_problem_destroy(&pb);
}
Test(gpu_harness, standard_check_accepts_a_correct_convolution_on_awkward_shapes)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params shapes[] = {conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1),
                            conv_shape(3, 2, 31, 29, 5, 4, 4, 2, 2, 1)};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        conv_test_check_gpu_conv(&shapes[i], conv_test_device_through_host, NULL,
                                 conv_test_host_reference, "reference through the device");
}

/* cuDNN through the harness: the ratio every step program prints. (Suite
 * gpu_reference: NVIDIA's libraries; see conv_register_tests.) */
Test(gpu_reference, cudnn_through_the_harness_is_verified_and_timed)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_gpu_problem pb = conv_test_device_problem(conv_shape(2, 3, 29, 31, 4, 3, 3, 1, 1, 1), 7);
    conv_msg msg = {{0}};
    conv_gpu_result res;
    char algo[64];
    CONV_ASSERT_OK(conv_gpu_problem_measure_cudnn(&pb, 1, 3, &res, algo, sizeof algo, &msg), msg);
    cr_assert(res.passed, "cuDNN (%s): %s", algo, res.verdict);
    cr_assert_gt(strlen(algo), 0);
    cr_assert_gt(res.timing.median_ms, 0.0);
    conv_gpu_problem_destroy(&pb);
}
