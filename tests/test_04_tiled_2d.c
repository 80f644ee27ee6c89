/* Step 04: the tiled 2D kernels (strategies 1, 2, 3 and the multi-channel
 * kernel, every compile-time tile configuration) against the host reference
 * (conv_test_host_reference). */
#include <stdio.h>
#include <string.h>

#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_tiled_2d.h"
#include "tiled_2d_rows.h"

static const conv_tiled_strategy single_strategies[] = {CONV_TILED_S1, CONV_TILED_S2,
                                                        CONV_TILED_S3};

/* A shape with "same" padding (symmetric pad (R-1)/2, as conv_params_set_same_padding). */
static conv_params same_shape(int n, int c, int h, int w, int k, int r, int s)
{
    conv_params p = conv_shape(n, c, h, w, k, r, s, 0, 1, 1);
    conv_params_set_same_padding(&p);
    return p;
}

/* The single-channel table for a configuration with output tile tw x th and
 * largest filter side max_f: 1x1 and 2x3 images, primes, the tile - 1 / tile /
 * tile + 1 sizes in each axis, filter = image, even and non-square filters,
 * the largest filter, valid and asymmetric padding, batch 3. */
static size_t single_table(conv_params *t, int tw, int th, int max_f)
{
    size_t n = 0;
    t[n++] = same_shape(1, 1, 1, 1, 1, 1, 1);
    t[n++] = same_shape(1, 1, 1, 1, 1, 3, 3); /* 1x1 image, all halo */
    t[n++] = same_shape(1, 1, 1, 1, 1, 5, 5);
    t[n++] = same_shape(1, 1, 2, 3, 1, 3, 3);
    t[n++] = same_shape(1, 1, 2, 3, 1, 2, 2); /* even: output 1x2 */
    t[n++] = same_shape(1, 1, 29, 31, 1, 5, 5);
    t[n++] = same_shape(1, 1, 31, 29, 1, 4, 4);
    t[n++] = same_shape(1, 1, 97, 97, 1, 13, 13); /* the HPC101 mask on a prime image */
    for (int dh = -1; dh <= 1; ++dh)
        for (int dw = -1; dw <= 1; ++dw)
            t[n++] = same_shape(1, 1, th + dh, tw + dw, 1, 3, 3);
    t[n++] = same_shape(1, 1, th + 1, tw - 1, 1, 5, 4);
    t[n++] = same_shape(1, 1, 7, 7, 1, 7, 7);                         /* filter = image */
    t[n++] = same_shape(1, 1, 6, 6, 1, 6, 6);                         /* filter = image, even */
    t[n++] = conv_shape(1, 1, 5, 8, 1, 5, 8, 0, 1, 1);                /* filter = image, valid */
    t[n++] = same_shape(1, 1, 23, 19, 1, 4, 6);                       /* even, not square */
    t[n++] = same_shape(1, 1, 13, 17, 1, 1, 7);                       /* a row mask */
    t[n++] = same_shape(1, 1, 17, 13, 1, 7, 1);                       /* a column mask */
    t[n++] = same_shape(1, 1, max_f + 5, max_f + 3, 1, max_f, max_f); /* the largest */
    t[n++] = same_shape(1, 1, 37, 11, 1, max_f, 1);
    t[n++] = conv_shape(1, 1, 29, 31, 1, 6, 6, 0, 1, 1); /* valid */
    conv_params asym = conv_shape(1, 1, 19, 23, 1, 3, 5, 0, 1, 1);
    asym.pad_w = 2; /* valid rows, same columns */
    t[n++] = asym;
    t[n++] = conv_shape(1, 1, 11, 13, 1, 3, 3, 3, 1, 1); /* output larger than the image */
    t[n++] = same_shape(3, 1, 29, 31, 1, 5, 5);          /* batch 3 */
    return n;
}

static void check_single(conv_tiled_strategy strategy, int config)
{
    conv_params table[64];
    int tw, th;
    conv2d_tiled_config_tile(strategy, config, &tw, &th);
    size_t count = single_table(table, tw, th, conv2d_tiled_max_filter(strategy, config));
    conv_tiled_choice choice = {strategy, config, CONV_TILED_WEIGHTS_AUTO};
    for (size_t i = 0; i < count; ++i)
        conv_test_check_gpu_conv(&table[i], conv2d_tiled_conv, &choice, conv_test_host_reference,
                                 conv2d_tiled_config_name(strategy, config));
}

Test(gpu_conv2d_tiled_s1, matches_the_reference_on_the_shape_table_in_every_tile_configuration)
{
    CONV_TEST_REQUIRE_GPU();
    for (int cfg = 0; cfg < conv2d_tiled_num_configs(CONV_TILED_S1); ++cfg)
        check_single(CONV_TILED_S1, cfg);
}

Test(gpu_conv2d_tiled_s2, matches_the_reference_on_the_shape_table_in_every_tile_configuration)
{
    CONV_TEST_REQUIRE_GPU();
    for (int cfg = 0; cfg < conv2d_tiled_num_configs(CONV_TILED_S2); ++cfg)
        check_single(CONV_TILED_S2, cfg);
}

Test(gpu_conv2d_tiled_s3, matches_the_reference_on_the_shape_table_in_every_tile_configuration)
{
    CONV_TEST_REQUIRE_GPU();
    for (int cfg = 0; cfg < conv2d_tiled_num_configs(CONV_TILED_S3); ++cfg)
        check_single(CONV_TILED_S3, cfg);
}

Test(gpu_conv2d_tiled_single, loops_over_more_than_65535_images)
{
    CONV_TEST_REQUIRE_GPU();
    if (conv_test_under_sanitizer())
        cr_skip_test("65535 blocks and more are left out under compute-sanitizer");
    /* N = 70000 > 65535, the grid's z limit: every block loops over images */
    conv_params p = same_shape(70000, 1, 2, 3, 1, 3, 3);
    for (size_t i = 0; i < sizeof single_strategies / sizeof single_strategies[0]; ++i) {
        conv_tiled_choice choice = {single_strategies[i], 0, CONV_TILED_WEIGHTS_AUTO};
        conv_test_check_gpu_conv(&p, conv2d_tiled_conv, &choice, conv_test_host_reference,
                                 conv2d_tiled_config_name(choice.strategy, 0));
    }
}

/* The weights live in one __constant__ buffer per device. Two streams, each
 * alternating calls on its own problem with its own weights: a large image on
 * the first, so that its kernel is still running when the second stream's
 * call would copy other weights over it. Every output must be its own
 * problem's, exactly (small integers). */
Test(gpu_conv2d_tiled_single, two_streams_take_turns_with_the_constant_weights)
{
    CONV_TEST_REQUIRE_GPU();
    const int big = conv_test_under_sanitizer() ? 256 : 2048;
    conv_params p[2] = {same_shape(1, 1, big, big, 1, 7, 7), same_shape(1, 1, 37, 41, 1, 7, 7)};
    conv_msg msg = {{0}};
    cudaStream_t streams[2];
    float *d_x[2], *d_w[2], *d_y[2], *h_x[2], *h_w[2], *want[2], *got[2];
    for (int i = 0; i < 2; ++i) {
        const size_t nx = conv_input_elems(&p[i]), nw = conv_filter_elems(&p[i]),
                     ny = conv_output_elems(&p[i]);
        cr_assert_eq(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking), cudaSuccess);
        h_x[i] = conv_host_alloc(nx), h_w[i] = conv_host_alloc(nw);
        want[i] = conv_host_alloc(ny), got[i] = conv_host_alloc(ny);
        cr_assert(h_x[i] && h_w[i] && want[i] && got[i], "out of host memory");
        conv_fill_small_int(h_x[i], nx, 70 + 2 * (uint64_t)i, -3, 3);
        conv_fill_small_int(h_w[i], nw, 71 + 2 * (uint64_t)i, i == 0 ? 1 : -3, i == 0 ? 3 : -1);
        CONV_ASSERT_OK(conv_test_host_reference(&p[i], h_x[i], h_w[i], want[i], &msg), msg);
        d_x[i] = conv_test_device_copy(h_x[i], nx, "x");
        d_w[i] = conv_test_device_copy(h_w[i], nw, "w");
        d_y[i] = conv_test_device_output(ny, "y");
    }
    for (int round = 0; round < 4; ++round)
        for (int i = 0; i < 2; ++i)
            CONV_ASSERT_OK(conv2d_tiled_s1(&p[i], 0, d_x[i], d_w[i], d_y[i], streams[i], &msg),
                           msg);
    for (int i = 0; i < 2; ++i) {
        cr_assert_eq(cudaStreamSynchronize(streams[i]), cudaSuccess);
        const size_t ny = conv_output_elems(&p[i]);
        CONV_ASSERT_OK(conv_device_download(got[i], d_y[i], ny, &msg), msg);
        conv_verify_report rep = conv_compare_exact(&p[i], got[i], want[i], ny);
        CONV_ASSERT_REPORT(rep, i == 0 ? "4a on the first stream" : "4a on the second stream",
                           &p[i]);
        conv_test_assert_canary(d_y[i], ny, "4a on stream %d", i);
        conv_device_free(d_x[i]), conv_device_free(d_w[i]), conv_device_free(d_y[i]);
        conv_host_free(h_x[i]), conv_host_free(h_w[i]), conv_host_free(want[i]);
        conv_host_free(got[i]);
        cr_assert_eq(cudaStreamDestroy(streams[i]), cudaSuccess);
    }
}

/* The multi-channel table: C and K in {1, 3, 6, 64}, batch 3, the tile - 1 /
 * tile / tile + 1 sizes in each axis, K not a multiple of the channel group,
 * filter = image, even filters, the largest filter, valid and same padding,
 * weights that fit in constant memory and weights that do not. */
static size_t multi_table(conv_params *t, int tw, int th)
{
    size_t n = 0;
    t[n++] = same_shape(1, 1, 1, 1, 1, 1, 1);
    t[n++] = same_shape(1, 3, 1, 1, 6, 3, 3);
    t[n++] = same_shape(1, 3, 2, 3, 6, 3, 3);
    t[n++] = same_shape(3, 6, 29, 31, 3, 5, 5);           /* batch 3, primes */
    t[n++] = same_shape(1, 64, 13, 11, 64, 3, 3);         /* 36864 weights: global */
    t[n++] = conv_shape(2, 64, 17, 19, 3, 5, 5, 0, 1, 1); /* 4800 weights, valid */
    t[n++] = same_shape(1, 3, 31, 29, 64, 4, 4);          /* even, K = 64 */
    t[n++] = same_shape(1, 1, 10, 9, 64, 7, 7);
    t[n++] = conv_shape(3, 1, 86, 86, 4, 7, 7, 0, 1, 1); /* ECE408 layer 1, batch 3 */
    t[n++] = conv_shape(1, 6, 67, 45, 6, 6, 6, 0, 1, 1); /* the lecture's 6x6, small */
    t[n++] = same_shape(1, 2, 9, 10, 9, 3, 3);           /* K = 9: a partial group */
    for (int dh = -1; dh <= 1; ++dh)
        for (int dw = -1; dw <= 1; ++dw)
            t[n++] = same_shape(1, 3, th + dh, tw + dw, 6, 3, 3);
    t[n++] = conv_shape(1, 3, 7, 7, 6, 7, 7, 0, 1, 1); /* filter = image: 1x1 out */
    t[n++] = same_shape(1, 3, 7, 7, 6, 7, 7);
    t[n++] = same_shape(1, 6, 9, 10, 6, 2, 2); /* even */
    t[n++] = conv_shape(1, 1, 35, 40, 3, CONV_TILED_MAX_FILTER, CONV_TILED_MAX_FILTER, 0, 1, 1);
    t[n++] = conv_shape(1, 2, 5, 6, 3, 5, 5, 4, 1, 1); /* output larger than the image */
    return n;
}

static void check_multi(int config, conv_tiled_weights weights, const char *what)
{
    conv_params table[64];
    int tw, th;
    conv2d_tiled_config_tile(CONV_TILED_MC, config, &tw, &th);
    size_t count = multi_table(table, tw, th);
    conv_tiled_choice choice = {CONV_TILED_MC, config, weights};
    char name[128];
    snprintf(name, sizeof name, "%s, %s", conv2d_tiled_config_name(CONV_TILED_MC, config), what);
    for (size_t i = 0; i < count; ++i)
        conv_test_check_gpu_conv(&table[i], conv2d_tiled_conv, &choice, conv_test_host_reference,
                                 name);
}

Test(gpu_conv2d_tiled_mc, matches_the_reference_with_weights_in_constant_memory_where_they_fit)
{
    CONV_TEST_REQUIRE_GPU();
    for (int cfg = 0; cfg < conv2d_tiled_num_configs(CONV_TILED_MC); ++cfg)
        check_multi(cfg, CONV_TILED_WEIGHTS_AUTO, "weights auto");
}

Test(gpu_conv2d_tiled_mc, matches_the_reference_with_weights_in_global_memory)
{
    CONV_TEST_REQUIRE_GPU();
    for (int cfg = 0; cfg < conv2d_tiled_num_configs(CONV_TILED_MC); ++cfg)
        check_multi(cfg, CONV_TILED_WEIGHTS_GLOBAL, "weights global");
}

Test(gpu_conv2d_tiled_mc, loops_over_more_than_65535_image_and_channel_groups)
{
    CONV_TEST_REQUIRE_GPU();
    if (conv_test_under_sanitizer())
        cr_skip_test("65535 blocks and more are left out under compute-sanitizer");
    /* N * ceil(K/4) = 20000 * 4 = 80000 > 65535 */
    conv_params p = same_shape(20000, 2, 2, 3, 16, 3, 3);
    conv_tiled_choice choice = {CONV_TILED_MC, 0, CONV_TILED_WEIGHTS_AUTO};
    conv_test_check_gpu_conv(&p, conv2d_tiled_conv, &choice, conv_test_host_reference,
                             "mc (80000 groups)");
}

/* ---- bad input: rejected before any CUDA call (these run without a GPU) ---- */

/* The launchers never dereference these: validation fails first. */
static float fake[1];

static conv_status launch(conv_tiled_strategy strategy, int config, conv_tiled_weights weights,
                          const conv_params *p, const float *x, const float *w, float *y,
                          conv_msg *msg)
{
    switch (strategy) {
    case CONV_TILED_S1: return conv2d_tiled_s1(p, config, x, w, y, 0, msg);
    case CONV_TILED_S2: return conv2d_tiled_s2(p, config, x, w, y, 0, msg);
    case CONV_TILED_S3: return conv2d_tiled_s3(p, config, x, w, y, 0, msg);
    case CONV_TILED_MC: return conv2d_tiled_mc(p, config, weights, x, w, y, 0, msg);
    }
    conv_tiled_choice choice = {strategy, config, weights};
    return conv2d_tiled(&choice, p, x, w, y, 0, msg);
}

static void expect_rejected_by(conv_tiled_strategy strategy, int config, conv_tiled_weights weights,
                               const conv_params *p, const float *x, const float *w, float *y,
                               conv_status want, const char *needle)
{
    conv_msg msg = {{0}};
    conv_status st = launch(strategy, config, weights, p, x, w, y, &msg);
    const char *name = conv2d_tiled_config_name(strategy, config);
    cr_assert_eq(st, want, "%s: status %s, message: %s", name, conv_status_name(st), msg.text);
    cr_assert(strstr(msg.text, needle) != NULL, "%s: message lacks '%s': %s", name, needle,
              msg.text);
    cr_assert(strchr(msg.text, '\n') == NULL, "%s: not one line: %s", name, msg.text);
}

/* Every strategy and configuration rejects p with a message containing needle. */
static void expect_rejected_by_all(const conv_params *p, const float *x, const float *w, float *y,
                                   conv_status want, const char *needle)
{
    const conv_tiled_strategy all[] = {CONV_TILED_S1, CONV_TILED_S2, CONV_TILED_S3, CONV_TILED_MC};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        for (int cfg = 0; cfg < conv2d_tiled_num_configs(all[i]); ++cfg)
            expect_rejected_by(all[i], cfg, CONV_TILED_WEIGHTS_AUTO, p, x, w, y, want, needle);
}

static void expect_accepted(conv_tiled_strategy strategy, int config, conv_tiled_weights weights,
                            const conv_params *p)
{
    conv_tiled_choice choice = {strategy, config, weights};
    conv_msg msg = {{0}};
    conv_status st = conv2d_tiled_check(&choice, p, &msg);
    cr_assert_eq(st, CONV_OK, "%s rejects %s: %s", conv2d_tiled_config_name(strategy, config),
                 conv_shape_name(p), msg.text);
}

Test(conv2d_tiled_validation, every_strategy_has_at_least_two_named_tile_configurations)
{
    const conv_tiled_strategy all[] = {CONV_TILED_S1, CONV_TILED_S2, CONV_TILED_S3, CONV_TILED_MC};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        cr_assert_geq(conv2d_tiled_num_configs(all[i]), 2, "strategy %d", (int)all[i]);
        for (int cfg = 0; cfg < conv2d_tiled_num_configs(all[i]); ++cfg) {
            const char *name = conv2d_tiled_config_name(all[i], cfg);
            cr_assert(strlen(name) > 0 && strlen(name) <= 28, "name '%s'", name);
            int tw, th;
            conv2d_tiled_config_tile(all[i], cfg, &tw, &th);
            cr_assert(tw > 0 && th > 0, "%s: tile %dx%d", name, tw, th);
        }
    }
    cr_assert_eq(conv2d_tiled_num_configs((conv_tiled_strategy)9), 0);
    cr_assert_str_eq(conv2d_tiled_config_name(CONV_TILED_S1, 99), "?");
}

Test(conv2d_tiled_validation, rejects_null_pointers_naming_the_argument)
{
    conv_params p = same_shape(1, 1, 8, 8, 1, 3, 3);
    expect_rejected_by_all(&p, NULL, fake, fake, CONV_ERR_INVALID, "d_x");
    expect_rejected_by_all(&p, fake, NULL, fake, CONV_ERR_INVALID, "d_w");
    expect_rejected_by_all(&p, fake, fake, NULL, CONV_ERR_INVALID, "d_y");
    expect_rejected_by_all(NULL, fake, fake, fake, CONV_ERR_INVALID, "NULL");
    conv_msg msg = {{0}};
    cr_assert_eq(conv2d_tiled(NULL, &p, fake, fake, fake, 0, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "choice") != NULL, "%s", msg.text);
}

Test(conv2d_tiled_validation, rejects_invalid_parameters_naming_the_flag)
{
    conv_params p = conv_shape(1, 1, 0, 4, 1, 1, 1, 0, 1, 1);
    expect_rejected_by_all(&p, fake, fake, fake, CONV_ERR_INVALID, "--h");
    p = conv_shape(1, 1, 4, 4, 1, 5, 5, 0, 1, 1);
    expect_rejected_by_all(&p, fake, fake, fake, CONV_ERR_INVALID, "larger than the padded image");
}

Test(conv2d_tiled_validation, rejects_unknown_strategies_and_configurations)
{
    conv_params p = same_shape(1, 1, 8, 8, 1, 3, 3);
    const int past = conv2d_tiled_num_configs(CONV_TILED_S1);
    char needle[32];
    snprintf(needle, sizeof needle, "config %d", past);
    expect_rejected_by(CONV_TILED_S1, past, CONV_TILED_WEIGHTS_AUTO, &p, fake, fake, fake,
                       CONV_ERR_INVALID, needle);
    expect_rejected_by(CONV_TILED_S2, -1, CONV_TILED_WEIGHTS_AUTO, &p, fake, fake, fake,
                       CONV_ERR_INVALID, "config -1");
    expect_rejected_by((conv_tiled_strategy)7, 0, CONV_TILED_WEIGHTS_AUTO, &p, fake, fake, fake,
                       CONV_ERR_INVALID, "strategy 7");
    expect_rejected_by(CONV_TILED_MC, 0, (conv_tiled_weights)5, &p, fake, fake, fake,
                       CONV_ERR_INVALID, "weights 5");
}

Test(conv2d_tiled_validation, rejects_stride_dilation_and_nhwc_before_launch)
{
    conv_params p = conv_shape(1, 1, 16, 16, 1, 3, 3, 1, 2, 1);
    expect_rejected_by_all(&p, fake, fake, fake, CONV_ERR_UNSUPPORTED, "--stride");
    p = conv_shape(1, 1, 16, 16, 1, 3, 3, 0, 1, 1);
    p.stride_w = 3;
    expect_rejected_by_all(&p, fake, fake, fake, CONV_ERR_UNSUPPORTED, "stride 1x3");
    p = conv_shape(1, 1, 16, 16, 1, 3, 3, 2, 1, 2);
    expect_rejected_by_all(&p, fake, fake, fake, CONV_ERR_UNSUPPORTED, "--dilation");
    p = same_shape(1, 1, 16, 16, 1, 3, 3);
    p.layout = CONV_LAYOUT_NHWC;
    expect_rejected_by_all(&p, fake, fake, fake, CONV_ERR_UNSUPPORTED, "NHWC");
}

Test(conv2d_tiled_validation, rejects_filters_above_each_configurations_maximum)
{
    const int m = CONV_TILED_MAX_FILTER;
    conv_params too_tall = conv_shape(1, 1, 64, 64, 1, m + 1, 3, 0, 1, 1);
    conv_params too_wide = conv_shape(1, 1, 64, 64, 1, 3, m + 1, 0, 1, 1);
    conv_params largest = conv_shape(1, 1, 64, 64, 1, m, m, 0, 1, 1);
    const conv_tiled_strategy big[] = {CONV_TILED_S1, CONV_TILED_S3, CONV_TILED_MC};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; ++i)
        for (int cfg = 0; cfg < conv2d_tiled_num_configs(big[i]); ++cfg) {
            cr_assert_eq(conv2d_tiled_max_filter(big[i], cfg), m);
            expect_rejected_by(big[i], cfg, CONV_TILED_WEIGHTS_AUTO, &too_tall, fake, fake, fake,
                               CONV_ERR_UNSUPPORTED, "--r, --s");
            expect_rejected_by(big[i], cfg, CONV_TILED_WEIGHTS_AUTO, &too_wide, fake, fake, fake,
                               CONV_ERR_UNSUPPORTED, "--r, --s");
            expect_accepted(big[i], cfg, CONV_TILED_WEIGHTS_AUTO, &largest);
        }
    /* Strategy 2: the block is the input tile, at most 32 threads a side. */
    for (int cfg = 0; cfg < conv2d_tiled_num_configs(CONV_TILED_S2); ++cfg) {
        int tw, th;
        conv2d_tiled_config_tile(CONV_TILED_S2, cfg, &tw, &th);
        const int f = conv2d_tiled_max_filter(CONV_TILED_S2, cfg);
        cr_assert_eq(f, 33 - tw, "strategy 2 %dx%d: max filter %d", tw, th, f);
        conv_params ok = same_shape(1, 1, 40, 40, 1, f, f);
        conv_params tall = same_shape(1, 1, 40, 40, 1, f + 1, 1);
        conv_params wide = same_shape(1, 1, 40, 40, 1, 1, f + 1);
        expect_accepted(CONV_TILED_S2, cfg, CONV_TILED_WEIGHTS_AUTO, &ok);
        expect_rejected_by(CONV_TILED_S2, cfg, CONV_TILED_WEIGHTS_AUTO, &tall, fake, fake, fake,
                           CONV_ERR_UNSUPPORTED, "--r, --s");
        expect_rejected_by(CONV_TILED_S2, cfg, CONV_TILED_WEIGHTS_AUTO, &wide, fake, fake, fake,
                           CONV_ERR_UNSUPPORTED, "--r, --s");
    }
}

Test(conv2d_tiled_validation, rejects_weights_beyond_constant_memory_in_the_constant_path)
{
    /* 64*64*3*3 = 36864 floats > 16384 (64 KiB) */
    conv_params p = same_shape(1, 64, 16, 16, 64, 3, 3);
    for (int cfg = 0; cfg < conv2d_tiled_num_configs(CONV_TILED_MC); ++cfg) {
        expect_rejected_by(CONV_TILED_MC, cfg, CONV_TILED_WEIGHTS_CONSTANT, &p, fake, fake, fake,
                           CONV_ERR_UNSUPPORTED, "constant memory");
        expect_accepted(CONV_TILED_MC, cfg, CONV_TILED_WEIGHTS_AUTO, &p);
        expect_accepted(CONV_TILED_MC, cfg, CONV_TILED_WEIGHTS_GLOBAL, &p);
    }
    /* Exactly 16384 floats still fit: 16*64*4*4. */
    conv_params edge = same_shape(1, 64, 16, 16, 16, 4, 4);
    expect_accepted(CONV_TILED_MC, 0, CONV_TILED_WEIGHTS_CONSTANT, &edge);
    edge.k = 17;
    expect_rejected_by(CONV_TILED_MC, 0, CONV_TILED_WEIGHTS_CONSTANT, &edge, fake, fake, fake,
                       CONV_ERR_UNSUPPORTED, "17408 floats");
}

Test(conv2d_tiled_validation, rejects_several_channels_in_the_single_channel_strategies)
{
    conv_params p = same_shape(1, 3, 16, 16, 1, 3, 3);
    conv_params q = same_shape(1, 1, 16, 16, 6, 3, 3);
    for (size_t i = 0; i < sizeof single_strategies / sizeof single_strategies[0]; ++i)
        for (int cfg = 0; cfg < conv2d_tiled_num_configs(single_strategies[i]); ++cfg) {
            expect_rejected_by(single_strategies[i], cfg, CONV_TILED_WEIGHTS_AUTO, &p, fake, fake,
                               fake, CONV_ERR_UNSUPPORTED, "single-channel");
            expect_rejected_by(single_strategies[i], cfg, CONV_TILED_WEIGHTS_AUTO, &q, fake, fake,
                               fake, CONV_ERR_UNSUPPORTED, "C=1 K=6");
        }
    expect_accepted(CONV_TILED_MC, 0, CONV_TILED_WEIGHTS_AUTO, &p);
}

Test(conv2d_tiled_validation, rejects_more_tile_rows_than_the_grid_holds)
{
    /* P = 65536 * 64 rows: more than 65535 tiles of every configuration's height */
    conv_params p = conv_shape(1, 1, 65536 * 64, 1, 1, 1, 1, 0, 1, 1);
    expect_rejected_by_all(&p, fake, fake, fake, CONV_ERR_UNSUPPORTED, "grid y limit");
}

/* The rows the program and conv_bench run: the single-channel strategies for
 * C = K = 1 only (unless selected), the multi-channel kernel always. */
Test(conv2d_tiled_rows, list_the_single_channel_strategies_only_where_they_apply)
{
    conv_row rows[32];
    conv_params one = conv_shape(1, 1, 40, 40, 1, 3, 3, 1, 1, 1);
    conv_params many = conv_shape(1, 3, 40, 40, 2, 3, 3, 1, 1, 1);
    int n_one = conv_tiled_2d_rows(&one, NULL, rows, 32);
    int n_many = conv_tiled_2d_rows(&many, NULL, rows, 32);
    cr_assert_gt(n_one, n_many);
    for (int i = 0; i < n_many; ++i)
        cr_assert_str_eq(rows[i].key, "4d");
    int n_sel = conv_tiled_2d_rows(&many, "4a", rows, 32);
    cr_assert_gt(n_sel, n_many, "an explicit --variant 4a lists 4a's rows");
    conv_msg msg = {{0}};
    cr_assert_eq(rows[0].check(rows[0].ctx, &many, &msg), CONV_ERR_UNSUPPORTED);
    cr_assert(strstr(msg.text, "single-channel") != NULL, "%s", msg.text);
}

/* Each row's name begins with its key, the value of the program's --variant
 * that picks it (4a, 4b, 4c: the lecture's strategies 1, 2, 3; 4d: the
 * multi-channel kernel), followed by its configuration. */
Test(conv2d_tiled_rows, name_each_configuration_by_its_key)
{
    conv_row rows[32];
    conv_params one = conv_shape(1, 1, 40, 40, 1, 3, 3, 1, 1, 1);
    int n = conv_tiled_2d_rows(&one, NULL, rows, 32);
    int seen[4] = {0};
    for (int i = 0; i < n; ++i) {
        const char *key = rows[i].key;
        cr_assert(strlen(key) == 2 && key[0] == '4' && key[1] >= 'a' && key[1] <= 'd', "%s", key);
        cr_assert(strncmp(rows[i].name, key, 2) == 0 && rows[i].name[2] == ' ', "%s", rows[i].name);
        seen[key[1] - 'a'] = 1;
    }
    for (int s = 0; s < 4; ++s)
        cr_assert(seen[s], "no row of 4%c", 'a' + s);
    cr_assert_str_eq(rows[0].name, "4a 16x16, 1 output/thread");
    cr_assert_str_eq(rows[n - 1].name, "4d 32x8 x 8 ch, global w");
}

Test(gpu_conv2d_tiled_rows, every_row_matches_the_reference_on_the_usual_shapes)
{
    CONV_TEST_REQUIRE_GPU();
    conv_test_check_rows(conv_tiled_2d_rows, conv_test_host_reference, CONV_LAYOUT_NCHW, -1, "*");
}
