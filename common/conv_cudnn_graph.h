/* cuDNN's graph API: the strongest cuDNN a user can get, as a reference.
 *
 * Frameworks (PyTorch among them) call cuDNN through its graph ("backend")
 * API, not through the legacy algorithm enums of conv_cudnn.h. There each
 * pass of a convolution layer (forward, dgrad, wgrad: conv_pass in
 * conv_params.h) is a graph of one operation; cuDNN offers engines for
 * it (each a family of kernels, with knobs such as the tile size), and the
 * caller picks one by measuring. This reference does what an autotuner does:
 *
 *   1. the pass as an operation graph (NCHW or NHWC through the tensors'
 *      strides; padding, stride and dilation): an operation
 *      CONVOLUTION_FORWARD (X, W -> Y), CONVOLUTION_BACKWARD_DATA (DY, W ->
 *      DX) or CONVOLUTION_BACKWARD_FILTER (X, DY -> DW);
 *   2. candidates in this order: the engine configurations of the heuristics
 *      (mode A, mode B, the fallback list), then every global engine with its
 *      default knobs, then every engine again with each choice of its knobs
 *      (at most CONV_CUDNN_GRAPH_MAX_KNOB_SETS per engine); engines that
 *      compile their kernel at run time (up to seconds per candidate) come
 *      after all the others in both global passes;
 *   3. each candidate kept only if its numerical notes fit the precision
 *      class asked for (below) and its plan finalizes with a workspace within
 *      the cap; then run once untimed (an engine compiled at run time builds
 *      its kernel then) and timed (warm-up, median of repeats, CUDA events);
 *   4. the search stops starting new candidates once the time budget is
 *      spent and one plan has been timed; the fastest plan is kept.
 *
 * Precision classes, from the engine's numerical notes (FP32 data):
 *   FP32  strict: no tensor-core note, no down-converted inputs;
 *   TF32  the tensor-core note (products of inputs rounded to TF32), no
 *         down-converted inputs. A user who allows TF32 gets the faster of
 *         both, so a TF32 search also times the strict FP32 engines;
 *   FP16  half data (x, w and y in half precision, the products summed in
 *         float: conv_cudnn_graph_plan_create_half): no down-converted
 *         inputs, no reduced-precision sums.
 * Engines that down-convert FP32 inputs (to half precision) belong to no
 * class and are never used.
 *
 * Without cuDNN at build time the plan functions return CONV_ERR_UNAVAILABLE;
 * the host logic (classes, knob sets, the budget, the tag) works anywhere. */
#ifndef CONV_CUDNN_GRAPH_H
#define CONV_CUDNN_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "conv_params.h"
#include "conv_verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The search's limits: the programs' --cudnn-budget and --cudnn-workspace set them
 * (read in common/conv_program.c); elsewhere the defaults below. */
typedef struct {
    double budget_s;      /* seconds for starting new candidates (> 0) */
    size_t workspace_cap; /* bytes a plan's workspace may take */
    int warmup, repeat;   /* timing of each candidate */
    FILE *log;            /* NULL, or a CSV that gets a line per candidate (--cudnn-log) */
    const char *label;    /* the problem's name in that CSV */
} conv_cudnn_graph_opts;

/* The defaults, as text too for the programs' --help. The workspace cap is
 * as generous as frameworks are (a candidate whose workspace does not fit in
 * the GPU's memory is skipped): a smaller one shuts out engines such as
 * IMPLICIT_PRECOMP_GEMM, which needs 1.2 GB on the hpc101 problem. */
#define CONV_CUDNN_GRAPH_BUDGET_MS     5000
#define CONV_CUDNN_GRAPH_WORKSPACE_MB  16384
#define CONV_CUDNN_GRAPH_TEXT_(x)      #x
#define CONV_CUDNN_GRAPH_TEXT(x)       CONV_CUDNN_GRAPH_TEXT_(x)
#define CONV_CUDNN_GRAPH_MAX_KNOB_SETS 32
/* Knobs an engine may have, and the most candidates one search keeps track of. */
#define CONV_CUDNN_GRAPH_MAX_KNOBS      16
#define CONV_CUDNN_GRAPH_MAX_CANDIDATES 4096

/* CONV_CUDNN_GRAPH_BUDGET_MS, CONV_CUDNN_GRAPH_WORKSPACE_MB, 1 warm-up, 5 repeats, no log. */
conv_cudnn_graph_opts conv_cudnn_graph_opts_default(void);

/* ---- host logic: no GPU, no cuDNN call ---- */

/* The numerical notes of an engine, as flags (bit i = cuDNN's
 * cudnnBackendNumericalNote_t value i). */
enum {
    CONV_NOTE_TENSOR_CORE = 1u << 0,
    CONV_NOTE_DOWN_CONVERT_INPUTS = 1u << 1,
    CONV_NOTE_REDUCED_PRECISION_REDUCTION = 1u << 2,
    CONV_NOTE_FFT = 1u << 3,
    CONV_NOTE_NONDETERMINISTIC = 1u << 4,
    CONV_NOTE_WINOGRAD = 1u << 5
};

/* The class of an engine with these notes on FP32 data (half_data 0) or half
 * data (1): 1 and *cls set, or 0 when it belongs to no class. */
int conv_cudnn_graph_class_of(unsigned notes, int half_data, conv_class *cls);

/* A knob of an engine: its type (cudnnBackendKnobType_t) and its values
 * min, min + stride, ..., up to max. */
typedef struct {
    int64_t type, min, max, stride;
} conv_cudnn_knob;

/* Sets values[i] = knobs[i].min. */
void conv_cudnn_knobs_first(const conv_cudnn_knob *knobs, int n, int64_t *values);
/* The next choice of values in odometer order (the last knob fastest);
 * 0 after the last one. A stride below 1 counts as 1. */
int conv_cudnn_knobs_next(const conv_cudnn_knob *knobs, int n, int64_t *values);

/* Whether the search may start another candidate: while less than the
 * budget has elapsed, and after it until one candidate has been timed. */
int conv_cudnn_graph_keep_searching(double elapsed_s, double budget_s, int timed);

/* The search keeps, besides the fastest configuration, the next
 * CONV_CUDNN_GRAPH_RUNNERS_UP fastest, fastest first: where the kept engine
 * gives a wrong answer on the problem (a verification that fails), the
 * harness takes the next (conv_cudnn_graph_plan_next). Where a time t goes
 * in the ascending list ms[0..n) of at most cap entries: its index, or -1
 * when the list is full and t is no faster than its last entry. */
#define CONV_CUDNN_GRAPH_RUNNERS_UP 3
int conv_cudnn_graph_rank_slot(const double *ms, int n, int cap, double t);

/* The notes as words, "tensor core, winograd" ("none" without any), cut to len. */
void conv_cudnn_graph_notes_text(unsigned notes, char *out, size_t len);

/* The header of the candidates' CSV; each search adds its lines:
 * problem, pass (forward, dgrad, wgrad), class searched, where the candidate came from (heuristics
 * mode A, mode B, fallback; a global engine's defaults or a knob choice), engine, notes, workspace,
 * seconds to finalize the plan (a runtime-compiled engine builds its kernel then), what became of
 * it, its median. */
void conv_cudnn_graph_log_header(FILE *log);

/* "engine 28, knobs 2=3 14=4" (", default knobs" without any), cut to len. */
void conv_cudnn_graph_tag(int64_t engine, const int64_t *types, const int64_t *values, int n,
                          char *out, size_t len);

/* Builds and finalizes the graph's descriptors of p (its three tensors, the
 * convolution, the operation), then frees them: no device needed, and p is
 * not validated first, so that cuDNN's own judgement shows. An error is one
 * line naming the call that failed. The forward operation; _pass: the
 * operation of the pass (a pass out of range: CONV_ERR_INVALID). */
conv_status conv_cudnn_graph_describe(const conv_params *p, conv_msg *msg);
conv_status conv_cudnn_graph_describe_pass(const conv_params *p, conv_pass pass, conv_msg *msg);

/* ---- the plan ---- */

typedef struct conv_cudnn_graph_plan conv_cudnn_graph_plan;

/* What a search saw. */
typedef struct {
    int candidates;    /* engine configurations considered (duplicates left out) */
    int other_class;   /* left out by their numerical notes */
    int unsupported;   /* did not finalize, or failed to run */
    int over_cap;      /* workspace above the cap */
    int timed;         /* ran and were timed */
    int cut_by_budget; /* 1 when the budget ended the search early */
    double seconds;    /* the whole search */
} conv_cudnn_graph_stats;

/* Builds the forward graph for p (FP32 data), searches the engines of class
 * cls (CONV_CLASS_FP32 or CONV_CLASS_TF32) and keeps the fastest plan. d_x and
 * d_w are the problem's input and filter (the filter in the layout of
 * conv_params.h: the plan reorders an NHWC filter to KRSC once, as
 * conv_cudnn_set_filter does), d_y a buffer of the output's size that the
 * search may overwrite. CONV_ERR_UNSUPPORTED (one line) when no engine of the
 * class runs the problem. */
conv_status conv_cudnn_graph_plan_create(conv_cudnn_graph_plan **plan, const conv_params *p,
                                         conv_class cls, const conv_cudnn_graph_opts *o,
                                         const float *d_x, const float *d_w, float *d_y,
                                         cudaStream_t stream, conv_msg *msg);
/* The same for any pass: the three tensors (x, w, y) of p, of which the pass
 * writes one (forward y, dgrad x, wgrad w) and reads the others (dgrad reads
 * dy from d_y, wgrad x and dy); the search runs the candidates on them, so
 * it overwrites the pass's output. The filter as input (forward, dgrad) is
 * taken here once (NHWC: reordered to KRSC into a buffer of the plan). wgrad
 * in NHWC writes cuDNN's KRSC order into a buffer of the plan, in the search
 * as in conv_cudnn_graph_run (d_w may then be NULL here). A pass out of range
 * is CONV_ERR_INVALID before any CUDA call. */
conv_status conv_cudnn_graph_plan_create_pass(conv_cudnn_graph_plan **plan, const conv_params *p,
                                              conv_pass pass, conv_class cls,
                                              const conv_cudnn_graph_opts *o, float *d_x,
                                              float *d_w, float *d_y, cudaStream_t stream,
                                              conv_msg *msg);
/* The FP16 class: the forward graph on half data (CUDNN_DATA_HALF, the
 * convolution computed in float), searched as above among the engines whose
 * notes fit FP16 (no down-converted inputs, no reduced-precision sums).
 * d_x, d_w and d_y are half buffers (16 bits a value) in cuDNN's order for
 * p's layout: x NCHW or NHWC, w KCRS or KRSC, y like x; given ready, neither
 * converted nor reordered here, and kept: conv_cudnn_graph_run_half runs the
 * plan on them (conv_cudnn_fp16.h makes them from the float problem). */
conv_status conv_cudnn_graph_plan_create_half(conv_cudnn_graph_plan **plan, const conv_params *p,
                                              const conv_cudnn_graph_opts *o, void *d_x, void *d_w,
                                              void *d_y, cudaStream_t stream, conv_msg *msg);
conv_status conv_cudnn_graph_run_half(conv_cudnn_graph_plan *plan, cudaStream_t stream,
                                      conv_msg *msg);
/* A graph plan's run, finish, forward and pass: as conv_cudnn_run,
 * conv_cudnn_finish, conv_cudnn_forward and conv_cudnn_plan_pass
 * (conv_cudnn.h) do for a legacy plan; the filter forward and dgrad read is
 * the one given at plan creation (NHWC: its KRSC copy). */
conv_status conv_cudnn_graph_run(conv_cudnn_graph_plan *plan, float *d_x, float *d_w, float *d_y,
                                 cudaStream_t stream, conv_msg *msg);
conv_status conv_cudnn_graph_finish(conv_cudnn_graph_plan *plan, float *d_w, cudaStream_t stream,
                                    conv_msg *msg);
conv_status conv_cudnn_graph_forward(conv_cudnn_graph_plan *plan, const float *d_x, float *d_y,
                                     cudaStream_t stream, conv_msg *msg);
conv_pass conv_cudnn_graph_pass(const conv_cudnn_graph_plan *plan);
/* The chosen plan: its tag (conv_cudnn_graph_tag), its notes, its workspace. */
const char *conv_cudnn_graph_engine(const conv_cudnn_graph_plan *plan);
unsigned conv_cudnn_graph_notes(const conv_cudnn_graph_plan *plan);
size_t conv_cudnn_graph_workspace_bytes(const conv_cudnn_graph_plan *plan);
conv_cudnn_graph_stats conv_cudnn_graph_search_stats(const conv_cudnn_graph_plan *plan);
/* The verification bound factor of the chosen engine: its transforms' (FFT,
 * Winograd: CONV_CUDNN_TRANSFORM_FACTOR) times TF32's where it uses tensor
 * cores on float data (conv_tf32_bound_factor of the depth of the pass's
 * sums: C*R*S forward, conv_backward_data_depth and conv_backward_filter_depth
 * backward); 1 for a strict FP32 dot product. On half data the transforms'
 * factor alone: the FP16 bound (conv_cudnn_fp16_bound) covers the rest. */
double conv_cudnn_graph_bound_factor(const conv_cudnn_graph_plan *plan, const conv_params *p);
/* Leaves the kept engine out and takes the search's next fastest (its
 * runners-up): CONV_OK, or CONV_ERR_UNSUPPORTED with one line when none is
 * left. For an engine whose answer failed verification; the engines left out
 * so far, as their tags separated by ", " ("" for none), are
 * conv_cudnn_graph_left_out's. */
conv_status conv_cudnn_graph_plan_next(conv_cudnn_graph_plan *plan, conv_msg *msg);
const char *conv_cudnn_graph_left_out(const conv_cudnn_graph_plan *plan);
void conv_cudnn_graph_plan_destroy(conv_cudnn_graph_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* CONV_CUDNN_GRAPH_H */
