/* Step 06, the GEMM progression: every version 6a..6e and cuBLAS against a
 * double reference on awkward sizes, one GEMM whose A has more than 2^31
 * floats, every bad input rejected before a launch; and the helpers for large
 * GEMMs (gemm_check.h): the device fill equals the CPU's, the sampled check
 * rejects bad arguments. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cublas.h"
#include "conv_tensor.h"
#include "conv_test_support.h"
#include "gemm.h"
#include "gemm_check.h"

/* ---------------------------------------------------------------------------
 * CPU tests: everything rejected before any CUDA call. */

static const float fake[8]; /* a non-NULL pointer for arguments that are never reached */

Test(gemm_validation, rejects_bad_sizes_null_pointers_and_a_missing_handle)
{
    conv_msg msg = {{0}};
    float *c = (float *)fake;
    cr_assert_eq(gemm_sgemm(GEMM_6E_DBUF, 0, 4, 4, fake, fake, c, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--m") != NULL, "message: %s", msg.text);
    cr_assert_eq(gemm_sgemm(GEMM_6A_NAIVE, 4, -1, 4, fake, fake, c, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--n") != NULL, "message: %s", msg.text);
    cr_assert_eq(gemm_sgemm(GEMM_6C_REGTILE, 4, 4, 0, fake, fake, c, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--k") != NULL, "message: %s", msg.text);
    cr_assert_eq(gemm_sgemm(GEMM_6D_FLOAT4, 4, 4, 4, NULL, fake, c, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "d_a is NULL") != NULL, "message: %s", msg.text);
    cr_assert_eq(gemm_6e_dbuf(4, 4, 4, fake, fake, NULL, NULL, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "d_c is NULL") != NULL, "message: %s", msg.text);
    cr_assert_eq(gemm_sgemm(GEMM_CUBLAS, 4, 4, 4, fake, fake, c, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "cuBLAS handle") != NULL, "message: %s", msg.text);
    cr_assert_eq(gemm_sgemm((gemm_variant)99, 4, 4, 4, fake, fake, c, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strchr(msg.text, '\n') == NULL, "one line: %s", msg.text);
}

Test(gemm_validation, rejects_sizes_beyond_the_32_bit_tile_arithmetic_and_the_grid)
{
    conv_msg msg = {{0}};
    cr_assert_eq(gemm_validate(GEMM_6E_DBUF, 3000000000LL, 4, 4, fake, fake, fake, NULL, &msg),
                 CONV_ERR_UNSUPPORTED);
    cr_assert(strstr(msg.text, "exceeds") != NULL, "message: %s", msg.text);
    /* 6a's 8x32 tiles over a GEMM_MAX_DIM square: far more blocks than the grid holds */
    cr_assert_eq(
        gemm_validate(GEMM_6A_NAIVE, GEMM_MAX_DIM, GEMM_MAX_DIM, 1, fake, fake, fake, NULL, &msg),
        CONV_ERR_UNSUPPORTED);
    cr_assert(strstr(msg.text, "grid limit") != NULL, "message: %s", msg.text);
    /* the lab's GEMM is fine */
    cr_assert_eq(gemm_validate(GEMM_6E_DBUF, 1280000, 128, 1152, fake, fake, fake, NULL, &msg),
                 CONV_OK, "%s", msg.text);
}

Test(gemm_validation, parses_and_names_every_variant)
{
    conv_msg msg = {{0}};
    gemm_variant v;
    const char *tags[] = {"6a", "6b", "6c", "6d", "6e", "cublas"};
    for (int i = 0; i < GEMM_VARIANT_COUNT; ++i) {
        cr_assert_eq(gemm_variant_parse(tags[i], &v, &msg), CONV_OK);
        cr_assert_eq((int)v, i);
        cr_assert_str_eq(gemm_variant_tag(v), tags[i]);
        cr_assert(strlen(gemm_variant_name(v)) > 2);
    }
    cr_assert_eq(gemm_variant_parse("6g", &v, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--variant") != NULL, "message: %s", msg.text);
}

Test(gemm_check_validation, rejects_invalid_arguments_before_any_copy)
{
    conv_msg msg = {{0}};
    gemm_check_report rep;
    char verdict[CONV_MSG_LEN];
    cr_assert_eq(
        gemm_check_sampled(4, 4, 4, fake, fake, fake, 1, 1, &rep, verdict, sizeof verdict, &msg),
        CONV_ERR_INVALID, "fewer than 2 samples");
    cr_assert_eq(
        gemm_check_sampled(4, 0, 4, fake, fake, fake, 16, 1, &rep, verdict, sizeof verdict, &msg),
        CONV_ERR_INVALID, "N = 0");
    cr_assert_eq(
        gemm_check_sampled(4, 4, 4, fake, NULL, fake, 16, 1, &rep, verdict, sizeof verdict, &msg),
        CONV_ERR_INVALID, "d_b NULL");
    cr_assert_eq(rep.checked, 0);
    cr_assert(strstr(msg.text, "gemm_check_sampled") != NULL, "message: %s", msg.text);
}

/* ---------------------------------------------------------------------------
 * GEMM against a double reference. */

typedef struct {
    int m, n, k;
} gemm_size;

/* A cross-section of {1, 7, 33, 127, 128, 129, 1000}^3: every value on every
 * axis, tile-1/tile/tile+1 against the 128 tiles (and 63/64/65 against 6e's
 * 64-row tile), K and N multiples of 4 and not (the float4 and scalar paths
 * of 6d/6e), and K of one, one and a bit, and two and a bit of 6e's 16-deep
 * tiles with full and partial block columns (its unguarded and guarded
 * loops). */
static const gemm_size gemm_sizes[] = {
    {1, 1, 1},       {1, 7, 33},       {7, 1, 128},      {33, 33, 33},    {127, 129, 7},
    {128, 128, 128}, {129, 127, 129},  {129, 128, 1000}, {1000, 7, 127},  {7, 1000, 129},
    {1000, 129, 33}, {128, 1000, 128}, {33, 1000, 1000}, {1000, 1000, 7}, {127, 128, 1},
    {1, 1000, 128},  {1000, 1, 1000},  {129, 33, 127},   {128, 129, 128}, {1000, 128, 128},
    {63, 128, 64},   {64, 65, 33},     {65, 7, 129},     {64, 128, 20},   {65, 256, 16},
    {130, 132, 36},
};

/* Products above this are left out under compute-sanitizer (10-100x slower). */
#define SANITIZER_MAX_MNK 1000000.0

typedef struct {
    float *h_a, *h_b, *h_c;
    float *d_a, *d_b, *d_c;
    double *ref, *ref_abs;
} gemm_bufs;

/* Runs variant v on one size with the given data kind (exact: small integers)
 * and offset (a_offset floats into the A buffer: 1 makes A unaligned and forces
 * the scalar path), and compares every entry. */
static void check_gemm_once(gemm_variant v, gemm_size sz, int exact, int a_offset,
                            conv_cublas *cublas)
{
    size_t mk = (size_t)sz.m * sz.k, kn = (size_t)sz.k * sz.n, mn = (size_t)sz.m * sz.n;
    gemm_bufs b = {0};
    conv_msg msg = {{0}};
    b.h_a = conv_host_alloc(mk + 1);
    b.h_b = conv_host_alloc(kn);
    b.h_c = conv_host_alloc(mn);
    b.ref = malloc(mn * sizeof(double));
    b.ref_abs = malloc(mn * sizeof(double));
    cr_assert(b.h_a && b.h_b && b.h_c && b.ref && b.ref_abs, "host allocation failed");
    uint64_t seed = 1000003u * (uint64_t)sz.m + 1009u * (uint64_t)sz.n + (uint64_t)sz.k;
    if (exact) {
        conv_fill_small_int(b.h_a, mk + 1, seed, -3, 3);
        conv_fill_small_int(b.h_b, kn, seed + 1, -3, 3);
    } else {
        conv_fill_uniform(b.h_a, mk + 1, seed, -1.0f, 1.0f);
        conv_fill_uniform(b.h_b, kn, seed + 1, -1.0f, 1.0f);
    }
    conv_test_gemm_reference(sz.m, sz.n, sz.k, b.h_a + a_offset, b.h_b, b.ref, b.ref_abs);
    b.d_a = conv_test_device_copy(b.h_a, mk + 1, "A");
    b.d_b = conv_test_device_copy(b.h_b, kn, "B");
    b.d_c = conv_test_device_output(mn, "C");
    CONV_ASSERT_OK(
        gemm_sgemm(v, sz.m, sz.n, sz.k, b.d_a + a_offset, b.d_b, b.d_c, cublas, NULL, &msg), msg);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess, "%s: kernel failed: %s", gemm_variant_tag(v),
                 cudaGetErrorString(cudaGetLastError()));
    CONV_ASSERT_OK(conv_device_download(b.h_c, b.d_c, mn, &msg), msg);
    conv_test_assert_canary(b.d_c, mn, "%s M=%d N=%d K=%d, C", gemm_variant_tag(v), sz.m, sz.n,
                            sz.k);
    double gamma = conv_gamma((size_t)sz.k);
    for (size_t i = 0; i < mn; ++i) {
        double got = b.h_c[i], want = b.ref[i];
        double tol = exact ? 0.0 : gamma * b.ref_abs[i];
        cr_assert(isfinite(got) && fabs(got - want) <= tol,
                  "%s M=%d N=%d K=%d (%s, A offset %d): C[%zu][%zu] = %.9g, want %.9g (tol %.3g)",
                  gemm_variant_tag(v), sz.m, sz.n, sz.k, exact ? "small integers" : "floats",
                  a_offset, i / sz.n, i % sz.n, got, want, tol);
    }
    conv_device_free(b.d_a);
    conv_device_free(b.d_b);
    conv_device_free(b.d_c);
    conv_host_free(b.h_a);
    conv_host_free(b.h_b);
    conv_host_free(b.h_c);
    free(b.ref);
    free(b.ref_abs);
}

static void check_gemm_variant(gemm_variant v)
{
    CONV_TEST_REQUIRE_GPU();
    conv_msg msg = {{0}};
    conv_cublas *cublas = NULL;
    if (v == GEMM_CUBLAS)
        CONV_ASSERT_OK(conv_cublas_create(&cublas, &msg), msg);
    int sanitizer = conv_test_under_sanitizer();
    for (size_t i = 0; i < sizeof gemm_sizes / sizeof gemm_sizes[0]; ++i) {
        gemm_size sz = gemm_sizes[i];
        if (sanitizer && (double)sz.m * sz.n * sz.k > SANITIZER_MAX_MNK)
            continue;
        check_gemm_once(v, sz, 1, 0, cublas);
        if (!conv_test_under_racecheck()) /* the same launch on floats */
            check_gemm_once(v, sz, 0, 0, cublas);
    }
    /* K % 4 == 0 but A not 16-byte aligned: the element-by-element path */
    gemm_size odd = {129, 132, 136};
    check_gemm_once(v, odd, 1, 1, cublas);
    if (!conv_test_under_racecheck())
        check_gemm_once(v, odd, 0, 1, cublas);
    conv_cublas_destroy(cublas);
}

Test(gpu_gemm, naive_6a_matches_a_double_reference_on_awkward_sizes)
{
    check_gemm_variant(GEMM_6A_NAIVE);
}
Test(gpu_gemm, shared_6b_matches_a_double_reference_on_awkward_sizes)
{
    check_gemm_variant(GEMM_6B_SHARED);
}
Test(gpu_gemm, regtile_6c_matches_a_double_reference_on_awkward_sizes)
{
    check_gemm_variant(GEMM_6C_REGTILE);
}
Test(gpu_gemm, float4_6d_matches_a_double_reference_on_awkward_sizes)
{
    check_gemm_variant(GEMM_6D_FLOAT4);
}
Test(gpu_gemm, dbuf_6e_matches_a_double_reference_on_awkward_sizes)
{
    check_gemm_variant(GEMM_6E_DBUF);
}
Test(gpu_gemm, cublas_matches_a_double_reference_on_awkward_sizes)
{
    check_gemm_variant(GEMM_CUBLAS);
}

/* M*K above 2^31: A holds 2,181,041,200 floats (8.7 GB), so row*K + k needs 64
 * bits for the rows past 2^31/K. Sampled rows (the last one always among them)
 * are computed in double. Skipped under the sanitizers and on a device with
 * too little free memory. */
Test(gpu_gemm, every_variant_indexes_a_beyond_2_to_the_31_floats)
{
    CONV_TEST_REQUIRE_GPU();
    if (conv_test_under_sanitizer())
        cr_skip_test("8.7 GB GEMM skipped under compute-sanitizer");
    const int m = 2097155, n = 8, k = 1040;
    size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    cr_assert_gt(mk, (size_t)1 << 31);
    size_t free_b = 0, total_b = 0;
    cr_assert_eq(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
    if (free_b < 4 * (mk + kn + mn) + ((size_t)512 << 20))
        cr_skip_test("needs %.1f GB of device memory, %.1f GB free", 4e-9 * (mk + kn + mn),
                     free_b / 1e9);
    conv_msg msg = {{0}};
    float *d_a, *d_b, *d_c;
    CONV_ASSERT_OK(conv_device_alloc(&d_a, mk, "A", &msg), msg);
    CONV_ASSERT_OK(conv_device_alloc(&d_b, kn, "B", &msg), msg);
    CONV_ASSERT_OK(conv_device_alloc(&d_c, mn, "C", &msg), msg);
    CONV_ASSERT_OK(gemm_fill_uniform(d_a, mk, 11, -1.0f, 1.0f, NULL, &msg), msg);
    CONV_ASSERT_OK(gemm_fill_uniform(d_b, kn, 12, -1.0f, 1.0f, NULL, &msg), msg);
    for (int v = 0; v < GEMM_CUBLAS; ++v) {
        CONV_ASSERT_OK(conv_device_poison(d_c, mn, &msg), msg);
        CONV_ASSERT_OK(gemm_sgemm((gemm_variant)v, m, n, k, d_a, d_b, d_c, NULL, NULL, &msg), msg);
        gemm_check_report rep;
        char verdict[CONV_MSG_LEN];
        CONV_ASSERT_OK(gemm_check_sampled(m, n, k, d_a, d_b, d_c, 256, 99 + v, &rep, verdict,
                                          sizeof verdict, &msg),
                       msg);
        cr_assert_eq(rep.mismatches, 0, "%s: %s", gemm_variant_tag((gemm_variant)v), verdict);
        conv_test_assert_canary(d_c, mn, "%s, C", gemm_variant_tag((gemm_variant)v));
    }
    conv_device_free(d_a);
    conv_device_free(d_b);
    conv_device_free(d_c);
}

/* ---------------------------------------------------------------------------
 * The device fill is common's hash (common/conv_hash.h): with the same seed it
 * equals the CPU's conv_fill_uniform, bit for bit on ranges whose width is a
 * power of two. */

static void check_fill(size_t count, uint64_t seed, float lo, float hi)
{
    conv_msg msg = {{0}};
    float *want = conv_host_alloc(count), *got = conv_host_alloc(count), *d_x;
    cr_assert(want && got, "host allocation failed");
    conv_fill_uniform(want, count, seed, lo, hi);
    CONV_ASSERT_OK(conv_device_alloc(&d_x, count, "x", &msg), msg);
    CONV_ASSERT_OK(conv_device_poison(d_x, count, &msg), msg);
    CONV_ASSERT_OK(gemm_fill_uniform(d_x, count, seed, lo, hi, NULL, &msg), msg);
    CONV_ASSERT_OK(conv_device_download(got, d_x, count, &msg), msg);
    for (size_t i = 0; i < count; ++i)
        cr_assert(memcmp(&got[i], &want[i], sizeof(float)) == 0,
                  "seed %llu [%g, %g): x[%zu] = %.9g on the device, %.9g on the CPU",
                  (unsigned long long)seed, lo, hi, i, got[i], want[i]);
    conv_test_assert_canary(d_x, count, "gemm_fill_uniform");
    conv_device_free(d_x);
    conv_host_free(want);
    conv_host_free(got);
}

Test(gpu_gemm_check, device_fill_equals_the_cpu_fill_with_the_same_seed)
{
    CONV_TEST_REQUIRE_GPU();
    check_fill(1, 11, -1.0f, 1.0f);
    check_fill(1000, 12, -1.0f, 1.0f);
    check_fill(4099, 7, -2.0f, 2.0f);
    /* more than one pass of the grid (65536 blocks of 256 threads) */
    if (!conv_test_under_sanitizer())
        check_fill((size_t)65536 * 256 + 1001, 3, -1.0f, 1.0f);
}
