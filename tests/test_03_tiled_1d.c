/* Step 03: the two naive 1D kernels and the three tiling strategies against
 * the 1D host reference (conv_test_conv1d_reference: the double reference
 * rounded to float), and the launchers' validation. */
#include <string.h>

#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_tiled_1d.h"
#include "tiled_1d_rows.h"

/* Widths: 1 and 2 (smaller than any mask), both tile sizes -1/0/+1 (strategy
 * 2's 256 and strategies 1 and 3's 1024), primes, and 10^6 + 3. */
static const long long widths[] = {1,    2,    3,  255,  256,  257,    1023,
                                   1024, 1025, 31, 1031, 4099, 1000003};
#define N_WIDTHS  (sizeof widths / sizeof widths[0])
#define BIG_WIDTH 1000003
#define N_MASKS   5

/* The buffers of one width: on the host x, y, the expected y and the mask, in
 * one block; on the device x and y, each followed by a canary. */
typedef struct {
    float *h_x, *h_y, *h_want, *h_mask;
    float *d_x, *d_y;
} buffers;

static buffers make_buffers(size_t width, int max_mask)
{
    conv_msg msg = {{0}};
    buffers b = {0};
    b.h_x = conv_host_alloc(3 * width + (size_t)max_mask);
    cr_assert(b.h_x != NULL, "out of host memory");
    b.h_y = b.h_x + width;
    b.h_want = b.h_y + width;
    b.h_mask = b.h_want + width;
    CONV_ASSERT_OK(conv_device_alloc(&b.d_x, width, "x", &msg), msg);
    CONV_ASSERT_OK(conv_device_alloc(&b.d_y, width, "y", &msg), msg);
    return b;
}

static void free_buffers(buffers *b)
{
    conv_host_free(b->h_x); /* the whole host block */
    conv_device_free(b->d_x);
    conv_device_free(b->d_y);
}

/* One run: upload x and the mask, poison y with NaN, run, download, check the canary. */
static void run_device(conv1d_strategy s, buffers *b, size_t width, int m)
{
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_device_upload(b->d_x, b->h_x, width, &msg), msg);
    CONV_ASSERT_OK(conv1d_upload_mask(b->h_mask, m, 0, &msg), msg);
    CONV_ASSERT_OK(conv_device_poison(b->d_y, width, &msg), msg);
    conv_status st = conv1d_tiled(s, b->d_x, b->d_y, (long long)width, m, 0, &msg);
    cr_assert_eq(st, CONV_OK, "%s, width %zu, mask %d: %s", conv1d_strategy_name(s), width, m,
                 msg.text);
    cudaError_t e = cudaDeviceSynchronize();
    cr_assert_eq(e, cudaSuccess, "%s, width %zu, mask %d: %s", conv1d_strategy_name(s), width, m,
                 cudaGetErrorString(e));
    CONV_ASSERT_OK(conv_device_download(b->h_y, b->d_y, width, &msg), msg);
    conv_test_assert_canary(b->d_y, width, "%s, width %zu, mask %d", conv1d_strategy_name(s), width,
                            m);
}

static void assert_report(const conv_verify_report *rep, conv1d_strategy s, size_t width, int m,
                          const char *what)
{
    char desc[CONV_MSG_LEN];
    conv_report_describe(rep, desc, sizeof desc);
    cr_assert(rep->passed, "%s, width %zu, mask %d (%s): %s", conv1d_strategy_name(s), width, m,
              what, desc);
}

/* Every width with masks 1, 3, 5, 7 and the largest the strategy allows:
 *   small integers in [-3, 3]: exactly the reference's result, no NaN left;
 *   uniform floats: within gamma_M of the double reference.
 * Left out: the largest mask on 10^6 + 3 (1.6e10 multiply-adds for the CPU
 * reference). Under compute-sanitizer (racecheck is 10-100x slower) the
 * 10^6 + 3 width is left out, and the largest mask (16383 taps for every
 * output of a 1024-output tile) runs only on widths 1, tile - 1, tile and
 * tile + 1: the array far narrower than the mask, and the halo crossing
 * between two tiles; racecheck runs the small integers alone. */
static int largest_mask_under_sanitizer(conv1d_strategy s, size_t width)
{
    const size_t tile = s == CONV1D_S2 ? CONV1D_S2_TILE : CONV1D_TILE;
    return width == 1 || width == tile - 1 || width == tile || width == tile + 1;
}

/* Strategy 1 keeps the input tile in shared memory: 4 * (1024 + M - 1) bytes,
 * above 48 KB for masks wider than about 11,000. Where the device (or
 * CONV_SMEM_LIMIT_KB) allows less, the launcher refuses the mask with one line
 * naming the limit, and launches nothing. */
static int fits_shared_memory(conv1d_strategy s, int m)
{
    return s != CONV1D_S1 || (size_t)(CONV1D_TILE + m - 1) * sizeof(float) <= conv_smem_limit();
}

static void expect_refused_for_shared_memory(conv1d_strategy s, buffers *b, size_t width, int m)
{
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv1d_upload_mask(b->h_mask, m, 0, &msg), msg);
    conv_status st = conv1d_tiled(s, b->d_x, b->d_y, (long long)width, m, 0, &msg);
    cr_assert_eq(st, CONV_ERR_UNSUPPORTED, "%s, mask %d beyond the shared-memory limit: %s",
                 conv1d_strategy_name(s), m, conv_status_name(st));
    cr_assert(strstr(msg.text, "shared memory") != NULL, "message: %s", msg.text);
}

static void check_strategy(conv1d_strategy s)
{
    const int masks[N_MASKS] = {1, 3, 5, 7, conv1d_max_mask_width(s)};
    const int sanitizer = conv_test_under_sanitizer(), racecheck = conv_test_under_racecheck();
    for (size_t i = 0; i < N_WIDTHS; ++i) {
        const size_t width = (size_t)widths[i];
        if (sanitizer && width == BIG_WIDTH)
            continue;
        buffers b = make_buffers(width, masks[N_MASKS - 1]);
        for (int k = 0; k < N_MASKS; ++k) {
            const int m = masks[k];
            if (k == N_MASKS - 1 && width == BIG_WIDTH)
                continue;
            if (k == N_MASKS - 1 && sanitizer && !largest_mask_under_sanitizer(s, width))
                continue;
            conv_msg msg = {{0}};
            uint64_t seed = 1000 * i + (uint64_t)k;
            if (!fits_shared_memory(s, m)) {
                expect_refused_for_shared_memory(s, &b, width, m);
                continue;
            }
            conv_fill_small_int(b.h_x, width, seed, -3, 3);
            conv_fill_small_int(b.h_mask, (size_t)m, seed + 1, -3, 3);
            CONV_ASSERT_OK(conv_test_conv1d_reference(b.h_x, width, b.h_mask, m, b.h_want, &msg),
                           msg);
            run_device(s, &b, width, m);
            conv_verify_report rep = conv_compare_exact(NULL, b.h_y, b.h_want, width);
            assert_report(&rep, s, width, m, "small integers, exact vs the reference");
            if (racecheck)
                continue; /* values do not change which threads touch what */

            conv_fill_uniform(b.h_x, width, seed + 2, -1.0f, 1.0f);
            conv_fill_uniform(b.h_mask, (size_t)m, seed + 3, -1.0f, 1.0f);
            run_device(s, &b, width, m);
            rep = conv1d_verify_full(b.h_x, width, b.h_mask, m, b.h_y, conv_verify_bound(1.0));
            assert_report(&rep, s, width, m, "uniform floats, within gamma_M");
        }
        free_buffers(&b);
    }
}

Test(gpu_conv1d_naive, matches_the_reference_on_every_width_and_mask)
{
    CONV_TEST_REQUIRE_GPU();
    check_strategy(CONV1D_NAIVE);
}

Test(gpu_conv1d_naive_x4, matches_the_reference_on_every_width_and_mask)
{
    CONV_TEST_REQUIRE_GPU();
    check_strategy(CONV1D_NAIVE_X4);
}

Test(gpu_conv1d_tiled_s1, matches_the_reference_on_every_width_and_mask)
{
    CONV_TEST_REQUIRE_GPU();
    check_strategy(CONV1D_S1);
}

Test(gpu_conv1d_tiled_s2, matches_the_reference_on_every_width_and_mask)
{
    CONV_TEST_REQUIRE_GPU();
    check_strategy(CONV1D_S2);
}

Test(gpu_conv1d_tiled_s3, matches_the_reference_on_every_width_and_mask)
{
    CONV_TEST_REQUIRE_GPU();
    check_strategy(CONV1D_S3);
}

Test(gpu_conv1d_mask, refuses_a_launch_with_a_width_other_than_the_uploaded_one)
{
    CONV_TEST_REQUIRE_GPU();
    buffers b = make_buffers(64, 7);
    conv_fill_small_int(b.h_mask, 7, 1, -3, 3);
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv1d_upload_mask(b.h_mask, 7, 0, &msg), msg);
    for (int s = 0; s < CONV1D_N_STRATEGIES; ++s) {
        conv_status st = conv1d_tiled((conv1d_strategy)s, b.d_x, b.d_y, 64, 5, 0, &msg);
        cr_assert_eq(st, CONV_ERR_INVALID, "%s ran with mask 5 after uploading 7",
                     conv1d_strategy_name((conv1d_strategy)s));
        cr_assert(strstr(msg.text, "conv1d_upload_mask") != NULL, "message: %s", msg.text);
    }
    free_buffers(&b);
}

/* ---- bad input: rejected before any CUDA call (these run without a GPU) ---- */

/* Fake device pointers: validation fails before anything is dereferenced. */
static float fake_x[1], fake_y[1];

static void expect_all_reject(const float *d_x, float *d_y, long long width, int m,
                              const char *needle)
{
    for (int s = 0; s < CONV1D_N_STRATEGIES; ++s) {
        conv_msg msg = {{0}};
        conv_status st = conv1d_tiled((conv1d_strategy)s, d_x, d_y, width, m, 0, &msg);
        cr_assert_eq(st, CONV_ERR_INVALID, "%s: width %lld mask %d: status %s (%s)",
                     conv1d_strategy_name((conv1d_strategy)s), width, m, conv_status_name(st),
                     msg.text);
        cr_assert(strstr(msg.text, needle) != NULL, "%s: message lacks '%s': %s",
                  conv1d_strategy_name((conv1d_strategy)s), needle, msg.text);
        cr_assert(strchr(msg.text, '\n') == NULL, "one line: %s", msg.text);
    }
}

Test(conv1d_validation, rejects_a_mask_too_large_for_constant_memory)
{
    expect_all_reject(fake_x, fake_y, 100, CONV1D_MAX_MASK_WIDTH + 2, "constant memory");
    expect_all_reject(fake_x, fake_y, 100, 1000001, "constant memory");
    float mask[1] = {1};
    conv_msg msg = {{0}};
    cr_assert_eq(conv1d_upload_mask(mask, CONV1D_MAX_MASK_WIDTH + 2, 0, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--mask") && strstr(msg.text, "constant memory"), "message: %s",
              msg.text);
}

Test(conv1d_validation, rejects_even_zero_and_negative_mask_widths)
{
    expect_all_reject(fake_x, fake_y, 100, 4, "odd");
    expect_all_reject(fake_x, fake_y, 100, CONV1D_CONST_FLOATS, "odd");
    expect_all_reject(fake_x, fake_y, 100, 0, "--mask");
    expect_all_reject(fake_x, fake_y, 100, -3, "--mask");
    float mask[4] = {1, 2, 3, 4};
    conv_msg msg = {{0}};
    cr_assert_eq(conv1d_upload_mask(mask, 4, 0, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "odd") != NULL, "message: %s", msg.text);
}

Test(conv1d_validation, rejects_zero_negative_and_huge_widths)
{
    expect_all_reject(fake_x, fake_y, 0, 3, "--width");
    expect_all_reject(fake_x, fake_y, -5, 3, "--width");
    expect_all_reject(fake_x, fake_y, CONV1D_MAX_WIDTH + 1, 3, "--width");
}

Test(conv1d_validation, rejects_null_and_aliased_pointers)
{
    expect_all_reject(NULL, fake_y, 100, 3, "d_x");
    expect_all_reject(fake_x, NULL, 100, 3, "d_y");
    expect_all_reject(fake_x, fake_x, 100, 3, "in-place");
    conv_msg msg = {{0}};
    cr_assert_eq(conv1d_upload_mask(NULL, 3, 0, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "h_mask") != NULL, "message: %s", msg.text);
}

Test(conv1d_validation, rejects_a_launch_before_any_mask_was_uploaded)
{
    expect_all_reject(fake_x, fake_y, 100, 3, "conv1d_upload_mask");
}

Test(conv1d_validation, limits_strategy_2_to_a_block_of_1024_threads)
{
    conv_msg msg = {{0}};
    /* 771: the input tile 256 + 770 exceeds 1024 threads */
    conv_status st = conv1d_tiled_s2(fake_x, fake_y, 100, CONV1D_S2_MAX_MASK_WIDTH + 2, 0, &msg);
    cr_assert_eq(st, CONV_ERR_UNSUPPORTED, "status %s: %s", conv_status_name(st), msg.text);
    cr_assert(strstr(msg.text, "--mask") && strstr(msg.text, "strategy 2"), "message: %s",
              msg.text);
    /* 769 passes the size checks and only fails for want of an uploaded mask */
    st = conv1d_tiled_s2(fake_x, fake_y, 100, CONV1D_S2_MAX_MASK_WIDTH, 0, &msg);
    cr_assert_eq(st, CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "conv1d_upload_mask") != NULL, "message: %s", msg.text);
    /* the other strategies accept it */
    st = conv1d_tiled_s1(fake_x, fake_y, 100, CONV1D_S2_MAX_MASK_WIDTH + 2, 0, &msg);
    cr_assert(strstr(msg.text, "conv1d_upload_mask") != NULL, "message: %s", msg.text);
}

/* The rows name each kernel by its key, the value of the program's --variant
 * that picks it: 3a, 3b, and 3c to 3e for the lecture's strategies 1 to 3
 * (no GPU needed: nothing runs). */
Test(conv1d_rows, name_each_kernel_by_its_key)
{
    static const char *const want[][2] = {{"3a", "3a naive"},
                                          {"3b", "3b naive x4"},
                                          {"3c", "3c strategy 1"},
                                          {"3d", "3d strategy 2"},
                                          {"3e", "3e strategy 3"}};
    conv_row rows[8];
    conv_params p = conv1d_as_conv_params(1000, 7);
    cr_assert_eq(conv_tiled_1d_rows(&p, NULL, rows, 8), 5);
    for (int i = 0; i < 5; ++i) {
        cr_assert_str_eq(rows[i].key, want[i][0]);
        cr_assert_str_eq(rows[i].name, want[i][1]);
    }
}
