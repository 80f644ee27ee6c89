#include "conv_cudnn_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "conv_cudnn.h"
#include "conv_timer.h"
#include "conv_verify_backward.h"

conv_cudnn_graph_opts conv_cudnn_graph_opts_default(void)
{
    conv_cudnn_graph_opts o;
    o.budget_s = CONV_CUDNN_GRAPH_BUDGET_MS / 1000.0;
    o.workspace_cap = (size_t)CONV_CUDNN_GRAPH_WORKSPACE_MB << 20;
    o.warmup = 1;
    o.repeat = 5;
    o.log = NULL;
    o.label = "";
    return o;
}

/* ---- host logic ---- */

int conv_cudnn_graph_class_of(unsigned notes, int half_data, conv_class *cls)
{
    /* FP32 inputs converted to half precision, or half sums: below every class. */
    if (notes & (CONV_NOTE_DOWN_CONVERT_INPUTS | CONV_NOTE_REDUCED_PRECISION_REDUCTION))
        return 0;
    if (half_data)
        *cls = CONV_CLASS_FP16;
    else
        *cls = (notes & CONV_NOTE_TENSOR_CORE) ? CONV_CLASS_TF32 : CONV_CLASS_FP32;
    return 1;
}

int conv_cudnn_graph_rank_slot(const double *ms, int n, int cap, double t)
{
    int at = 0;
    while (at < n && ms[at] <= t) /* after equal times: the earlier found stays ahead */
        ++at;
    return at < cap ? at : -1;
}

void conv_cudnn_knobs_first(const conv_cudnn_knob *knobs, int n, int64_t *values)
{
    for (int i = 0; i < n; ++i)
        values[i] = knobs[i].min;
}

int conv_cudnn_knobs_next(const conv_cudnn_knob *knobs, int n, int64_t *values)
{
    for (int i = n - 1; i >= 0; --i) {
        int64_t stride = knobs[i].stride > 0 ? knobs[i].stride : 1;
        if (values[i] <= knobs[i].max - stride) {
            values[i] += stride;
            return 1;
        }
        values[i] = knobs[i].min; /* and carry into the knob before */
    }
    return 0;
}

int conv_cudnn_graph_keep_searching(double elapsed_s, double budget_s, int timed)
{
    return timed == 0 || elapsed_s < budget_s;
}

void conv_cudnn_graph_notes_text(unsigned notes, char *out, size_t len)
{
    static const char *const names[] = {
        "tensor core", "down-converted inputs", "reduced-precision sums",
        "fft",         "nondeterministic",      "winograd"};
    if (len == 0)
        return;
    out[0] = '\0';
    size_t used = 0;
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; ++i)
        if ((notes & (1u << i)) && used < len) {
            int w = snprintf(out + used, len - used, "%s%s", used > 0 ? ", " : "", names[i]);
            used = w < 0 ? len : used + (size_t)w;
        }
    if (out[0] == '\0')
        snprintf(out, len, "none");
}

void conv_cudnn_graph_log_header(FILE *log)
{
    if (log != NULL)
        fprintf(log,
                "problem,pass,class,source,engine,notes,workspace_mb,plan_s,status,median_ms\n");
}

void conv_cudnn_graph_tag(int64_t engine, const int64_t *types, const int64_t *values, int n,
                          char *out, size_t len)
{
    if (len == 0)
        return;
    int used =
        snprintf(out, len, "engine %lld, %s", (long long)engine, n > 0 ? "knobs" : "default knobs");
    for (int i = 0; i < n && used >= 0 && (size_t)used < len; ++i)
        used += snprintf(out + used, len - (size_t)used, " %lld=%lld", (long long)types[i],
                         (long long)values[i]);
}

#if !defined(CONV_HAVE_CUDNN)
#define CONV_GRAPH_UNAVAILABLE                                                                     \
    "cuDNN's graph API unavailable: cuDNN was not found when the project was configured"
#else
#include <cudnn.h>
#if CUDNN_MAJOR < 9
#define CONV_GRAPH_UNAVAILABLE "cuDNN's graph API reference needs cuDNN 9 (this build has cuDNN 8)"
#endif
#endif

#ifdef CONV_GRAPH_UNAVAILABLE

struct conv_cudnn_graph_plan {
    int unused;
};

conv_status conv_cudnn_graph_plan_create_pass(conv_cudnn_graph_plan **plan, const conv_params *p,
                                              conv_pass pass, conv_class cls,
                                              const conv_cudnn_graph_opts *o, float *d_x,
                                              float *d_w, float *d_y, cudaStream_t stream,
                                              conv_msg *msg)
{
    (void)p, (void)pass, (void)cls, (void)o, (void)d_x, (void)d_w, (void)d_y, (void)stream;
    *plan = NULL;
    return conv_fail(msg, CONV_ERR_UNAVAILABLE, CONV_GRAPH_UNAVAILABLE);
}

conv_status conv_cudnn_graph_plan_create_half(conv_cudnn_graph_plan **plan, const conv_params *p,
                                              const conv_cudnn_graph_opts *o, void *d_x, void *d_w,
                                              void *d_y, cudaStream_t stream, conv_msg *msg)
{
    (void)p, (void)o, (void)d_x, (void)d_w, (void)d_y, (void)stream;
    *plan = NULL;
    return conv_fail(msg, CONV_ERR_UNAVAILABLE, CONV_GRAPH_UNAVAILABLE);
}

conv_status conv_cudnn_graph_run_half(conv_cudnn_graph_plan *plan, cudaStream_t stream,
                                      conv_msg *msg)
{
    (void)plan, (void)stream;
    return conv_fail(msg, CONV_ERR_UNAVAILABLE, CONV_GRAPH_UNAVAILABLE);
}

conv_status conv_cudnn_graph_run(conv_cudnn_graph_plan *plan, float *d_x, float *d_w, float *d_y,
                                 cudaStream_t stream, conv_msg *msg)
{
    (void)plan, (void)d_x, (void)d_w, (void)d_y, (void)stream;
    return conv_fail(msg, CONV_ERR_UNAVAILABLE, CONV_GRAPH_UNAVAILABLE);
}

conv_status conv_cudnn_graph_finish(conv_cudnn_graph_plan *plan, float *d_w, cudaStream_t stream,
                                    conv_msg *msg)
{
    (void)plan, (void)d_w, (void)stream;
    return conv_fail(msg, CONV_ERR_UNAVAILABLE, CONV_GRAPH_UNAVAILABLE);
}

conv_status conv_cudnn_graph_describe_pass(const conv_params *p, conv_pass pass, conv_msg *msg)
{
    (void)p, (void)pass;
    return conv_fail(msg, CONV_ERR_UNAVAILABLE, CONV_GRAPH_UNAVAILABLE);
}

conv_pass conv_cudnn_graph_pass(const conv_cudnn_graph_plan *plan)
{
    (void)plan;
    return CONV_PASS_FORWARD;
}

const char *conv_cudnn_graph_engine(const conv_cudnn_graph_plan *plan)
{
    (void)plan;
    return "unavailable";
}

unsigned conv_cudnn_graph_notes(const conv_cudnn_graph_plan *plan)
{
    (void)plan;
    return 0;
}

size_t conv_cudnn_graph_workspace_bytes(const conv_cudnn_graph_plan *plan)
{
    (void)plan;
    return 0;
}

conv_cudnn_graph_stats conv_cudnn_graph_search_stats(const conv_cudnn_graph_plan *plan)
{
    (void)plan;
    conv_cudnn_graph_stats none = {0};
    return none;
}

double conv_cudnn_graph_bound_factor(const conv_cudnn_graph_plan *plan, const conv_params *p)
{
    (void)plan, (void)p;
    return 1.0;
}

conv_status conv_cudnn_graph_plan_next(conv_cudnn_graph_plan *plan, conv_msg *msg)
{
    (void)plan;
    return conv_fail(msg, CONV_ERR_UNAVAILABLE, CONV_GRAPH_UNAVAILABLE);
}

const char *conv_cudnn_graph_left_out(const conv_cudnn_graph_plan *plan)
{
    (void)plan;
    return "";
}

void conv_cudnn_graph_plan_destroy(conv_cudnn_graph_plan *plan)
{
    (void)plan;
}

#else /* cuDNN 9 */

typedef cudnnBackendDescriptor_t desc_t;

#define GRAPH_CHECK(expr, msg)                                                                     \
    do {                                                                                           \
        cudnnStatus_t graph_st_ = (expr);                                                          \
        if (graph_st_ != CUDNN_STATUS_SUCCESS)                                                     \
            return conv_fail((msg),                                                                \
                             graph_st_ == CUDNN_STATUS_ALLOC_FAILED ? CONV_ERR_OUT_OF_MEMORY       \
                                                                    : CONV_ERR_CUDA,               \
                             "%s failed at conv_cudnn_graph.c:%d: %s", #expr, __LINE__,            \
                             cudnnGetErrorString(graph_st_));                                      \
    } while (0)

/* The unique ids of the graph's three tensors. */
enum { UID_X = 'x', UID_W = 'w', UID_Y = 'y' };

struct conv_cudnn_graph_plan {
    conv_params params;
    conv_pass pass;
    cudnnHandle_t handle;
    desc_t graph; /* the operation graph (owns nothing else) */
    desc_t tensors[3], conv, op;
    desc_t plan; /* the fastest execution plan */
    desc_t pack; /* its variant pack for pack_x, pack_w, pack_y */
    float *pack_x, *pack_w, *pack_y;
    void *workspace;        /* the largest workspace a candidate needed */
    size_t workspace_alloc; /* its size */
    size_t workspace_bytes; /* what the kept plan needs */
    float *d_w;             /* forward, dgrad: the filter the plan reads */
    const float *d_w_given; /* the filter given at creation */
    float *d_w_krsc;        /* NHWC: the KRSC copy the plan owns, or wgrad's KRSC result */
    unsigned notes;         /* the kept engine's numerical notes */
    int half;               /* half data (the FP16 class): x, w and y given ready */
    void *half_x, *half_y;  /* then the tensors every run reads and writes */
    char tag[96];
    /* the search's next fastest configurations, fastest first, for
     * conv_cudnn_graph_plan_next */
    struct {
        desc_t plan;
        double ms;
        size_t workspace_bytes;
        unsigned notes;
        char tag[96];
    } alt[CONV_CUDNN_GRAPH_RUNNERS_UP];
    int n_alt;
    char left_out[256]; /* the engines left out for a wrong answer */
    conv_cudnn_graph_stats stats;
};

static void destroy_desc(desc_t *d)
{
    if (*d != NULL)
        cudnnBackendDestroyDescriptor(*d);
    *d = NULL;
}

/* One attribute of a descriptor: its name, its type and its one value. */
typedef struct {
    cudnnBackendAttributeName_t name;
    cudnnBackendAttributeType_t type;
    const void *value;
} attribute;

/* A descriptor of the given type with its n attributes set in order, then
 * finalized: the first status that is not success, else success. *out, once
 * created, is the caller's to destroy, also when a later step failed. */
static cudnnStatus_t make_desc(desc_t *out, cudnnBackendDescriptorType_t type,
                               const attribute *attrs, int n)
{
    cudnnStatus_t cs = cudnnBackendCreateDescriptor(type, out);
    for (int i = 0; i < n && cs == CUDNN_STATUS_SUCCESS; ++i)
        cs = cudnnBackendSetAttribute(*out, attrs[i].name, attrs[i].type, 1, attrs[i].value);
    if (cs == CUDNN_STATUS_SUCCESS)
        cs = cudnnBackendFinalize(*out);
    return cs;
}

static conv_status set_int64s(desc_t d, cudnnBackendAttributeName_t name, int n,
                              const int64_t *values, conv_msg *msg)
{
    GRAPH_CHECK(cudnnBackendSetAttribute(d, name, CUDNN_TYPE_INT64, n, values), msg);
    return CONV_OK;
}

/* A tensor of the graph: its logical dimensions are always (N, C, H, W) for
 * x and y and (K, C, R, S) for w; the layout lives in the strides. */
static conv_status make_tensor(desc_t *out, int64_t uid, const int64_t dims[4],
                               const int64_t strides[4], int half, conv_msg *msg)
{
    GRAPH_CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, out), msg);
    cudnnDataType_t type = half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    int64_t alignment = 16; /* cudaMalloc gives 256 bytes; conv_cudnn_graph_forward checks */
    conv_status st;
    GRAPH_CHECK(
        cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type),
        msg);
    if ((st = set_int64s(*out, CUDNN_ATTR_TENSOR_DIMENSIONS, 4, dims, msg)) != CONV_OK ||
        (st = set_int64s(*out, CUDNN_ATTR_TENSOR_STRIDES, 4, strides, msg)) != CONV_OK ||
        (st = set_int64s(*out, CUDNN_ATTR_TENSOR_UNIQUE_ID, 1, &uid, msg)) != CONV_OK ||
        (st = set_int64s(*out, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 1, &alignment, msg)) != CONV_OK)
        return st;
    GRAPH_CHECK(cudnnBackendFinalize(*out), msg);
    return CONV_OK;
}

/* Strides of a (d0, d1, d2, d3) = (N, C, H, W) tensor stored as N, C, H, W
 * (nhwc 0) or N, H, W, C (nhwc 1); the filter (K, C, R, S) likewise as KCRS
 * or KRSC. */
static void strides_of(const int64_t dims[4], int nhwc, int64_t strides[4])
{
    if (nhwc) {
        strides[1] = 1;
        strides[3] = dims[1];
        strides[2] = dims[3] * dims[1];
        strides[0] = dims[2] * dims[3] * dims[1];
    } else {
        strides[3] = 1;
        strides[2] = dims[3];
        strides[1] = dims[2] * dims[3];
        strides[0] = dims[1] * dims[2] * dims[3];
    }
}

/* The graph's tensors, the convolution and the operation of the pass (no
 * handle needed). */
static conv_status describe(conv_cudnn_graph_plan *g, conv_msg *msg)
{
    const conv_params *p = &g->params;
    int nhwc = p->layout == CONV_LAYOUT_NHWC;
    int64_t dims[3][4] = {{p->n, p->c, p->h, p->w},
                          {p->k, p->c, p->r, p->s},
                          {p->n, p->k, conv_out_h(p), conv_out_w(p)}};
    const int64_t uids[3] = {UID_X, UID_W, UID_Y};
    conv_status st;
    for (int t = 0; t < 3; ++t) {
        int64_t strides[4];
        strides_of(dims[t], nhwc, strides);
        if ((st = make_tensor(&g->tensors[t], uids[t], dims[t], strides, g->half, msg)) != CONV_OK)
            return st;
    }
    GRAPH_CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &g->conv), msg);
    cudnnDataType_t compute = CUDNN_DATA_FLOAT; /* half data too: products summed in float */
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t spatial = 2, dil[2] = {p->dil_h, p->dil_w}, stride[2] = {p->stride_h, p->stride_w};
    int64_t pad[2] = {p->pad_h, p->pad_w};
    GRAPH_CHECK(cudnnBackendSetAttribute(g->conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE,
                                         CUDNN_TYPE_DATA_TYPE, 1, &compute),
                msg);
    GRAPH_CHECK(cudnnBackendSetAttribute(g->conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                                         CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode),
                msg);
    if ((st = set_int64s(g->conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 1, &spatial, msg)) !=
            CONV_OK ||
        (st = set_int64s(g->conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, 2, dil, msg)) != CONV_OK ||
        (st = set_int64s(g->conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, 2, stride, msg)) !=
            CONV_OK ||
        (st = set_int64s(g->conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, 2, pad, msg)) != CONV_OK ||
        (st = set_int64s(g->conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, 2, pad, msg)) != CONV_OK)
        return st;
    GRAPH_CHECK(cudnnBackendFinalize(g->conv), msg);

    /* The operation of the pass, its slots for x, w and y (x is dx in dgrad,
     * w is dw in wgrad, y is dy in both), its convolution, alpha and beta. */
    static const cudnnBackendDescriptorType_t ops[CONV_PASS_COUNT] = {
        CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
        CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
        CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR};
    static const cudnnBackendAttributeName_t slots[CONV_PASS_COUNT][3] = {
        {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y},
        {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY},
        {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY}};
    static const cudnnBackendAttributeName_t conv_slot[CONV_PASS_COUNT] = {
        CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC};
    static const cudnnBackendAttributeName_t alpha_slot[CONV_PASS_COUNT] = {
        CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA};
    static const cudnnBackendAttributeName_t beta_slot[CONV_PASS_COUNT] = {
        CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
    const int pass = (int)g->pass;
    GRAPH_CHECK(cudnnBackendCreateDescriptor(ops[pass], &g->op), msg);
    for (int t = 0; t < 3; ++t)
        GRAPH_CHECK(cudnnBackendSetAttribute(g->op, slots[pass][t], CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                             1, &g->tensors[t]),
                    msg);
    GRAPH_CHECK(cudnnBackendSetAttribute(g->op, conv_slot[pass], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                         &g->conv),
                msg);
    float alpha = 1.0f, beta = 0.0f; /* beta 0: the output is written, never read */
    GRAPH_CHECK(cudnnBackendSetAttribute(g->op, alpha_slot[pass], CUDNN_TYPE_FLOAT, 1, &alpha),
                msg);
    GRAPH_CHECK(cudnnBackendSetAttribute(g->op, beta_slot[pass], CUDNN_TYPE_FLOAT, 1, &beta), msg);
    GRAPH_CHECK(cudnnBackendFinalize(g->op), msg);
    return CONV_OK;
}

static conv_status make_graph(conv_cudnn_graph_plan *g, conv_msg *msg)
{
    GRAPH_CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &g->graph),
                msg);
    GRAPH_CHECK(cudnnBackendSetAttribute(g->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->op),
                msg);
    GRAPH_CHECK(cudnnBackendSetAttribute(g->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE,
                                         CUDNN_TYPE_HANDLE, 1, &g->handle),
                msg);
    GRAPH_CHECK(cudnnBackendFinalize(g->graph), msg);
    return CONV_OK;
}

/* ---- one candidate: an engine configuration ---- */

/* The numerical notes of an engine as CONV_NOTE_* flags. */
static unsigned engine_notes(desc_t engine)
{
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    int64_t count = 0;
    unsigned flags = 0;
    if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                 CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count,
                                 notes) != CUDNN_STATUS_SUCCESS)
        return 0;
    for (int64_t i = 0; i < count; ++i) {
        switch (notes[i]) {
        case CUDNN_NUMERICAL_NOTE_TENSOR_CORE: flags |= CONV_NOTE_TENSOR_CORE; break;
        case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
            flags |= CONV_NOTE_DOWN_CONVERT_INPUTS;
            break;
        case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
            flags |= CONV_NOTE_REDUCED_PRECISION_REDUCTION;
            break;
        case CUDNN_NUMERICAL_NOTE_FFT: flags |= CONV_NOTE_FFT; break;
        case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC: flags |= CONV_NOTE_NONDETERMINISTIC; break;
        case CUDNN_NUMERICAL_NOTE_WINOGRAD:
        case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4:
        case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6:
        case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13: flags |= CONV_NOTE_WINOGRAD; break;
        default: break;
        }
    }
    return flags;
}

/* What identifies a candidate: its engine and knob choices, and its notes. */
typedef struct {
    int64_t engine;
    int n_knobs;
    int64_t types[CONV_CUDNN_GRAPH_MAX_KNOBS], values[CONV_CUDNN_GRAPH_MAX_KNOBS];
    unsigned notes;
} identity;

/* Reads the engine, its notes and the knob choices of a finalized config. */
static conv_status identify(desc_t cfg, identity *id, conv_msg *msg)
{
    memset(id, 0, sizeof *id);
    desc_t engine = NULL;
    desc_t choices[CONV_CUDNN_GRAPH_MAX_KNOBS] = {NULL};
    conv_status st = CONV_OK;
    int64_t got = 0;
    cudnnStatus_t s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &engine);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
                                     &got, &id->engine);
    for (int i = 0; i < CONV_CUDNN_GRAPH_MAX_KNOBS && s == CUDNN_STATUS_SUCCESS; ++i)
        s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &choices[i]);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, CONV_CUDNN_GRAPH_MAX_KNOBS,
                                     &got, choices);
    for (int64_t i = 0; i < got && s == CUDNN_STATUS_SUCCESS && i < CONV_CUDNN_GRAPH_MAX_KNOBS;
         ++i) {
        cudnnBackendKnobType_t type;
        int64_t n = 0;
        s = cudnnBackendGetAttribute(choices[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                     CUDNN_TYPE_KNOB_TYPE, 1, &n, &type);
        if (s == CUDNN_STATUS_SUCCESS)
            s = cudnnBackendGetAttribute(choices[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                         CUDNN_TYPE_INT64, 1, &n, &id->values[id->n_knobs]);
        if (s == CUDNN_STATUS_SUCCESS)
            id->types[id->n_knobs++] = type;
    }
    if (s == CUDNN_STATUS_SUCCESS)
        id->notes = engine_notes(engine);
    else
        st = conv_fail(msg, CONV_ERR_CUDA, "reading an engine configuration: %s",
                       cudnnGetErrorString(s));
    for (int i = 0; i < CONV_CUDNN_GRAPH_MAX_KNOBS; ++i)
        destroy_desc(&choices[i]);
    destroy_desc(&engine);
    return st;
}

/* The search's state: what was tried, the clock, the best so far. */
typedef struct {
    conv_cudnn_graph_plan *g;
    conv_class cls;
    const conv_cudnn_graph_opts *o;
    float *d_x, *d_w, *d_y; /* the buffers of the variant pack (pack_w_of for w) */
    cudaStream_t stream;
    double start_s;
    char (*seen)[96]; /* tags of the candidates tried (CONV_CUDNN_GRAPH_MAX_CANDIDATES) */
    int n_seen;
    double best_ms;
    int stop;           /* the budget is spent, or too many candidates */
    const char *source; /* where the candidates now tried come from, for the log */
} search;

/* One line of the candidates' CSV (conv_cudnn_graph_log_header), if asked. */
static void log_candidate(const search *s, const char *tag, unsigned notes, int64_t workspace,
                          double plan_s, const char *status, double ms)
{
    FILE *log = s->o->log;
    if (log == NULL)
        return;
    char words[128];
    conv_cudnn_graph_notes_text(notes, words, sizeof words);
    fprintf(log, "\"%s\",%s,%s,\"%s\",\"%s\",\"%s\",", s->o->label ? s->o->label : "",
            conv_pass_name(s->g->pass), conv_class_name(s->cls), s->source, tag, words);
    if (workspace >= 0)
        fprintf(log, "%.3f", (double)workspace / (1 << 20));
    fprintf(log, ",");
    if (plan_s >= 0.0)
        fprintf(log, "%.3f", plan_s);
    fprintf(log, ",%s,", status);
    if (ms > 0.0)
        fprintf(log, "%.6f", ms);
    fprintf(log, "\n");
}

/* The buffers the plan's pass runs on, from the caller's: x and y as they
 * are; w the plan's filter (forward, dgrad), the caller's dw (wgrad, NCHW)
 * or the plan's KRSC dw (wgrad, NHWC). */
static float *pack_w_of(const conv_cudnn_graph_plan *g, float *d_w)
{
    if (g->pass != CONV_PASS_WGRAD)
        return g->d_w;
    return g->params.layout == CONV_LAYOUT_NHWC ? g->d_w_krsc : d_w;
}

/* Makes the variant pack for x, w, y (pack_w_of's) and the workspace. */
static conv_status make_pack(conv_cudnn_graph_plan *g, desc_t *pack, float *d_x, float *d_w,
                             float *d_y, conv_msg *msg)
{
    const int64_t uids[3] = {UID_X, UID_W, UID_Y};
    void *ptrs[3] = {d_x, d_w, d_y};
    GRAPH_CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, pack), msg);
    GRAPH_CHECK(cudnnBackendSetAttribute(*pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                         CUDNN_TYPE_INT64, 3, uids),
                msg);
    GRAPH_CHECK(cudnnBackendSetAttribute(*pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                         CUDNN_TYPE_VOID_PTR, 3, ptrs),
                msg);
    GRAPH_CHECK(cudnnBackendSetAttribute(*pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                         CUDNN_TYPE_VOID_PTR, 1, &g->workspace),
                msg);
    GRAPH_CHECK(cudnnBackendFinalize(*pack), msg);
    return CONV_OK;
}

typedef struct {
    cudnnHandle_t handle;
    desc_t plan, pack;
} execution;

static conv_status execute(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    execution *e = ctx;
    GRAPH_CHECK(cudnnSetStream(e->handle, stream), msg);
    GRAPH_CHECK(cudnnBackendExecute(e->handle, e->plan, e->pack), msg);
    return CONV_OK;
}

/* Grows the shared workspace to bytes (the candidates run one at a time). */
static conv_status reserve_workspace(conv_cudnn_graph_plan *g, size_t bytes, conv_msg *msg)
{
    if (bytes <= g->workspace_alloc)
        return CONV_OK;
    cudaFree(g->workspace);
    g->workspace = NULL;
    g->workspace_alloc = 0;
    cudaError_t e = cudaMalloc(&g->workspace, bytes);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY,
                         "no device memory for a cuDNN workspace of %zu MB", bytes >> 20);
    }
    g->workspace_alloc = bytes;
    /* The kept plan's variant pack named the old workspace: the next
     * conv_cudnn_graph_run makes a new one. */
    destroy_desc(&g->pack);
    g->pack_x = g->pack_w = g->pack_y = NULL;
    return CONV_OK;
}

/* A timed configuration that is not the fastest (or no longer is): kept
 * among the runners-up where it ranks, else destroyed; g owns plan either way. */
static void keep_runner_up(conv_cudnn_graph_plan *g, desc_t plan, double ms, size_t workspace,
                           unsigned notes, const char *tag)
{
    double times[CONV_CUDNN_GRAPH_RUNNERS_UP];
    for (int i = 0; i < g->n_alt; ++i)
        times[i] = g->alt[i].ms;
    const int at = conv_cudnn_graph_rank_slot(times, g->n_alt, CONV_CUDNN_GRAPH_RUNNERS_UP, ms);
    if (at < 0) {
        destroy_desc(&plan);
        return;
    }
    int n = g->n_alt;
    if (n == CONV_CUDNN_GRAPH_RUNNERS_UP) /* full: the slowest goes */
        destroy_desc(&g->alt[--n].plan);
    memmove(&g->alt[at + 1], &g->alt[at], (size_t)(n - at) * sizeof g->alt[0]);
    g->alt[at].plan = plan;
    g->alt[at].ms = ms;
    g->alt[at].workspace_bytes = workspace;
    g->alt[at].notes = notes;
    snprintf(g->alt[at].tag, sizeof g->alt[at].tag, "%s", tag);
    g->n_alt = n + 1;
}

/* Tries one finalized engine configuration: the class, a plan, its
 * workspace, one untimed run, the timing; keeps it when it is the fastest.
 * Returns an error only for what must stop the search (out of memory while
 * nothing was found, a sticky CUDA error); an engine that cannot run is
 * counted and skipped. */
static conv_status try_config(search *s, desc_t cfg, conv_msg *msg)
{
    conv_cudnn_graph_plan *g = s->g;
    identity id;
    conv_status st = identify(cfg, &id, msg);
    if (st != CONV_OK)
        return st;
    char tag[96];
    conv_cudnn_graph_tag(id.engine, id.types, id.values, id.n_knobs, tag, sizeof tag);
    for (int i = 0; i < s->n_seen; ++i)
        if (strcmp(s->seen[i], tag) == 0)
            return CONV_OK; /* a heuristic's config met again among the global engines */
    if (s->n_seen >= CONV_CUDNN_GRAPH_MAX_CANDIDATES) {
        s->stop = 1;
        return CONV_OK;
    }
    snprintf(s->seen[s->n_seen++], sizeof s->seen[0], "%s", tag);
    g->stats.candidates++;
    conv_class cls;
    if (!conv_cudnn_graph_class_of(id.notes, g->half, &cls) || !conv_class_allows(s->cls, cls)) {
        g->stats.other_class++;
        log_candidate(s, tag, id.notes, -1, -1.0, "other class", 0.0);
        return CONV_OK;
    }
    if (!conv_cudnn_graph_keep_searching(conv_wall_seconds() - s->start_s, s->o->budget_s,
                                         g->stats.timed)) {
        s->stop = 1;
        g->stats.cut_by_budget = 1;
        log_candidate(s, tag, id.notes, -1, -1.0, "budget spent", 0.0);
        return CONV_OK;
    }
    execution run = {g->handle, NULL, NULL};
    int64_t workspace = 0, got = 0;
    const attribute plan_attrs[] = {
        {CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &g->handle},
        {CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, &cfg}};
    double plan_start = conv_wall_seconds();
    cudnnStatus_t cs = make_desc(&run.plan, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan_attrs, 2);
    if (cs == CUDNN_STATUS_SUCCESS)
        cs = cudnnBackendGetAttribute(run.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                      CUDNN_TYPE_INT64, 1, &got, &workspace);
    double plan_s = conv_wall_seconds() - plan_start;
    if (cs != CUDNN_STATUS_SUCCESS) {
        g->stats.unsupported++;
        destroy_desc(&run.plan);
        log_candidate(s, tag, id.notes, -1, plan_s, "plan not finalized", 0.0);
        return CONV_OK;
    }
    if (workspace < 0 || (size_t)workspace > s->o->workspace_cap) {
        g->stats.over_cap++;
        destroy_desc(&run.plan);
        log_candidate(s, tag, id.notes, workspace, plan_s, "workspace over the cap", 0.0);
        return CONV_OK;
    }
    conv_timing timing = {0};
    st = reserve_workspace(g, (size_t)workspace, msg);
    if (st == CONV_OK)
        st = make_pack(g, &run.pack, s->d_x, s->d_w, s->d_y, msg);
    /* Untimed first: an engine compiled at run time builds its kernel here. */
    if (st == CONV_OK && (st = execute(&run, s->stream, msg)) == CONV_OK) {
        cudaError_t e = cudaStreamSynchronize(s->stream);
        if (e != cudaSuccess)
            st = conv_cuda_fail(msg, e, "cudaStreamSynchronize (a cuDNN candidate)", __FILE__,
                                __LINE__);
    }
    if (st == CONV_OK)
        st = conv_time_gpu(execute, &run, s->stream, s->o->warmup, s->o->repeat, &timing, msg);
    if (st == CONV_ERR_CUDA && cudaPeekAtLastError() == cudaSuccess) {
        st = CONV_OK; /* the engine failed to run this problem: skip it */
        g->stats.unsupported++;
        log_candidate(s, tag, id.notes, workspace, plan_s, "failed to run", 0.0);
    } else if (st == CONV_ERR_OUT_OF_MEMORY) {
        st = CONV_OK; /* a smaller workspace may still fit */
        g->stats.over_cap++;
        log_candidate(s, tag, id.notes, workspace, plan_s, "no memory for the workspace", 0.0);
    } else if (st != CONV_OK) {
        log_candidate(s, tag, id.notes, workspace, plan_s, "CUDA error: search stopped", 0.0);
    } else {
        g->stats.timed++;
        log_candidate(s, tag, id.notes, workspace, plan_s, "timed", timing.median_ms);
        if (g->plan == NULL || timing.median_ms < s->best_ms) {
            if (g->plan != NULL) /* the fastest so far becomes the first runner-up */
                keep_runner_up(g, g->plan, s->best_ms, g->workspace_bytes, g->notes, g->tag);
            g->plan = NULL;
            destroy_desc(&g->pack);
            g->plan = run.plan;
            g->pack = run.pack;
            run.plan = run.pack = NULL;
            g->pack_x = s->d_x;
            g->pack_w = s->d_w;
            g->pack_y = s->d_y;
            g->workspace_bytes = (size_t)workspace;
            g->notes = id.notes;
            snprintf(g->tag, sizeof g->tag, "%s", tag);
            s->best_ms = timing.median_ms;
        } else {
            keep_runner_up(g, run.plan, timing.median_ms, (size_t)workspace, id.notes, tag);
            run.plan = NULL;
        }
    }
    destroy_desc(&run.pack);
    destroy_desc(&run.plan);
    return st;
}

/* The configs of one heuristic mode, each tried; a mode that has nothing for
 * this graph (or this GPU) adds nothing. */
static conv_status try_heuristic(search *s, cudnnBackendHeurMode_t mode, conv_msg *msg)
{
    conv_cudnn_graph_plan *g = s->g;
    desc_t heur = NULL;
    int64_t count = 0;
    conv_status st = CONV_OK;
    const attribute heur_attrs[] = {
        {CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, &g->graph},
        {CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode}};
    cudnnStatus_t cs = make_desc(&heur, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, heur_attrs, 2);
    if (cs == CUDNN_STATUS_SUCCESS)
        cs = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL);
    desc_t *cfgs =
        cs == CUDNN_STATUS_SUCCESS && count > 0 ? calloc((size_t)count, sizeof *cfgs) : NULL;
    if (cfgs != NULL) {
        int64_t made = 0;
        for (; made < count && cs == CUDNN_STATUS_SUCCESS; ++made)
            cs = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[made]);
        int64_t got = 0;
        if (cs == CUDNN_STATUS_SUCCESS)
            cs = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs);
        for (int64_t i = 0; i < got && cs == CUDNN_STATUS_SUCCESS && st == CONV_OK && !s->stop; ++i)
            st = try_config(s, cfgs[i], msg);
        for (int64_t i = 0; i < made; ++i)
            destroy_desc(&cfgs[i]);
        free(cfgs);
    } else if (cs == CUDNN_STATUS_SUCCESS && count > 0) {
        st = conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for cuDNN's heuristics");
    }
    destroy_desc(&heur);
    return st;
}

/* An engine config of engine with the knob choices given (n may be 0: the
 * engine's defaults); NULL in *cfg when it does not finalize. */
static void make_config(desc_t engine, const conv_cudnn_knob *knobs, const int64_t *values, int n,
                        desc_t *cfg)
{
    desc_t choices[CONV_CUDNN_GRAPH_MAX_KNOBS] = {NULL};
    cudnnStatus_t cs = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, cfg);
    if (cs == CUDNN_STATUS_SUCCESS)
        cs = cudnnBackendSetAttribute(*cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine);
    for (int i = 0; i < n && cs == CUDNN_STATUS_SUCCESS; ++i) {
        cudnnBackendKnobType_t type = (cudnnBackendKnobType_t)knobs[i].type;
        cs = cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &choices[i]);
        if (cs == CUDNN_STATUS_SUCCESS)
            cs = cudnnBackendSetAttribute(choices[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                          CUDNN_TYPE_KNOB_TYPE, 1, &type);
        if (cs == CUDNN_STATUS_SUCCESS)
            cs = cudnnBackendSetAttribute(choices[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                          CUDNN_TYPE_INT64, 1, &values[i]);
        if (cs == CUDNN_STATUS_SUCCESS)
            cs = cudnnBackendFinalize(choices[i]);
    }
    if (cs == CUDNN_STATUS_SUCCESS && n > 0)
        cs = cudnnBackendSetAttribute(*cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, n, choices);
    if (cs == CUDNN_STATUS_SUCCESS)
        cs = cudnnBackendFinalize(*cfg);
    if (cs != CUDNN_STATUS_SUCCESS)
        destroy_desc(cfg);
    for (int i = 0; i < n; ++i)
        destroy_desc(&choices[i]);
}

/* The knobs of a finalized engine (at most CONV_CUDNN_GRAPH_MAX_KNOBS). */
static int engine_knobs(desc_t engine, conv_cudnn_knob *knobs)
{
    desc_t infos[CUDNN_KNOB_TYPE_COUNTS] = {NULL};
    int64_t got = 0;
    int n = 0;
    cudnnStatus_t cs = CUDNN_STATUS_SUCCESS;
    for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS && cs == CUDNN_STATUS_SUCCESS; ++i)
        cs = cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR, &infos[i]);
    if (cs == CUDNN_STATUS_SUCCESS)
        cs = cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_KNOB_INFO,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS, &got,
                                      infos);
    for (int64_t i = 0; i < got && cs == CUDNN_STATUS_SUCCESS && n < CONV_CUDNN_GRAPH_MAX_KNOBS;
         ++i) {
        cudnnBackendKnobType_t type;
        int64_t one = 0;
        conv_cudnn_knob k;
        cs = cudnnBackendGetAttribute(infos[i], CUDNN_ATTR_KNOB_INFO_TYPE, CUDNN_TYPE_KNOB_TYPE, 1,
                                      &one, &type);
        if (cs == CUDNN_STATUS_SUCCESS)
            cs = cudnnBackendGetAttribute(infos[i], CUDNN_ATTR_KNOB_INFO_MINIMUM_VALUE,
                                          CUDNN_TYPE_INT64, 1, &one, &k.min);
        if (cs == CUDNN_STATUS_SUCCESS)
            cs = cudnnBackendGetAttribute(infos[i], CUDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE,
                                          CUDNN_TYPE_INT64, 1, &one, &k.max);
        if (cs == CUDNN_STATUS_SUCCESS)
            cs = cudnnBackendGetAttribute(infos[i], CUDNN_ATTR_KNOB_INFO_STRIDE, CUDNN_TYPE_INT64,
                                          1, &one, &k.stride);
        if (cs == CUDNN_STATUS_SUCCESS && k.max >= k.min) {
            k.type = type;
            knobs[n++] = k;
        }
    }
    for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i)
        destroy_desc(&infos[i]);
    return cs == CUDNN_STATUS_SUCCESS ? n : 0;
}

/* Every global engine that has something for the graph, whose notes fit the
 * class and that compiles its kernel at run time or not (runtime_compiled):
 * with its default knobs (knob_sets 0), or with each choice of its knobs in
 * odometer order (at most knob_sets per engine). */
static int compiles_at_run_time(desc_t engine)
{
    cudnnBackendBehaviorNote_t notes[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    int64_t count = 0;
    if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                 CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &count,
                                 notes) != CUDNN_STATUS_SUCCESS)
        return 0;
    for (int64_t i = 0; i < count; ++i)
        if (notes[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION)
            return 1;
    return 0;
}

static conv_status try_global_engines(search *s, int knob_sets, int runtime_compiled, conv_msg *msg)
{
    conv_cudnn_graph_plan *g = s->g;
    int64_t count = 0, got = 0;
    GRAPH_CHECK(cudnnBackendGetAttribute(g->graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT,
                                         CUDNN_TYPE_INT64, 1, &got, &count),
                msg);
    conv_status st = CONV_OK;
    for (int64_t index = 0; index < count && st == CONV_OK && !s->stop; ++index) {
        desc_t engine = NULL;
        const attribute engine_attrs[] = {
            {CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, &g->graph},
            {CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, &index}};
        /* finalizing fails for an engine that has nothing for p */
        cudnnStatus_t cs = make_desc(&engine, CUDNN_BACKEND_ENGINE_DESCRIPTOR, engine_attrs, 2);
        conv_class cls;
        if (cs == CUDNN_STATUS_SUCCESS && compiles_at_run_time(engine) == runtime_compiled &&
            conv_cudnn_graph_class_of(engine_notes(engine), g->half, &cls) &&
            conv_class_allows(s->cls, cls)) {
            conv_cudnn_knob knobs[CONV_CUDNN_GRAPH_MAX_KNOBS];
            int64_t values[CONV_CUDNN_GRAPH_MAX_KNOBS];
            int n = knob_sets > 0 ? engine_knobs(engine, knobs) : 0;
            desc_t cfg = NULL;
            if (knob_sets == 0) {
                make_config(engine, NULL, NULL, 0, &cfg);
                if (cfg != NULL)
                    st = try_config(s, cfg, msg);
                destroy_desc(&cfg);
            }
            conv_cudnn_knobs_first(knobs, n, values);
            for (int set = 0; set < knob_sets && n > 0 && st == CONV_OK && !s->stop; ++set) {
                make_config(engine, knobs, values, n, &cfg);
                if (cfg != NULL)
                    st = try_config(s, cfg, msg);
                destroy_desc(&cfg);
                if (!conv_cudnn_knobs_next(knobs, n, values))
                    break;
            }
        }
        destroy_desc(&engine);
    }
    return st;
}

static conv_status run_search(conv_cudnn_graph_plan *g, conv_class cls,
                              const conv_cudnn_graph_opts *o, float *d_x, float *d_w, float *d_y,
                              cudaStream_t stream, conv_msg *msg)
{
    search s = {g, cls, o, d_x, d_w, d_y, stream, conv_wall_seconds(), NULL, 0, 0.0, 0, ""};
    s.seen = calloc(CONV_CUDNN_GRAPH_MAX_CANDIDATES, sizeof *s.seen);
    if (s.seen == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the cuDNN search");
    static const cudnnBackendHeurMode_t modes[] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_B,
                                                   CUDNN_HEUR_MODE_FALLBACK};
    static const char *const sources[] = {"heuristics A", "heuristics B", "fallback"};
    conv_status st = CONV_OK;
    for (size_t m = 0; m < sizeof modes / sizeof modes[0] && st == CONV_OK && !s.stop; ++m) {
        s.source = sources[m];
        st = try_heuristic(&s, modes[m], msg);
    }
    /* The global engines: precompiled ones first, those compiled at run time
     * (up to seconds each) last; default knobs, then knob choices. */
    static const char *const passes[] = {"global, default knobs", "global, knob choice",
                                         "global, compiled at run time, default knobs",
                                         "global, compiled at run time, knob choice"};
    for (int pass = 0; pass < 4 && st == CONV_OK && !s.stop; ++pass) {
        s.source = passes[pass];
        st = try_global_engines(&s, pass % 2 ? CONV_CUDNN_GRAPH_MAX_KNOB_SETS : 0, pass / 2, msg);
    }
    if (o->log != NULL)
        fflush(o->log);
    free(s.seen);
    g->stats.seconds = conv_wall_seconds() - s.start_s;
    if (st == CONV_OK && g->plan == NULL)
        st = conv_fail(msg, CONV_ERR_UNSUPPORTED,
                       "cuDNN's graph API has no %s %s engine for this problem on this GPU (%d "
                       "configurations: %d of another class, %d unsupported, %d over the %zu MB "
                       "workspace cap)",
                       conv_class_name(cls), conv_pass_name(g->pass), g->stats.candidates,
                       g->stats.other_class, g->stats.unsupported, g->stats.over_cap,
                       o->workspace_cap >> 20);
    return st;
}

conv_status conv_cudnn_graph_plan_next(conv_cudnn_graph_plan *g, conv_msg *msg)
{
    if (g == NULL || g->plan == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "the cuDNN graph plan has no engine");
    if (g->n_alt == 0)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "cuDNN's graph search kept no other engine than %s", g->tag);
    const size_t used = strlen(g->left_out);
    snprintf(g->left_out + used, sizeof g->left_out - used, "%s%s", used > 0 ? ", " : "", g->tag);
    destroy_desc(&g->pack); /* the next run makes one for the new plan */
    g->pack_x = g->pack_w = g->pack_y = NULL;
    destroy_desc(&g->plan);
    g->plan = g->alt[0].plan;
    g->workspace_bytes = g->alt[0].workspace_bytes; /* within the workspace the search made */
    g->notes = g->alt[0].notes;
    snprintf(g->tag, sizeof g->tag, "%s", g->alt[0].tag);
    memmove(&g->alt[0], &g->alt[1], (size_t)(g->n_alt - 1) * sizeof g->alt[0]);
    g->alt[--g->n_alt].plan = NULL;
    return CONV_OK;
}

const char *conv_cudnn_graph_left_out(const conv_cudnn_graph_plan *g)
{
    return g != NULL ? g->left_out : "";
}

void conv_cudnn_graph_plan_destroy(conv_cudnn_graph_plan *g)
{
    if (g == NULL)
        return;
    for (int i = 0; i < g->n_alt; ++i)
        destroy_desc(&g->alt[i].plan);
    destroy_desc(&g->pack);
    destroy_desc(&g->plan);
    destroy_desc(&g->graph);
    destroy_desc(&g->op);
    destroy_desc(&g->conv);
    for (int t = 0; t < 3; ++t)
        destroy_desc(&g->tensors[t]);
    if (g->handle)
        cudnnDestroy(g->handle);
    cudaFree(g->workspace); /* NULL: no operation */
    conv_device_free(g->d_w_krsc);
    free(g);
}

static conv_status check_pass(conv_pass pass, conv_msg *msg)
{
    if ((int)pass < 0 || pass >= CONV_PASS_COUNT)
        return conv_fail(msg, CONV_ERR_INVALID, "pass must be forward, dgrad or wgrad, got %d",
                         (int)pass);
    return CONV_OK;
}

conv_status conv_cudnn_graph_describe_pass(const conv_params *p, conv_pass pass, conv_msg *msg)
{
    conv_status st = check_pass(pass, msg);
    if (st != CONV_OK)
        return st;
    conv_cudnn_graph_plan *g = calloc(1, sizeof *g);
    if (g == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the cuDNN graph");
    g->params = *p;
    g->pass = pass;
    st = describe(g, msg);
    conv_cudnn_graph_plan_destroy(g);
    return st;
}

/* What every plan checks first: the pass, the problem, the options, a GPU. */
static conv_status check_request(const conv_params *p, conv_pass pass,
                                 const conv_cudnn_graph_opts *o, conv_msg *msg)
{
    conv_status st = check_pass(pass, msg);
    if (st == CONV_OK)
        st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    if (o->budget_s <= 0.0 || o->warmup < 0 || o->repeat < 1)
        return conv_fail(
            msg, CONV_ERR_INVALID,
            "cuDNN search options: the budget must be above 0 s and repeat at least 1");
    return conv_cuda_require_device(msg);
}

/* The handle, the graph of g's pass and the search over its engines. */
static conv_status build_and_search(conv_cudnn_graph_plan *g, conv_class cls,
                                    const conv_cudnn_graph_opts *o, float *d_x, float *d_w,
                                    float *d_y, cudaStream_t stream, conv_msg *msg)
{
    conv_status st;
    GRAPH_CHECK(cudnnCreate(&g->handle), msg);
    if ((st = describe(g, msg)) != CONV_OK || (st = make_graph(g, msg)) != CONV_OK)
        return st;
    return run_search(g, cls, o, d_x, d_w, d_y, stream, msg);
}

static conv_status create(conv_cudnn_graph_plan *g, const conv_params *p, conv_pass pass,
                          conv_class cls, const conv_cudnn_graph_opts *o, float *d_x, float *d_w,
                          float *d_y, cudaStream_t stream, conv_msg *msg)
{
    if (cls != CONV_CLASS_FP32 && cls != CONV_CLASS_TF32)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "cuDNN's graph plan on float data runs the FP32 and TF32 classes (FP16: "
                         "conv_cudnn_graph_plan_create_half)");
    conv_status st = check_request(p, pass, o, msg);
    if (st != CONV_OK)
        return st;
    int nhwc = p->layout == CONV_LAYOUT_NHWC;
    if (d_x == NULL || d_y == NULL || (d_w == NULL && (pass != CONV_PASS_WGRAD || !nhwc)))
        return conv_fail(msg, CONV_ERR_INVALID,
                         "cuDNN's graph %s plan needs the device buffers d_x, d_w and d_y",
                         conv_pass_name(pass));
    g->params = *p;
    g->pass = pass;
    if (pass != CONV_PASS_WGRAD) { /* the filter is an input: read from here on */
        g->d_w_given = d_w;
        g->d_w = d_w;
        if (nhwc && (st = conv_cudnn_filter_krsc(p, d_w, &g->d_w_krsc, msg)) != CONV_OK)
            return st;
        if (nhwc)
            g->d_w = g->d_w_krsc;
    } else if (nhwc && (st = conv_device_alloc(&g->d_w_krsc, conv_filter_elems(p), "cuDNN KRSC dw",
                                               msg)) != CONV_OK) {
        return st;
    }
    return build_and_search(g, cls, o, d_x, pack_w_of(g, d_w), d_y, stream, msg);
}

conv_status conv_cudnn_graph_plan_create_pass(conv_cudnn_graph_plan **out, const conv_params *p,
                                              conv_pass pass, conv_class cls,
                                              const conv_cudnn_graph_opts *o, float *d_x,
                                              float *d_w, float *d_y, cudaStream_t stream,
                                              conv_msg *msg)
{
    *out = NULL;
    conv_cudnn_graph_plan *g = calloc(1, sizeof *g);
    if (g == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the cuDNN graph");
    conv_status st = create(g, p, pass, cls, o, d_x, d_w, d_y, stream, msg);
    if (st != CONV_OK) {
        conv_cudnn_graph_plan_destroy(g);
        return st;
    }
    *out = g;
    return CONV_OK;
}

conv_status conv_cudnn_graph_plan_create_half(conv_cudnn_graph_plan **out, const conv_params *p,
                                              const conv_cudnn_graph_opts *o, void *d_x, void *d_w,
                                              void *d_y, cudaStream_t stream, conv_msg *msg)
{
    *out = NULL;
    conv_status st = check_request(p, CONV_PASS_FORWARD, o, msg);
    if (st != CONV_OK)
        return st;
    if (d_x == NULL || d_w == NULL || d_y == NULL)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "cuDNN's graph FP16 plan needs the half buffers d_x, d_w and d_y");
    conv_cudnn_graph_plan *g = calloc(1, sizeof *g);
    if (g == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the cuDNN graph");
    g->params = *p;
    g->pass = CONV_PASS_FORWARD;
    g->half = 1;
    g->half_x = d_x;
    g->half_y = d_y;
    g->d_w = d_w; /* half, in cuDNN's order already: no reordering here */
    g->d_w_given = d_w;
    st = build_and_search(g, CONV_CLASS_FP16, o, d_x, d_w, d_y, stream, msg);
    if (st != CONV_OK) {
        conv_cudnn_graph_plan_destroy(g);
        return st;
    }
    *out = g;
    return CONV_OK;
}

conv_status conv_cudnn_graph_run_half(conv_cudnn_graph_plan *g, cudaStream_t stream, conv_msg *msg)
{
    if (g == NULL || !g->half)
        return conv_fail(
            msg, CONV_ERR_INVALID,
            "conv_cudnn_graph_run_half needs a plan of conv_cudnn_graph_plan_create_half");
    return conv_cudnn_graph_run(g, g->half_x, NULL, g->half_y, stream, msg);
}

conv_status conv_cudnn_graph_run(conv_cudnn_graph_plan *g, float *d_x, float *d_w, float *d_y,
                                 cudaStream_t stream, conv_msg *msg)
{
    if (g == NULL || g->plan == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "the cuDNN graph plan has no engine");
    const char *pass = conv_pass_name(g->pass);
    if (g->pass != CONV_PASS_WGRAD && d_w != NULL && d_w != g->d_w_given)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "cuDNN's graph %s plan reads the filter it was created with: d_w must be "
                         "that one or NULL",
                         pass);
    float *w = pack_w_of(g, d_w);
    if (d_x == NULL || d_y == NULL || w == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "cuDNN's graph %s plan needs d_x, d_y and d_w",
                         pass);
    if (((uintptr_t)d_x | (uintptr_t)w | (uintptr_t)d_y) % 16 != 0)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "cuDNN's graph plan needs x, w and y aligned to 16 bytes");
    if (d_x != g->pack_x || w != g->pack_w || d_y != g->pack_y) { /* new buffers: a new pack */
        desc_t pack = NULL;
        conv_status st = make_pack(g, &pack, d_x, w, d_y, msg);
        if (st != CONV_OK) {
            destroy_desc(&pack);
            return st;
        }
        destroy_desc(&g->pack);
        g->pack = pack;
        g->pack_x = d_x;
        g->pack_w = w;
        g->pack_y = d_y;
    }
    execution run = {g->handle, g->plan, g->pack};
    return execute(&run, stream, msg);
}

conv_status conv_cudnn_graph_finish(conv_cudnn_graph_plan *g, float *d_w, cudaStream_t stream,
                                    conv_msg *msg)
{
    if (g == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "the cuDNN graph plan is missing (NULL)");
    return conv_cudnn_finish_pass(&g->params, g->pass, g->d_w_krsc, d_w, stream, "cuDNN's graph",
                                  msg);
}

conv_pass conv_cudnn_graph_pass(const conv_cudnn_graph_plan *g)
{
    return g != NULL ? g->pass : CONV_PASS_FORWARD;
}

const char *conv_cudnn_graph_engine(const conv_cudnn_graph_plan *g)
{
    return g != NULL && g->plan != NULL ? g->tag : "none";
}

unsigned conv_cudnn_graph_notes(const conv_cudnn_graph_plan *g)
{
    return g != NULL ? g->notes : 0;
}

size_t conv_cudnn_graph_workspace_bytes(const conv_cudnn_graph_plan *g)
{
    return g != NULL ? g->workspace_bytes : 0;
}

conv_cudnn_graph_stats conv_cudnn_graph_search_stats(const conv_cudnn_graph_plan *g)
{
    conv_cudnn_graph_stats none = {0};
    return g != NULL ? g->stats : none;
}

double conv_cudnn_graph_bound_factor(const conv_cudnn_graph_plan *g, const conv_params *p)
{
    double factor = 1.0;
    if (g == NULL)
        return factor;
    if (g->notes & (CONV_NOTE_FFT | CONV_NOTE_WINOGRAD))
        factor *= CONV_CUDNN_TRANSFORM_FACTOR;
    if ((g->notes & CONV_NOTE_TENSOR_CORE) && !g->half) { /* half data: the FP16 bound's */
        size_t depth = g->pass == CONV_PASS_DGRAD   ? conv_backward_data_depth(p)
                       : g->pass == CONV_PASS_WGRAD ? conv_backward_filter_depth(p)
                                                    : (size_t)p->c * p->r * p->s;
        factor *= conv_tf32_bound_factor(depth);
    }
    return factor;
}

#endif /* cuDNN 9 */

/* Without the graph API, the plan's pass is CONV_PASS_FORWARD and
 * conv_cudnn_graph_run says why it cannot run. */
conv_status conv_cudnn_graph_forward(conv_cudnn_graph_plan *g, const float *d_x, float *d_y,
                                     cudaStream_t stream, conv_msg *msg)
{
    conv_status st = conv_cudnn_check_forward(conv_cudnn_graph_pass(g), "cuDNN's graph", msg);
    if (st != CONV_OK)
        return st;
    return conv_cudnn_graph_run(g, (float *)d_x, NULL, d_y, stream, msg); /* x is only read */
}

/* ---- the forward pass through the functions of any pass (either build) ---- */

conv_status conv_cudnn_graph_plan_create(conv_cudnn_graph_plan **plan, const conv_params *p,
                                         conv_class cls, const conv_cudnn_graph_opts *o,
                                         const float *d_x, const float *d_w, float *d_y,
                                         cudaStream_t stream, conv_msg *msg)
{
    /* The forward pass only reads x and w. */
    return conv_cudnn_graph_plan_create_pass(plan, p, CONV_PASS_FORWARD, cls, o, (float *)d_x,
                                             (float *)d_w, d_y, stream, msg);
}

conv_status conv_cudnn_graph_describe(const conv_params *p, conv_msg *msg)
{
    return conv_cudnn_graph_describe_pass(p, CONV_PASS_FORWARD, msg);
}
