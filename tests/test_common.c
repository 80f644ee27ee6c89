/* common/: parameters and their validation, tensors, the RNG, the verifier,
 * the timers, the command line, and (GPU suites) the cuDNN and cuBLAS
 * references and device buffers. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conv_cli.h"
#include "conv_cublas.h"
#include "conv_cuda.h"
#include "conv_cudnn.h"
#include "conv_gpu_run.h"
#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_timer.h"

/* ---------------------------------------------------------------- params */

Test(params, default_is_the_lecture_problem)
{
    conv_params p = conv_params_default();
    cr_assert(p.n == 1 && p.c == 6 && p.h == 768 && p.w == 512 && p.k == 6 && p.r == 6 && p.s == 6);
    cr_assert_eq(conv_out_h(&p), 763);
    cr_assert_eq(conv_out_w(&p), 507);
    cr_assert_eq(conv_flops(&p), 2.0 * 6 * 763 * 507 * 6 * 36);
    cr_assert_eq(conv_min_bytes(&p), 4.0 * (6 * 768 * 512 + 6 * 6 * 36 + 6 * 763 * 507));
}

Test(params, output_size_follows_padding_stride_and_dilation)
{
    struct {
        int in, filt, pad, stride, dil, want;
    } cases[] = {
        {5, 3, 0, 1, 1, 3},     {5, 3, 1, 1, 1, 5},   {5, 3, 1, 2, 1, 3}, {6, 3, 1, 2, 1, 3},
        {7, 3, 0, 1, 2, 3},     {7, 3, 2, 3, 2, 3},   {1, 1, 0, 1, 1, 1}, {4, 4, 0, 1, 1, 1},
        {224, 7, 3, 2, 1, 112}, {10, 2, 1, 1, 1, 11},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        conv_params p = conv_shape(1, 1, cases[i].in, cases[i].in, 1, cases[i].filt, cases[i].filt,
                                   cases[i].pad, cases[i].stride, cases[i].dil);
        cr_assert_eq(conv_out_h(&p), cases[i].want, "case %zu: P=%d want %d", i, conv_out_h(&p),
                     cases[i].want);
        cr_assert_eq(conv_out_w(&p), cases[i].want, "case %zu", i);
        cr_assert_eq(conv_params_validate(&p, NULL), CONV_OK, "case %zu valid", i);
    }
}

Test(params, same_padding_keeps_the_size_for_odd_filters)
{
    conv_params p = conv_shape(1, 1, 29, 31, 1, 5, 3, 0, 1, 1);
    conv_params_set_same_padding(&p);
    cr_assert(p.pad_h == 2 && p.pad_w == 1);
    cr_assert(conv_out_h(&p) == 29 && conv_out_w(&p) == 31);
    p.dil_h = 3;
    conv_params_set_same_padding(&p);
    cr_assert_eq(conv_out_h(&p), 29, "dilated same");
    p = conv_shape(1, 1, 29, 31, 1, 6, 6, 0, 1, 1); /* even: symmetric padding, one smaller */
    conv_params_set_same_padding(&p);
    cr_assert(conv_out_h(&p) == 28 && conv_out_w(&p) == 30);
}

/* Every invalid combination gives CONV_ERR_INVALID and one line with the key word. */
Test(params, validation_rejects_every_bad_case_with_a_named_parameter)
{
    struct {
        conv_params p;
        const char *expect;
    } cases[] = {
        {conv_shape(0, 1, 8, 8, 1, 3, 3, 0, 1, 1), "--n"},
        {conv_shape(-1, 1, 8, 8, 1, 3, 3, 0, 1, 1), "--n"},
        {conv_shape(1, 0, 8, 8, 1, 3, 3, 0, 1, 1), "--c"},
        {conv_shape(1, 1, 0, 8, 1, 3, 3, 0, 1, 1), "--h"},
        {conv_shape(1, 1, 8, -5, 1, 3, 3, 0, 1, 1), "--w"},
        {conv_shape(1, 1, 8, 8, 0, 3, 3, 0, 1, 1), "--k"},
        {conv_shape(1, 1, 8, 8, 1, 0, 3, 0, 1, 1), "--r"},
        {conv_shape(1, 1, 8, 8, 1, 3, -3, 0, 1, 1), "--s"},
        {conv_shape(1, 1, 8, 8, 1, 3, 3, -1, 1, 1), "--pad-h"},
        {conv_shape(1, 1, 8, 8, 1, 3, 3, 0, 0, 1), "--stride-h"},
        {conv_shape(1, 1, 8, 8, 1, 3, 3, 0, 1, 0), "--dil-h"},
        {conv_shape(1, 1, 4, 8, 1, 5, 3, 0, 1, 1), "larger than the padded image"},
        {conv_shape(1, 1, 8, 4, 1, 3, 5, 0, 1, 1), "larger than the padded image"},
        {conv_shape(1, 1, 8, 8, 1, 3, 3, 0, 1, 4), "larger than the padded image"},
        {conv_shape(100000, 100000, 100000, 100000, 1, 1, 1, 0, 1, 1), "input tensor too large"},
        {conv_shape(1, 100000, 4, 4, 100000, 100000, 1, 0, 1, 1), "larger than the padded image"},
        {conv_shape(1, 65536, 1, 65536, 1, 1, 65536, 0, 1, 1), NULL},
    };
    /* The last one: the filter K*C*R*S*4 bytes overflows while the input does not. */
    cases[16].p = conv_shape(1, 2000000000, 2, 1, 2000000000, 2, 1, 0, 1, 1);
    cases[16].expect = "filter tensor too large";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        conv_msg msg = {{0}};
        conv_status st = conv_params_validate(&cases[i].p, &msg);
        cr_assert_eq(st, CONV_ERR_INVALID, "case %zu accepted", i);
        cr_assert(strstr(msg.text, cases[i].expect) != NULL, "case %zu: '%s' lacks '%s'", i,
                  msg.text, cases[i].expect);
        cr_assert(strchr(msg.text, '\n') == NULL, "case %zu: more than one line", i);
    }
    conv_params bad_layout = conv_shape(1, 1, 8, 8, 1, 3, 3, 0, 1, 1);
    bad_layout.layout = (conv_layout)7;
    cr_assert_eq(conv_params_validate(&bad_layout, NULL), CONV_ERR_INVALID);
    cr_assert_eq(conv_params_validate(NULL, NULL), CONV_ERR_INVALID);
}

Test(params, padding_makes_a_large_filter_fit)
{
    conv_params p = conv_shape(1, 1, 4, 4, 1, 5, 5, 0, 1, 1);
    cr_assert_eq(conv_params_validate(&p, NULL), CONV_ERR_INVALID);
    p.pad_h = p.pad_w = 1;
    cr_assert_eq(conv_params_validate(&p, NULL), CONV_OK);
    cr_assert(conv_out_h(&p) == 2 && conv_out_w(&p) == 2);
}

Test(params, validation_catches_an_im2col_buffer_that_overflows)
{
    /* Each tensor fits, but (C*R*S)*(N*P*Q)*4 bytes does not. */
    conv_params p = conv_shape(1 << 28, 1 << 12, 64, 64, 1, 64, 64, 32, 1, 1);
    conv_msg msg = {{0}};
    cr_assert_eq(conv_params_validate(&p, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "too large") != NULL, "message: %s", msg.text);
}

Test(params, offsets_and_coordinates_are_inverse_in_both_layouts)
{
    conv_params p = conv_shape(2, 3, 7, 5, 4, 3, 2, 1, 1, 1);
    for (int layout = 0; layout < 2; ++layout) {
        p.layout = (conv_layout)layout;
        for (size_t i = 0; i < conv_output_elems(&p); ++i) {
            int n, k, oh, ow;
            conv_output_coords(&p, i, &n, &k, &oh, &ow);
            cr_assert_eq(conv_output_offset(&p, n, k, oh, ow), i, "layout %d offset %zu", layout,
                         i);
        }
    }
    p.layout = CONV_LAYOUT_NHWC;
    cr_assert_eq(conv_input_offset(&p, 0, 1, 0, 0), 1, "NHWC: channels are contiguous");
    cr_assert_eq(conv_filter_offset(&p, 1, 0, 0, 0), 1, "RSCK: output channels are contiguous");
}

Test(params, conv1d_validation_names_width_and_mask)
{
    conv_msg msg = {{0}};
    cr_assert_eq(conv1d_params_validate(1, 1, &msg), CONV_OK);
    cr_assert_eq(conv1d_params_validate(0, 3, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--width"));
    cr_assert_eq(conv1d_params_validate(10, 4, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "odd"));
    cr_assert_eq(conv1d_params_validate(10, -1, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--mask"));
}

/* ---------------------------------------------------------------- tensors */

Test(tensors, the_rng_repeats_for_a_seed_and_differs_between_seeds)
{
    float a[1000], b[1000], c[1000];
    conv_fill_uniform(a, 1000, 42, -1.0f, 1.0f);
    conv_fill_uniform(b, 1000, 42, -1.0f, 1.0f);
    conv_fill_uniform(c, 1000, 43, -1.0f, 1.0f);
    cr_assert(memcmp(a, b, sizeof a) == 0, "same seed, same data");
    int same = 0;
    double mean = 0;
    for (int i = 0; i < 1000; ++i) {
        same += a[i] == c[i];
        cr_assert(a[i] >= -1.0f && a[i] < 1.0f, "a[%d] = %g out of range", i, a[i]);
        mean += a[i];
    }
    cr_assert_lt(same, 5, "different seeds gave %d equal values", same);
    cr_assert_lt(fabs(mean / 1000), 0.1, "mean %g far from 0", mean / 1000);
}

Test(tensors, small_integers_cover_exactly_the_requested_range)
{
    float x[4000];
    int seen[7] = {0};
    conv_fill_small_int(x, 4000, 9, -3, 3);
    for (int i = 0; i < 4000; ++i) {
        cr_assert(x[i] == floorf(x[i]) && x[i] >= -3 && x[i] <= 3, "x[%d] = %g", i, x[i]);
        seen[(int)x[i] + 3]++;
    }
    for (int v = 0; v < 7; ++v)
        cr_assert_gt(seen[v], 400, "value %d drawn %d times", v - 3, seen[v]);
}

Test(tensors, canaries_catch_a_write_past_the_end)
{
    float *buf = conv_host_alloc(10);
    cr_assert_not_null(buf);
    cr_assert_eq((uintptr_t)buf % 64, 0, "64-byte alignment");
    cr_assert_eq(conv_host_canary_check(buf, 10), 0);
    for (int i = 0; i < 10; ++i)
        buf[i] = 1.0f; /* in bounds: canary intact */
    cr_assert_eq(conv_host_canary_check(buf, 10), 0);
    buf[10] = 1.0f;
    cr_assert_eq(conv_host_canary_check(buf, 10), 1);
    conv_host_free(buf);
    cr_assert_null(conv_host_alloc(0));
    cr_assert_null(conv_host_alloc(SIZE_MAX / 2));
}

Test(tensors, nan_poison_is_counted)
{
    float x[16];
    conv_fill_uniform(x, 16, 1, 0.0f, 1.0f);
    cr_assert_eq(conv_count_nan(x, 16), 0);
    conv_fill_nan(x, 16);
    cr_assert_eq(conv_count_nan(x, 16), 16);
}

/* ---------------------------------------------------------------- verify */

typedef struct {
    conv_params p;
    float *x, *w, *y;
} problem;

static problem make_problem(int small_int)
{
    problem pr;
    pr.p = conv_shape(2, 3, 13, 11, 4, 3, 3, 1, 1, 1);
    pr.x = conv_host_alloc(conv_input_elems(&pr.p));
    pr.w = conv_host_alloc(conv_filter_elems(&pr.p));
    pr.y = conv_host_alloc(conv_output_elems(&pr.p));
    if (small_int) {
        conv_fill_small_int(pr.x, conv_input_elems(&pr.p), 1, -3, 3);
        conv_fill_small_int(pr.w, conv_filter_elems(&pr.p), 2, -3, 3);
    } else {
        conv_fill_uniform(pr.x, conv_input_elems(&pr.p), 1, -1, 1);
        conv_fill_uniform(pr.w, conv_filter_elems(&pr.p), 2, -1, 1);
    }
    /* a float result summed in a different order than the reference */
    size_t total = conv_output_elems(&pr.p);
    double *ref = malloc(total * sizeof *ref);
    conv_reference_double(&pr.p, pr.x, pr.w, ref, NULL);
    for (size_t i = 0; i < total; ++i)
        pr.y[i] = (float)ref[i];
    free(ref);
    return pr;
}

static void free_problem(problem *pr)
{
    conv_host_free(pr->x);
    conv_host_free(pr->w);
    conv_host_free(pr->y);
}

Test(verify, passes_a_correct_output)
{
    problem pr = make_problem(1);
    conv_verify_report rep = conv_verify_full(&pr.p, pr.x, pr.w, pr.y, conv_verify_exact());
    CONV_ASSERT_REPORT(rep, "exact", &pr.p);
    cr_assert_eq(rep.checked, conv_output_elems(&pr.p));
    free_problem(&pr);
    pr = make_problem(0);
    rep = conv_verify_full(&pr.p, pr.x, pr.w, pr.y, conv_verify_bound(1.0));
    CONV_ASSERT_REPORT(rep, "bound", &pr.p);
    free_problem(&pr);
}

Test(verify, catches_one_wrong_element_and_locates_it)
{
    problem pr = make_problem(1);
    int n = 1, k = 2, oh = 5, ow = 7;
    size_t at = conv_output_offset(&pr.p, n, k, oh, ow);
    pr.y[at] += 1.0f;
    conv_verify_report rep = conv_verify_full(&pr.p, pr.x, pr.w, pr.y, conv_verify_exact());
    cr_assert(!rep.passed);
    cr_assert_eq(rep.mismatches, 1);
    cr_assert_eq(rep.first_index, (long long)at);
    cr_assert(rep.first_n == n && rep.first_k == k && rep.first_p == oh && rep.first_q == ow);
    free_problem(&pr);

    /* On floats, an error far above rounding is caught by the bound. */
    pr = make_problem(0);
    pr.y[at] += 1e-3f;
    rep = conv_verify_full(&pr.p, pr.x, pr.w, pr.y, conv_verify_bound(1.0));
    cr_assert(!rep.passed && rep.mismatches == 1, "bound mode missed a 1e-3 error");
    free_problem(&pr);
}

Test(verify, catches_a_nan)
{
    problem pr = make_problem(0);
    pr.y[3] = NAN;
    conv_verify_report rep = conv_verify_full(&pr.p, pr.x, pr.w, pr.y, conv_verify_bound(1e6));
    cr_assert(!rep.passed);
    cr_assert_eq(rep.nan_count, 1);
    free_problem(&pr);
}

Test(verify, catches_an_output_shifted_by_one)
{
    problem pr = make_problem(0);
    size_t total = conv_output_elems(&pr.p);
    memmove(pr.y + 1, pr.y, (total - 1) * sizeof(float));
    conv_verify_report rep = conv_verify_full(&pr.p, pr.x, pr.w, pr.y, conv_verify_bound(1.0));
    cr_assert(!rep.passed);
    cr_assert_gt(rep.mismatches, total / 2, "only %zu of %zu flagged", rep.mismatches, total);
    free_problem(&pr);
}

Test(verify, sampled_checks_corners_and_catches_a_wrong_last_element)
{
    problem pr = make_problem(1);
    size_t total = conv_output_elems(&pr.p);
    conv_verify_report rep =
        conv_verify_sampled(&pr.p, pr.x, pr.w, pr.y, 100, 5, conv_verify_exact());
    CONV_ASSERT_REPORT(rep, "sampled", &pr.p);
    cr_assert_eq(rep.checked, 100);
    pr.y[total - 1] = -12345.0f;
    rep = conv_verify_sampled(&pr.p, pr.x, pr.w, pr.y, 100, 5, conv_verify_exact());
    cr_assert(!rep.passed && rep.first_index == (long long)(total - 1));
    free_problem(&pr);
}

Test(verify, the_bound_grows_with_depth_and_is_tight_enough)
{
    cr_assert_eq(conv_gamma(0), 0.0);
    cr_assert_float_eq(conv_gamma(1), ldexp(1.0, -24) / (1 - ldexp(1.0, -24)), 1e-20);
    cr_assert_lt(conv_gamma(100), conv_gamma(1000));
    cr_assert(isinf(conv_gamma((size_t)1 << 24)));
    /* A float dot product of 10000 terms, summed naively, passes. */
    enum { N = 10000 };
    float *x = malloc(N * sizeof *x), *w = malloc(N * sizeof *w);
    conv_fill_uniform(x, N, 3, -1, 1);
    conv_fill_uniform(w, N, 4, -1, 1);
    conv_params p = conv_shape(1, N, 1, 1, 1, 1, 1, 0, 1, 1);
    float acc = 0.0f;
    for (int i = 0; i < N; ++i)
        acc += x[i] * w[i];
    conv_verify_report rep = conv_verify_full(&p, x, w, &acc, conv_verify_bound(1.0));
    CONV_ASSERT_REPORT(rep, "float dot product", &p);
    /* At a typical depth (C*R*S = 6*6*6) a dropped term, the usual loop-bound
     * bug, fails whenever that term is not tiny. */
    conv_params q = conv_shape(1, 216, 1, 1, 1, 1, 1, 0, 1, 1);
    int dropped = -1;
    acc = 0.0f;
    for (int i = 0; i < 216; ++i) {
        if (dropped < 0 && fabsf(x[i] * w[i]) > 0.1f) {
            dropped = i;
            continue;
        }
        acc += x[i] * w[i];
    }
    cr_assert_geq(dropped, 0);
    rep = conv_verify_full(&q, x, w, &acc, conv_verify_bound(1.0));
    cr_assert(!rep.passed, "dropping term %d (%g) was not caught (tol %g)", dropped,
              x[dropped] * w[dropped], rep.first_tol);
    free(x);
    free(w);
}

Test(verify, compare_exact_is_bitwise_on_values)
{
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4};
    conv_verify_report rep = conv_compare_exact(NULL, a, b, 4);
    cr_assert(rep.passed);
    b[2] = 3.0000002f;
    rep = conv_compare_exact(NULL, a, b, 4);
    cr_assert(!rep.passed && rep.first_index == 2 && rep.first_n == -1);
    char desc[CONV_MSG_LEN];
    conv_report_describe(&rep, desc, sizeof desc);
    cr_assert(strstr(desc, "FAILED") != NULL, "%s", desc);
}

/* ---------------------------------------------------------------- timer */

static conv_status count_calls(void *ctx, conv_msg *msg)
{
    (void)msg;
    ++*(int *)ctx;
    return CONV_OK;
}

Test(timer, runs_warmup_plus_repeats_and_reports_the_median)
{
    int calls = 0;
    conv_timing t;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_time_cpu(count_calls, &calls, 2, 5, &t, &msg), msg);
    cr_assert_eq(calls, 7);
    cr_assert_eq(t.repeats, 5);
    cr_assert(t.min_ms <= t.median_ms && t.median_ms <= t.max_ms);
    cr_assert_eq(conv_time_cpu(count_calls, &calls, 0, 0, &t, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--repeat") != NULL);
    double v[5] = {5, 1, 4, 2, 3}, e[4] = {4, 1, 3, 2};
    cr_assert_eq(conv_median(v, 5), 3.0);
    cr_assert_eq(conv_median(e, 4), 2.5);
    double t0 = conv_wall_seconds();
    cr_assert_geq(conv_wall_seconds(), t0);
}

/* ---------------------------------------------------------------- cli */

static conv_status parse(conv_cli_options *o, conv_msg *msg, int argc, const char **argv)
{
    *o = conv_cli_defaults();
    FILE *sink = fopen("/dev/null", "w");
    conv_status st = conv_cli_parse(argc, (char **)argv, "test", "summary", NULL, 0, o, sink, msg);
    fclose(sink);
    return st;
}

Test(cli, defaults_to_the_lecture_problem)
{
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog"};
    CONV_ASSERT_OK(parse(&o, &msg, 1, argv), msg);
    cr_assert_eq(o.params.h, 768);
    cr_assert_eq(o.repeat, 10);
}

Test(cli, reads_every_problem_flag)
{
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog", "--n",      "2",    "--c",        "3", "--h",
                          "29",   "--w",      "31",   "--k",        "5", "--filter",
                          "3",    "--stride", "2",    "--dilation", "2", "--padding",
                          "same", "--layout", "nhwc", "--repeat",   "4", "--warmup",
                          "0",    "--seed",   "9"};
    CONV_ASSERT_OK(parse(&o, &msg, (int)(sizeof argv / sizeof argv[0]), argv), msg);
    conv_params p = o.params;
    cr_assert(p.n == 2 && p.c == 3 && p.h == 29 && p.w == 31 && p.k == 5 && p.r == 3 && p.s == 3);
    cr_assert(p.stride_h == 2 && p.stride_w == 2 && p.dil_h == 2 && p.dil_w == 2);
    cr_assert(p.pad_h == 2 && p.pad_w == 2, "same padding with dilation 2: pad %d", p.pad_h);
    cr_assert(p.layout == CONV_LAYOUT_NHWC && o.repeat == 4 && o.warmup == 0 && o.seed == 9);
}

Test(cli, rejects_bad_flags_with_one_line_naming_them)
{
    struct {
        const char *args[6];
        int argc;
        const char *expect;
    } cases[] = {
        {{"prog", "--h", "0"}, 3, "--h"},
        {{"prog", "--n", "-1"}, 3, "--n"},
        {{"prog", "--w", "abc"}, 3, "--w"},
        {{"prog", "--w", "99999999999"}, 3, "out of range"},
        {{"prog", "--bogus", "1"}, 3, "unknown option '--bogus'"},
        {{"prog", "--h"}, 2, "option '--h' needs a value"},
        {{"prog", "--filter", "900", "--h", "9"}, 5, "larger than the padded image"},
        {{"prog", "--layout", "chwn"}, 3, "--layout"},
        {{"prog", "--padding", "full"}, 3, "--padding"},
        {{"prog", "--repeat", "0"}, 3, "--repeat"},
        {{"prog", "stray"}, 2, "unexpected argument"},
        {{"prog", "--n", "100000", "--c", "100000"}, 5, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        conv_cli_options o;
        conv_msg msg = {{0}};
        conv_status st = parse(&o, &msg, cases[i].argc, cases[i].args);
        if (cases[i].expect == NULL) /* 10^10 x 768 x 512 floats still fit size_t */
            continue;
        cr_assert_eq(st, CONV_ERR_INVALID, "case %zu accepted", i);
        cr_assert(strstr(msg.text, cases[i].expect) != NULL, "case %zu: '%s' lacks '%s'", i,
                  msg.text, cases[i].expect);
        cr_assert(strchr(msg.text, '\n') == NULL);
    }
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *overflow[] = {"prog",       "--n", "2000000000", "--c",
                              "2000000000", "--h", "2000000000"};
    cr_assert_eq(parse(&o, &msg, 7, overflow), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "overflows size_t") != NULL, "%s", msg.text);
}

Test(cli, help_is_not_an_error_and_extras_are_returned)
{
    conv_cli_extra extras[] = {{"strategy", "1|2|3|all", "which kernel", "all"}};
    conv_cli_options o = conv_cli_defaults();
    conv_msg msg = {{0}};
    char text[4096] = {0};
    FILE *out = fmemopen(text, sizeof text - 1, "w");
    const char *help[] = {"prog", "--help"};
    cr_assert_eq(conv_cli_parse(2, (char **)help, "prog", "sum", extras, 1, &o, out, &msg),
                 CONV_HELP_SHOWN);
    fclose(out);
    cr_assert(strstr(text, "--strategy") && strstr(text, "--padding"), "usage: %s", text);
    const char *args[] = {"prog", "--strategy", "2"};
    CONV_ASSERT_OK(conv_cli_parse(3, (char **)args, "prog", "sum", extras, 1, &o, stdout, &msg),
                   msg);
    cr_assert_str_eq(extras[0].value, "2");
}

/* ---------------------------------------------------------------- cuda (host side) */

Test(cuda, errors_map_to_statuses_with_the_expression_named)
{
    conv_msg msg = {{0}};
    cr_assert_eq(conv_cuda_fail(&msg, cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "/a/b.c", 7),
                 CONV_ERR_OUT_OF_MEMORY);
    cr_assert(strstr(msg.text, "cudaMalloc(&p, n) failed at b.c:7") != NULL, "%s", msg.text);
    cr_assert_eq(conv_cuda_fail(&msg, cudaErrorNoDevice, "x", "f.c", 1), CONV_ERR_NO_DEVICE);
    cr_assert_eq(conv_cuda_fail(&msg, cudaErrorInvalidValue, "x", "f.c", 1), CONV_ERR_CUDA);
    cr_assert_eq(conv_fp32_lanes_per_sm(9, 0), 128);
    cr_assert_eq(conv_fp32_lanes_per_sm(8, 0), 64);
}

Test(cuda, device_count_never_fails)
{
    cr_assert_geq(conv_cuda_device_count(), 0);
    conv_msg msg = {{0}};
    conv_status st = conv_cuda_require_device(&msg);
    if (st != CONV_OK) {
        cr_assert_eq(st, CONV_ERR_NO_DEVICE);
        cr_assert(strstr(msg.text, "no CUDA device") != NULL, "%s", msg.text);
    }
}

Test(cudnn, reports_itself_unavailable_when_not_built)
{
    if (conv_cudnn_compiled())
        cr_skip_test("built with cuDNN; the GPU suite tests it");
    conv_cudnn_plan *plan = NULL;
    conv_msg msg = {{0}};
    conv_params p = conv_params_default();
    cr_assert_eq(conv_cudnn_plan_create(&plan, &p, &msg), CONV_ERR_UNAVAILABLE);
    cr_assert(strstr(msg.text, "cuDNN") != NULL);
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
}

Test(gpu_device, buffers_keep_canaries_and_poison_to_nan)
{
    CONV_TEST_REQUIRE_GPU();
    conv_msg msg = {{0}};
    float *d = NULL, h[100];
    size_t bad = 99;
    CONV_ASSERT_OK(conv_device_alloc(&d, 100, "test buffer", &msg), msg);
    CONV_ASSERT_OK(conv_device_poison(d, 100, &msg), msg);
    CONV_ASSERT_OK(conv_device_download(h, d, 100, &msg), msg);
    cr_assert_eq(conv_count_nan(h, 100), 100);
    CONV_ASSERT_OK(conv_device_canary_check(d, 100, &bad, &msg), msg);
    cr_assert_eq(bad, 0);
    float one = 1.0f;
    cr_assert_eq(cudaMemcpy(d + 100, &one, sizeof one, cudaMemcpyHostToDevice), cudaSuccess);
    CONV_ASSERT_OK(conv_device_canary_check(d, 100, &bad, &msg), msg);
    cr_assert_eq(bad, 1, "a write past the end went unnoticed");
    conv_device_free(d);
}

Test(gpu_device, out_of_memory_is_an_error_not_a_crash)
{
    CONV_TEST_REQUIRE_GPU();
    conv_msg msg = {{0}};
    float *d = NULL;
    conv_status st = conv_device_alloc(&d, (size_t)1 << 50, "huge buffer", &msg);
    cr_assert_eq(st, CONV_ERR_OUT_OF_MEMORY, "status %s: %s", conv_status_name(st), msg.text);
    cr_assert(strstr(msg.text, "huge buffer") != NULL, "%s", msg.text);
    cr_assert_null(d);
    /* the context is still usable afterwards */
    CONV_ASSERT_OK(conv_device_alloc(&d, 16, "small buffer", &msg), msg);
    conv_device_free(d);
}

/* Runs cuDNN on one problem and checks it against the double reference. */
static void check_cudnn(conv_params p)
{
    conv_msg msg = {{0}};
    size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p), ny = conv_output_elems(&p);
    float *x = conv_host_alloc(nx), *w = conv_host_alloc(nw), *y = conv_host_alloc(ny);
    conv_fill_uniform(x, nx, 11, -1, 1);
    conv_fill_uniform(w, nw, 12, -1, 1);
    float *d_x, *d_w, *d_y;
    CONV_ASSERT_OK(conv_device_alloc(&d_x, nx, "x", &msg), msg);
    CONV_ASSERT_OK(conv_device_alloc(&d_w, nw, "w", &msg), msg);
    CONV_ASSERT_OK(conv_device_alloc(&d_y, ny, "y", &msg), msg);
    CONV_ASSERT_OK(conv_device_upload(d_x, x, nx, &msg), msg);
    CONV_ASSERT_OK(conv_device_upload(d_w, w, nw, &msg), msg);
    CONV_ASSERT_OK(conv_device_poison(d_y, ny, &msg), msg);
    conv_cudnn_plan *plan = NULL;
    CONV_ASSERT_OK(conv_cudnn_plan_create(&plan, &p, &msg), msg);
    CONV_ASSERT_OK(conv_cudnn_set_filter(plan, d_w, &msg), msg);
    CONV_ASSERT_OK(conv_cudnn_forward(plan, d_x, d_y, 0, &msg), msg);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    CONV_ASSERT_OK(conv_device_download(y, d_y, ny, &msg), msg);
    const char *algo = conv_cudnn_algo_name(plan);
    double factor = conv_cudnn_bound_factor(algo);
    conv_verify_report rep = conv_verify_full(&p, x, w, y, conv_verify_bound(factor));
    char what[128];
    snprintf(what, sizeof what, "cuDNN (%s)", algo);
    CONV_ASSERT_REPORT(rep, what, &p);
    size_t bad = 1;
    CONV_ASSERT_OK(conv_device_canary_check(d_y, ny, &bad, &msg), msg);
    cr_assert_eq(bad, 0);
    conv_cudnn_plan_destroy(plan);
    conv_device_free(d_x);
    conv_device_free(d_w);
    conv_device_free(d_y);
    conv_host_free(x);
    conv_host_free(w);
    conv_host_free(y);
}

Test(gpu_reference, cudnn_matches_the_double_reference_in_both_layouts)
{
    CONV_TEST_REQUIRE_GPU();
    cr_assert(conv_cudnn_compiled(), "GPU build without cuDNN: the reference is required here");
    conv_params shapes[] = {
        conv_shape(1, 6, 96, 64, 6, 6, 6, 0, 1, 1), conv_shape(2, 3, 29, 31, 5, 3, 3, 1, 1, 1),
        conv_shape(1, 2, 31, 29, 3, 5, 5, 2, 2, 1), conv_shape(3, 4, 23, 17, 2, 3, 3, 2, 1, 2),
        conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1),
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        check_cudnn(shapes[i]);
        shapes[i].layout = CONV_LAYOUT_NHWC;
        check_cudnn(shapes[i]);
    }
}

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
        float *d_a, *d_b, *d_c;
        CONV_ASSERT_OK(conv_device_alloc(&d_a, na, "A", &msg), msg);
        CONV_ASSERT_OK(conv_device_alloc(&d_b, nb, "B", &msg), msg);
        CONV_ASSERT_OK(conv_device_alloc(&d_c, nc, "C", &msg), msg);
        CONV_ASSERT_OK(conv_device_upload(d_a, a, na, &msg), msg);
        CONV_ASSERT_OK(conv_device_upload(d_b, b, nb, &msg), msg);
        CONV_ASSERT_OK(conv_device_poison(d_c, nc, &msg), msg);
        CONV_ASSERT_OK(conv_cublas_sgemm(blas, m, n, k, d_a, d_b, d_c, 0, &msg), msg);
        CONV_ASSERT_OK(conv_device_download(c, d_c, nc, &msg), msg);
        conv_verify_report rep = conv_report_init();
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double sum = 0, mag = 0;
                for (int l = 0; l < k; ++l) {
                    double prod = (double)a[(size_t)i * k + l] * b[(size_t)l * n + j];
                    sum += prod;
                    mag += fabs(prod);
                }
                conv_report_add(&rep, (size_t)i * n + j, c[(size_t)i * n + j], sum,
                                conv_gamma((size_t)k) * mag, 0);
            }
        conv_report_finish(&rep);
        char desc[CONV_MSG_LEN];
        conv_report_describe(&rep, desc, sizeof desc);
        cr_assert(rep.passed, "cuBLAS %dx%dx%d: %s", m, n, k, desc);
        size_t bad = 1;
        CONV_ASSERT_OK(conv_device_canary_check(d_c, nc, &bad, &msg), msg);
        cr_assert_eq(bad, 0);
        conv_device_free(d_a);
        conv_device_free(d_b);
        conv_device_free(d_c);
        conv_host_free(a);
        conv_host_free(b);
        conv_host_free(c);
    }
    conv_cublas_destroy(blas);
}

/* ------------------------------------------------- the GPU step harness */

Test(versions, driver_release_is_read_from_both_module_banners)
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

Test(versions, one_phrase_names_driver_cuda_runtime_and_cudnn)
{
    conv_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.driver_release, sizeof info.driver_release, "580.159.04");
    info.driver_version = 13000;
    info.runtime_version = 12080;
    char text[160];
    conv_format_versions(&info, text, sizeof text);
    cr_assert(strstr(text, "driver 580.159.04 (CUDA 13.0), runtime 12.8, cuDNN ") == text, "%s",
              text);
    if (conv_cudnn_compiled())
        cr_assert(strstr(text, "cuDNN 9.") != NULL || strstr(text, "cuDNN 8.") != NULL, "%s", text);
    else
        cr_assert(strstr(text, "cuDNN not built") != NULL, "%s", text);
    info.driver_release[0] = '\0';
    conv_format_versions(&info, text, sizeof text);
    cr_assert(strstr(text, "driver unknown (CUDA 13.0)") == text, "%s", text);
}

Test(table, csv_copy_has_metadata_a_header_and_one_line_per_row)
{
    char path[] = "/tmp/conv_table_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    FILE *out = fopen("/dev/null", "w");
    conv_table t = {.out = out, .flops = 2e9, .peak_gflops = 1000.0, .n_refs = 2};
    t.ref_names[0] = "cuDNN";
    t.ref_names[1] = "step 02";
    t.ref_ms[0] = 4.0;
    t.ref_ms[1] = 0.0;
    char *argv[] = {"/some/build/bin/prog", "--h", "7"};
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_table_open_csv(&t, path, 3, argv, NULL, &msg), msg);
    conv_gpu_result res = {.timing = {.median_ms = 2.0}, .passed = 1};
    snprintf(res.verdict, sizeof res.verdict, "OK (1, 2 \"checked\")");
    conv_table_print_header(&t);
    conv_table_print_row(&t, "kernel a", &res);
    conv_table_print_skip(&t, "kernel b", "skipped: not built");
    conv_table_close_csv(&t);
    fclose(out);

    FILE *in = fopen(path, "r");
    cr_assert_not_null(in);
    char line[512];
    int lines = 0, comments = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        if (line[0] == '#') {
            comments++;
            if (strncmp(line, "# command:", 10) == 0)
                cr_assert_str_eq(line, "# command: prog --h 7\n");
            continue;
        }
        lines++;
        if (lines == 1)
            cr_assert_str_eq(line, "version,median_ms,gflops,pct_peak,vs_cuDNN,vs_step_02,passed,"
                                   "verdict\n");
        if (lines == 2)
            cr_assert_str_eq(line, "\"kernel a\",2.000000,1000.000,100.0,2.0000,,1,"
                                   "\"OK (1, 2 'checked')\"\n");
        if (lines == 3)
            cr_assert_str_eq(line, "\"kernel b\",,,,,,0,\"skipped: not built\"\n");
    }
    fclose(in);
    remove(path);
    cr_assert_eq(comments, 3, "host, date and command lines (no gpu line without device info)");
    cr_assert_eq(lines, 3);
}

Test(table, bandwidth_column_appears_when_bytes_are_given)
{
    char path[] = "/tmp/conv_table_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    FILE *out = fopen("/dev/null", "w");
    conv_table t = {.out = out, .flops = 1e9, .bytes = 3e9, .n_refs = 0};
    char *argv[] = {"prog"};
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_table_open_csv(&t, path, 1, argv, NULL, &msg), msg);
    conv_gpu_result res = {.timing = {.median_ms = 1.0}, .passed = 1};
    snprintf(res.verdict, sizeof res.verdict, "OK");
    conv_table_print_row(&t, "copy", &res);
    conv_table_close_csv(&t);
    fclose(out);
    FILE *in = fopen(path, "r");
    char line[256], header[256] = "", row[256] = "";
    while (fgets(line, sizeof line, in) != NULL)
        if (line[0] != '#')
            snprintf(header[0] ? row : header, sizeof line, "%s", line);
    fclose(in);
    remove(path);
    cr_assert_str_eq(header, "version,median_ms,gflops,pct_peak,gbps,passed,verdict\n");
    cr_assert_str_eq(row, "\"copy\",1.000000,1000.000,,3000.00,1,\"OK\"\n");
}

Test(table, unwritable_csv_path_is_an_error_naming_the_file)
{
    conv_table t = {.out = stdout, .n_refs = 0};
    conv_msg msg = {{0}};
    char *argv[] = {"prog"};
    conv_status st = conv_table_open_csv(&t, "/nonexistent-dir/x.csv", 1, argv, NULL, &msg);
    cr_assert_eq(st, CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "/nonexistent-dir/x.csv") != NULL, "%s", msg.text);
}

/* The host reference for the harness tests (step 01 is not linked here): the
 * double reference rounded to float, exact on small integers. */
static conv_status conv_by_double_reference(const conv_params *p, const float *h_x,
                                            const float *h_w, float *h_y, conv_msg *msg)
{
    (void)msg;
    size_t ny = conv_output_elems(p);
    double *y = malloc(ny * sizeof *y);
    cr_assert_not_null(y);
    conv_reference_double(p, h_x, h_w, y, NULL);
    for (size_t i = 0; i < ny; ++i)
        h_y[i] = (float)y[i];
    free(y);
    return CONV_OK;
}

/* Device "convolutions" for the harness tests, behind the conv_gpu_conv
 * signature: a correct one (the reference computed on the host from the
 * device inputs and copied into the device output) and two broken ones. */
static conv_status conv_through_host(void *ctx, const conv_params *p, const float *d_x,
                                     const float *d_w, float *d_y, cudaStream_t stream,
                                     conv_msg *msg)
{
    (void)ctx;
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *x = conv_host_alloc(nx), *w = conv_host_alloc(nw), *y = conv_host_alloc(ny);
    cr_assert(x && w && y);
    CONV_CUDA_CHECK(cudaStreamSynchronize(stream), msg);
    conv_status st = conv_device_download(x, d_x, nx, msg);
    if (st == CONV_OK)
        st = conv_device_download(w, d_w, nw, msg);
    if (st == CONV_OK)
        st = conv_by_double_reference(p, x, w, y, msg);
    if (st == CONV_OK)
        st = conv_device_upload(d_y, y, ny, msg);
    conv_host_free(x);
    conv_host_free(w);
    conv_host_free(y);
    return st;
}

static conv_status conv_writes_zeros(void *ctx, const conv_params *p, const float *d_x,
                                     const float *d_w, float *d_y, cudaStream_t stream,
                                     conv_msg *msg)
{
    (void)ctx;
    (void)d_x;
    (void)d_w;
    CONV_CUDA_CHECK(cudaMemsetAsync(d_y, 0, conv_output_elems(p) * sizeof(float), stream), msg);
    return CONV_OK;
}

static conv_status conv_writes_one_too_many(void *ctx, const conv_params *p, const float *d_x,
                                            const float *d_w, float *d_y, cudaStream_t stream,
                                            conv_msg *msg)
{
    conv_status st = conv_through_host(ctx, p, d_x, d_w, d_y, stream, msg);
    if (st != CONV_OK)
        return st;
    CONV_CUDA_CHECK(cudaMemsetAsync(d_y + conv_output_elems(p), 0, sizeof(float), stream), msg);
    return CONV_OK;
}

Test(gpu_harness, measures_a_correct_convolution_as_passed_and_a_wrong_one_as_failed)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params p = conv_shape(2, 3, 29, 31, 4, 3, 3, 1, 1, 1);
    conv_msg msg = {{0}};
    conv_gpu_problem pb;
    CONV_ASSERT_OK(conv_gpu_problem_create(&pb, &p, 7, &msg), msg);
    cr_assert(pb.full_verify);
    conv_gpu_result res;
    CONV_ASSERT_OK(conv_gpu_problem_measure(&pb, conv_through_host, NULL, 1, 3, &res, &msg), msg);
    cr_assert(res.passed, "a correct result: %s", res.verdict);
    cr_assert_gt(res.timing.median_ms, 0.0);
    CONV_ASSERT_OK(conv_gpu_problem_measure(&pb, conv_writes_zeros, NULL, 0, 1, &res, &msg), msg);
    cr_assert_not(res.passed, "zeros passed verification: %s", res.verdict);
    cr_assert(strstr(res.verdict, "FAILED") != NULL, "%s", res.verdict);
    CONV_ASSERT_OK(conv_gpu_problem_measure(&pb, conv_writes_one_too_many, NULL, 0, 1, &res, &msg),
                   msg);
    cr_assert_not(res.passed, "a write past the output went unnoticed: %s", res.verdict);
    cr_assert(strstr(res.verdict, "canary") != NULL, "%s", res.verdict);
    /* the canary is re-armed: the next correct run passes again */
    CONV_ASSERT_OK(conv_gpu_problem_measure(&pb, conv_through_host, NULL, 0, 1, &res, &msg), msg);
    cr_assert(res.passed, "after a canary failure: %s", res.verdict);
    CONV_ASSERT_OK(conv_gpu_problem_measure_host(&pb, conv_by_double_reference, 0, 1, &res, &msg),
                   msg);
    cr_assert(res.passed, "host reference: %s", res.verdict);
    conv_gpu_problem_destroy(&pb);
}

Test(gpu_harness, large_problems_are_verified_by_sampling)
{
    CONV_TEST_REQUIRE_GPU();
    /* 34 GFLOP on only 96 MB of tensors: above the full-verification limit */
    conv_params p = conv_shape(1, 4096, 32, 32, 4096, 1, 1, 0, 1, 1);
    cr_assert_gt(conv_flops(&p), CONV_FULL_VERIFY_MAX_FLOPS);
    conv_msg msg = {{0}};
    conv_gpu_problem pb;
    CONV_ASSERT_OK(conv_gpu_problem_create(&pb, &p, 7, &msg), msg);
    cr_assert_not(pb.full_verify);
    cr_assert_null(pb.ref);
    conv_gpu_result res;
    CONV_ASSERT_OK(conv_gpu_problem_measure(&pb, conv_writes_zeros, NULL, 0, 1, &res, &msg), msg);
    cr_assert_not(res.passed, "%s", res.verdict);
    cr_assert_eq(res.report.checked, CONV_VERIFY_SAMPLES);
    conv_gpu_problem_destroy(&pb);
}

Test(gpu_harness, standard_check_accepts_a_correct_convolution_on_awkward_shapes)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params shapes[] = {conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1),
                            conv_shape(3, 2, 31, 29, 5, 4, 4, 2, 2, 1)};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        conv_test_check_gpu_conv(&shapes[i], conv_through_host, NULL, conv_by_double_reference,
                                 "reference through the device");
}

static conv_status conv_rejects_the_problem(void *ctx, const conv_params *p, const float *d_x,
                                            const float *d_w, float *d_y, cudaStream_t stream,
                                            conv_msg *msg)
{
    (void)ctx, (void)p, (void)d_x, (void)d_w, (void)d_y, (void)stream;
    return conv_fail(msg, CONV_ERR_UNSUPPORTED, "unsupported stride: 2 (this kernel needs 1)");
}

Test(gpu_harness, rows_run_references_first_skip_unsupported_and_count_failures)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params p = conv_shape(1, 2, 17, 19, 3, 3, 3, 0, 2, 1);
    conv_msg msg = {{0}};
    conv_gpu_problem pb;
    CONV_ASSERT_OK(conv_gpu_problem_create(&pb, &p, 3, &msg), msg);
    conv_row rows[] = {
        {.name = "zeros", .kind = CONV_ROW_DEVICE, .conv = conv_writes_zeros, .ref = -1},
        {.name = "rejects", .kind = CONV_ROW_DEVICE, .conv = conv_rejects_the_problem, .ref = -1},
        {.name = "not run", .kind = CONV_ROW_DEVICE, .skip = "skipped: by request", .ref = -1},
        {.name = "host ref", .kind = CONV_ROW_HOST, .host = conv_by_double_reference, .ref = 0},
        {.name = "correct", .kind = CONV_ROW_DEVICE, .conv = conv_through_host, .ref = -1},
    };
    char *out_text = NULL;
    size_t out_len = 0;
    FILE *out = open_memstream(&out_text, &out_len);
    conv_table t = {.out = out, .flops = conv_flops(&p), .n_refs = 1};
    t.ref_names[0] = "host";
    conv_run_opts o = {.warmup = 0, .repeat = 2, .host_repeat = 1};
    int failed = conv_rows_run(&pb, rows, 5, &t, &o);
    fclose(out);
    cr_assert_eq(failed, 1, "only the zeros row fails; got %d\n%s", failed, out_text);
    cr_assert_eq(rows[1].status, CONV_ERR_UNSUPPORTED);
    cr_assert(strstr(out_text, "skipped: unsupported stride: 2") != NULL, "%s", out_text);
    cr_assert(strstr(out_text, "skipped: by request") != NULL, "%s", out_text);
    cr_assert_gt(t.ref_ms[0], 0.0, "the reference row filled its column");
    cr_assert(rows[4].res.passed && rows[3].res.passed);
    /* printed in the order given */
    cr_assert_lt(strstr(out_text, "zeros") - out_text, strstr(out_text, "host ref") - out_text);
    free(out_text);
    conv_gpu_problem_destroy(&pb);
}

/* cuDNN through the harness: the ratio every step program prints. (Suite
 * gpu_reference: NVIDIA's libraries; see conv_register_tests.) */
Test(gpu_reference, cudnn_through_the_harness_is_verified_and_timed)
{
    CONV_TEST_REQUIRE_GPU();
    cr_assert(conv_cudnn_compiled(), "GPU build without cuDNN: the reference is required here");
    conv_params p = conv_shape(2, 3, 29, 31, 4, 3, 3, 1, 1, 1);
    conv_msg msg = {{0}};
    conv_gpu_problem pb;
    CONV_ASSERT_OK(conv_gpu_problem_create(&pb, &p, 7, &msg), msg);
    conv_gpu_result res;
    char algo[64];
    CONV_ASSERT_OK(conv_gpu_problem_measure_cudnn(&pb, 1, 3, &res, algo, sizeof algo, &msg), msg);
    cr_assert(res.passed, "cuDNN (%s): %s", algo, res.verdict);
    cr_assert_gt(strlen(algo), 0);
    cr_assert_gt(res.timing.median_ms, 0.0);
    conv_gpu_problem_destroy(&pb);
}
