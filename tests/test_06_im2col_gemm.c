/* Step 06: im2col/col2im, the GEMM progression 6a..6e (and cuBLAS), the
 * im2col -> GEMM pipelines in both layouts, and 6f implicit GEMM. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cpu.h"
#include "conv_cublas.h"
#include "conv_tensor.h"
#include "conv_test_support.h"
#include "im2col_gemm.h"

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
    cr_assert(strstr(msg.text, "--gemm") != NULL, "message: %s", msg.text);
}

static conv_params lab_problem(void)
{
    conv_params p = conv_shape(128, 128, 100, 100, 128, 3, 3, 1, 1, 1);
    p.layout = CONV_LAYOUT_NHWC;
    return p;
}

Test(im2col_validation, rejects_a_column_buffer_larger_than_the_device_memory)
{
    conv_msg msg = {{0}};
    conv_params p = lab_problem(); /* 5.9 GB of column buffer */
    cr_assert_eq(conv2d_im2col_gemm_check(&p, (size_t)4 << 30, &msg), CONV_ERR_OUT_OF_MEMORY);
    cr_assert(strstr(msg.text, "column buffer too large") != NULL, "message: %s", msg.text);
    cr_assert(strchr(msg.text, '\n') == NULL, "one line: %s", msg.text);
    cr_assert_eq(conv2d_im2col_gemm_check(&p, (size_t)80 << 30, &msg), CONV_OK, "%s", msg.text);
    /* the NCHW workspace of a batch also holds the [K][N*P*Q] GEMM output */
    p.layout = CONV_LAYOUT_NCHW;
    cr_assert_eq(conv2d_im2col_gemm_workspace_elems(&p),
                 ((conv_im2col_elems(&p) + 3) & ~(size_t)3) + conv_output_elems(&p));
    p.n = 1;
    cr_assert_eq(conv2d_im2col_gemm_workspace_elems(&p), conv_im2col_elems(&p));
}

Test(im2col_validation, rejects_sizes_that_overflow_before_any_launch)
{
    conv_msg msg = {{0}};
    /* N*P*Q = 65536*256*256 = 2^32 rows: each tensor fits, the GEMM's int rows do not */
    conv_params p = conv_shape(65536, 1, 256, 256, 1, 1, 1, 0, 1, 1);
    cr_assert_eq(conv2d_im2col_gemm_check(&p, SIZE_MAX, &msg), CONV_ERR_UNSUPPORTED);
    cr_assert(strstr(msg.text, "N*P*Q") != NULL, "message: %s", msg.text);
    cr_assert_eq(conv2d_im2col_gemm(&p, fake, fake, (float *)fake, (float *)fake, SIZE_MAX,
                                    GEMM_6E_DBUF, NULL, NULL, &msg),
                 CONV_ERR_UNSUPPORTED);
    /* (C*R*S)*(N*P*Q)*4 bytes = 2^40 * 2^42 * 4 overflows size_t, the tensors do not */
    conv_params q = conv_shape(4096, 1 << 20, 1024, 1024, 1, 1024, 1024, 16384, 1, 1);
    cr_assert_eq(conv2d_im2col_gemm_check(&q, SIZE_MAX, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "im2col buffer too large") != NULL, "message: %s", msg.text);
    cr_assert_eq(im2col(&q, fake, (float *)fake, NULL, &msg), CONV_ERR_INVALID);
}

Test(im2col_validation, rejects_null_pointers_small_workspaces_and_bad_variants)
{
    conv_msg msg = {{0}};
    conv_params p = conv_shape(2, 3, 9, 9, 4, 3, 3, 1, 1, 1);
    size_t need = conv2d_im2col_gemm_workspace_elems(&p);
    float *f = (float *)fake;
    cr_assert_eq(conv2d_im2col_gemm(&p, NULL, fake, f, f, need, GEMM_6E_DBUF, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "d_x") != NULL, "message: %s", msg.text);
    cr_assert_eq(conv2d_im2col_gemm(&p, fake, fake, f, NULL, need, GEMM_6E_DBUF, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "d_work") != NULL, "message: %s", msg.text);
    cr_assert_eq(conv2d_im2col_gemm(&p, fake, fake, f, f, need - 1, GEMM_6E_DBUF, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "workspace too small") != NULL, "message: %s", msg.text);
    cr_assert_eq(conv2d_im2col_gemm(&p, fake, fake, f, f, need, GEMM_CUBLAS, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "cuBLAS") != NULL, "message: %s", msg.text);
    cr_assert_eq(conv2d_im2col_gemm(&p, fake, fake, f, f, need, (gemm_variant)-1, NULL, NULL, &msg),
                 CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--gemm") != NULL, "message: %s", msg.text);
    cr_assert_eq(im2col(&p, NULL, f, NULL, &msg), CONV_ERR_INVALID);
    cr_assert_eq(col2im(&p, f, NULL, NULL, &msg), CONV_ERR_INVALID);
    p.h = 0;
    cr_assert_eq(im2col(&p, fake, f, NULL, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--h") != NULL, "message: %s", msg.text);
}

Test(im2col_validation, implicit_gemm_rejects_nchw_and_null_pointers)
{
    conv_msg msg = {{0}};
    conv_params p = conv_shape(1, 4, 9, 9, 4, 3, 3, 1, 1, 1);
    cr_assert_eq(conv2d_implicit_gemm(&p, fake, fake, (float *)fake, NULL, &msg),
                 CONV_ERR_UNSUPPORTED);
    cr_assert(strstr(msg.text, "nhwc") != NULL, "message: %s", msg.text);
    p.layout = CONV_LAYOUT_NHWC;
    cr_assert_eq(conv2d_implicit_gemm(&p, fake, NULL, (float *)fake, NULL, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "d_w") != NULL, "message: %s", msg.text);
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

static void gemm_ref(int m, int n, int k, const float *a, const float *b, double *ref,
                     double *ref_abs)
{
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0.0, sa = 0.0;
            for (int l = 0; l < k; ++l) {
                double t = (double)a[(size_t)i * k + l] * b[(size_t)l * n + j];
                s += t;
                sa += fabs(t);
            }
            ref[(size_t)i * n + j] = s;
            ref_abs[(size_t)i * n + j] = sa;
        }
}

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
    gemm_ref(sz.m, sz.n, sz.k, b.h_a + a_offset, b.h_b, b.ref, b.ref_abs);
    CONV_ASSERT_OK(conv_device_alloc(&b.d_a, mk + 1, "A", &msg), msg);
    CONV_ASSERT_OK(conv_device_alloc(&b.d_b, kn, "B", &msg), msg);
    CONV_ASSERT_OK(conv_device_alloc(&b.d_c, mn, "C", &msg), msg);
    CONV_ASSERT_OK(conv_device_upload(b.d_a, b.h_a, mk + 1, &msg), msg);
    CONV_ASSERT_OK(conv_device_upload(b.d_b, b.h_b, kn, &msg), msg);
    CONV_ASSERT_OK(conv_device_poison(b.d_c, mn, &msg), msg);
    CONV_ASSERT_OK(
        gemm_sgemm(v, sz.m, sz.n, sz.k, b.d_a + a_offset, b.d_b, b.d_c, cublas, NULL, &msg), msg);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess, "%s: kernel failed: %s", gemm_variant_tag(v),
                 cudaGetErrorString(cudaGetLastError()));
    CONV_ASSERT_OK(conv_device_download(b.h_c, b.d_c, mn, &msg), msg);
    size_t bad = 0;
    CONV_ASSERT_OK(conv_device_canary_check(b.d_c, mn, &bad, &msg), msg);
    cr_assert_eq(bad, 0, "%s M=%d N=%d K=%d: %zu canary floats after C overwritten",
                 gemm_variant_tag(v), sz.m, sz.n, sz.k, bad);
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
        check_gemm_once(v, sz, 0, 0, cublas);
    }
    /* K % 4 == 0 but A not 16-byte aligned: the element-by-element path */
    gemm_size odd = {129, 132, 136};
    check_gemm_once(v, odd, 1, 1, cublas);
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
        size_t bad = 0;
        CONV_ASSERT_OK(conv_device_canary_check(d_c, mn, &bad, &msg), msg);
        cr_assert_eq(bad, 0, "%s: canary after C overwritten", gemm_variant_tag((gemm_variant)v));
    }
    conv_device_free(d_a);
    conv_device_free(d_b);
    conv_device_free(d_c);
}

/* ---------------------------------------------------------------------------
 * im2col and col2im. */

/* The shape table: 1x1 images, primes, filters 1x1 .. image, even and odd,
 * padding, stride, dilation, batches, and channel counts that are and are not
 * multiples of 4 (the float4 paths of NHWC im2col and 6f). */
static const conv_params *shape_table(size_t *count)
{
    static conv_params t[CONV_USUAL_SHAPES + 8];
    size_t n = conv_usual_shapes(t);
    t[n++] = conv_shape(1, 4, 13, 11, 4, 3, 3, 1, 1, 1);    /* C, K multiples of 4 */
    t[n++] = conv_shape(2, 8, 19, 23, 12, 3, 3, 1, 2, 1);   /* ... with stride */
    t[n++] = conv_shape(1, 12, 17, 17, 8, 3, 3, 2, 1, 2);   /* ... with dilation */
    t[n++] = conv_shape(2, 16, 24, 20, 129, 3, 3, 1, 1, 1); /* K = tile + 1 */
    t[n++] = conv_shape(3, 36, 12, 14, 132, 2, 3, 1, 1, 1); /* K = 132, C*R*S = 216 */
    t[n++] = conv_shape(1, 64, 20, 20, 128, 3, 3, 1, 1, 1); /* one full K tile */
    t[n++] = conv_shape(2, 20, 15, 17, 40, 5, 5, 2, 2, 1);  /* 5x5 stride 2 */
    t[n++] = conv_shape(5, 8, 23, 9, 20, 4, 2, 1, 1, 3);    /* even filters, dilation 3 */
    *count = n;
    return t;
}

/* The CPU im2col, straight from the definition. */
static void cpu_im2col(const conv_params *p, const float *x, float *col)
{
    int P = conv_out_h(p), Q = conv_out_w(p);
    size_t npq = (size_t)p->n * P * Q, rsc = (size_t)p->r * p->s * p->c;
    for (int n = 0; n < p->n; ++n)
        for (int c = 0; c < p->c; ++c)
            for (int r = 0; r < p->r; ++r)
                for (int s = 0; s < p->s; ++s)
                    for (int op = 0; op < P; ++op)
                        for (int oq = 0; oq < Q; ++oq) {
                            int h = op * p->stride_h - p->pad_h + r * p->dil_h;
                            int w = oq * p->stride_w - p->pad_w + s * p->dil_w;
                            float v = (h >= 0 && h < p->h && w >= 0 && w < p->w)
                                          ? x[conv_input_offset(p, n, c, h, w)]
                                          : 0.0f;
                            size_t row = ((size_t)n * P + op) * Q + oq;
                            if (p->layout == CONV_LAYOUT_NCHW)
                                col[(((size_t)c * p->r + r) * p->s + s) * npq + row] = v;
                            else
                                col[row * rsc + ((size_t)r * p->s + s) * p->c + c] = v;
                        }
}

static void check_im2col_table(conv_layout layout)
{
    CONV_TEST_REQUIRE_GPU();
    size_t count;
    const conv_params *table = shape_table(&count);
    conv_msg msg = {{0}};
    for (size_t i = 0; i < count; ++i) {
        conv_params p = table[i];
        p.layout = layout;
        size_t nx = conv_input_elems(&p), ncol = conv_im2col_elems(&p);
        float *h_x = conv_host_alloc(nx), *h_col = conv_host_alloc(ncol),
              *want = conv_host_alloc(ncol);
        float *d_x, *d_col;
        cr_assert(h_x && h_col && want, "host allocation failed");
        conv_fill_uniform(h_x, nx, 7 + i, -1.0f, 1.0f);
        cpu_im2col(&p, h_x, want);
        CONV_ASSERT_OK(conv_device_alloc(&d_x, nx, "x", &msg), msg);
        CONV_ASSERT_OK(conv_device_alloc(&d_col, ncol, "col", &msg), msg);
        CONV_ASSERT_OK(conv_device_upload(d_x, h_x, nx, &msg), msg);
        CONV_ASSERT_OK(conv_device_poison(d_col, ncol, &msg), msg);
        CONV_ASSERT_OK(im2col(&p, d_x, d_col, NULL, &msg), msg);
        CONV_ASSERT_OK(conv_device_download(h_col, d_col, ncol, &msg), msg);
        for (size_t j = 0; j < ncol; ++j)
            cr_assert(memcmp(&h_col[j], &want[j], sizeof(float)) == 0,
                      "im2col on %s: col[%zu] = %g, want %g", conv_shape_name(&p), j, h_col[j],
                      want[j]);
        size_t bad = 0;
        CONV_ASSERT_OK(conv_device_canary_check(d_col, ncol, &bad, &msg), msg);
        cr_assert_eq(bad, 0, "im2col on %s wrote past the column buffer", conv_shape_name(&p));
        conv_device_free(d_x);
        conv_device_free(d_col);
        conv_host_free(h_x);
        conv_host_free(h_col);
        conv_host_free(want);
    }
}

Test(gpu_im2col, nchw_matches_a_cpu_im2col_on_the_shape_table)
{
    check_im2col_table(CONV_LAYOUT_NCHW);
}

Test(gpu_im2col, nhwc_matches_a_cpu_im2col_on_the_shape_table)
{
    check_im2col_table(CONV_LAYOUT_NHWC);
}

/* Random shapes with padding, stride and dilation (valid ones only). */
static int pick(uint64_t *h, int lo, int hi)
{
    *h = conv_rng_hash(*h, 1);
    return lo + (int)(*h % (uint64_t)(hi - lo + 1));
}

static conv_params random_shape(uint64_t seed, conv_layout layout)
{
    conv_msg msg = {{0}};
    for (uint64_t t = 0;; ++t) {
        uint64_t h = conv_rng_hash(seed, t);
        conv_params p = conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1);
        p.n = pick(&h, 1, 3), p.c = pick(&h, 1, 6);
        p.h = pick(&h, 1, 23), p.w = pick(&h, 1, 23);
        p.r = pick(&h, 1, 5), p.s = pick(&h, 1, 5);
        p.pad_h = pick(&h, 0, 3), p.pad_w = pick(&h, 0, 3);
        p.stride_h = pick(&h, 1, 3), p.stride_w = pick(&h, 1, 3);
        p.dil_h = pick(&h, 1, 3), p.dil_w = pick(&h, 1, 3);
        p.layout = layout;
        if (conv_params_validate(&p, &msg) == CONV_OK)
            return p;
    }
}

/* <im2col(x), y> = <x, col2im(y)>. On small integers both sides are exact;
 * on floats col2im's float sums are within gamma_{R*S} * col2im(|y|) of exact
 * per element, which bounds the difference of the two dot products. */
static void check_adjoint(conv_layout layout, int exact)
{
    CONV_TEST_REQUIRE_GPU();
    conv_msg msg = {{0}};
    for (uint64_t t = 0; t < 24; ++t) {
        conv_params p = random_shape(100 * layout + t, layout);
        size_t nx = conv_input_elems(&p), ncol = conv_im2col_elems(&p);
        float *h_x = conv_host_alloc(nx), *h_y = conv_host_alloc(ncol);
        float *h_ax = conv_host_alloc(ncol), *h_aty = conv_host_alloc(nx);
        float *h_absy = conv_host_alloc(ncol), *h_atabs = conv_host_alloc(nx);
        cr_assert(h_x && h_y && h_ax && h_aty && h_absy && h_atabs, "host allocation failed");
        if (exact) {
            conv_fill_small_int(h_x, nx, t, -3, 3);
            conv_fill_small_int(h_y, ncol, t + 1, -3, 3);
        } else {
            conv_fill_uniform(h_x, nx, t, -1.0f, 1.0f);
            conv_fill_uniform(h_y, ncol, t + 1, -1.0f, 1.0f);
        }
        for (size_t j = 0; j < ncol; ++j)
            h_absy[j] = fabsf(h_y[j]);
        float *d_x, *d_col, *d_y, *d_aty;
        CONV_ASSERT_OK(conv_device_alloc(&d_x, nx, "x", &msg), msg);
        CONV_ASSERT_OK(conv_device_alloc(&d_aty, nx, "col2im(y)", &msg), msg);
        CONV_ASSERT_OK(conv_device_alloc(&d_col, ncol, "col", &msg), msg);
        CONV_ASSERT_OK(conv_device_alloc(&d_y, ncol, "y", &msg), msg);
        CONV_ASSERT_OK(conv_device_upload(d_x, h_x, nx, &msg), msg);
        CONV_ASSERT_OK(conv_device_upload(d_y, h_y, ncol, &msg), msg);
        CONV_ASSERT_OK(conv_device_poison(d_col, ncol, &msg), msg);
        CONV_ASSERT_OK(conv_device_poison(d_aty, nx, &msg), msg);
        CONV_ASSERT_OK(im2col(&p, d_x, d_col, NULL, &msg), msg);
        CONV_ASSERT_OK(col2im(&p, d_y, d_aty, NULL, &msg), msg);
        CONV_ASSERT_OK(conv_device_download(h_ax, d_col, ncol, &msg), msg);
        CONV_ASSERT_OK(conv_device_download(h_aty, d_aty, nx, &msg), msg);
        size_t bad = 0;
        CONV_ASSERT_OK(conv_device_canary_check(d_aty, nx, &bad, &msg), msg);
        cr_assert_eq(bad, 0, "col2im on %s wrote past x", conv_shape_name(&p));
        /* col2im(|y|) for the bound */
        CONV_ASSERT_OK(conv_device_upload(d_y, h_absy, ncol, &msg), msg);
        CONV_ASSERT_OK(col2im(&p, d_y, d_aty, NULL, &msg), msg);
        CONV_ASSERT_OK(conv_device_download(h_atabs, d_aty, nx, &msg), msg);

        double lhs = 0.0, rhs = 0.0, bound = 0.0, mag = 0.0;
        for (size_t j = 0; j < ncol; ++j) {
            cr_assert(isfinite(h_ax[j]), "im2col left col[%zu] unwritten on %s", j,
                      conv_shape_name(&p));
            lhs += (double)h_ax[j] * h_y[j];
            mag += fabs((double)h_ax[j] * h_y[j]);
        }
        for (size_t j = 0; j < nx; ++j) {
            cr_assert(isfinite(h_aty[j]), "col2im left x[%zu] unwritten on %s", j,
                      conv_shape_name(&p));
            rhs += (double)h_x[j] * h_aty[j];
            bound += fabs((double)h_x[j]) * h_atabs[j];
        }
        double tol =
            exact ? 0.0 : conv_gamma((size_t)p.r * p.s) * 1.0001 * bound + 1e-12 * (mag + bound);
        cr_assert(fabs(lhs - rhs) <= tol,
                  "adjoint on %s (%s): <im2col(x), y> = %.17g, <x, col2im(y)> = %.17g (tol %.3g)",
                  conv_shape_name(&p), exact ? "small integers" : "floats", lhs, rhs, tol);
        conv_device_free(d_x);
        conv_device_free(d_aty);
        conv_device_free(d_col);
        conv_device_free(d_y);
        conv_host_free(h_x);
        conv_host_free(h_y);
        conv_host_free(h_ax);
        conv_host_free(h_aty);
        conv_host_free(h_absy);
        conv_host_free(h_atabs);
    }
}

Test(gpu_col2im, nchw_is_the_adjoint_of_im2col_exactly_on_small_integers)
{
    check_adjoint(CONV_LAYOUT_NCHW, 1);
}
Test(gpu_col2im, nchw_is_the_adjoint_of_im2col_within_rounding_on_floats)
{
    check_adjoint(CONV_LAYOUT_NCHW, 0);
}
Test(gpu_col2im, nhwc_is_the_adjoint_of_im2col_exactly_on_small_integers)
{
    check_adjoint(CONV_LAYOUT_NHWC, 1);
}
Test(gpu_col2im, nhwc_is_the_adjoint_of_im2col_within_rounding_on_floats)
{
    check_adjoint(CONV_LAYOUT_NHWC, 0);
}

/* ---------------------------------------------------------------------------
 * The convolution pipelines against step 01. */

typedef struct {
    gemm_variant g;
    int implicit;
    float *d_work;
    size_t work_elems;
    conv_cublas *cublas;
} pipe_ctx;

static conv_status pipe_conv(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                             float *d_y, cudaStream_t stream, conv_msg *msg)
{
    pipe_ctx *pc = ctx;
    if (pc->implicit)
        return conv2d_implicit_gemm(p, d_x, d_w, d_y, stream, msg);
    return conv2d_im2col_gemm(p, d_x, d_w, d_y, pc->d_work, pc->work_elems, pc->g, pc->cublas,
                              stream, msg);
}

/* Convolutions above this many FLOPs are left out under compute-sanitizer. */
#define SANITIZER_MAX_FLOPS 4e6

static void check_pipeline(conv_layout layout, gemm_variant g, int implicit)
{
    CONV_TEST_REQUIRE_GPU();
    size_t count;
    const conv_params *table = shape_table(&count);
    conv_msg msg = {{0}};
    pipe_ctx pc = {g, implicit, NULL, 0, NULL};
    for (size_t i = 0; i < count; ++i) {
        conv_params p = table[i];
        p.layout = layout;
        size_t need = conv2d_im2col_gemm_workspace_elems(&p);
        if (need > pc.work_elems)
            pc.work_elems = need;
    }
    if (!implicit)
        CONV_ASSERT_OK(conv_device_alloc(&pc.d_work, pc.work_elems, "workspace", &msg), msg);
    if (g == GEMM_CUBLAS)
        CONV_ASSERT_OK(conv_cublas_create(&pc.cublas, &msg), msg);
    char what[64];
    snprintf(what, sizeof what, "%s %s", implicit ? "6f implicit" : gemm_variant_tag(g),
             layout == CONV_LAYOUT_NHWC ? "nhwc" : "nchw");
    int sanitizer = conv_test_under_sanitizer();
    for (size_t i = 0; i < count; ++i) {
        conv_params p = table[i];
        p.layout = layout;
        if (sanitizer && conv_flops(&p) > SANITIZER_MAX_FLOPS)
            continue; /* the few largest shapes: racecheck makes them minutes */
        conv_test_check_gpu_conv(&p, pipe_conv, &pc, conv2d_cpu_serial, what);
    }
    conv_cublas_destroy(pc.cublas);
    conv_device_free(pc.d_work);
}

#define PIPELINE_TESTS(tag, variant)                                                               \
    Test(gpu_conv_im2col_gemm, nchw_##tag##_matches_step01_on_the_shape_table)                     \
    {                                                                                              \
        check_pipeline(CONV_LAYOUT_NCHW, variant, 0);                                              \
    }                                                                                              \
    Test(gpu_conv_im2col_gemm, nhwc_##tag##_matches_step01_on_the_shape_table)                     \
    {                                                                                              \
        check_pipeline(CONV_LAYOUT_NHWC, variant, 0);                                              \
    }

PIPELINE_TESTS(6a, GEMM_6A_NAIVE)
PIPELINE_TESTS(6b, GEMM_6B_SHARED)
PIPELINE_TESTS(6c, GEMM_6C_REGTILE)
PIPELINE_TESTS(6d, GEMM_6D_FLOAT4)
PIPELINE_TESTS(6e, GEMM_6E_DBUF)
PIPELINE_TESTS(cublas, GEMM_CUBLAS)

Test(gpu_conv_implicit_gemm, nhwc_6f_matches_step01_on_the_shape_table)
{
    check_pipeline(CONV_LAYOUT_NHWC, GEMM_6E_DBUF, 1);
}

/* One problem larger than every tile, with the float4 paths, through 6e and
 * 6f at once (the table's shapes are small). */
Test(gpu_conv_implicit_gemm, nhwc_6e_and_6f_match_step01_on_a_multi_tile_problem)
{
    CONV_TEST_REQUIRE_GPU();
    if (conv_test_under_sanitizer())
        cr_skip_test("multi-tile problem skipped under compute-sanitizer");
    conv_params p = conv_shape(2, 32, 37, 41, 136, 3, 3, 1, 1, 1);
    p.layout = CONV_LAYOUT_NHWC;
    conv_msg msg = {{0}};
    conv_params q = p;
    q.layout = CONV_LAYOUT_NCHW; /* the NCHW workspace also holds the GEMM output */
    pipe_ctx pc = {GEMM_6E_DBUF, 0, NULL, conv2d_im2col_gemm_workspace_elems(&q), NULL};
    CONV_ASSERT_OK(conv_device_alloc(&pc.d_work, pc.work_elems, "workspace", &msg), msg);
    conv_test_check_gpu_conv(&p, pipe_conv, &pc, conv2d_cpu_serial, "6e nhwc multi-tile");
    pc.implicit = 1;
    conv_test_check_gpu_conv(&p, pipe_conv, &pc, conv2d_cpu_serial, "6f nhwc multi-tile");
    p.layout = CONV_LAYOUT_NCHW;
    pc.implicit = 0;
    conv_test_check_gpu_conv(&p, pipe_conv, &pc, conv2d_cpu_serial, "6e nchw multi-tile");
    conv_device_free(pc.d_work);
}
