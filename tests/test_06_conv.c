/* Step 06, the convolution as a matrix product: the im2col -> GEMM pipelines
 * with every GEMM in both layouts, and 6f, the implicit GEMM, against the host
 * reference over the shape table (padding, stride, dilation, batches); every bad input,
 * and every problem beyond the step's limits, rejected before a launch. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "conv_cublas.h"
#include "conv_im2col_gemm.h"
#include "conv_test_support.h"
#include "test_06_shapes.h"

/* ---------------------------------------------------------------------------
 * CPU tests: everything rejected before any CUDA call. */

static const float fake[8]; /* a non-NULL pointer for arguments that are never reached */

static conv_params lab_problem(void)
{
    conv_params p = conv_shape_nhwc(128, 128, 100, 100, 128, 3, 3, 1, 1, 1);
    return p;
}

Test(im2col_gemm_validation, rejects_a_column_buffer_larger_than_the_device_memory)
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

Test(im2col_gemm_validation, rejects_sizes_that_overflow_before_any_launch)
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
}

Test(im2col_gemm_validation, rejects_null_pointers_small_workspaces_and_bad_variants)
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
    cr_assert(strstr(msg.text, "--variant") != NULL, "message: %s", msg.text);
}

Test(implicit_gemm_validation, rejects_nchw_and_null_pointers)
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
 * The convolution pipelines against the host reference. */

/* Each run goes through conv2d_pipeline_conv, the adapter the step program and
 * conv_bench use. */

/* Convolutions above this many FLOPs are left out under compute-sanitizer. */
#define SANITIZER_MAX_FLOPS 4e6

static void check_pipeline(conv_layout layout, gemm_variant g, int implicit)
{
    CONV_TEST_REQUIRE_GPU();
    size_t count;
    const conv_params *table = shape_table(&count);
    conv_msg msg = {{0}};
    conv2d_pipeline pc = {g, implicit, NULL, 0, NULL};
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
        conv_test_check_gpu_conv(&p, conv2d_pipeline_conv, &pc, conv_test_host_reference, what);
    }
    conv_cublas_destroy(pc.cublas);
    conv_device_free(pc.d_work);
}

#define PIPELINE_TESTS(tag, variant)                                                               \
    Test(gpu_conv_im2col_gemm, nchw_##tag##_matches_the_reference_on_the_shape_table)              \
    {                                                                                              \
        check_pipeline(CONV_LAYOUT_NCHW, variant, 0);                                              \
    }                                                                                              \
    Test(gpu_conv_im2col_gemm, nhwc_##tag##_matches_the_reference_on_the_shape_table)              \
    {                                                                                              \
        check_pipeline(CONV_LAYOUT_NHWC, variant, 0);                                              \
    }

PIPELINE_TESTS(6a, GEMM_6A_NAIVE)
PIPELINE_TESTS(6b, GEMM_6B_SHARED)
PIPELINE_TESTS(6c, GEMM_6C_REGTILE)
PIPELINE_TESTS(6d, GEMM_6D_FLOAT4)
PIPELINE_TESTS(6e, GEMM_6E_DBUF)
PIPELINE_TESTS(cublas, GEMM_CUBLAS)

Test(gpu_conv_implicit_gemm, nhwc_6f_matches_the_reference_on_the_shape_table)
{
    check_pipeline(CONV_LAYOUT_NHWC, GEMM_6E_DBUF, 1);
}

/* One problem larger than every tile, with the float4 paths, through 6e and
 * 6f at once (the table's shapes are small). */
Test(gpu_conv_implicit_gemm, nhwc_6e_and_6f_match_the_reference_on_a_multi_tile_problem)
{
    CONV_TEST_REQUIRE_GPU();
    if (conv_test_under_sanitizer())
        cr_skip_test("multi-tile problem skipped under compute-sanitizer");
    conv_params p = conv_shape_nhwc(2, 32, 37, 41, 136, 3, 3, 1, 1, 1);
    conv_msg msg = {{0}};
    conv_params q = p;
    q.layout = CONV_LAYOUT_NCHW; /* the NCHW workspace also holds the GEMM output */
    conv2d_pipeline pc = {GEMM_6E_DBUF, 0, NULL, conv2d_im2col_gemm_workspace_elems(&q), NULL};
    CONV_ASSERT_OK(conv_device_alloc(&pc.d_work, pc.work_elems, "workspace", &msg), msg);
    conv_test_check_gpu_conv(&p, conv2d_pipeline_conv, &pc, conv_test_host_reference,
                             "6e nhwc multi-tile");
    pc.implicit = 1;
    conv_test_check_gpu_conv(&p, conv2d_pipeline_conv, &pc, conv_test_host_reference,
                             "6f nhwc multi-tile");
    p.layout = CONV_LAYOUT_NCHW;
    pc.implicit = 0;
    conv_test_check_gpu_conv(&p, conv2d_pipeline_conv, &pc, conv_test_host_reference,
                             "6e nchw multi-tile");
    conv_device_free(pc.d_work);
}
