/* common/conv_verify: the double reference, the error bound, and the reports
 * that say what is wrong and where. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_verify.h"
#include "conv_verify_backward.h"

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

/* The double reference of pr and its magnitudes, in buffers the caller frees. */
static void reference_of(const problem *pr, double **ref, double **mag)
{
    size_t total = conv_output_elems(&pr->p);
    *ref = malloc(total * sizeof **ref);
    *mag = malloc(total * sizeof **mag);
    cr_assert(*ref != NULL && *mag != NULL);
    conv_reference_double(&pr->p, pr->x, pr->w, *ref, *mag);
}

Test(verify, the_precomputed_reference_gives_the_same_report_as_the_full_check)
{
    problem pr = make_problem(0);
    size_t total = conv_output_elems(&pr.p);
    double *ref, *mag;
    reference_of(&pr, &ref, &mag);
    pr.y[7] += 0.5f;
    pr.y[total - 1] = NAN;
    conv_verify_report full = conv_verify_full(&pr.p, pr.x, pr.w, pr.y, conv_verify_bound(1.0));
    conv_verify_report pre = conv_verify_precomputed(&pr.p, pr.y, ref, mag, conv_verify_bound(1.0));
    cr_assert(!full.passed && !pre.passed);
    cr_assert_eq(pre.checked, full.checked);
    cr_assert_eq(pre.mismatches, 2);
    cr_assert_eq(pre.mismatches, full.mismatches);
    cr_assert_eq(pre.nan_count, full.nan_count);
    cr_assert_eq(pre.first_index, 7);
    cr_assert_eq(pre.first_tol, full.first_tol);
    free(ref);
    free(mag);
    free_problem(&pr);
}

Test(verify, a_pointwise_tolerance_is_used_at_each_output_by_every_check)
{
    problem pr = make_problem(0);
    size_t total = conv_output_elems(&pr.p);
    double *ref, *mag;
    reference_of(&pr, &ref, &mag);
    size_t at = conv_output_offset(&pr.p, 1, 2, 3, 4);
    pr.y[at] += 0.5f; /* within 0.75 there, outside the dot product's bound */
    /* a tolerance of each output's own: 0.75 at (1, 2, 3, 4), 0.25 elsewhere */
    conv_test_point_tol probe = {{1, 2, 3, 4}, 0, 0};
    conv_verify_opts own = conv_verify_pointwise(conv_test_tol_of_point, &probe);
    conv_verify_report full = conv_verify_full(&pr.p, pr.x, pr.w, pr.y, own);
    conv_verify_report pre = conv_verify_precomputed(&pr.p, pr.y, ref, mag, own);
    conv_verify_report sampled = conv_verify_sampled(&pr.p, pr.x, pr.w, pr.y, total, 1, own);
    cr_assert(full.passed && pre.passed && sampled.passed, "%zu %zu %zu", full.mismatches,
              pre.mismatches, sampled.mismatches);
    cr_assert_geq(probe.calls, 3 * (int)total - 1);
    cr_assert_geq(probe.at_the_point, 2);
    /* the same error elsewhere, where the tolerance is 0.25: caught */
    pr.y[at] -= 0.5f;
    pr.y[0] += 0.5f;
    full = conv_verify_full(&pr.p, pr.x, pr.w, pr.y, own);
    pre = conv_verify_precomputed(&pr.p, pr.y, ref, mag, own);
    cr_assert(!full.passed && !pre.passed);
    cr_assert(full.first_index == 0 && pre.first_index == 0 && full.first_tol == 0.25);
    /* and the dot product's bound catches the first one */
    pr.y[0] -= 0.5f;
    pr.y[at] += 0.5f;
    full = conv_verify_full(&pr.p, pr.x, pr.w, pr.y, conv_verify_bound(1.0));
    cr_assert(!full.passed && full.first_index == (long long)at);
    free(ref);
    free(mag);
    free_problem(&pr);
}

Test(verify, the_1d_check_catches_a_wrong_element_at_the_border)
{
    enum { W = 37, M = 5 };
    float x[W], mask[M], y[W];
    conv_fill_small_int(x, W, 1, -3, 3);
    conv_fill_small_int(mask, M, 2, -3, 3);
    double ref[W];
    conv1d_reference_double(x, W, mask, M, ref, NULL);
    for (int i = 0; i < W; ++i)
        y[i] = (float)ref[i];
    conv_verify_report rep = conv1d_verify_full(x, W, mask, M, y, conv_verify_exact());
    cr_assert(rep.passed && rep.checked == W);
    /* the centred mask reads x[-2], x[-1] as zeros at the left border */
    double first = 0.0;
    for (int j = 2; j < M; ++j)
        first += (double)x[j - 2] * mask[j];
    cr_assert_eq(ref[0], first);
    y[W - 1] += 1.0f;
    rep = conv1d_verify_full(x, W, mask, M, y, conv_verify_exact());
    cr_assert(!rep.passed && rep.mismatches == 1 && rep.first_index == W - 1);
    cr_assert_eq(rep.first_n, -1, "1D reports have no 2D coordinates");
}

/* dgrad and wgrad through the checks the harness uses for any pass: a float
 * result rounded from the reference passes, the precomputed and the sampled
 * check agree, and one wrong element or a NaN fails both. The sampled check
 * recomputes each element from its coordinates, so a wrong mapping from
 * offset to coordinates would fail it on a correct result. */
Test(verify, backward_passes_are_checked_by_the_pass_checks_in_both_layouts)
{
    for (int layout = 0; layout <= 1; ++layout)
        for (int pass = CONV_PASS_DGRAD; pass <= CONV_PASS_WGRAD; ++pass) {
            conv_params p = conv_shape(2, 3, 7, 6, 4, 3, 2, 1, 2, 1);
            p.layout = (conv_layout)layout;
            p.pass = (conv_pass)pass;
            size_t sizes[3] = {conv_input_elems(&p), conv_filter_elems(&p), conv_output_elems(&p)};
            float *t[3];
            for (int i = 0; i < 3; ++i) {
                t[i] = conv_host_alloc(sizes[i]);
                conv_fill_uniform(t[i], sizes[i], 10 + (uint64_t)i, -1, 1);
            }
            int out = pass == CONV_PASS_DGRAD ? 0 : 1;
            size_t total = sizes[out];
            double *ref = malloc(total * sizeof *ref), *mag = malloc(total * sizeof *mag);
            conv_pass_reference_double(&p, t[0], t[1], t[2], ref, mag);
            for (size_t i = 0; i < total; ++i)
                t[out][i] = (float)ref[i];
            const char *what = conv_shape_name(&p);
            conv_verify_report full =
                conv_pass_verify_precomputed(&p, t[out], ref, mag, conv_verify_bound(1.0));
            conv_verify_report some = conv_pass_verify_sampled(&p, t[0], t[1], t[2], t[out], 4096,
                                                               3, conv_verify_bound(1.0));
            cr_assert(full.passed && full.checked == total, "%s: precomputed check", what);
            cr_assert(some.passed && some.checked == total, "%s: sampled check", what);
            t[out][total - 1] += 0.5f;
            full = conv_pass_verify_precomputed(&p, t[out], ref, mag, conv_verify_bound(1.0));
            some = conv_pass_verify_sampled(&p, t[0], t[1], t[2], t[out], 16, 3,
                                            conv_verify_bound(1.0));
            cr_assert(!full.passed && full.first_index == (long long)total - 1, "%s", what);
            cr_assert(!some.passed, "%s: the last element is always sampled", what);
            t[out][0] = NAN;
            full = conv_pass_verify_precomputed(&p, t[out], ref, mag, conv_verify_bound(1.0));
            cr_assert(full.nan_count == 1 && full.first_index == 0, "%s", what);
            cr_assert_eq(conv_pass_depth(&p), pass == CONV_PASS_DGRAD
                                                  ? conv_backward_data_depth(&p)
                                                  : conv_backward_filter_depth(&p));
            for (int i = 0; i < 3; ++i)
                conv_host_free(t[i]);
            free(ref);
            free(mag);
        }
}
