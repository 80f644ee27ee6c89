/* common/conv_device: why there is no usable GPU (one line per case), the
 * device's properties and versions, and the launch limits (the shared memory
 * a block may use, CONV_SMEM_LIMIT_KB). */
#include <stdlib.h>
#include <string.h>

#include "conv_cudnn.h"
#include "conv_device.h"
#include "conv_test_support.h"

/* The empty kernel of common/conv_device_probe.cu: a kernel to ask
 * conv_kernel_fits about from a test written in C. */
const void *conv_probe_kernel_address(void);

/* Every diagnosis is CONV_ERR_NO_DEVICE with one line that starts "no CUDA
 * device" (what tests/run_program.sh and expect_no_device.sh look for). */
static void diagnose(int err, const char *err_text, int driver, int runtime, const char *visible,
                     conv_msg *msg)
{
    memset(msg, 0, sizeof *msg);
    cr_assert_eq(conv_diagnose_no_device(err, err_text, driver, runtime, visible, msg),
                 CONV_ERR_NO_DEVICE);
    cr_assert(strncmp(msg->text, "no CUDA device: ", 16) == 0, "'%s'", msg->text);
    cr_assert(strchr(msg->text, '\n') == NULL, "more than one line: '%s'", msg->text);
}

Test(device, without_a_driver_says_no_nvidia_driver)
{
    conv_msg msg;
    diagnose(cudaErrorInsufficientDriver, "CUDA driver version is insufficient", 0, 13000, NULL,
             &msg);
    cr_assert(strstr(msg.text, "no NVIDIA driver") != NULL, "%s", msg.text);
    /* the driver's absence is the reason, whatever CUDA_VISIBLE_DEVICES says */
    diagnose(cudaErrorNoDevice, "no CUDA-capable device", 0, 13000, "", &msg);
    cr_assert(strstr(msg.text, "no NVIDIA driver") != NULL, "%s", msg.text);
}

Test(device, with_a_driver_older_than_the_runtime_names_both_versions)
{
    conv_msg msg;
    diagnose(cudaErrorInsufficientDriver, "CUDA driver version is insufficient", 12040, 13000, NULL,
             &msg);
    cr_assert(strstr(msg.text, "CUDA 12.4") != NULL, "driver's version: %s", msg.text);
    cr_assert(strstr(msg.text, "CUDA 13.0 runtime") != NULL, "runtime's version: %s", msg.text);
    cr_assert(strstr(msg.text, "update the driver") != NULL, "the fix: %s", msg.text);
    cr_assert(strstr(msg.text, "no NVIDIA driver") == NULL, "%s", msg.text);
}

Test(device, with_every_gpu_hidden_names_cuda_visible_devices)
{
    conv_msg msg;
    diagnose(cudaErrorNoDevice, "no CUDA-capable device is detected", 13000, 13000, "", &msg);
    cr_assert(strstr(msg.text, "CUDA_VISIBLE_DEVICES=''") != NULL, "%s", msg.text);
    diagnose(cudaErrorNoDevice, "no CUDA-capable device is detected", 13020, 13000, "7", &msg);
    cr_assert(strstr(msg.text, "CUDA_VISIBLE_DEVICES='7'") != NULL, "%s", msg.text);
    /* cudaGetDeviceCount succeeded with a count of 0 */
    diagnose(cudaSuccess, "no error", 13000, 13000, "", &msg);
    cr_assert(strstr(msg.text, "CUDA_VISIBLE_DEVICES") != NULL, "%s", msg.text);
}

Test(device, with_no_gpu_and_nothing_hidden_says_the_driver_found_none)
{
    conv_msg msg;
    diagnose(cudaErrorNoDevice, "no CUDA-capable device is detected", 13000, 12080, NULL, &msg);
    cr_assert(strstr(msg.text, "the NVIDIA driver (CUDA 13.0) found no GPU") != NULL, "%s",
              msg.text);
    cr_assert(strstr(msg.text, "CUDA_VISIBLE_DEVICES") == NULL, "%s", msg.text);
    diagnose(cudaSuccess, "no error", 13000, 13000, NULL, &msg);
    cr_assert(strstr(msg.text, "found no GPU") != NULL, "%s", msg.text);
}

Test(device, another_error_is_named_as_cuda_reports_it)
{
    conv_msg msg;
    diagnose(cudaErrorDevicesUnavailable, "all CUDA-capable devices are busy or unavailable", 13000,
             13000, NULL, &msg);
    cr_assert(strstr(msg.text, "cudaGetDeviceCount failed: all CUDA-capable devices are busy") !=
                  NULL,
              "%s", msg.text);
    diagnose(cudaErrorUnknown, NULL, 13000, 13000, NULL, &msg);
    cr_assert(strstr(msg.text, "unknown error") != NULL, "%s", msg.text);
    cr_assert_eq(conv_diagnose_no_device(cudaErrorUnknown, "x", 13000, 13000, NULL, NULL),
                 CONV_ERR_NO_DEVICE, "no message wanted");
}

Test(device, a_gpu_without_code_in_the_build_gets_the_cmake_fix)
{
    conv_msg msg = {{0}};
    cr_assert_eq(conv_diagnose_no_image("90-real 100-real", "NVIDIA GeForce RTX 3080", 8, 6, &msg),
                 CONV_ERR_NO_DEVICE);
    CONV_ASSERT_ONE_LINE(msg.text, "built for 90-real 100-real");
    cr_assert(strstr(msg.text, "NVIDIA GeForce RTX 3080") != NULL, "%s", msg.text);
    cr_assert(strstr(msg.text, "is sm_86") != NULL, "%s", msg.text);
    cr_assert(strstr(msg.text, "-DCMAKE_CUDA_ARCHITECTURES=86") != NULL, "%s", msg.text);
    cr_assert(strstr(msg.text, "native") != NULL, "%s", msg.text);
    const char *archs = conv_built_archs();
    cr_assert(archs != NULL && archs[0] != '\0' && strcmp(archs, "unknown") != 0,
              "CMake passes the build's architectures: '%s'", archs ? archs : "(null)");
}

Test(device, on_this_machine_the_device_check_is_ok_or_says_why_not)
{
    conv_msg msg = {{0}};
    conv_status st = conv_cuda_require_device(&msg);
    if (st == CONV_OK)
        return;
    cr_assert_eq(st, CONV_ERR_NO_DEVICE, "status %s: %s", conv_status_name(st), msg.text);
    cr_assert(strncmp(msg.text, "no CUDA device", 14) == 0 ||
                  strncmp(msg.text, "no kernel image", 15) == 0,
              "%s", msg.text);
    cr_assert(strchr(msg.text, '\n') == NULL);
}

Test(device, with_every_gpu_hidden_the_device_check_says_no_cuda_device)
{
    conv_test_hide_gpus();
    cr_assert_eq(unsetenv(CONV_SMEM_LIMIT_ENV), 0);
    conv_msg msg = {{0}};
    cr_assert_eq(conv_cuda_require_device(&msg), CONV_ERR_NO_DEVICE, "%s", msg.text);
    cr_assert(strncmp(msg.text, "no CUDA device: ", 16) == 0, "%s", msg.text);
    cr_assert(strchr(msg.text, '\n') == NULL);
    conv_device_info info;
    memset(&info, 0x5a, sizeof info);
    conv_msg again = {{0}};
    cr_assert_eq(conv_cuda_device_info(0, &info, &again), CONV_ERR_NO_DEVICE);
    cr_assert_str_eq(again.text, msg.text, "the same reason");
    cr_assert_eq(info.sm_count, 0, "no stale properties");
    cr_assert_eq(conv_smem_limit(), 0);
    cr_assert_eq(conv_current_device(), 0, "no device to ask: device 0");
    cr_assert_eq(conv_kernel_fits(conv_probe_kernel_address(), "probe", 32, 0, &again),
                 CONV_ERR_NO_DEVICE, "%s", again.text);
    cr_assert_str_eq(again.text, msg.text);
}

Test(device, smem_cap_is_a_whole_number_of_kib_from_1_to_1024)
{
    conv_msg msg = {{0}};
    size_t bytes = 99;
    CONV_ASSERT_OK(conv_smem_cap_parse(NULL, &bytes, &msg), msg);
    cr_assert_eq(bytes, 0, "unset: no cap");
    bytes = 99;
    CONV_ASSERT_OK(conv_smem_cap_parse("", &bytes, &msg), msg);
    cr_assert_eq(bytes, 0, "empty: no cap");
    CONV_ASSERT_OK(conv_smem_cap_parse("48", &bytes, &msg), msg);
    cr_assert_eq(bytes, 48 * 1024);
    CONV_ASSERT_OK(conv_smem_cap_parse("1", &bytes, &msg), msg);
    cr_assert_eq(bytes, 1024);
    CONV_ASSERT_OK(conv_smem_cap_parse("1024", &bytes, &msg), msg);
    cr_assert_eq(bytes, 1024 * 1024);
    const char *bad[] = {"0", "2000", "1025", "abc", "64k", "-5", "4.5", " "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        bytes = 99;
        cr_assert_eq(conv_smem_cap_parse(bad[i], &bytes, &msg), CONV_ERR_INVALID, "'%s' accepted",
                     bad[i]);
        char want[64];
        snprintf(want, sizeof want, "CONV_SMEM_LIMIT_KB='%s'", bad[i]);
        CONV_ASSERT_ONE_LINE(msg.text, want);
        cr_assert(strstr(msg.text, "1 to 1024") != NULL, "%s", msg.text);
        cr_assert_eq(bytes, 0);
    }
    cr_assert_eq(conv_smem_cap_parse("abc", &bytes, NULL), CONV_ERR_INVALID);
}

Test(device, a_malformed_smem_cap_is_reported_before_the_device_is_asked)
{
    conv_test_hide_gpus();
    cr_assert_eq(setenv(CONV_SMEM_LIMIT_ENV, "64k", 1), 0);
    conv_msg msg = {{0}};
    cr_assert_eq(conv_kernel_fits(conv_probe_kernel_address(), "probe", 32, 0, &msg),
                 CONV_ERR_INVALID, "%s", msg.text);
    CONV_ASSERT_ONE_LINE(msg.text, "CONV_SMEM_LIMIT_KB='64k'");
}

Test(device, driver_release_is_read_from_both_module_banners)
{
    char release[32];
    conv_parse_driver_release(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  "
        "Release Build  (dvs-builder@U16)  Thu Oct 2 2025\n",
        release, sizeof release);
    cr_assert_str_eq(release, "580.159.04");
    conv_parse_driver_release("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug "
                              "19 01:15:15 UTC 2023\n",
                              release, sizeof release);
    cr_assert_str_eq(release, "535.104.05");
    conv_parse_driver_release("something else entirely\n", release, sizeof release);
    cr_assert_str_eq(release, "");
}

Test(device, fp32_lanes_follow_the_architecture)
{
    const int cases[][3] = {{6, 0, 64},   {6, 1, 128},  {7, 0, 64},  {7, 5, 64},
                            {8, 0, 64},   {8, 6, 128},  {8, 9, 128}, {9, 0, 128},
                            {10, 0, 128}, {12, 0, 128}, {5, 2, 0},   {13, 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        cr_assert_eq(conv_fp32_lanes_per_sm(cases[i][0], cases[i][1]), cases[i][2],
                     "sm_%d%d: %d lanes, expected %d", cases[i][0], cases[i][1],
                     conv_fp32_lanes_per_sm(cases[i][0], cases[i][1]), cases[i][2]);
}

Test(device, one_phrase_names_driver_cuda_runtime_and_cudnn)
{
    conv_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.driver_release, sizeof info.driver_release, "580.159.04");
    info.driver_version = 13000;
    info.runtime_version = 12080;
    char text[160];
    conv_format_versions(&info, 91400, text, sizeof text);
    cr_assert_str_eq(text, "driver 580.159.04 (CUDA 13.0), runtime 12.8, cuDNN 9.14.0");
    conv_format_versions(&info, 0, text, sizeof text);
    cr_assert(strstr(text, "cuDNN not built") != NULL, "%s", text);
    info.driver_release[0] = '\0';
    conv_format_versions(&info, 91400, text, sizeof text);
    cr_assert(strstr(text, "driver unknown (CUDA 13.0)") == text, "%s", text);
}

Test(device, the_code_line_says_whether_the_driver_compiles_ptx)
{
    conv_device_info info;
    memset(&info, 0, sizeof info);
    info.cc_major = 9;
    info.binary_version = 90;
    char text[96];
    conv_format_code(&info, text, sizeof text);
    cr_assert_str_eq(text, "sm_90 code");
    /* PTX and an architecture no build has machine code for */
    info.cc_major = 99;
    info.cc_minor = 1;
    info.ptx_version = 120;
    info.binary_version = 991;
    conv_format_code(&info, text, sizeof text);
    cr_assert_str_eq(text, "compute_120 PTX, JIT-compiled for sm_991 by the driver");
}

Test(device, the_device_lines_name_the_gpu_and_the_build)
{
    conv_test_hide_gpus(); /* conv_smem_limit() answers 0 */
    conv_device_info info = conv_test_gpu_info();
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    conv_print_device(out, &info, 91900);
    fclose(out);
    cr_assert(strstr(text, "device:  Test GPU (sm_90), 132 SMs at 1980 MHz, FP32 peak 66.9 "
                           "TFLOP/s, DRAM peak 3350 GB/s; driver ") == text,
              "%s", text);
    cr_assert(strstr(text, ", cuDNN 9.19.0\n") != NULL, "%s", text);
    cr_assert(strstr(text, "\nbuild:   sm_90 code (built for ") != NULL, "%s", text);
    free(text);
}

Test(device, require_gpu_is_set_by_the_environment_only_as_1)
{
    cr_assert_eq(unsetenv("CONV_REQUIRE_GPU"), 0);
    cr_assert_not(conv_gpu_required());
    setenv("CONV_REQUIRE_GPU", "0", 1);
    cr_assert_not(conv_gpu_required());
    setenv("CONV_REQUIRE_GPU", "yes", 1);
    cr_assert_not(conv_gpu_required());
    setenv("CONV_REQUIRE_GPU", "1", 1);
    cr_assert(conv_gpu_required());
}

/* ---------------------------------------------------------------- GPU */

Test(gpu_device, reports_a_sane_device)
{
    CONV_TEST_REQUIRE_GPU();
    conv_device_info info;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_cuda_device_info(0, &info, &msg), msg);
    cr_assert_gt(info.sm_count, 0);
    cr_assert_gt(info.peak_fp32_gflops, 100.0, "peak %g", info.peak_fp32_gflops);
    cr_assert_geq(info.const_mem_bytes, 65536);
    cr_assert(info.name[0] != '\0');
    cr_assert_gt(info.fp32_lanes_per_sm, 0, "sm_%d%d is in the lanes table", info.cc_major,
                 info.cc_minor);
    cr_assert_geq(info.smem_per_block_optin, CONV_SMEM_DEFAULT_BYTES);
    cr_assert(info.binary_version > 0 || info.ptx_version > 0, "the kernels run as something");
}

/* The launchers size their launches for the device the program's CUDA calls
 * go to: each device in turn (one on most machines), then device 0 again. */
Test(gpu_device, launch_limits_follow_the_current_device)
{
    CONV_TEST_REQUIRE_GPU();
    cr_assert_eq(unsetenv(CONV_SMEM_LIMIT_ENV), 0);
    int count = 0;
    cr_assert_eq(cudaGetDeviceCount(&count), cudaSuccess);
    for (int d = count - 1; d >= 0; --d) {
        cr_assert_eq(cudaSetDevice(d), cudaSuccess);
        cr_assert_eq(conv_current_device(), d);
        conv_device_info info;
        conv_msg msg = {{0}};
        CONV_ASSERT_OK(conv_cuda_device_info(d, &info, &msg), msg);
        cr_assert_eq(conv_smem_limit(), info.smem_per_block_optin, "device %d", d);
        CONV_ASSERT_OK(conv_kernel_fits(conv_probe_kernel_address(), "probe", 32, 0, &msg), msg);
    }
    cr_assert_eq(conv_current_device(), 0);
}

Test(gpu_device, smem_limit_is_the_device_maximum_capped_by_the_environment)
{
    CONV_TEST_REQUIRE_GPU();
    conv_device_info info;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_cuda_device_info(0, &info, &msg), msg);
    size_t optin = info.smem_per_block_optin;
    cr_assert_eq(unsetenv(CONV_SMEM_LIMIT_ENV), 0);
    cr_assert_eq(conv_smem_limit(), optin);
    setenv(CONV_SMEM_LIMIT_ENV, "32", 1);
    cr_assert_eq(conv_smem_limit(), 32 * 1024);
    setenv(CONV_SMEM_LIMIT_ENV, "1024", 1); /* above the device: the device's maximum */
    cr_assert_eq(conv_smem_limit(), optin);
    setenv(CONV_SMEM_LIMIT_ENV, "abc", 1);
    cr_assert_eq(conv_smem_limit(), 0, "malformed: 0, and conv_kernel_fits says why");
    setenv(CONV_SMEM_LIMIT_ENV, "", 1);
    cr_assert_eq(conv_smem_limit(), optin);
}

Test(gpu_device, kernel_fits_checks_threads_and_shared_memory_against_the_cap)
{
    CONV_TEST_REQUIRE_GPU();
    const void *probe = conv_probe_kernel_address();
    conv_msg msg = {{0}};
    cr_assert_eq(unsetenv(CONV_SMEM_LIMIT_ENV), 0);
    CONV_ASSERT_OK(conv_kernel_fits(probe, "conv_probe_kernel", 256, 0, &msg), msg);
    cr_assert_eq(conv_kernel_fits(probe, "conv_probe_kernel", 2048, 0, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "conv_probe_kernel: 2048 threads per block");
    /* above 48 KB: conv_kernel_fits opts the kernel in */
    CONV_ASSERT_OK(conv_kernel_fits(probe, "conv_probe_kernel", 32, 60 * 1024, &msg), msg);
    size_t over = conv_smem_limit() + 1024;
    cr_assert_eq(conv_kernel_fits(probe, "conv_probe_kernel", 32, over, &msg),
                 CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "conv_probe_kernel: needs ");
    cr_assert_null(strstr(msg.text, "CONV_SMEM_LIMIT_KB"), "no cap set: %s", msg.text);

    setenv(CONV_SMEM_LIMIT_ENV, "16", 1);
    cr_assert_eq(conv_kernel_fits(probe, "conv_probe_kernel", 32, 17 * 1024, &msg),
                 CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "conv_probe_kernel: needs 17.0 KB of shared memory per block; "
                                   "this GPU allows 16.0 KB (capped by CONV_SMEM_LIMIT_KB)");
    CONV_ASSERT_OK(conv_kernel_fits(probe, "conv_probe_kernel", 32, 16 * 1024, &msg), msg);
}
