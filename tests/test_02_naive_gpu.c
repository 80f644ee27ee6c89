/* Step 02: the grid-stride and 2D-block naive kernels against the host reference
 * (conv_test_host_reference: the double reference rounded to float). */
#include <limits.h>
#include <string.h>

#include "conv_naive.h"
#include "naive_rows.h"
#include "conv_test_support.h"

/* Which kernel an adapter call runs, and the grid cap of the grid-stride one. */
typedef struct {
    int two_d;
    int max_blocks;
} naive_choice;

static conv_status run_choice(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                              float *d_y, cudaStream_t stream, conv_msg *msg)
{
    const naive_choice *c = ctx;
    if (c->two_d)
        return conv2d_naive_2d(p, d_x, d_w, d_y, stream, msg);
    return conv2d_naive(p, d_x, d_w, d_y, c->max_blocks, stream, msg);
}

/* Awkward shapes: 1x1 images, primes, sizes around the 16x16 block, filters
 * from 1x1 to the whole image (even and odd), padding, stride, dilation and
 * batch > 1, alone and together. */
static const conv_params *shape_table(size_t *count)
{
    static conv_params t[CONV_USUAL_SHAPES + 3];
    size_t n = conv_usual_shapes(t);
    t[n++] = conv_shape(1, 2, 17, 17, 2, 2, 2, 0, 1, 1); /* output 16x16: one block */
    t[n++] = conv_shape(1, 2, 16, 16, 2, 2, 2, 0, 1, 1); /* output 15x15: block - 1 */
    t[n++] = conv_shape(1, 2, 18, 18, 2, 2, 2, 0, 1, 1); /* output 17x17: block + 1 */
    *count = n;
    return t;
}

/* The chosen kernel on every shape of the table in `layout` (a GPU check: it
 * skips the test without a device). */
static void check_table(conv_layout layout, naive_choice choice, const char *what)
{
    CONV_TEST_REQUIRE_GPU();
    size_t count;
    const conv_params *table = shape_table(&count);
    for (size_t i = 0; i < count; ++i) {
        conv_params p = table[i];
        p.layout = layout;
        conv_test_check_gpu_conv(&p, run_choice, &choice, conv_test_host_reference, what);
    }
}

Test(gpu_conv2d_naive, matches_the_reference_on_the_shape_table_in_nchw)
{
    check_table(CONV_LAYOUT_NCHW, (naive_choice){0, 0}, "conv2d_naive (NCHW)");
}

Test(gpu_conv2d_naive, matches_the_reference_on_the_shape_table_in_nhwc)
{
    check_table(CONV_LAYOUT_NHWC, (naive_choice){0, 0}, "conv2d_naive (NHWC)");
}

Test(gpu_conv2d_naive, loops_when_the_grid_is_smaller_than_the_problem)
{
    /* One block of 256 threads, then three: every thread computes many outputs. */
    check_table(CONV_LAYOUT_NCHW, (naive_choice){0, 1}, "conv2d_naive (1 block)");
    check_table(CONV_LAYOUT_NHWC, (naive_choice){0, 3}, "conv2d_naive (3 blocks, NHWC)");
}

Test(gpu_conv2d_naive_2d, matches_the_reference_on_the_shape_table_in_nchw)
{
    check_table(CONV_LAYOUT_NCHW, (naive_choice){1, 0}, "conv2d_naive_2d (NCHW)");
}

Test(gpu_conv2d_naive_2d, matches_the_reference_on_the_shape_table_in_nhwc)
{
    check_table(CONV_LAYOUT_NHWC, (naive_choice){1, 0}, "conv2d_naive_2d (NHWC)");
}

Test(gpu_conv2d_naive_2d, loops_over_more_than_65535_planes)
{
    CONV_TEST_REQUIRE_GPU();
    /* N*K = 2*35000 = 70000 output planes > 65535, the grid's z limit */
    conv_params p = conv_shape(2, 1, 2, 3, 35000, 1, 2, 0, 1, 1);
    conv_test_check_gpu_conv(&p, run_choice, &(naive_choice){1, 0}, conv_test_host_reference,
                             "conv2d_naive_2d (70000 planes)");
    conv_test_check_gpu_conv(&p, run_choice, &(naive_choice){0, 0}, conv_test_host_reference,
                             "conv2d_naive (70000 planes)");
}

Test(gpu_conv2d_naive_2d, loops_over_more_than_65535_block_rows)
{
    CONV_TEST_REQUIRE_GPU();
    /* P = 1048600 rows: ceil(P/16) = 65538 block rows > 65535, the grid's y limit */
    conv_params p = conv_shape(1, 1, 1048602, 2, 1, 3, 1, 0, 1, 1);
    conv_test_check_gpu_conv(&p, run_choice, &(naive_choice){1, 0}, conv_test_host_reference,
                             "conv2d_naive_2d (65538 block rows)");
}

Test(gpu_conv2d_naive, matches_the_reference_on_the_lecture_problem)
{
    CONV_TEST_REQUIRE_GPU();
    if (conv_test_under_sanitizer())
        cr_skip_test("the full lecture problem is left out under compute-sanitizer");
    conv_params p = conv_params_default();
    conv_test_check_gpu_conv(&p, run_choice, &(naive_choice){0, 0}, conv_test_host_reference,
                             "conv2d_naive (lecture problem)");
    conv_test_check_gpu_conv(&p, run_choice, &(naive_choice){1, 0}, conv_test_host_reference,
                             "conv2d_naive_2d (lecture problem)");
}

/* ---- bad input: rejected before any CUDA call (these run without a GPU) ---- */

static void expect_rejected(const conv_params *p, const float *x, const float *w, float *y,
                            conv_status want, const char *needle)
{
    conv_msg msg = {{0}};
    conv_status st = conv2d_naive(p, x, w, y, 0, 0, &msg);
    cr_assert_eq(st, want, "conv2d_naive: status %s, message: %s", conv_status_name(st), msg.text);
    cr_assert(strstr(msg.text, needle) != NULL, "conv2d_naive message lacks '%s': %s", needle,
              msg.text);
    cr_assert(strchr(msg.text, '\n') == NULL, "one line: %s", msg.text);
    conv_msg_clear(&msg);
    st = conv2d_naive_2d(p, x, w, y, 0, &msg);
    cr_assert_eq(st, want, "conv2d_naive_2d: status %s, message: %s", conv_status_name(st),
                 msg.text);
    cr_assert(strstr(msg.text, needle) != NULL, "conv2d_naive_2d message lacks '%s': %s", needle,
              msg.text);
}

/* The launchers never dereference these: validation fails first. */
static float fake[1];
#define FAKE_D (fake)

Test(conv2d_naive_validation, rejects_null_pointers_naming_the_argument)
{
    conv_params p = conv_shape(1, 1, 4, 4, 1, 3, 3, 0, 1, 1);
    expect_rejected(&p, NULL, FAKE_D, FAKE_D, CONV_ERR_INVALID, "d_x");
    expect_rejected(&p, FAKE_D, NULL, FAKE_D, CONV_ERR_INVALID, "d_w");
    expect_rejected(&p, FAKE_D, FAKE_D, NULL, CONV_ERR_INVALID, "d_y");
    expect_rejected(NULL, FAKE_D, FAKE_D, FAKE_D, CONV_ERR_INVALID, "NULL");
}

Test(conv2d_naive_validation, rejects_zero_and_negative_sizes_naming_the_flag)
{
    conv_params p = conv_shape(1, 1, 0, 4, 1, 1, 1, 0, 1, 1);
    expect_rejected(&p, FAKE_D, FAKE_D, FAKE_D, CONV_ERR_INVALID, "--h");
    p = conv_shape(-2, 1, 4, 4, 1, 1, 1, 0, 1, 1);
    expect_rejected(&p, FAKE_D, FAKE_D, FAKE_D, CONV_ERR_INVALID, "--n");
    p = conv_shape(1, 1, 4, 4, -1, 1, 1, 0, 1, 1);
    expect_rejected(&p, FAKE_D, FAKE_D, FAKE_D, CONV_ERR_INVALID, "--k");
    p = conv_shape(1, 1, 4, 4, 1, 3, 3, -1, 1, 1);
    expect_rejected(&p, FAKE_D, FAKE_D, FAKE_D, CONV_ERR_INVALID, "--pad-h");
    p = conv_shape(1, 1, 4, 4, 1, 3, 3, 0, 0, 1);
    expect_rejected(&p, FAKE_D, FAKE_D, FAKE_D, CONV_ERR_INVALID, "--stride-h");
    p = conv_shape(1, 1, 4, 4, 1, 5, 5, 0, 1, 1);
    expect_rejected(&p, FAKE_D, FAKE_D, FAKE_D, CONV_ERR_INVALID, "larger than the padded image");
}

Test(conv2d_naive_validation, rejects_padding_beyond_the_int_index_range)
{
    conv_params p = conv_shape(1, 1, 4, 4, 1, 1, 1, 0, 1, 1);
    p.pad_h = INT_MAX / 2; /* H + 2*pad = 2^31 + 2; a large stride keeps the output small */
    p.stride_h = 1 << 20;
    expect_rejected(&p, FAKE_D, FAKE_D, FAKE_D, CONV_ERR_UNSUPPORTED, "--pad-h");
    p = conv_shape(1, 1, 4, 4, 1, 1, 1, 0, 1, 1);
    p.pad_w = INT_MAX / 2;
    p.stride_w = 1 << 20;
    expect_rejected(&p, FAKE_D, FAKE_D, FAKE_D, CONV_ERR_UNSUPPORTED, "--pad-w");
}

/* The rows the program and conv_bench run, checked like the kernels above. */
Test(gpu_conv2d_naive_rows, every_row_matches_the_reference_on_the_usual_shapes_in_both_layouts)
{
    CONV_TEST_REQUIRE_GPU();
    conv_test_check_rows(conv_naive_rows, conv_test_host_reference, CONV_LAYOUT_NCHW, 2, NULL);
    conv_test_check_rows(conv_naive_rows, conv_test_host_reference, CONV_LAYOUT_NHWC, 2, NULL);
}

/* The rows name each kernel by its key, the value of the program's --variant
 * that picks it (no GPU needed: nothing runs). */
Test(conv2d_naive_rows, name_each_kernel_by_its_key)
{
    static const char *const named[][2] = {{"2a", "2a naive grid-stride"},
                                           {"2b", "2b naive 16x16 blocks"}};
    conv_params p = conv_params_default();
    conv_test_assert_rows(conv_naive_rows, &p, named, 2);
}
