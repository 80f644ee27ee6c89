/* The measuring harness every program shares: one problem set up once (seeded
 * host tensors, device copies with canaries, a stream, the verification
 * reference), then any number of convolutions measured on it the same way:
 * poison the output with NaN, run once, verify (every output against the
 * double reference, or a sample on large problems), check the canary, then
 * time (warm-up, median of repeats; CUDA events for device work). cuDNN is
 * measured through the same calls, so "ratio to cuDNN" always means "the same
 * problem, the same run".
 *
 * The naming chain of a step: <name>_kernel  <-  its launcher, which
 * validates once, launches and checks the launch  <-  the adapter with the
 * conv_gpu_conv signature below, which the step's rows hand to this harness. */
#ifndef CONV_HARNESS_H
#define CONV_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "conv_cudnn.h"
#include "conv_cudnn_graph.h"
#include "conv_device.h"
#include "conv_params.h"
#include "conv_timer.h"
#include "conv_verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A 2D convolution on the device, as the harness and the tests call it: ctx
 * carries what the step needs (a variant, a tile choice, a workspace). It must
 * only enqueue work on `stream` and report launch errors; it must not
 * synchronise (the timer does). */
typedef conv_status (*conv_gpu_conv)(void *ctx, const conv_params *p, const float *d_x,
                                     const float *d_w, float *d_y, cudaStream_t stream,
                                     conv_msg *msg);

/* A backward pass on the device (step 10): reads the two tensors p->pass
 * takes and writes the third (dgrad: dx into d_x from dy in d_y and d_w;
 * wgrad: dw into d_w from d_x and dy in d_y); the same rules as above. */
typedef conv_status (*conv_gpu_grad)(void *ctx, const conv_params *p, float *d_x, float *d_w,
                                     float *d_y, cudaStream_t stream, conv_msg *msg);

/* A 2D convolution on the host (step 01's signature). */
typedef conv_status (*conv_host_conv)(const conv_params *p, const float *h_x, const float *h_w,
                                      float *h_y, conv_msg *msg);

/* Above this many FLOPs the double reference of every output would take long
 * on one CPU core, so a sample of outputs is verified instead. */
#define CONV_FULL_VERIFY_MAX_FLOPS 2e10
#define CONV_VERIFY_SAMPLES        4096

/* A problem of any pass (p.pass): its two inputs come from the random stream
 * (uniform in [-1, 1)), its output is what the rows write and the harness
 * verifies: y for the forward pass, x (as dx) for dgrad, w (as dw) for wgrad;
 * dy lives in y's buffers. */
typedef struct {
    conv_params p;
    uint64_t seed;
    float *h_x, *h_w, *h_y; /* host input, filter and output (or dx, dw, dy) */
    float *d_x, *d_w, *d_y; /* device copies, each followed by a canary */
    cudaStream_t stream;
    int full_verify; /* 1: every output is checked; 0: CONV_VERIFY_SAMPLES of them */
    double *ref;     /* double reference of every element of the pass's output (full_verify only) */
    double *ref_abs; /* and its sum |x*w|, for the tolerance */
} conv_gpu_problem;

typedef struct {
    conv_timing timing;
    conv_verify_report report;
    size_t canary_bad; /* canary floats overwritten after the output */
    int passed;        /* verified and canary intact */
    char verdict[CONV_MSG_LEN];
} conv_gpu_result;

/* Allocates and fills everything (input and filter uniform in [-1, 1) from the
 * seed) and, for problems of at most CONV_FULL_VERIFY_MAX_FLOPS, computes the
 * double reference once. Errors: no device, out of (host or device) memory,
 * invalid parameters. On error nothing stays allocated. */
conv_status conv_gpu_problem_create(conv_gpu_problem *pb, const conv_params *p, uint64_t seed,
                                    conv_msg *msg);
/* The host half only (tensors and reference, no device, no stream): for
 * measuring host rows on a machine without a GPU. Device measurements on such
 * a problem return CONV_ERR_NO_DEVICE. */
conv_status conv_gpu_problem_create_host(conv_gpu_problem *pb, const conv_params *p, uint64_t seed,
                                         conv_msg *msg);
void conv_gpu_problem_destroy(conv_gpu_problem *pb);

/* The host and device buffers of the tensor the problem's pass writes. */
float *conv_gpu_problem_out_host(const conv_gpu_problem *pb);
float *conv_gpu_problem_out_device(const conv_gpu_problem *pb);

/* Measures one device convolution on the problem (see the top of this file).
 * Returns an error only when something failed to run; a wrong result is
 * CONV_OK with res->passed == 0 and the reason in res->verdict. A result that
 * fails verification is still timed, so the table shows it, marked FAILED.
 * within: how the result is verified; NULL for a dot product's bound
 * (conv_verify_bound(1)), the options of conv_verify.h for an algorithm
 * with its own (Winograd). */
conv_status conv_gpu_problem_measure(conv_gpu_problem *pb, conv_gpu_conv conv, void *ctx,
                                     const conv_verify_opts *within, int warmup, int repeat,
                                     conv_gpu_result *res, conv_msg *msg);

/* The same for a backward pass (conv_gpu_grad); the bound's depth is the
 * pass's (conv_verify_backward.h). A forward problem's rows use the call
 * above, a backward one's this: each refuses the other's problems. */
conv_status conv_gpu_problem_measure_grad(conv_gpu_problem *pb, conv_gpu_grad grad, void *ctx,
                                          const conv_verify_opts *within, int warmup, int repeat,
                                          conv_gpu_result *res, conv_msg *msg);

/* The same for cuDNN (FP32, CUDNN_FMA_MATH, its fastest algorithm; plan
 * creation and the algorithm search are outside the timed region). The
 * algorithm's name goes to algo. CONV_ERR_UNAVAILABLE without cuDNN. */
conv_status conv_gpu_problem_measure_cudnn(conv_gpu_problem *pb, int warmup, int repeat,
                                           conv_gpu_result *res, char *algo, size_t algo_len,
                                           conv_msg *msg);
/* The same with the given arithmetic (conv_cudnn.h): CONV_CUDNN_TF32 is
 * verified within the TF32 bound (conv_tf32_bound_factor). */
conv_status conv_gpu_problem_measure_cudnn_math(conv_gpu_problem *pb, conv_cudnn_math math,
                                                int warmup, int repeat, conv_gpu_result *res,
                                                char *algo, size_t algo_len, conv_msg *msg);

/* cuDNN in the FP16 class (conv_cudnn_fp16.h): x and w rounded to half at
 * set-up, float compute, tensor cores allowed, the fastest algorithm of the
 * legacy API's search (graph NULL) or the fastest engine of the graph API's
 * within graph's limits; the forward call alone timed, the half y converted
 * to float outside it. Verified within the FP16 class's bound plus the
 * output's rounding to half (conv_cudnn_fp16_bound). CONV_ERR_UNSUPPORTED
 * with one line for a backward pass, values beyond half's range or no
 * algorithm. */
conv_status conv_gpu_problem_measure_cudnn_fp16(conv_gpu_problem *pb,
                                                const conv_cudnn_graph_opts *graph, int warmup,
                                                int repeat, conv_gpu_result *res, char *algo,
                                                size_t algo_len, conv_msg *msg);

/* The same through cuDNN's graph API (conv_cudnn_graph.h): the fastest
 * engine of class cls that the search finds within o's budget (the search,
 * like the plan, outside the timed region), verified within the bound its
 * numerical notes imply. "engine 28, knobs ..." goes to engine. */
conv_status conv_gpu_problem_measure_cudnn_graph(conv_gpu_problem *pb, conv_class cls,
                                                 const conv_cudnn_graph_opts *o, int warmup,
                                                 int repeat, conv_gpu_result *res, char *engine,
                                                 size_t engine_len, conv_msg *msg);

/* Times a host convolution (step 01 serial or OpenMP) on the problem's host
 * tensors and verifies it like the device ones. */
conv_status conv_gpu_problem_measure_host(conv_gpu_problem *pb, conv_host_conv conv, int warmup,
                                          int repeat, conv_gpu_result *res, conv_msg *msg);

/* Memory a problem needs before anything is allocated: on the host the
 * input, filter and output (and the double reference when every output is
 * verified), on the device the input, filter and output. */
void conv_problem_memory(const conv_params *p, size_t *host_bytes, size_t *device_bytes);

/* CONV_OK when the problem fits this machine's physical memory (and, with
 * device_free > 0, that much free device memory); else CONV_ERR_UNSUPPORTED
 * with one line naming both sizes. Nothing is allocated. */
conv_status conv_problem_check_memory(const conv_params *p, size_t device_free, conv_msg *msg);

/* The current time, "2026-11-23 05:41 UTC" ("unknown" if the clock fails). */
void conv_format_utc_now(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* CONV_HARNESS_H */
