/* common/conv_cublas: the cuBLAS SGEMM reference on row-major matrices, and
 * what it says without a device. The GPU suite is gpu_reference (NVIDIA's
 * closed code, kept out of the sanitizer runs: cmake/ConvProject.cmake). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cublas.h"
#include "conv_cuda.h"
#include "conv_tensor.h"
#include "conv_test_support.h"

Test(cublas, a_handle_without_a_device_is_an_error_not_a_crash)
{
    conv_test_hide_gpus();
    conv_cublas *blas = (conv_cublas *)&blas; /* not NULL */
    conv_msg msg = {{0}};
    conv_status st = conv_cublas_create(&blas, &msg);
    cr_assert_eq(st, CONV_ERR_NO_DEVICE, "status %s: %s", conv_status_name(st), msg.text);
    cr_assert(strncmp(msg.text, "no CUDA device", 14) == 0, "%s", msg.text);
    cr_assert_null(blas);
    conv_cublas_destroy(NULL);
}

Test(cublas, sgemm_rejects_an_empty_size_before_touching_the_handle)
{
    const int sizes[][3] = {{0, 1, 1}, {1, 0, 1}, {1, 1, 0}, {-3, 4, 5}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        conv_msg msg = {{0}};
        conv_status st = conv_cublas_sgemm(NULL, sizes[i][0], sizes[i][1], sizes[i][2], NULL, NULL,
                                           NULL, NULL, &msg);
        cr_assert_eq(st, CONV_ERR_INVALID, "case %zu", i);
        char want[64];
        snprintf(want, sizeof want, "m=%d n=%d k=%d", sizes[i][0], sizes[i][1], sizes[i][2]);
        CONV_ASSERT_ONE_LINE(msg.text, want);
    }
}

/* ---------------------------------------------------------------- GPU */

Test(gpu_reference, cublas_sgemm_matches_the_double_reference)
{
    CONV_TEST_REQUIRE_GPU();
    const int sizes[][3] = {{1, 1, 1}, {7, 33, 129}, {128, 127, 1000}, {33, 1, 7}};
    conv_cublas *blas = NULL;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_cublas_create(&blas, &msg), msg);
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; ++t) {
        int m = sizes[t][0], n = sizes[t][1], k = sizes[t][2];
        size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
        float *a = conv_host_alloc(na), *b = conv_host_alloc(nb), *c = conv_host_alloc(nc);
        conv_fill_uniform(a, na, t, -1, 1);
        conv_fill_uniform(b, nb, t + 50, -1, 1);
        float *d_a = conv_test_device_copy(a, na, "A"), *d_b = conv_test_device_copy(b, nb, "B");
        float *d_c = conv_test_device_output(nc, "C");
        CONV_ASSERT_OK(conv_cublas_sgemm(blas, m, n, k, d_a, d_b, d_c, 0, &msg), msg);
        CONV_ASSERT_OK(conv_device_download(c, d_c, nc, &msg), msg);
        double *ref = malloc(nc * sizeof *ref), *mag = malloc(nc * sizeof *mag);
        cr_assert(ref != NULL && mag != NULL);
        conv_test_gemm_reference(m, n, k, a, b, ref, mag);
        conv_verify_report rep = conv_report_init();
        for (size_t i = 0; i < nc; ++i)
            conv_report_add(&rep, i, c[i], ref[i], conv_gamma((size_t)k) * mag[i], 0);
        conv_report_finish(&rep);
        free(ref);
        free(mag);
        char desc[CONV_MSG_LEN];
        conv_report_describe(&rep, desc, sizeof desc);
        cr_assert(rep.passed, "cuBLAS %dx%dx%d: %s", m, n, k, desc);
        conv_test_assert_canary(d_c, nc, "cuBLAS %dx%dx%d", m, n, k);
        conv_device_free(d_a);
        conv_device_free(d_b);
        conv_device_free(d_c);
        conv_host_free(a);
        conv_host_free(b);
        conv_host_free(c);
    }
    conv_cublas_destroy(blas);
}

/* cuBLAS with TF32 allowed rounds each input to TF32: C = P * I and C = I * P
 * with every entry of P the probe (conv_test_support.h), large enough that
 * cuBLAS takes its tensor-core kernels. The TF32 bound of the reference rows
 * assumes it; a library that truncated would make them fail spuriously. */
Test(gpu_reference, cublas_tf32_rounds_both_inputs_to_nearest)
{
    CONV_TEST_REQUIRE_GPU();
    const int n = 2048;
    const size_t nn = (size_t)n * n;
    float *probe = conv_host_alloc(nn), *eye = conv_host_alloc(nn), *c = conv_host_alloc(nn);
    for (size_t i = 0; i < nn; ++i)
        probe[i] = CONV_TEST_TF32_PROBE, eye[i] = i / n == i % n ? 1.0f : 0.0f;
    float *d_p = conv_test_device_copy(probe, nn, "P"), *d_i = conv_test_device_copy(eye, nn, "I");
    float *d_c = conv_test_device_output(nn, "C");
    conv_cublas *blas = NULL;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_cublas_create_tf32(&blas, &msg), msg);
    int major = 0;
    cr_assert_eq(
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, conv_current_device()),
        cudaSuccess);
    for (int side = 0; side < 2; ++side) {
        CONV_ASSERT_OK(
            conv_cublas_sgemm(blas, n, n, n, side ? d_i : d_p, side ? d_p : d_i, d_c, 0, &msg),
            msg);
        CONV_ASSERT_OK(conv_device_download(c, d_c, nn, &msg), msg);
        size_t rounded = conv_test_assert_tf32_rounded(
            c, nn, side ? "cuBLAS TF32, the probe in B" : "cuBLAS TF32, the probe in A");
        if (major < 8)
            cr_assert_eq(rounded, 0, "TF32 below compute capability 8.0");
        conv_test_assert_canary(d_c, nn, "cuBLAS TF32 %d^3", n);
    }
    conv_cublas_destroy(blas);
    conv_device_free(d_p);
    conv_device_free(d_i);
    conv_device_free(d_c);
    conv_host_free(probe);
    conv_host_free(eye);
    conv_host_free(c);
}
