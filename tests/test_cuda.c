/* common/conv_cuda: CUDA errors turned into a status and one line that names
 * the call or the kernel, and device buffers with canaries (GPU suite). */
#include <stdint.h>
#include <string.h>

#include "conv_cuda.h"
#include "conv_tensor.h"
#include "conv_test_support.h"

/* The empty kernel of common/conv_device_probe.cu (a launchable kernel for
 * tests written in C). */
const void *conv_probe_kernel_address(void);

Test(cuda, errors_map_to_statuses_with_the_expression_named)
{
    conv_msg msg = {{0}};
    cr_assert_eq(conv_cuda_fail(&msg, cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "/a/b.c", 7),
                 CONV_ERR_OUT_OF_MEMORY);
    cr_assert(strstr(msg.text, "cudaMalloc(&p, n) failed at b.c:7") != NULL, "%s", msg.text);
    cr_assert_eq(conv_cuda_fail(&msg, cudaErrorNoDevice, "x", "f.c", 1), CONV_ERR_NO_DEVICE);
    cr_assert_eq(conv_cuda_fail(&msg, cudaErrorInsufficientDriver, "x", "f.c", 1),
                 CONV_ERR_NO_DEVICE);
    cr_assert_eq(conv_cuda_fail(&msg, cudaErrorInvalidValue, "x", "f.c", 1), CONV_ERR_CUDA);
    cr_assert_str_eq(msg.text, "x failed at f.c:1: invalid argument");
}

/* Stands for a CUDA call that fails with `err`. */
static cudaError_t fake_call(cudaError_t err)
{
    return err;
}

static conv_status checked_call(cudaError_t err, conv_msg *msg)
{
    CONV_CUDA_CHECK(fake_call(err), msg);
    return conv_fail(msg, CONV_OK, "went on");
}

Test(cuda, check_returns_from_the_caller_naming_the_expression_and_the_line)
{
    conv_msg msg = {{0}};
    cr_assert_eq(checked_call(cudaErrorInvalidValue, &msg), CONV_ERR_CUDA);
    CONV_ASSERT_ONE_LINE(msg.text, "fake_call(err) failed at test_cuda.c:");
    cr_assert(strstr(msg.text, ": invalid argument") != NULL, "%s", msg.text);
    cr_assert_eq(checked_call(cudaErrorMemoryAllocation, &msg), CONV_ERR_OUT_OF_MEMORY);
    cr_assert_eq(checked_call(cudaSuccess, &msg), CONV_OK);
    cr_assert_str_eq(msg.text, "went on");
}

static conv_status check_launch(conv_msg *msg)
{
    CONV_CHECK_LAUNCH("my_kernel", msg);
    return CONV_OK;
}

/* A failed runtime call leaves its error behind, as a failed launch does;
 * without a driver every call fails (the error is sticky), with one
 * cudaSetDevice(-1) is an invalid device. */
Test(cuda, check_launch_names_the_kernel)
{
    cr_assert_neq(cudaSetDevice(-1), cudaSuccess);
    conv_msg msg = {{0}};
    conv_status st = check_launch(&msg);
    cr_assert_neq(st, CONV_OK, "the pending error was not reported");
    CONV_ASSERT_ONE_LINE(msg.text, "my_kernel launch failed at test_cuda.c:");
    cr_assert(strstr(msg.text, cudaGetErrorString(cudaErrorInvalidDevice)) != NULL ||
                  strstr(msg.text, cudaGetErrorString(cudaErrorInsufficientDriver)) != NULL ||
                  strstr(msg.text, cudaGetErrorString(cudaErrorNoDevice)) != NULL,
              "%s", msg.text);
}

Test(cuda, a_buffer_size_that_overflows_is_refused_before_cuda_is_asked)
{
    conv_msg msg = {{0}};
    float *d = (float *)(uintptr_t)1;
    cr_assert_eq(conv_device_alloc(&d, 0, "empty buffer", &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "empty buffer");
    cr_assert_null(d);
    d = (float *)(uintptr_t)1;
    cr_assert_eq(conv_device_alloc(&d, SIZE_MAX - 10, "huge buffer", &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "huge buffer");
    cr_assert_null(d);
    cr_assert_eq(conv_device_alloc(&d, SIZE_MAX / 2, "half buffer", &msg), CONV_ERR_INVALID);
    conv_device_free(NULL);
}

Test(cuda, device_buffers_without_a_device_are_an_error_not_a_crash)
{
    conv_test_hide_gpus();
    conv_msg msg = {{0}};
    float *d = (float *)(uintptr_t)1;
    conv_status st = conv_device_alloc(&d, 16, "input x", &msg);
    cr_assert_eq(st, CONV_ERR_NO_DEVICE, "status %s: %s", conv_status_name(st), msg.text);
    CONV_ASSERT_ONE_LINE(msg.text, "cudaMalloc");
    cr_assert_null(d);
}

/* ---------------------------------------------------------------- GPU */

Test(gpu_cuda, buffers_keep_canaries_and_poison_to_nan)
{
    CONV_TEST_REQUIRE_GPU();
    conv_msg msg = {{0}};
    float *d = NULL, h[100];
    size_t bad = 99;
    CONV_ASSERT_OK(conv_device_alloc(&d, 100, "test buffer", &msg), msg);
    CONV_ASSERT_OK(conv_device_poison(d, 100, &msg), msg);
    CONV_ASSERT_OK(conv_device_download(h, d, 100, &msg), msg);
    cr_assert_eq(conv_count_nan(h, 100), 100);
    CONV_ASSERT_OK(conv_device_canary_check(d, 100, &bad, &msg), msg);
    cr_assert_eq(bad, 0);
    float one = 1.0f;
    cr_assert_eq(cudaMemcpy(d + 100, &one, sizeof one, cudaMemcpyHostToDevice), cudaSuccess);
    CONV_ASSERT_OK(conv_device_canary_check(d, 100, &bad, &msg), msg);
    cr_assert_eq(bad, 1, "a write past the end went unnoticed");
    CONV_ASSERT_OK(conv_device_canary_reset(d, 100, &msg), msg);
    CONV_ASSERT_OK(conv_device_canary_check(d, 100, &bad, &msg), msg);
    cr_assert_eq(bad, 0, "the reset re-armed the canary");
    conv_device_free(d);
}

Test(gpu_cuda, upload_and_download_round_trip)
{
    CONV_TEST_REQUIRE_GPU();
    conv_msg msg = {{0}};
    enum { N = 1000 };
    float h[N], back[N];
    conv_fill_uniform(h, N, 3, -1.0f, 1.0f);
    float *d = NULL;
    CONV_ASSERT_OK(conv_device_alloc(&d, N, "round trip", &msg), msg);
    CONV_ASSERT_OK(conv_device_upload(d, h, N, &msg), msg);
    CONV_ASSERT_OK(conv_device_download(back, d, N, &msg), msg);
    cr_assert(memcmp(h, back, sizeof h) == 0);
    conv_device_free(d);
}

Test(gpu_cuda, out_of_memory_is_an_error_not_a_crash)
{
    CONV_TEST_REQUIRE_GPU();
    conv_msg msg = {{0}};
    float *d = NULL;
    conv_status st = conv_device_alloc(&d, (size_t)1 << 50, "huge buffer", &msg);
    cr_assert_eq(st, CONV_ERR_OUT_OF_MEMORY, "status %s: %s", conv_status_name(st), msg.text);
    cr_assert(strstr(msg.text, "huge buffer") != NULL, "%s", msg.text);
    cr_assert_null(d);
    /* the context is still usable afterwards */
    CONV_ASSERT_OK(conv_device_alloc(&d, 16, "small buffer", &msg), msg);
    conv_device_free(d);
}

Test(gpu_cuda, check_launch_reports_a_bad_launch_once)
{
    CONV_TEST_REQUIRE_GPU();
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(check_launch(&msg), msg);
    /* more threads per block than any GPU runs */
    dim3 grid = {1, 1, 1}, block = {4096, 1, 1};
    cudaError_t e = cudaLaunchKernel(conv_probe_kernel_address(), grid, block, NULL, 0, NULL);
    cr_assert_neq(e, cudaSuccess);
    cr_assert_eq(check_launch(&msg), CONV_ERR_CUDA, "%s", msg.text);
    CONV_ASSERT_ONE_LINE(msg.text, "my_kernel launch failed at test_cuda.c:");
    cr_assert(strstr(msg.text, cudaGetErrorString(e)) != NULL, "%s lacks '%s'", msg.text,
              cudaGetErrorString(e));
    CONV_ASSERT_OK(check_launch(&msg), msg); /* read once, then cleared */
}
