/* common/conv_cudnn_fp16: the cuDNN reference of the FP16 class. On the host:
 * its bound (the FP16 class's plus the output's rounding to half) against a
 * model of its arithmetic and a coarser model the bound must catch, its
 * refusals (a backward pass, values beyond half's range), its row (name,
 * class, the rows it is the reference of), and what it says without cuDNN or
 * without a device. The GPU suite is gpu_reference, as for the other cuDNN
 * rows (test_cudnn.c): the row within its bound on the awkward shapes, in
 * both layouts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cudnn.h"
#include "conv_cudnn_fp16.h"
#include "conv_fp16.h"
#include "conv_rows.h"
#include "conv_tensor.h"
#include "conv_test_support.h"

/* ---- the bound ------------------------------------------------------------ */

/* v with `bits` significant bits, to nearest (a model of a coarser format). */
static double round_bits(double v, int bits)
{
    if (v == 0.0)
        return 0.0;
    int e = 0;
    frexp(v, &e);
    const double spacing = ldexp(1.0, e - bits);
    return nearbyint(v / spacing) * spacing;
}

/* The output of the FP16 reference as modelled: x and w rounded to half,
 * summed exactly, rounded to float, then to half (out_bits < 0) or to
 * out_bits significant bits (a coarser output the bound must catch). */
static void model(const conv_params *p, const float *x, const float *w, int out_bits, float *y)
{
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *xr = malloc(nx * sizeof *xr), *wr = malloc(nw * sizeof *wr);
    double *yd = malloc(ny * sizeof *yd);
    cr_assert(xr && wr && yd);
    for (size_t i = 0; i < nx; ++i)
        xr[i] = conv_round_fp16(x[i]);
    for (size_t i = 0; i < nw; ++i)
        wr[i] = conv_round_fp16(w[i]);
    conv_reference_double(p, xr, wr, yd, NULL);
    for (size_t i = 0; i < ny; ++i)
        y[i] = out_bits < 0 ? conv_round_fp16((float)yd[i]) : (float)round_bits(yd[i], out_bits);
    free(xr), free(wr), free(yd);
}

Test(cudnn_fp16, the_bound_holds_for_a_half_output_and_catches_a_6_bit_one)
{
    conv_params t[2 * CONV_USUAL_SHAPES];
    const size_t count = conv_test_both_layouts(t, conv_usual_shapes(t));
    size_t caught = 0;
    for (size_t i = 0; i < count; ++i) {
        const conv_params *p = &t[i];
        const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
        float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *y = malloc(ny * sizeof *y);
        cr_assert(x && w && y);
        conv_fill_uniform(x, nx, 900 + i, -1.0f, 1.0f);
        conv_fill_uniform(w, nw, 950 + i, -1.0f, 1.0f);
        const conv_verify_opts opts =
            conv_cudnn_fp16_bound((size_t)p->c * p->r * p->s, x, nx, w, nw, 1.0);
        model(p, x, w, -1, y);
        conv_verify_report rep = conv_verify_full(p, x, w, y, opts);
        CONV_ASSERT_REPORT(rep, "FP16 inputs, a half output", p);
        model(p, x, w, 6, y);
        caught += !conv_verify_full(p, x, w, y, opts).passed;
        free(x), free(w), free(y);
    }
    cr_assert_gt(caught, count / 2, "the bound caught a 6-bit output on %zu of %zu shapes", caught,
                 count);
}

/* The derivation's terms (conv_cudnn_fp16.c): the FP16 class's bound B,
 * plus u (S + B) + 2^-25 for the output's rounding, u = 2^-11; an algorithm
 * factor multiplies B. */
Test(cudnn_fp16, the_bound_is_the_fp16_class_bound_plus_the_output_rounding)
{
    const float x[3] = {0.5f, -1.0f, 0.25f}, w[2] = {0.75f, -0.125f};
    const double u = ldexp(1.0, -11), small = ldexp(1.0, -25);
    const size_t depths[] = {1, 9, 576, 4608};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; ++i) {
        const size_t n = depths[i];
        const double g = conv_gamma(n);
        const conv_verify_opts fp16 = conv_fp16_bound(n, x, 3, w, 2);
        for (double factor = 1.0; factor <= CONV_CUDNN_TRANSFORM_FACTOR;
             factor *= CONV_CUDNN_TRANSFORM_FACTOR) {
            const conv_verify_opts o = conv_cudnn_fp16_bound(n, x, 3, w, 2, factor);
            cr_assert_eq(o.mode, CONV_VERIFY_BOUND);
            for (double s = 0.0; s <= 100.0; s += 25.0) { /* s: sum |x w| */
                const double b = factor * (fp16.bound_factor * g * s + fp16.abs_term);
                const double want = b + u * (s + b) + small;
                const double got = o.bound_factor * g * s + o.abs_term;
                cr_assert(fabs(got - want) <= 1e-12 * want,
                          "depth %zu, factor %g, S %g: tolerance %.17g, derived %.17g", n, factor,
                          s, got, want);
            }
        }
    }
}

/* ---- refusals, the row ---------------------------------------------------- */

Test(cudnn_fp16, refuses_a_backward_pass_in_one_line)
{
    conv_params p = conv_shape(1, 2, 9, 9, 2, 3, 3, 1, 1, 1);
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_cudnn_fp16_check(&p, &msg), msg);
    for (int pass = CONV_PASS_DGRAD; pass <= CONV_PASS_WGRAD; ++pass) {
        p.pass = (conv_pass)pass;
        cr_assert_eq(conv_cudnn_fp16_check(&p, &msg), CONV_ERR_UNSUPPORTED);
        CONV_ASSERT_ONE_LINE(msg.text, "forward pass only");
        CONV_ASSERT_ONE_LINE(msg.text, conv_pass_name(p.pass));
    }
}

Test(cudnn_fp16, refuses_values_beyond_half_naming_the_tensor)
{
    float x[4] = {1.0f, -2.0f, 65504.0f, 0.5f}, w[3] = {0.0f, -65504.0f, 3.0f};
    double y[3] = {10.0, -65504.0, 0.0};
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_cudnn_fp16_check_values(x, 4, w, 3, y, 3, &msg), msg);
    CONV_ASSERT_OK(conv_cudnn_fp16_check_values(x, 4, w, 3, NULL, 3, &msg), msg);
    x[1] = 65505.0f;
    cr_assert_eq(conv_cudnn_fp16_check_values(x, 4, w, 3, y, 3, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "x[1] = 65505");
    x[1] = -2.0f;
    w[2] = -INFINITY;
    cr_assert_eq(conv_cudnn_fp16_check_values(x, 4, w, 3, y, 3, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "w[2]");
    w[2] = 3.0f;
    y[2] = -70000.0;
    cr_assert_eq(conv_cudnn_fp16_check_values(x, 4, w, 3, y, 3, &msg), CONV_ERR_UNSUPPORTED);
    CONV_ASSERT_ONE_LINE(msg.text, "y[2] = -70000");
    CONV_ASSERT_OK(conv_cudnn_fp16_check_values(x, 4, w, 3, NULL, 3, &msg), msg);
}

/* Both FP16 rows, the legacy API's and the graph API's: cuDNN rows of the
 * FP16 class, for the forward pass only. */
static void fp16_row_is_forward_only(conv_row r, const char *name, conv_row_kind kind)
{
    cr_assert_str_eq(r.name, name);
    cr_assert(r.kind == kind && r.key == NULL && r.ref == -1);
    cr_assert_eq(r.cls, CONV_CLASS_FP16);
    cr_assert(conv_row_is_cudnn(&r));
    conv_params p = conv_shape_nhwc(1, 8, 9, 9, 8, 3, 3, 1, 1, 1);
    conv_row rows[1] = {r};
    conv_rows_check(rows, 1, &p, NULL, 0);
    cr_assert_eq(rows[0].state, CONV_ROW_PENDING, "%s", rows[0].why);
    p.pass = CONV_PASS_WGRAD;
    rows[0] = r;
    conv_rows_check(rows, 1, &p, NULL, 0);
    cr_assert_eq(rows[0].state, CONV_ROW_SKIPPED, "%s", name);
    CONV_ASSERT_ONE_LINE(rows[0].why, "forward pass only");
}

Test(cudnn_fp16, its_rows_are_cudnn_rows_of_the_fp16_class_for_the_forward_pass)
{
    fp16_row_is_forward_only(conv_row_cudnn_fp16(), "cuDNN FP16", CONV_ROW_CUDNN);
    fp16_row_is_forward_only(conv_row_cudnn_graph(CONV_CLASS_FP16), "cuDNN graph FP16",
                             CONV_ROW_CUDNN_GRAPH);
}

/* A row of a class that ran in ms. */
static conv_row ran(conv_row r, conv_class cls, double ms, int ref)
{
    r.cls = cls;
    r.state = CONV_ROW_OK;
    r.ref = ref;
    r.res.timing.median_ms = ms;
    return r;
}

/* "vs cuDNN" of an FP16 row is against the FP16 reference, and only it; the
 * FP32 and TF32 rows never compare with it, however fast. */
Test(cudnn_fp16, is_the_reference_of_the_fp16_rows_only)
{
    conv_row r[5] = {
        ran(conv_row_cudnn(), CONV_CLASS_FP32, 5.0, 0),
        ran(conv_row_cudnn_tf32(), CONV_CLASS_TF32, 1.0, 0),
        ran(conv_row_cudnn_fp16(), CONV_CLASS_FP16, 0.4, -1),
        ran(conv_row_device("8a-fp16 WMMA FP16", "8a-fp16", NULL, NULL), CONV_CLASS_FP16, 0.5, -1),
        ran(conv_row_device("8a WMMA TF32", "8a", NULL, NULL), CONV_CLASS_TF32, 0.9, -1),
    };
    cr_assert_eq(conv_rows_reference(r, 5, 0, &r[3]), 2, "FP16: the FP16 cuDNN row");
    cr_assert_eq(conv_rows_reference(r, 5, 0, &r[4]), 1, "TF32: not the faster FP16 row");
    cr_assert_eq(conv_rows_reference(r, 5, 0, &r[0]), 0, "FP32: its own");
    r[2].state = CONV_ROW_SKIPPED;
    cr_assert_eq(conv_rows_reference(r, 5, 0, &r[3]), -1, "no FP16 reference ran: no ratio");
    cr_assert_eq(conv_rows_fastest(r, 5), 3, "the FP16 cuDNN row is no kernel of ours");
}

/* With both FP16 references, "cuDNN best FP16" is the faster of the two. */
Test(cudnn_fp16, the_faster_of_its_two_apis_is_the_reference)
{
    conv_row r[4] = {
        ran(conv_row_cudnn_tf32(), CONV_CLASS_TF32, 0.1, 0),
        ran(conv_row_cudnn_fp16(), CONV_CLASS_FP16, 0.4, 0),
        ran(conv_row_cudnn_graph(CONV_CLASS_FP16), CONV_CLASS_FP16, 0.3, -1),
        ran(conv_row_device("8b-fp16 mma.sync FP16", "8b-fp16", NULL, NULL), CONV_CLASS_FP16, 0.5,
            -1),
    };
    cr_assert_eq(conv_rows_reference(r, 4, 0, &r[3]), 2, "the graph API's, the faster");
    r[2].res.timing.median_ms = 0.6;
    cr_assert_eq(conv_rows_reference(r, 4, 0, &r[3]), 1, "the legacy API's, the faster");
    r[1].state = CONV_ROW_SKIPPED;
    cr_assert_eq(conv_rows_reference(r, 4, 0, &r[3]), 2, "the one that ran");
}

/* ---- without cuDNN, without a device --------------------------------------- */

Test(cudnn_fp16, a_plan_says_why_it_cannot_be_made_here)
{
    conv_test_hide_gpus();
    conv_params p = conv_shape(2, 3, 9, 8, 4, 3, 3, 1, 2, 1);
    conv_cudnn_fp16_plan *plan = (conv_cudnn_fp16_plan *)&plan; /* not NULL */
    conv_msg msg = {{0}};
    conv_status st = conv_cudnn_fp16_plan_create(&plan, &p, NULL, NULL, &msg);
    cr_assert_null(plan);
    cr_assert_eq(st, conv_cudnn_compiled() ? CONV_ERR_NO_DEVICE : CONV_ERR_UNAVAILABLE,
                 "status %s: %s", conv_status_name(st), msg.text);
    const conv_cudnn_graph_opts o = conv_cudnn_graph_opts_default(); /* the graph API's search */
    plan = (conv_cudnn_fp16_plan *)&plan;
    st = conv_cudnn_fp16_plan_create(&plan, &p, &o, NULL, &msg);
    cr_assert_null(plan);
    cr_assert_eq(st, conv_cudnn_compiled() ? CONV_ERR_NO_DEVICE : CONV_ERR_UNAVAILABLE,
                 "graph: status %s: %s", conv_status_name(st), msg.text);
    cr_assert_null(conv_cudnn_fp16_graph(NULL));
    cr_assert(conv_cudnn_fp16_algo_factor(NULL) == 1.0);
    cr_assert_str_eq(conv_cudnn_fp16_algo_name(NULL), "unknown");
    cr_assert_str_eq(conv_cudnn_fp16_math_type(NULL), "none");
    cr_assert_neq(conv_cudnn_fp16_forward(NULL, NULL, &msg), CONV_OK);
    cr_assert_neq(conv_cudnn_fp16_output(NULL, NULL, NULL, &msg), CONV_OK);
    conv_cudnn_fp16_plan_destroy(NULL);
}

Test(cudnn_fp16, a_host_only_problem_is_no_device_for_its_row)
{
    conv_params p = conv_shape(1, 2, 7, 7, 3, 3, 3, 1, 1, 1);
    conv_gpu_problem pb;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_gpu_problem_create_host(&pb, &p, 5, &msg), msg);
    conv_gpu_result res;
    char algo[64] = "stale";
    cr_assert_eq(
        conv_gpu_problem_measure_cudnn_fp16(&pb, NULL, 1, 1, &res, algo, sizeof algo, &msg),
        CONV_ERR_NO_DEVICE);
    cr_assert_str_eq(algo, "");
    const conv_cudnn_graph_opts o = conv_cudnn_graph_opts_default();
    snprintf(algo, sizeof algo, "stale");
    cr_assert_eq(conv_gpu_problem_measure_cudnn_fp16(&pb, &o, 1, 1, &res, algo, sizeof algo, &msg),
                 CONV_ERR_NO_DEVICE);
    cr_assert_str_eq(algo, "");
    conv_gpu_problem_destroy(&pb);
}

Test(cudnn_fp16, forward_algorithms_are_named_as_the_fp32_reference_names_them)
{
    cr_assert_str_eq(conv_cudnn_forward_algo_name(0), "IMPLICIT_GEMM");
    cr_assert_str_eq(conv_cudnn_forward_algo_name(1), "IMPLICIT_PRECOMP_GEMM");
    cr_assert_str_eq(conv_cudnn_forward_algo_name(7), "WINOGRAD_NONFUSED");
    cr_assert_str_eq(conv_cudnn_forward_algo_name(8), "unknown");
    cr_assert_str_eq(conv_cudnn_forward_algo_name(-1), "unknown");
}

Test(cudnn_fp16, math_types_are_named_by_their_enumerators)
{
    /* cudnnMathType_t: DEFAULT 0, TENSOR_OP 1, TENSOR_OP_ALLOW_CONVERSION 2, FMA 3 */
    cr_assert_str_eq(conv_cudnn_math_name(0), "CUDNN_DEFAULT_MATH");
    cr_assert_str_eq(conv_cudnn_math_name(1), "CUDNN_TENSOR_OP_MATH");
    cr_assert_str_eq(conv_cudnn_math_name(2), "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION");
    cr_assert_str_eq(conv_cudnn_math_name(3), "CUDNN_FMA_MATH");
    cr_assert_str_eq(conv_cudnn_math_name(4), "unknown");
    cr_assert_str_eq(conv_cudnn_math_name(-1), "unknown");
}

/* ---------------------------------------------------------------- GPU */

/* An FP16 row, measured as the programs measure it, on one problem (graph
 * NULL: the legacy API's search, else the graph API's): within its bound
 * (the harness's verdict), or refused in one line where cuDNN has nothing
 * of the FP16 class for it. */
static void check_fp16(conv_params p, uint64_t start, const conv_cudnn_graph_opts *graph)
{
    conv_gpu_problem pb = conv_test_device_problem(p, start);
    conv_gpu_result res;
    char algo[96];
    conv_msg msg = {{0}};
    const char *api = graph != NULL ? "graph" : "legacy";
    conv_status st =
        conv_gpu_problem_measure_cudnn_fp16(&pb, graph, 1, 2, &res, algo, sizeof algo, &msg);
    if (st == CONV_ERR_UNSUPPORTED) {
        CONV_ASSERT_ONE_LINE(msg.text, "FP16 forward");
        cr_log_info("cuDNN FP16 (%s API) on %s: %s", api, conv_shape_name(&p), msg.text);
    } else {
        CONV_ASSERT_OK(st, msg);
        cr_assert(res.passed, "cuDNN FP16 (%s API, %s) on %s: %s", api, algo, conv_shape_name(&p),
                  res.verdict);
        cr_log_info("cuDNN FP16 (%s API, %s) on %s: %s", api, algo, conv_shape_name(&p),
                    res.verdict);
    }
    conv_gpu_problem_destroy(&pb);
}

Test(gpu_reference, cudnn_fp16_matches_the_double_reference_within_its_bound)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params shapes[] = {
        conv_shape(1, 6, 96, 64, 6, 6, 6, 0, 1, 1), conv_shape(2, 3, 29, 31, 5, 3, 3, 1, 1, 1),
        conv_shape(1, 2, 31, 29, 3, 5, 5, 2, 2, 1), conv_shape(3, 4, 23, 17, 2, 3, 3, 2, 1, 2),
        conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1),   conv_shape(2, 32, 20, 22, 64, 3, 3, 1, 1, 1),
    };
    conv_cudnn_graph_opts quick = conv_cudnn_graph_opts_default();
    quick.budget_s = 0.5; /* a short search: the suite stays quick */
    quick.repeat = 2;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        check_fp16(shapes[i], 40 + i, NULL);
        check_fp16(shapes[i], 40 + i, &quick);
        shapes[i].layout = CONV_LAYOUT_NHWC;
        check_fp16(shapes[i], 50 + i, NULL);
        check_fp16(shapes[i], 50 + i, &quick);
    }
}

/* The timed call writes half y; the conversion back is separate and the
 * plan refuses to run before it has its inputs. */
Test(gpu_reference, cudnn_fp16_runs_only_after_its_inputs_are_set)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params p = conv_shape_nhwc(2, 16, 12, 10, 16, 3, 3, 1, 1, 1);
    conv_cudnn_fp16_plan *plan = NULL;
    conv_msg msg = {{0}};
    conv_cudnn_graph_opts quick = conv_cudnn_graph_opts_default();
    quick.budget_s = 0.5;
    const conv_cudnn_graph_opts *apis[2] = {NULL, &quick};
    for (int a = 0; a < 2; ++a) {
        conv_status st = conv_cudnn_fp16_plan_create(&plan, &p, apis[a], 0, &msg);
        if (st == CONV_ERR_UNSUPPORTED) {
            CONV_ASSERT_ONE_LINE(msg.text, "FP16 forward");
            continue;
        }
        CONV_ASSERT_OK(st, msg);
        cr_assert_eq(conv_cudnn_fp16_graph(plan) != NULL, a == 1);
        cr_log_info("cuDNN FP16 on %s: %s, %s", conv_shape_name(&p),
                    conv_cudnn_fp16_algo_name(plan), conv_cudnn_fp16_math_type(plan));
        cr_assert_eq(conv_cudnn_fp16_forward(plan, 0, &msg), CONV_ERR_INVALID);
        CONV_ASSERT_ONE_LINE(msg.text, "conv_cudnn_fp16_set_inputs");
        conv_cudnn_fp16_plan_destroy(plan);
    }
}
