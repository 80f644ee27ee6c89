/* common/conv_cudnn and common/conv_cudnn_graph, the backward pass: cuDNN's
 * dgrad and wgrad (and the forward pass through the same pass-generic calls)
 * against the double references of common/conv_verify_backward.h, both APIs,
 * both layouts, padding, strides 2 and 3, dilation, batch > 1, even filters,
 * 1x1 images and filters as large as the image. Each pass's output is
 * poisoned with NaN before the timed call (cuDNN must write every element,
 * the zeros of dx where no output reaches included) and has a canary after
 * it. FP32 within the bound of the chosen algorithm (its transform factor
 * where it is FFT or Winograd), TF32 within conv_tf32_bound_factor of the
 * depth of the pass's sums. The GPU suite is gpu_reference: NVIDIA's closed
 * code, kept out of the sanitizer runs (cmake/ConvProject.cmake). */
#include <string.h>

#include "conv_cuda.h"
#include "conv_cudnn.h"
#include "conv_cudnn_graph.h"
#include "conv_device.h"
#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_verify_backward.h"

/* The depth of one output's sum in each pass: what the TF32 factor takes. */
static size_t depth_of(const conv_params *p, conv_pass pass)
{
    switch (pass) {
    case CONV_PASS_DGRAD: return conv_backward_data_depth(p);
    case CONV_PASS_WGRAD: return conv_backward_filter_depth(p);
    default: return (size_t)p->c * p->r * p->s;
    }
}

Test(cpu_cudnn_backward, the_depth_of_each_pass_is_that_of_its_sums)
{
    conv_params p = conv_shape(2, 3, 11, 13, 4, 3, 5, 0, 1, 1); /* P = 9, Q = 9 */
    cr_assert_eq(depth_of(&p, CONV_PASS_FORWARD), 3 * 3 * 5);
    cr_assert_eq(depth_of(&p, CONV_PASS_DGRAD), 4 * 3 * 5);
    cr_assert_eq(depth_of(&p, CONV_PASS_WGRAD), 2 * 9 * 9);
}

/* ---------------------------------------------------------------- GPU */

typedef enum { API_LEGACY, API_GRAPH } api;

static const char *api_name(api a)
{
    return a == API_LEGACY ? "cuDNN" : "cuDNN graph";
}

/* A plan of either API (the other one NULL), run, finished or run forward:
 * the calls both APIs answer alike. */
typedef struct {
    api a;
    conv_cudnn_plan *plan;
    conv_cudnn_graph_plan *graph;
} either_plan;

static conv_status plan_run(const either_plan *e, float *d_x, float *d_w, float *d_y, conv_msg *msg)
{
    return e->a == API_LEGACY ? conv_cudnn_run(e->plan, d_x, d_w, d_y, 0, msg)
                              : conv_cudnn_graph_run(e->graph, d_x, d_w, d_y, 0, msg);
}

static conv_status plan_finish(const either_plan *e, float *d_w, conv_msg *msg)
{
    return e->a == API_LEGACY ? conv_cudnn_finish(e->plan, d_w, 0, msg)
                              : conv_cudnn_graph_finish(e->graph, d_w, 0, msg);
}

static conv_status plan_forward(const either_plan *e, const float *d_x, float *d_y, conv_msg *msg)
{
    return e->a == API_LEGACY ? conv_cudnn_forward(e->plan, d_x, d_y, 0, msg)
                              : conv_cudnn_graph_forward(e->graph, d_x, d_y, 0, msg);
}

/* A short search, so that the suite stays quick. */
static conv_cudnn_graph_opts quick(void)
{
    conv_cudnn_graph_opts o = conv_cudnn_graph_opts_default();
    o.budget_s = 0.25;
    o.repeat = 2;
    return o;
}

/* The pass's output against its double reference; x, w, y on the host (y is
 * dy in the backward passes). */
static conv_verify_report verify_pass(const conv_params *p, conv_pass pass, const float *x,
                                      const float *w, const float *y, const float *got,
                                      double factor, int transform)
{
    conv_verify_opts opts = conv_verify_bound(factor);
    /* FFT and Winograd (transform) are not dot products: a transform
     * spreads rounding over every output, even one whose exact value is 0
     * (an input pixel no stride reaches has sum |terms| = 0). So they also
     * get an absolute term, their bound at the largest sum of |terms|, which
     * with inputs in [-1, 1) is at most the depth. */
    if (transform) {
        const size_t depth = depth_of(p, pass);
        opts.abs_term = factor * conv_gamma(depth) * (double)depth;
    }
    switch (pass) {
    case CONV_PASS_DGRAD: return conv_backward_data_verify(p, y, w, got, opts);
    case CONV_PASS_WGRAD: return conv_backward_filter_verify(p, x, y, got, opts);
    default: return conv_verify_full(p, x, w, got, opts);
    }
}

/* The tensors of one check: x, w and y (dy for a backward pass) on the host,
 * uniform floats in [-1, 1) from the random streams first, first + 1 and
 * first + 2; on the device the pass's inputs as copies of the host ones, its
 * output poisoned with NaN; out points at the output. */
typedef struct {
    float *h_x, *h_w, *h_y;
    float *d_x, *d_w, *d_y, *out;
    size_t n_out;
} device_tensors;

static device_tensors device_tensors_of(const conv_params *p, conv_pass pass, uint64_t first)
{
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    device_tensors t;
    t.h_x = conv_host_alloc(nx);
    t.h_w = conv_host_alloc(nw);
    t.h_y = conv_host_alloc(ny);
    cr_assert(t.h_x && t.h_w && t.h_y, "out of host memory");
    conv_fill_uniform(t.h_x, nx, first, -1, 1);
    conv_fill_uniform(t.h_w, nw, first + 1, -1, 1);
    conv_fill_uniform(t.h_y, ny, first + 2, -1, 1);
    t.d_x = pass == CONV_PASS_DGRAD ? conv_test_device_output(nx, "dx")
                                    : conv_test_device_copy(t.h_x, nx, "x");
    t.d_w = pass == CONV_PASS_WGRAD ? conv_test_device_output(nw, "dw")
                                    : conv_test_device_copy(t.h_w, nw, "w");
    t.d_y = pass == CONV_PASS_FORWARD ? conv_test_device_output(ny, "y")
                                      : conv_test_device_copy(t.h_y, ny, "dy");
    t.out = pass == CONV_PASS_FORWARD ? t.d_y : pass == CONV_PASS_DGRAD ? t.d_x : t.d_w;
    t.n_out = pass == CONV_PASS_FORWARD ? ny : pass == CONV_PASS_DGRAD ? nx : nw;
    return t;
}

static void device_tensors_free(device_tensors *t)
{
    conv_host_free(t->h_x), conv_host_free(t->h_w), conv_host_free(t->h_y);
    conv_device_free(t->d_x);
    conv_device_free(t->d_w);
    conv_device_free(t->d_y);
}

/* One pass of one API on p in FP32 (tf32 0) or with TF32 allowed (tf32 1):
 * uniform floats in [-1, 1), the output poisoned after the plan's search,
 * the timed call, finish, the result within its bound. Returns 0 when a TF32
 * plan was refused (checked to be one line), 1 after a passed check. */
static int check_pass(conv_params p, conv_pass pass, api a, int tf32)
{
    conv_msg msg = {{0}};
    const size_t nw = conv_filter_elems(&p);
    device_tensors t = device_tensors_of(&p, pass, 41);
    char what[192];
    snprintf(what, sizeof what, "%s %s %s", api_name(a), tf32 ? "TF32" : "FP32",
             conv_pass_name(pass));

    conv_cudnn_plan *plan = NULL;
    conv_cudnn_graph_plan *graph = NULL;
    conv_status st;
    conv_cudnn_graph_opts o = quick();
    if (a == API_LEGACY) {
        st = conv_cudnn_plan_create_pass(&plan, &p, pass, tf32 ? CONV_CUDNN_TF32 : CONV_CUDNN_FP32,
                                         &msg);
        if (st == CONV_OK)
            st = conv_cudnn_set_filter(plan, t.d_w, &msg); /* nothing for wgrad */
    } else {
        st = conv_cudnn_graph_plan_create_pass(&graph, &p, pass,
                                               tf32 ? CONV_CLASS_TF32 : CONV_CLASS_FP32, &o, t.d_x,
                                               t.d_w, t.d_y, 0, &msg);
    }
    if (st == CONV_ERR_UNSUPPORTED && tf32 && a == API_LEGACY) {
        CONV_ASSERT_ONE_LINE(msg.text, "no TF32 tensor-core");
        cr_log_info("%s on %s: %s", what, conv_shape_name(&p), msg.text);
        cr_assert_null(plan);
        device_tensors_free(&t);
        return 0;
    }
    cr_assert_eq(st, CONV_OK, "%s on %s: %s", what, conv_shape_name(&p), msg.text);
    cr_assert_eq(a == API_LEGACY ? conv_cudnn_plan_pass(plan) : conv_cudnn_graph_pass(graph), pass);

    /* The graph's search ran its candidates on the output: poison it again. */
    CONV_ASSERT_OK(conv_device_poison(t.out, t.n_out, &msg), msg);
    const either_plan e = {a, plan, graph};
    CONV_ASSERT_OK(plan_run(&e, t.d_x, t.d_w, t.d_y, &msg), msg);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    if (pass == CONV_PASS_WGRAD && p.layout == CONV_LAYOUT_NHWC)
        conv_test_assert_untouched(t.d_w, nw); /* the timed call wrote the plan's KRSC copy */
    CONV_ASSERT_OK(plan_finish(&e, t.d_w, &msg), msg);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);

    float *got = conv_host_alloc(t.n_out);
    CONV_ASSERT_OK(conv_device_download(got, t.out, t.n_out, &msg), msg);
    double factor;
    int transform;
    if (a == API_LEGACY) {
        const char *algo = conv_cudnn_algo_name(plan);
        factor = conv_cudnn_bound_factor(algo);
        transform = factor > 1.0;
        if (tf32)
            factor *= conv_tf32_bound_factor(depth_of(&p, pass));
        cr_assert_str_eq(conv_cudnn_math_type(plan),
                         tf32 ? "CUDNN_TENSOR_OP_MATH" : "CUDNN_FMA_MATH", "%s (%s) on %s", what,
                         algo, conv_shape_name(&p));
        snprintf(what + strlen(what), sizeof what - strlen(what), " (%s)", algo);
    } else {
        unsigned notes = conv_cudnn_graph_notes(graph);
        cr_assert(!(notes & CONV_NOTE_DOWN_CONVERT_INPUTS), "%s kept notes %#x", what, notes);
        if (!tf32)
            cr_assert(!(notes & CONV_NOTE_TENSOR_CORE), "%s kept notes %#x", what, notes);
        factor = conv_cudnn_graph_bound_factor(graph, &p);
        transform = (notes & (CONV_NOTE_FFT | CONV_NOTE_WINOGRAD)) != 0;
        snprintf(what + strlen(what), sizeof what - strlen(what), " (%s)",
                 conv_cudnn_graph_engine(graph));
    }
    conv_verify_report rep = verify_pass(&p, pass, t.h_x, t.h_w, t.h_y, got, factor, transform);
    CONV_ASSERT_REPORT(rep, what, &p);
    cr_assert_eq(rep.nan_count, 0, "%s on %s: NaN left in the output", what, conv_shape_name(&p));
    conv_test_assert_canary(t.out, t.n_out, "%s on %s", what, conv_shape_name(&p));

    conv_cudnn_plan_destroy(plan);
    conv_cudnn_graph_plan_destroy(graph);
    device_tensors_free(&t);
    conv_host_free(got);
    return 1;
}

/* Padding, stride 2 with input rows no output reaches (dx is 0 there),
 * dilation, an even filter at stride 3, a 1x1 image, a strided 1x1 filter, a
 * filter as large as the image; batch > 1 among them. */
static size_t fp32_shapes(conv_params *t)
{
    const conv_params shapes[] = {
        conv_shape(2, 3, 11, 13, 4, 3, 3, 1, 1, 1), conv_shape(1, 2, 10, 9, 3, 3, 3, 0, 2, 1),
        conv_shape(3, 4, 15, 13, 5, 3, 3, 2, 1, 2), conv_shape(2, 5, 9, 11, 3, 2, 4, 0, 3, 1),
        conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1),   conv_shape(2, 8, 7, 7, 16, 1, 1, 0, 2, 1),
        conv_shape(1, 3, 5, 5, 2, 5, 5, 0, 1, 1),
    };
    memcpy(t, shapes, sizeof shapes);
    return sizeof shapes / sizeof shapes[0];
}

static void check_fp32(api a)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params shapes[8];
    size_t n = fp32_shapes(shapes);
    for (int pass = 0; pass < CONV_PASS_COUNT; ++pass)
        for (size_t i = 0; i < n; ++i)
            for (int layout = 0; layout < 2; ++layout) {
                shapes[i].layout = layout ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
                check_pass(shapes[i], (conv_pass)pass, a, 0);
            }
}

Test(gpu_reference, cudnn_dgrad_and_wgrad_match_the_double_references_in_fp32)
{
    check_fp32(API_LEGACY);
}

Test(gpu_reference, cudnn_graph_dgrad_and_wgrad_match_the_double_references_in_fp32)
{
    check_fp32(API_GRAPH);
}

/* TF32 allowed: within the TF32 bound of each pass's depth. The legacy API
 * may find no tensor-core algorithm for a pass (one line, then nothing to
 * check); the graph search also times the strict FP32 engines, so it always
 * has a plan. Below compute capability 8.0 there is no TF32: the legacy
 * refusal is checked, then the test is skipped. */
static void check_tf32(api a)
{
    CONV_TEST_REQUIRE_CUDNN();
    int major = 0, minor = 0, dev = conv_current_device();
    cr_assert_eq(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev),
                 cudaSuccess);
    cr_assert_eq(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev),
                 cudaSuccess);
    conv_params shapes[] = {conv_shape(2, 32, 20, 22, 64, 3, 3, 1, 1, 1),
                            conv_shape(2, 16, 17, 15, 32, 3, 3, 1, 2, 1)};
    if (major < 8) {
        if (a == API_LEGACY)
            for (int pass = 0; pass < CONV_PASS_COUNT; ++pass)
                cr_assert_eq(check_pass(shapes[0], (conv_pass)pass, a, 1), 0,
                             "a TF32 %s algorithm below compute capability 8.0",
                             conv_pass_name((conv_pass)pass));
        cr_skip_test("TF32 needs compute capability 8.0 or newer; this GPU has %d.%d", major,
                     minor);
    }
    int checked = 0;
    for (int pass = 0; pass < CONV_PASS_COUNT; ++pass)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
            for (int layout = 0; layout < 2; ++layout) {
                shapes[i].layout = layout ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
                checked += check_pass(shapes[i], (conv_pass)pass, a, 1);
            }
    cr_log_info("%s TF32: %d of %d plans checked", api_name(a), checked, 3 * 2 * 2);
    if (a == API_GRAPH)
        cr_assert_eq(checked, 3 * 2 * 2, "the graph search always has a plan");
}

Test(gpu_reference, cudnn_dgrad_and_wgrad_with_tf32_are_within_the_tf32_bound)
{
    check_tf32(API_LEGACY);
}

Test(gpu_reference, cudnn_graph_dgrad_and_wgrad_with_tf32_are_within_the_tf32_bound)
{
    check_tf32(API_GRAPH);
}

/* A dgrad plan of either API given the filter t->d_w: another d_w is refused
 * in one line before cuDNN runs (dx keeps its NaN poison), NULL stands for
 * the given one, finish does nothing, and forward is refused. */
static void check_only_the_given_filter(const either_plan *e, const device_tensors *t, float *other,
                                        size_t nx)
{
    conv_msg msg = {{0}};
    CONV_ASSERT_REFUSES(plan_run(e, t->d_x, other, t->d_y, &msg), CONV_ERR_INVALID, msg,
                        "d_w must be that one or NULL");
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    conv_test_assert_untouched(t->d_x, nx);
    CONV_ASSERT_OK(plan_run(e, t->d_x, NULL, t->d_y, &msg), msg);
    CONV_ASSERT_OK(plan_finish(e, NULL, &msg), msg);
    CONV_ASSERT_REFUSES(plan_forward(e, t->d_x, t->d_y, &msg), CONV_ERR_INVALID, msg, "dgrad plan");
}

/* The filter that forward and dgrad read is the one they were given (NHWC:
 * its KRSC copy made then); another d_w is refused in one line, before cuDNN
 * runs, and NULL stands for the given one. finish does nothing for them. */
Test(gpu_reference, dgrad_refuses_a_filter_it_was_not_given)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params p = conv_shape_nhwc(1, 4, 9, 8, 6, 3, 3, 1, 1, 1);
    const size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p);
    device_tensors t = device_tensors_of(&p, CONV_PASS_DGRAD, 51);
    float *other = conv_test_device_copy(t.h_w, nw, "another w");
    conv_msg msg = {{0}};
    conv_cudnn_plan *plan = NULL;
    CONV_ASSERT_OK(conv_cudnn_plan_create_pass(&plan, &p, CONV_PASS_DGRAD, CONV_CUDNN_FP32, &msg),
                   msg);
    cr_assert_eq(conv_cudnn_run(plan, t.d_x, NULL, t.d_y, 0, &msg), CONV_ERR_INVALID,
                 "no filter given yet");
    CONV_ASSERT_ONE_LINE(msg.text, "conv_cudnn_set_filter");
    CONV_ASSERT_OK(conv_cudnn_set_filter(plan, t.d_w, &msg), msg);
    const either_plan legacy = {API_LEGACY, plan, NULL};
    check_only_the_given_filter(&legacy, &t, other, nx);
    conv_cudnn_plan_destroy(plan);

    conv_cudnn_graph_opts o = quick();
    conv_cudnn_graph_plan *graph = NULL;
    CONV_ASSERT_OK(conv_cudnn_graph_plan_create_pass(&graph, &p, CONV_PASS_DGRAD, CONV_CLASS_FP32,
                                                     &o, t.d_x, t.d_w, t.d_y, 0, &msg),
                   msg);
    CONV_ASSERT_OK(conv_device_poison(t.d_x, nx, &msg), msg); /* the legacy run wrote dx */
    const either_plan through_graph = {API_GRAPH, NULL, graph};
    check_only_the_given_filter(&through_graph, &t, other, nx);
    conv_cudnn_graph_plan_destroy(graph);

    conv_device_free(other);
    device_tensors_free(&t);
}

/* The search's log names the pass on every line. */
Test(gpu_reference, the_graph_search_log_names_the_pass)
{
    CONV_TEST_REQUIRE_CUDNN();
    conv_params p = conv_shape(2, 8, 12, 10, 8, 3, 3, 1, 1, 1);
    device_tensors t = device_tensors_of(&p, CONV_PASS_WGRAD, 61);
    conv_cudnn_graph_opts o = quick();
    o.log = tmpfile();
    o.label = "pass test";
    cr_assert_not_null(o.log);
    conv_cudnn_graph_log_header(o.log);
    conv_msg msg = {{0}};
    conv_cudnn_graph_plan *graph = NULL;
    CONV_ASSERT_OK(conv_cudnn_graph_plan_create_pass(&graph, &p, CONV_PASS_WGRAD, CONV_CLASS_FP32,
                                                     &o, t.d_x, t.d_w, t.d_y, 0, &msg),
                   msg);
    conv_cudnn_graph_stats s = conv_cudnn_graph_search_stats(graph);
    rewind(o.log);
    char line[512];
    int lines = 0;
    cr_assert_not_null(fgets(line, sizeof line, o.log));
    cr_assert(strncmp(line, "problem,pass,class,", 19) == 0, "header '%s'", line);
    while (fgets(line, sizeof line, o.log) != NULL) {
        cr_assert(strncmp(line, "\"pass test\",wgrad,FP32,", 23) == 0, "line '%s'", line);
        ++lines;
    }
    fclose(o.log);
    cr_assert_eq(lines, s.candidates, "a log line per candidate counted (%d lines)", lines);
    conv_cudnn_graph_plan_destroy(graph);
    device_tensors_free(&t);
}
