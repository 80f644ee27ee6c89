/* Step 05: kernels 5a (both loop orders) and 5b against the host reference
 * (conv_test_host_reference), exactly on
 * small integers and within the error bound on random floats, over the shape
 * table; plus the rejections that happen before any launch. */
#include <stdint.h>
#include <string.h>

#include "conv_prefetch.h"
#include "prefetch_rows.h"
#include "conv_test_support.h"

static const conv_prefetch_variant all_variants[] = {CONV_PREFETCH_5A, CONV_PREFETCH_5A_OC_OUTER,
                                                     CONV_PREFETCH_5B};
#define N_VARIANTS (sizeof all_variants / sizeof all_variants[0])

static conv_params shape(int n, int c, int h, int w, int k, int r, int s, int same)
{
    conv_params p = conv_shape(n, c, h, w, k, r, s, 0, 1, 1);
    if (same)
        conv_params_set_same_padding(&p);
    return p;
}

/* Every variant on one shape (conv_test_check_gpu_conv: NaN-poisoned output,
 * exact on small integers, within the bound on floats, canary). */
static void check_all(const conv_params *p)
{
    for (size_t i = 0; i < N_VARIANTS; ++i) {
        conv_prefetch_variant v = all_variants[i];
        conv_test_check_gpu_conv(p, conv2d_prefetch_conv, &v, conv_test_host_reference,
                                 conv_prefetch_variant_name(v));
    }
}

/* check_all on shape(n, c, h, w, k, r, s, same). */
static void check_shape(int n, int c, int h, int w, int k, int r, int s, int same)
{
    conv_params p = shape(n, c, h, w, k, r, s, same);
    check_all(&p);
}

Test(gpu_conv2d_prefetch, matches_the_reference_on_widths_1_to_9_31_and_33_and_short_heights)
{
    CONV_TEST_REQUIRE_GPU();
    static const int widths[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 31, 33};
    static const int heights[] = {1, 2, 7, 29};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i)
        for (size_t j = 0; j < sizeof heights / sizeof heights[0]; ++j) {
            check_shape(1, 2, heights[j], widths[i], 3, 3, 3, 1);
            /* a valid 2x2 filter where it fits: an even filter on every row alignment */
            if (widths[i] >= 2 && heights[j] >= 2)
                check_shape(1, 3, heights[j], widths[i], 2, 2, 2, 0);
        }
}

Test(gpu_conv2d_prefetch, matches_the_reference_on_widths_around_512_alignment_cases)
{
    CONV_TEST_REQUIRE_GPU();
    static const int widths[] = {511, 512, 513};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i) {
        check_shape(1, 3, 29, widths[i], 5, 6, 6, 0);
        check_shape(1, 2, 7, widths[i], 6, 3, 3, 1);
    }
}

Test(gpu_conv2d_prefetch, matches_the_reference_on_every_filter_size_valid_and_same)
{
    CONV_TEST_REQUIRE_GPU();
    static const int filters[] = {1, 2, 3, 5, 6, 7, CONV_PREFETCH_MAX_FILTER};
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; ++i)
        for (int same = 0; same <= 1; ++same)
            check_shape(1, 3, 29, 33, 5, filters[i], filters[i], same);
    /* not square: the generic path */
    check_shape(2, 2, 31, 29, 3, 3, 5, 1);
    check_shape(1, 2, 30, 20, 7, CONV_PREFETCH_MAX_FILTER, 2, 0);
}

Test(gpu_conv2d_prefetch, matches_the_reference_when_the_filter_is_the_whole_image)
{
    CONV_TEST_REQUIRE_GPU();
    static const int sides[] = {1, 3, 6, 7, CONV_PREFETCH_MAX_FILTER};
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; ++i)
        check_shape(2, 3, sides[i], sides[i], 5, sides[i], sides[i], 0);
    check_shape(1, 2, 5, 8, 3, 5, 8, 0);
}

Test(gpu_conv2d_prefetch, matches_the_reference_for_channel_counts_off_every_chunk)
{
    CONV_TEST_REQUIRE_GPU();
    static const int counts[] = {1, 2, 3, 5, 6, 17, 64};
    const size_t nc = sizeof counts / sizeof counts[0];
    for (size_t i = 0; i < nc; ++i) {
        /* C and K each over the whole list, paired with a partner from the other end */
        check_shape(1, counts[i], 13, 19, counts[nc - 1 - i], 3, 3, 1);
        check_shape(1, counts[i], 11, 14, counts[i], 6, 6, 0);
        check_shape(1, 2, 12, 12, counts[i], 7, 7, 0);
    }
}

Test(gpu_conv2d_prefetch, matches_the_reference_on_batches_and_asymmetric_padding)
{
    CONV_TEST_REQUIRE_GPU();
    check_shape(4, 3, 29, 31, 6, 6, 6, 0);
    check_shape(4, 5, 29, 31, 17, 5, 5, 1);
    check_shape(4, 1, 17, 23, 4, 7, 7, 1);
    conv_params p = shape(2, 2, 13, 17, 3, 3, 3, 0);
    p.pad_h = 2;
    p.pad_w = 0;
    check_all(&p);
    p.pad_h = 0;
    p.pad_w = 3;
    check_all(&p);
}

Test(gpu_conv2d_prefetch, matches_the_reference_on_tall_and_full_size_images)
{
    CONV_TEST_REQUIRE_GPU();
    /* height 768: tall narrow images, one block column */
    check_shape(1, 2, 768, 9, 3, 3, 3, 1);
    check_shape(1, 2, 768, 33, 6, 6, 6, 0);
    if (conv_test_under_sanitizer())
        return; /* the full-size problems below take minutes under the sanitizers */
    check_shape(1, 6, 768, 512, 6, 6, 6, 0); /* the lecture problem */
    check_shape(1, 6, 768, 513, 6, 7, 7, 1);
}

/* Runs a variant on copies of the tensors that start 1 to 3 floats past a
 * 256-byte boundary (so no row of the tensors is where cudaMalloc would put
 * it), then copies the output back where the harness checks it. */
typedef struct {
    conv_prefetch_variant v;
    int offset;
    float *x, *w, *y; /* scratch with room for the offset */
} shifted_ctx;

static conv_status run_shifted(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                               float *d_y, cudaStream_t stream, conv_msg *msg)
{
    const shifted_ctx *s = ctx;
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    CONV_CUDA_CHECK(cudaMemcpyAsync(s->x + s->offset, d_x, nx * sizeof(float),
                                    cudaMemcpyDeviceToDevice, stream),
                    msg);
    CONV_CUDA_CHECK(cudaMemcpyAsync(s->w + s->offset, d_w, nw * sizeof(float),
                                    cudaMemcpyDeviceToDevice, stream),
                    msg);
    CONV_CUDA_CHECK(cudaMemsetAsync(s->y, 0xFF, (ny + s->offset) * sizeof(float), stream), msg);
    conv_status st = conv2d_prefetch_conv((void *)&s->v, p, s->x + s->offset, s->w + s->offset,
                                          s->y + s->offset, stream, msg);
    if (st != CONV_OK)
        return st;
    CONV_CUDA_CHECK(cudaMemcpyAsync(d_y, s->y + s->offset, ny * sizeof(float),
                                    cudaMemcpyDeviceToDevice, stream),
                    msg);
    return CONV_OK;
}

Test(gpu_conv2d_prefetch, handles_buffers_offset_by_one_to_three_floats)
{
    CONV_TEST_REQUIRE_GPU();
    const conv_params shapes[] = {shape(1, 3, 29, 512, 6, 6, 6, 0), shape(2, 2, 17, 31, 5, 3, 3, 1),
                                  shape(1, 2, 23, 86, 4, 7, 7, 0)};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        const conv_params *p = &shapes[i];
        shifted_ctx s = {CONV_PREFETCH_5A, 1, NULL, NULL, NULL};
        cr_assert_eq(cudaMalloc((void **)&s.x, (conv_input_elems(p) + 4) * sizeof(float)),
                     cudaSuccess);
        cr_assert_eq(cudaMalloc((void **)&s.w, (conv_filter_elems(p) + 4) * sizeof(float)),
                     cudaSuccess);
        cr_assert_eq(cudaMalloc((void **)&s.y, (conv_output_elems(p) + 4) * sizeof(float)),
                     cudaSuccess);
        for (int off = 1; off <= 3; ++off)
            for (size_t v = 0; v < N_VARIANTS; ++v) {
                char what[64];
                s.v = all_variants[v];
                s.offset = off;
                snprintf(what, sizeof what, "%s with buffers offset by %d float%s",
                         conv_prefetch_variant_name(s.v), off, off > 1 ? "s" : "");
                conv_test_check_gpu_conv(p, run_shifted, &s, conv_test_host_reference, what);
            }
        cudaFree(s.x);
        cudaFree(s.w);
        cudaFree(s.y);
    }
}

/* ---- CPU tests: everything rejected before any CUDA call ---- */

/* Fake device pointers: never dereferenced, validation fails first. */
#define FAKE_PTR ((float *)(uintptr_t)0x10000)

static void expect_rejected(const conv_params *p, const float *x, const float *w, float *y,
                            conv_status want, const char *needle)
{
    for (size_t i = 0; i < N_VARIANTS; ++i) {
        conv_msg msg = {{0}};
        conv_status st = conv2d_prefetch_conv((void *)&all_variants[i], p, x, w, y, 0, &msg);
        cr_assert_eq(st, want, "%s: status %s, want %s (%s)",
                     conv_prefetch_variant_name(all_variants[i]), conv_status_name(st),
                     conv_status_name(want), msg.text);
        cr_assert(strstr(msg.text, needle) != NULL, "%s: message '%s' lacks '%s'",
                  conv_prefetch_variant_name(all_variants[i]), msg.text, needle);
    }
}

Test(conv2d_prefetch_validation, rejects_filters_above_the_maximum)
{
    conv_params p = shape(1, 1, 40, 40, 1, CONV_PREFETCH_MAX_FILTER + 1, 3, 0);
    expect_rejected(&p, FAKE_PTR, FAKE_PTR, FAKE_PTR, CONV_ERR_UNSUPPORTED, "--r");
    p = shape(1, 1, 40, 40, 1, 3, CONV_PREFETCH_MAX_FILTER + 1, 0);
    expect_rejected(&p, FAKE_PTR, FAKE_PTR, FAKE_PTR, CONV_ERR_UNSUPPORTED, "--s");
}

Test(conv2d_prefetch_validation, rejects_unsupported_stride_dilation_and_layout)
{
    conv_params p = conv_shape(1, 1, 20, 20, 1, 3, 3, 0, 2, 1);
    expect_rejected(&p, FAKE_PTR, FAKE_PTR, FAKE_PTR, CONV_ERR_UNSUPPORTED, "--stride");
    p = conv_shape(1, 1, 20, 20, 1, 3, 3, 0, 1, 2);
    expect_rejected(&p, FAKE_PTR, FAKE_PTR, FAKE_PTR, CONV_ERR_UNSUPPORTED, "--dilation");
    p = conv_shape(1, 1, 20, 20, 1, 3, 3, 0, 1, 1);
    p.layout = CONV_LAYOUT_NHWC;
    expect_rejected(&p, FAKE_PTR, FAKE_PTR, FAKE_PTR, CONV_ERR_UNSUPPORTED, "--layout");
}

Test(conv2d_prefetch_validation, rejects_null_and_misaligned_pointers_naming_the_argument)
{
    conv_params p = shape(1, 1, 20, 20, 1, 3, 3, 0);
    expect_rejected(&p, NULL, FAKE_PTR, FAKE_PTR, CONV_ERR_INVALID, "d_x");
    expect_rejected(&p, FAKE_PTR, NULL, FAKE_PTR, CONV_ERR_INVALID, "d_w");
    expect_rejected(&p, FAKE_PTR, FAKE_PTR, NULL, CONV_ERR_INVALID, "d_y");
    float *odd = (float *)((uintptr_t)0x10000 + 2); /* not even float-aligned */
    expect_rejected(&p, odd, FAKE_PTR, FAKE_PTR, CONV_ERR_INVALID, "d_x");
    expect_rejected(&p, FAKE_PTR, FAKE_PTR, odd, CONV_ERR_INVALID, "d_y");
    expect_rejected(NULL, FAKE_PTR, FAKE_PTR, FAKE_PTR, CONV_ERR_INVALID, "NULL");
}

Test(conv2d_prefetch_validation, rejects_invalid_parameters_naming_the_flag)
{
    conv_params p = shape(1, 1, 0, 20, 1, 3, 3, 0);
    expect_rejected(&p, FAKE_PTR, FAKE_PTR, FAKE_PTR, CONV_ERR_INVALID, "--h");
    p = shape(1, 1, 4, 4, 1, 5, 5, 0); /* filter larger than the image */
    expect_rejected(&p, FAKE_PTR, FAKE_PTR, FAKE_PTR, CONV_ERR_INVALID, "");
}

/* The plans cover the output exactly once and stay within the limits for
 * every filter size and awkward widths and heights. */
Test(conv2d_prefetch_plan, covers_the_output_within_the_limits)
{
    static const int sizes[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 86, 507, 763};
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; ++a)
        for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; ++b)
            for (int f = 1; f <= CONV_PREFETCH_MAX_FILTER; f += 3)
                for (int k = 1; k <= 33; k += 8) {
                    conv_params p = shape(2, 3, sizes[a] + f - 1, sizes[b] + f - 1, k, f, f, 0);
                    for (size_t v = 0; v < N_VARIANTS; ++v) {
                        conv_prefetch_plan pl;
                        conv_msg msg = {{0}};
                        CONV_ASSERT_OK(
                            conv2d_prefetch_plan(all_variants[v], &p, 48 * 1024, &pl, &msg), msg);
                        const int P = conv_out_h(&p), Q = conv_out_w(&p);
                        cr_assert(pl.tx * pl.ty <= 256 && pl.tx * pl.ty >= 1);
                        cr_assert(pl.smem_bytes <= 48 * 1024, "%zu bytes", pl.smem_bytes);
                        cr_assert(pl.tile_stride % 4 == 0);
                        cr_assert(pl.k_chunks * pl.kc >= k && (pl.k_chunks - 1) * pl.kc < k);
                        if (all_variants[v] == CONV_PREFETCH_5B) {
                            cr_assert(pl.col_blocks * pl.bw >= Q &&
                                      (pl.col_blocks - 1) * pl.bw < Q);
                            cr_assert(pl.row_blocks * pl.bh >= P &&
                                      (pl.row_blocks - 1) * pl.bh < P);
                        } else {
                            /* the last block takes the remainder: at most 2 blocks - 1 */
                            const int last_w = Q - (pl.col_blocks - 1) * pl.bw;
                            const int last_h = P - (pl.row_blocks - 1) * pl.bh;
                            cr_assert(last_w >= 1 && last_w < 2 * pl.bw, "last width %d", last_w);
                            cr_assert(last_h >= 1 && last_h < 2 * pl.bh, "last height %d", last_h);
                            cr_assert(pl.col_blocks == 1 || last_w >= pl.bw);
                            cr_assert(pl.row_blocks == 1 || last_h >= pl.bh);
                        }
                    }
                }
}

Test(conv2d_prefetch_plan, picks_the_specialised_kernels_for_the_benchmark_problems)
{
    conv_prefetch_plan pl;
    conv_msg msg = {{0}};
    conv_params p = conv_params_default(); /* lecture: K = 6, 6x6 */
    CONV_ASSERT_OK(conv2d_prefetch_plan(CONV_PREFETCH_5B, &p, 48 * 1024, &pl, &msg), msg);
    cr_assert_eq(pl.filter, 6);
    cr_assert_eq(pl.kc, 6);
    cr_assert_eq(pl.ow, 8);
    p = shape(10000, 1, 86, 86, 4, 7, 7, 0); /* ECE408 layer 1 */
    CONV_ASSERT_OK(conv2d_prefetch_plan(CONV_PREFETCH_5B, &p, 48 * 1024, &pl, &msg), msg);
    cr_assert_eq(pl.filter, 7);
    cr_assert_eq(pl.kc, 4);
    p = shape(10000, 4, 40, 40, 16, 7, 7, 0); /* ECE408 layer 2 */
    CONV_ASSERT_OK(conv2d_prefetch_plan(CONV_PREFETCH_5B, &p, 48 * 1024, &pl, &msg), msg);
    cr_assert_eq(pl.filter, 7);
    cr_assert_eq(pl.kc, 16);
    cr_assert_eq(pl.ow, 4);
    p = shape(1, 2, 20, 20, 3, 3, 5, 0); /* not square: generic */
    CONV_ASSERT_OK(conv2d_prefetch_plan(CONV_PREFETCH_5B, &p, 48 * 1024, &pl, &msg), msg);
    cr_assert_eq(pl.filter, 0);
}

/* The plan follows the device's shared-memory limit: a 16x16 filter with
 * 16 channels per block gets taller blocks where a block may use more than
 * 48 KB, and a limit too small for any block is an error naming it. */
Test(conv2d_prefetch_plan, grows_blocks_with_the_shared_memory_limit_and_names_a_limit_too_small)
{
    conv_params p = shape(1, 4, 200, 200, 16, 16, 16, 0);
    conv_prefetch_plan small, big;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv2d_prefetch_plan(CONV_PREFETCH_5B, &p, 48 * 1024, &small, &msg), msg);
    CONV_ASSERT_OK(conv2d_prefetch_plan(CONV_PREFETCH_5B, &p, 227 * 1024, &big, &msg), msg);
    cr_assert(small.smem_bytes <= 48 * 1024 && big.smem_bytes <= 227 * 1024);
    cr_assert_gt(big.ty, small.ty, "rows per block: %d with 227 KB, %d with 48 KB", big.ty,
                 small.ty);
    cr_assert_eq(conv2d_prefetch_plan(CONV_PREFETCH_5B, &p, 16 * 1024, &small, &msg),
                 CONV_ERR_UNSUPPORTED);
    cr_assert(strstr(msg.text, "shared memory") != NULL, "%s", msg.text);
}

/* The rows the program and conv_bench run, checked like the kernels above. */
Test(gpu_conv2d_prefetch, every_row_of_the_step_matches_the_reference_on_the_usual_shapes)
{
    CONV_TEST_REQUIRE_GPU();
    conv_test_check_rows(conv_prefetch_rows, conv_test_host_reference, CONV_LAYOUT_NCHW, 3, "*");
}
