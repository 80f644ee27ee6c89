/* common/conv_bandwidth: the effective bandwidth of a kernel, and the
 * device-to-device copy bandwidth measured on this GPU (GPU suite). */
#include <math.h>
#include <string.h>

#include "conv_bandwidth.h"
#include "conv_test_support.h"

Test(bandwidth, effective_bandwidth_is_bytes_over_time)
{
    cr_assert_float_eq(conv_effective_gbps(2e9, 1.0), 2000.0, 1e-9);
    cr_assert_float_eq(conv_effective_gbps(3e6, 0.5), 6.0, 1e-12);
    cr_assert_eq(conv_effective_gbps(1e9, 0.0), 0.0, "no time: no bandwidth");
    cr_assert_eq(conv_effective_gbps(1e9, -1.0), 0.0);
}

Test(bandwidth, measuring_needs_somewhere_to_put_the_result)
{
    conv_msg msg = {{0}};
    cr_assert_eq(conv_bandwidth_d2d(1024, 0, 1, NULL, NULL, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "NULL");
}

Test(bandwidth, measuring_without_a_device_is_an_error_not_a_crash)
{
    conv_test_hide_gpus();
    conv_msg msg = {{0}};
    conv_bandwidth bw;
    memset(&bw, 0, sizeof bw);
    conv_status st = conv_bandwidth_d2d(1024, 0, 1, NULL, &bw, &msg);
    cr_assert_eq(st, CONV_ERR_NO_DEVICE, "status %s: %s", conv_status_name(st), msg.text);
    CONV_ASSERT_ONE_LINE(msg.text, "cudaMalloc (bandwidth buffers)");
    cr_assert_eq(bw.gbps, 0.0);
}

Test(gpu_bandwidth, copy_bandwidth_streams_at_least_the_minimum_size)
{
    CONV_TEST_REQUIRE_GPU();
    conv_msg msg = {{0}};
    conv_bandwidth bw;
    CONV_ASSERT_OK(conv_bandwidth_d2d(1024, 1, 3, NULL, &bw, &msg), msg);
    cr_assert_eq(bw.bytes, CONV_BANDWIDTH_MIN_BYTES, "small requests copy the minimum");
    cr_assert_eq(bw.timing.repeats, 3);
    cr_assert_gt(bw.timing.median_ms, 0.0);
    cr_assert_float_eq(bw.gbps, 2.0 * (double)bw.bytes / (bw.timing.median_ms * 1e6), 1e-6,
                       "read + write");
    /* No bound on the speed itself: a test must not depend on timing (under
     * compute-sanitizer the same copy runs a hundred times slower). */
    cr_assert(isfinite(bw.gbps) && bw.gbps > 0.0, "%.1f GB/s", bw.gbps);
}
