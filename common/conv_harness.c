#include "conv_harness.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conv_cuda.h"
#include "conv_cudnn.h"
#include "conv_cudnn_fp16.h"
#include "conv_tensor.h"
#include "conv_verify_backward.h"

/* The tensor p->pass writes: y (forward), x (dgrad) or w (wgrad); the
 * other two are its inputs, dy in y's place for the backward passes. */
static size_t out_elems(const conv_params *p)
{
    return p->pass == CONV_PASS_DGRAD   ? conv_input_elems(p)
           : p->pass == CONV_PASS_WGRAD ? conv_filter_elems(p)
                                        : conv_output_elems(p);
}

float *conv_gpu_problem_out_host(const conv_gpu_problem *pb)
{
    return pb->p.pass == CONV_PASS_DGRAD   ? pb->h_x
           : pb->p.pass == CONV_PASS_WGRAD ? pb->h_w
                                           : pb->h_y;
}

float *conv_gpu_problem_out_device(const conv_gpu_problem *pb)
{
    return pb->p.pass == CONV_PASS_DGRAD   ? pb->d_x
           : pb->p.pass == CONV_PASS_WGRAD ? pb->d_w
                                           : pb->d_y;
}

conv_status conv_gpu_problem_create_host(conv_gpu_problem *pb, const conv_params *p, uint64_t seed,
                                         conv_msg *msg)
{
    memset(pb, 0, sizeof *pb);
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    pb->p = *p;
    pb->seed = seed;
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    size_t nout = out_elems(p);
    pb->full_verify = conv_flops(p) <= CONV_FULL_VERIFY_MAX_FLOPS;
    pb->h_x = conv_host_alloc(nx);
    pb->h_w = conv_host_alloc(nw);
    pb->h_y = conv_host_alloc(ny);
    if (pb->full_verify) {
        pb->ref = malloc(nout * sizeof *pb->ref);
        pb->ref_abs = malloc(nout * sizeof *pb->ref_abs);
    }
    if (pb->h_x == NULL || pb->h_w == NULL || pb->h_y == NULL ||
        (pb->full_verify && (pb->ref == NULL || pb->ref_abs == NULL))) {
        conv_gpu_problem_destroy(pb);
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the %.1f MB problem",
                         4.0 * ((double)nx + nw + ny) / 1e6);
    }
    /* the pass's two inputs, each from its own random stream (x, w, dy: the
     * start value, plus 1, plus 2); its output is written by every row */
    if (p->pass != CONV_PASS_DGRAD)
        conv_fill_uniform(pb->h_x, nx, seed, -1.0f, 1.0f);
    if (p->pass != CONV_PASS_WGRAD)
        conv_fill_uniform(pb->h_w, nw, seed + 1, -1.0f, 1.0f);
    if (p->pass != CONV_PASS_FORWARD)
        conv_fill_uniform(pb->h_y, ny, seed + 2, -1.0f, 1.0f);
    if (pb->full_verify)
        conv_pass_reference_double(p, pb->h_x, pb->h_w, pb->h_y, pb->ref, pb->ref_abs);
    return CONV_OK;
}

conv_status conv_gpu_problem_create(conv_gpu_problem *pb, const conv_params *p, uint64_t seed,
                                    conv_msg *msg)
{
    memset(pb, 0, sizeof *pb);
    conv_status st = conv_params_validate(p, msg);
    if (st == CONV_OK)
        st = conv_cuda_require_device(msg);
    if (st == CONV_OK)
        st = conv_gpu_problem_create_host(pb, p, seed, msg);
    if (st != CONV_OK)
        return st;
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    const conv_pass pass = p->pass;
    if ((st = conv_device_alloc(&pb->d_x, nx, "input x", msg)) != CONV_OK ||
        (st = conv_device_alloc(&pb->d_w, nw, "filter w", msg)) != CONV_OK ||
        (st = conv_device_alloc(&pb->d_y, ny, "output y", msg)) != CONV_OK ||
        (pass != CONV_PASS_DGRAD &&
         (st = conv_device_upload(pb->d_x, pb->h_x, nx, msg)) != CONV_OK) ||
        (pass != CONV_PASS_WGRAD &&
         (st = conv_device_upload(pb->d_w, pb->h_w, nw, msg)) != CONV_OK) ||
        (pass != CONV_PASS_FORWARD &&
         (st = conv_device_upload(pb->d_y, pb->h_y, ny, msg)) != CONV_OK)) {
        conv_gpu_problem_destroy(pb);
        return st;
    }
    cudaError_t e = cudaStreamCreate(&pb->stream);
    if (e != cudaSuccess) {
        pb->stream = NULL;
        conv_gpu_problem_destroy(pb);
        return conv_cuda_fail(msg, e, "cudaStreamCreate", __FILE__, __LINE__);
    }
    return CONV_OK;
}

void conv_gpu_problem_destroy(conv_gpu_problem *pb)
{
    conv_host_free(pb->h_x);
    conv_host_free(pb->h_w);
    conv_host_free(pb->h_y);
    free(pb->ref);
    free(pb->ref_abs);
    conv_device_free(pb->d_x);
    conv_device_free(pb->d_w);
    conv_device_free(pb->d_y);
    if (pb->stream != NULL)
        cudaStreamDestroy(pb->stream);
    memset(pb, 0, sizeof *pb);
}

/* Verifies the pass's output on the host (already downloaded or written by a
 * host version) and the canary count, filling res->report, res->passed and
 * res->verdict. */
static void judge_with(conv_gpu_problem *pb, conv_gpu_result *res, conv_verify_opts opts)
{
    const float *got = conv_gpu_problem_out_host(pb);
    res->report = pb->full_verify
                      ? conv_pass_verify_precomputed(&pb->p, got, pb->ref, pb->ref_abs, opts)
                      : conv_pass_verify_sampled(&pb->p, pb->h_x, pb->h_w, pb->h_y, got,
                                                 CONV_VERIFY_SAMPLES, pb->seed, opts);
    conv_report_describe(&res->report, res->verdict, sizeof res->verdict);
    res->passed = res->report.passed && res->canary_bad == 0;
    if (res->canary_bad != 0)
        snprintf(res->verdict, sizeof res->verdict,
                 "FAILED: %zu canary floats after the output overwritten", res->canary_bad);
}

/* The same within bound_factor times the dot-product bound (1 for the kernels
 * that compute plain dot products). */
static void judge(conv_gpu_problem *pb, conv_gpu_result *res, double bound_factor)
{
    judge_with(pb, res, conv_verify_bound(bound_factor));
}

typedef struct {
    conv_gpu_problem *pb;
    conv_gpu_conv conv;
    conv_gpu_grad grad;
    void *ctx;
} device_run;

static conv_status run_device(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    device_run *run = ctx;
    conv_gpu_problem *pb = run->pb;
    if (run->grad != NULL)
        return run->grad(run->ctx, &pb->p, pb->d_x, pb->d_w, pb->d_y, stream, msg);
    return run->conv(run->ctx, &pb->p, pb->d_x, pb->d_w, pb->d_y, stream, msg);
}

/* One untimed run of work into the NaN-poisoned output, then the output
 * downloaded to pb->h_y and its canary checked: what every measurement
 * verifies before it times. */
static conv_status run_once_checked(conv_gpu_problem *pb, conv_gpu_work work, void *ctx,
                                    conv_gpu_work finish, conv_gpu_result *res, conv_msg *msg)
{
    size_t nout = out_elems(&pb->p);
    float *d_out = conv_gpu_problem_out_device(pb);
    conv_status st = conv_device_canary_reset(d_out, nout, msg);
    if (st == CONV_OK)
        st = conv_device_poison(d_out, nout, msg);
    if (st == CONV_OK)
        st = work(ctx, pb->stream, msg);
    if (st == CONV_OK && finish != NULL) /* e.g. cuDNN's KRSC dw back to RSCK, untimed */
        st = finish(ctx, pb->stream, msg);
    if (st != CONV_OK)
        return st;
    CONV_CUDA_CHECK(cudaStreamSynchronize(pb->stream), msg);
    if ((st = conv_device_download(conv_gpu_problem_out_host(pb), d_out, nout, msg)) != CONV_OK)
        return st;
    return conv_device_canary_check(d_out, nout, &res->canary_bad, msg);
}

/* What every device measurement does: one checked run of work (then finish,
 * untimed, if any), its verdict within `within`, then its timing. */
static conv_status measure_work(conv_gpu_problem *pb, conv_gpu_work work, void *ctx,
                                conv_gpu_work finish, conv_verify_opts within, int warmup,
                                int repeat, conv_gpu_result *res, conv_msg *msg)
{
    conv_status st = run_once_checked(pb, work, ctx, finish, res, msg);
    if (st != CONV_OK)
        return st;
    judge_with(pb, res, within);
    return conv_time_gpu(work, ctx, pb->stream, warmup, repeat, &res->timing, msg);
}

/* A device row of either kind (conv for the forward pass, grad for a
 * backward one), each on the problems of its own pass only. */
static conv_status measure_device(conv_gpu_problem *pb, device_run run,
                                  const conv_verify_opts *within, int warmup, int repeat,
                                  conv_gpu_result *res, conv_msg *msg)
{
    memset(res, 0, sizeof *res);
    if (pb->d_y == NULL)
        return conv_fail(msg, CONV_ERR_NO_DEVICE, "no CUDA device: the problem is host-only");
    if ((run.grad != NULL) != (pb->p.pass != CONV_PASS_FORWARD))
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "a %s version does not compute %s",
                         run.grad != NULL ? "backward" : "forward", conv_pass_name(pb->p.pass));
    return measure_work(pb, run_device, &run, NULL,
                        within != NULL ? *within : conv_verify_bound(1.0), warmup, repeat, res,
                        msg);
}

conv_status conv_gpu_problem_measure(conv_gpu_problem *pb, conv_gpu_conv conv, void *ctx,
                                     const conv_verify_opts *within, int warmup, int repeat,
                                     conv_gpu_result *res, conv_msg *msg)
{
    device_run run = {pb, conv, NULL, ctx};
    return measure_device(pb, run, within, warmup, repeat, res, msg);
}

conv_status conv_gpu_problem_measure_grad(conv_gpu_problem *pb, conv_gpu_grad grad, void *ctx,
                                          const conv_verify_opts *within, int warmup, int repeat,
                                          conv_gpu_result *res, conv_msg *msg)
{
    device_run run = {pb, NULL, grad, ctx};
    return measure_device(pb, run, within, warmup, repeat, res, msg);
}

/* A cuDNN row's start: res and its name cleared; a host-only problem is
 * CONV_ERR_NO_DEVICE. */
static conv_status start_cudnn(const conv_gpu_problem *pb, conv_gpu_result *res, char *name,
                               size_t name_len, conv_msg *msg)
{
    memset(res, 0, sizeof *res);
    if (name != NULL && name_len > 0)
        name[0] = '\0';
    if (pb->d_y == NULL)
        return conv_fail(msg, CONV_ERR_NO_DEVICE, "no CUDA device: the problem is host-only");
    return CONV_OK;
}

/* cuDNN's plan of the problem's pass, through one of its two APIs: legacy
 * (conv_cudnn.h) or graph (conv_cudnn_graph.h), the other NULL. */
typedef struct {
    conv_cudnn_plan *legacy;
    conv_cudnn_graph_plan *graph;
} cudnn_plan;

/* The timed call: the plan's pass, measured as a device row of any pass is
 * (a conv_gpu_grad, whose context is the plan). */
static conv_status cudnn_pass(void *ctx, const conv_params *p, float *d_x, float *d_w, float *d_y,
                              cudaStream_t stream, conv_msg *msg)
{
    (void)p; /* the plan's */
    const cudnn_plan *plan = ctx;
    if (plan->graph != NULL)
        return conv_cudnn_graph_run(plan->graph, d_x, d_w, d_y, stream, msg);
    return conv_cudnn_run(plan->legacy, d_x, d_w, d_y, stream, msg);
}

/* Untimed, before the output is downloaded: wgrad's NHWC result back from
 * KRSC to RSCK. ctx is the device_run of cudnn_pass. */
static conv_status finish_cudnn(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    const device_run *run = ctx;
    const cudnn_plan *plan = run->ctx;
    if (plan->graph != NULL)
        return conv_cudnn_graph_finish(plan->graph, run->pb->d_w, stream, msg);
    return conv_cudnn_finish(plan->legacy, run->pb->d_w, stream, msg);
}

conv_status conv_gpu_problem_measure_cudnn(conv_gpu_problem *pb, int warmup, int repeat,
                                           conv_gpu_result *res, char *algo, size_t algo_len,
                                           conv_msg *msg)
{
    return conv_gpu_problem_measure_cudnn_math(pb, CONV_CUDNN_FP32, warmup, repeat, res, algo,
                                               algo_len, msg);
}

conv_status conv_gpu_problem_measure_cudnn_math(conv_gpu_problem *pb, conv_cudnn_math math,
                                                int warmup, int repeat, conv_gpu_result *res,
                                                char *algo, size_t algo_len, conv_msg *msg)
{
    conv_status st = start_cudnn(pb, res, algo, algo_len, msg);
    if (st != CONV_OK)
        return st;
    conv_cudnn_plan *plan = NULL;
    if ((st = conv_cudnn_plan_create_pass(&plan, &pb->p, pb->p.pass, math, msg)) != CONV_OK)
        return st;
    cudnn_plan plans = {plan, NULL};
    device_run run = {pb, NULL, cudnn_pass, &plans};
    double factor = conv_cudnn_bound_factor(conv_cudnn_algo_name(plan));
    if (math == CONV_CUDNN_TF32) /* inputs rounded to TF32 (conv_verify.h) */
        factor *= conv_tf32_bound_factor(conv_pass_depth(&pb->p));
    if ((st = conv_cudnn_set_filter(plan, pb->d_w, msg)) == CONV_OK) /* wgrad: none */
        st = measure_work(pb, run_device, &run, finish_cudnn, conv_verify_bound(factor), warmup,
                          repeat, res, msg);
    if (algo != NULL && algo_len > 0)
        snprintf(algo, algo_len, "%s", conv_cudnn_algo_name(plan));
    conv_cudnn_plan_destroy(plan);
    return st;
}

/* What a graph search saw, after the verdict of a row that passed. */
static void append_search(conv_gpu_result *res, const conv_cudnn_graph_plan *plan)
{
    conv_cudnn_graph_stats s = conv_cudnn_graph_search_stats(plan);
    size_t len = strlen(res->verdict);
    snprintf(res->verdict + len, sizeof res->verdict - len,
             "; search: %d timed of %d configurations (%d of another class, %d unsupported, "
             "%d over the workspace cap) in %.1f s%s",
             s.timed, s.candidates, s.other_class, s.unsupported, s.over_cap, s.seconds,
             s.cut_by_budget ? ", cut by the budget" : "");
}

/* After a graph plan's row passed: the engines its search kept but the
 * verification left out, each for a wrong answer. */
static void append_left_out(conv_gpu_result *res, const conv_cudnn_graph_plan *plan)
{
    const char *out = conv_cudnn_graph_left_out(plan);
    size_t len = strlen(res->verdict);
    if (out[0] != '\0')
        snprintf(res->verdict + len, sizeof res->verdict - len, "; left out for a wrong answer: %s",
                 out);
}

/* The FP16 reference's plan and the problem its output goes to. */
typedef struct {
    conv_cudnn_fp16_plan *plan;
    conv_gpu_problem *pb;
} cudnn_fp16_run;

/* The timed call: cudnnConvolutionForward alone, into the plan's half y. */
static conv_status cudnn_fp16_forward(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    const cudnn_fp16_run *run = ctx;
    return conv_cudnn_fp16_forward(run->plan, stream, msg);
}

/* Untimed, before the output is downloaded: the half y into the float y. */
static conv_status cudnn_fp16_output(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    const cudnn_fp16_run *run = ctx;
    return conv_cudnn_fp16_output(run->plan, run->pb->d_y, stream, msg);
}

conv_status conv_gpu_problem_measure_cudnn_fp16(conv_gpu_problem *pb,
                                                const conv_cudnn_graph_opts *graph, int warmup,
                                                int repeat, conv_gpu_result *res, char *algo,
                                                size_t algo_len, conv_msg *msg)
{
    conv_status st = start_cudnn(pb, res, algo, algo_len, msg);
    const conv_params *p = &pb->p;
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p);
    if (st == CONV_OK)
        st = conv_cudnn_fp16_check(p, msg);
    if (st == CONV_OK) /* half holds the inputs, and the outputs where they are known */
        st = conv_cudnn_fp16_check_values(
            pb->h_x, nx, pb->h_w, nw, pb->full_verify ? pb->ref : NULL, conv_output_elems(p), msg);
    conv_cudnn_fp16_plan *plan = NULL;
    if (st == CONV_OK)
        st = conv_cudnn_fp16_plan_create(&plan, p, graph, pb->stream, msg);
    if (st != CONV_OK)
        return st;
    cudnn_fp16_run run = {plan, pb};
    if ((st = conv_cudnn_fp16_set_inputs(plan, pb->d_x, pb->d_w, pb->stream, msg)) == CONV_OK)
        do /* an engine of the graph search with a wrong answer: the next fastest */
            st = measure_work(pb, cudnn_fp16_forward, &run, cudnn_fp16_output,
                              conv_cudnn_fp16_bound(conv_pass_depth(p), pb->h_x, nx, pb->h_w, nw,
                                                    conv_cudnn_fp16_algo_factor(plan)),
                              warmup, repeat, res, msg);
        while (st == CONV_OK && !res->passed && conv_cudnn_fp16_next_engine(plan, NULL) == CONV_OK);
    if (st == CONV_OK && res->passed && conv_cudnn_fp16_graph(plan) != NULL) {
        append_search(res, conv_cudnn_fp16_graph(plan));
        append_left_out(res, conv_cudnn_fp16_graph(plan));
    }
    if (algo != NULL && algo_len > 0)
        snprintf(algo, algo_len, "%s", conv_cudnn_fp16_algo_name(plan));
    conv_cudnn_fp16_plan_destroy(plan);
    return st;
}

conv_status conv_gpu_problem_measure_cudnn_graph(conv_gpu_problem *pb, conv_class cls,
                                                 const conv_cudnn_graph_opts *o, int warmup,
                                                 int repeat, conv_gpu_result *res, char *engine,
                                                 size_t engine_len, conv_msg *msg)
{
    conv_status st = start_cudnn(pb, res, engine, engine_len, msg);
    if (st != CONV_OK)
        return st;
    conv_cudnn_graph_plan *plan = NULL;
    if ((st = conv_cudnn_graph_plan_create_pass(&plan, &pb->p, pb->p.pass, cls, o, pb->d_x, pb->d_w,
                                                pb->d_y, pb->stream, msg)) != CONV_OK)
        return st;
    cudnn_plan plans = {NULL, plan};
    device_run run = {pb, NULL, cudnn_pass, &plans};
    do /* an engine with a wrong answer: the search's next fastest */
        st = measure_work(pb, run_device, &run, finish_cudnn,
                          conv_verify_bound(conv_cudnn_graph_bound_factor(plan, &pb->p)), warmup,
                          repeat, res, msg);
    while (st == CONV_OK && !res->passed && conv_cudnn_graph_plan_next(plan, NULL) == CONV_OK);
    if (st == CONV_OK && res->passed) {
        append_search(res, plan);
        append_left_out(res, plan);
    }
    if (engine != NULL && engine_len > 0)
        snprintf(engine, engine_len, "%s", conv_cudnn_graph_engine(plan));
    conv_cudnn_graph_plan_destroy(plan);
    return st;
}

typedef struct {
    conv_gpu_problem *pb;
    conv_host_conv conv;
} host_run;

static conv_status run_host(void *ctx, conv_msg *msg)
{
    host_run *run = ctx;
    return run->conv(&run->pb->p, run->pb->h_x, run->pb->h_w, run->pb->h_y, msg);
}

conv_status conv_gpu_problem_measure_host(conv_gpu_problem *pb, conv_host_conv conv, int warmup,
                                          int repeat, conv_gpu_result *res, conv_msg *msg)
{
    memset(res, 0, sizeof *res);
    if (pb->p.pass != CONV_PASS_FORWARD)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "a forward version does not compute %s",
                         conv_pass_name(pb->p.pass));
    size_t ny = conv_output_elems(&pb->p);
    host_run run = {pb, conv};
    /* excerpt: poison, run, check the canary */
    conv_canary_fill(pb->h_y + ny, CONV_CANARY_FLOATS); /* re-armed after a row that broke it */
    conv_fill_nan(pb->h_y, ny);
    conv_status st = conv_time_cpu(run_host, &run, warmup, repeat, &res->timing, msg);
    if (st != CONV_OK)
        return st;
    res->canary_bad = conv_host_canary_check(pb->h_y, ny);
    judge(pb, res, 1.0);
    /* excerpt end: poison, run, check the canary */
    return CONV_OK;
}

void conv_problem_memory(const conv_params *p, size_t *host_bytes, size_t *device_bytes)
{
    /* sizes of valid parameters fit size_t (conv_params_validate); doubles
     * avoid overflow in the sums all the same */
    double floats =
        (double)conv_input_elems(p) + (double)conv_filter_elems(p) + (double)conv_output_elems(p);
    double host = 4.0 * floats;
    if (conv_flops(p) <= CONV_FULL_VERIFY_MAX_FLOPS)
        host += 2.0 * 8.0 * (double)out_elems(p);
    *host_bytes = host >= 1.8e19 ? SIZE_MAX : (size_t)host;
    *device_bytes = 4.0 * floats >= 1.8e19 ? SIZE_MAX : (size_t)(4.0 * floats);
}

conv_status conv_problem_check_memory(const conv_params *p, size_t device_free, conv_msg *msg)
{
    size_t host, device, physical = conv_host_memory_bytes();
    conv_problem_memory(p, &host, &device);
    if (physical > 0 && host > physical)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "out of host memory: the problem needs %.1f GB on the host, this machine "
                         "has %.1f GB",
                         host / 1e9, physical / 1e9);
    if (device_free > 0 && device > device_free)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "out of device memory: the problem needs %.1f GB on the GPU, %.1f GB are "
                         "free",
                         device / 1e9, device_free / 1e9);
    return CONV_OK;
}

void conv_format_utc_now(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm_utc;
    if (gmtime_r(&now, &tm_utc) == NULL || strftime(buf, size, "%Y-%m-%d %H:%M UTC", &tm_utc) == 0)
        snprintf(buf, size, "unknown");
}
