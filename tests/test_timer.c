/* common/conv_timer: the wall clock, and the CPU and CUDA-event timers (warm-up,
 * then the median of the timed runs). */
#include <string.h>

#include "conv_cuda.h"
#include "conv_test_support.h"
#include "conv_timer.h"

static conv_status count_calls(void *ctx, conv_msg *msg)
{
    (void)msg;
    ++*(int *)ctx;
    return CONV_OK;
}

Test(timer, runs_warmup_plus_repeats_and_reports_the_median)
{
    int calls = 0;
    conv_timing t;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_time_cpu(count_calls, &calls, 2, 5, &t, &msg), msg);
    cr_assert_eq(calls, 7);
    cr_assert_eq(t.repeats, 5);
    cr_assert(t.min_ms <= t.median_ms && t.median_ms <= t.max_ms);
    cr_assert_eq(conv_time_cpu(count_calls, &calls, 0, 0, &t, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--repeat") != NULL);
    double v[5] = {5, 1, 4, 2, 3}, e[4] = {4, 1, 3, 2};
    cr_assert_eq(conv_median(v, 5), 3.0);
    cr_assert_eq(conv_median(e, 4), 2.5);
    double t0 = conv_wall_seconds();
    cr_assert_geq(conv_wall_seconds(), t0);
}

Test(timer, rejects_a_negative_warmup_naming_the_flag)
{
    int calls = 0;
    conv_timing t;
    conv_msg msg = {{0}};
    cr_assert_eq(conv_time_cpu(count_calls, &calls, -1, 3, &t, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "--warmup");
    cr_assert_eq(calls, 0, "nothing runs after a bad count");
}

/* Fails on its third call. */
static conv_status fail_third(void *ctx, conv_msg *msg)
{
    if (++*(int *)ctx == 3)
        return conv_fail(msg, CONV_ERR_CUDA, "third call failed");
    return CONV_OK;
}

Test(timer, stops_at_the_first_error_and_returns_it)
{
    int calls = 0;
    conv_timing t = {.median_ms = -1.0};
    conv_msg msg = {{0}};
    cr_assert_eq(conv_time_cpu(fail_third, &calls, 1, 10, &t, &msg), CONV_ERR_CUDA);
    cr_assert_eq(calls, 3, "ran on after the error");
    cr_assert_str_eq(msg.text, "third call failed");
    cr_assert_eq(t.median_ms, -1.0, "no timing from a failed run");
}

static conv_status never_called(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    (void)stream;
    (void)msg;
    ++*(int *)ctx;
    return CONV_OK;
}

Test(timer, gpu_timing_without_a_device_is_an_error_not_a_crash)
{
    conv_test_hide_gpus();
    int calls = 0;
    conv_timing t;
    conv_msg msg = {{0}};
    conv_status st = conv_time_gpu(never_called, &calls, NULL, 1, 3, &t, &msg);
    cr_assert_eq(st, CONV_ERR_NO_DEVICE, "status %s: %s", conv_status_name(st), msg.text);
    CONV_ASSERT_ONE_LINE(msg.text, "cudaEventCreate");
    cr_assert_eq(calls, 0);
}

/* ---------------------------------------------------------------- GPU */

typedef struct {
    float *d_buf;
    size_t count;
    int calls;
} memset_work;

static conv_status clear_buffer(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    memset_work *w = ctx;
    ++w->calls;
    CONV_CUDA_CHECK(cudaMemsetAsync(w->d_buf, 0, w->count * sizeof(float), stream), msg);
    return CONV_OK;
}

Test(gpu_timer, times_work_on_a_stream_with_events)
{
    CONV_TEST_REQUIRE_GPU();
    conv_msg msg = {{0}};
    memset_work w = {NULL, (size_t)1 << 22, 0};
    CONV_ASSERT_OK(conv_device_alloc(&w.d_buf, w.count, "timed buffer", &msg), msg);
    cudaStream_t stream;
    cr_assert_eq(cudaStreamCreate(&stream), cudaSuccess);
    conv_timing t;
    CONV_ASSERT_OK(conv_time_gpu(clear_buffer, &w, stream, 2, 5, &t, &msg), msg);
    cr_assert_eq(w.calls, 7);
    cr_assert_eq(t.repeats, 5);
    cr_assert_gt(t.min_ms, 0.0, "events measured nothing");
    cr_assert(t.min_ms <= t.median_ms && t.median_ms <= t.max_ms);
    cr_assert_lt(t.median_ms, 1000.0, "a 16 MB memset took %g ms", t.median_ms);
    cr_assert_eq(conv_time_gpu(clear_buffer, &w, stream, 0, 0, &t, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "--repeat");
    conv_test_assert_canary(w.d_buf, w.count, "the timed work");
    cudaStreamDestroy(stream);
    conv_device_free(w.d_buf);
}
