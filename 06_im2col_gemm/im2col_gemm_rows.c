#include "im2col_gemm_rows.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "conv_cuda.h"
#include "conv_im2col_gemm.h"
#include "im2col.h"

/* What one row needs around its measurement. */
typedef struct {
    conv2d_pipeline pc;
    im2col_gemm_stages stages;
} pipeline_row;

#define N_ROWS (GEMM_VARIANT_COUNT + 1) /* the im2col pipelines, then 6f */
static pipeline_row contexts[N_ROWS];
static char names[N_ROWS][48];
static const char *const keys[N_ROWS] = {"6a", "6b", "6c", "6d", "6e", "cublas", "6f"};

static conv_status check(void *ctx, const conv_params *p, conv_msg *msg)
{
    const pipeline_row *r = ctx;
    if (r->pc.implicit && p->layout != CONV_LAYOUT_NHWC)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "6f implicit GEMM is written for --layout nhwc (x[N][H][W][C])");
    /* the GEMM's sizes; the memory is checked against the device in setup */
    return conv2d_im2col_gemm_check(p, SIZE_MAX, msg);
}

static conv_status setup(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    pipeline_row *r = ctx;
    memset(&r->stages, 0, sizeof r->stages);
    r->stages.gemm = r->pc.g;
    if (r->pc.implicit)
        return CONV_OK;
    size_t free_b = 0, total_b = 0;
    CONV_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b), msg);
    conv_status st = conv2d_im2col_gemm_check(&pb->p, free_b, msg);
    if (st != CONV_OK)
        return st;
    r->pc.work_elems = conv2d_im2col_gemm_workspace_elems(&pb->p);
    st = conv_device_alloc(&r->pc.d_work, r->pc.work_elems, "im2col column buffer", msg);
    if (st == CONV_OK && r->pc.g == GEMM_CUBLAS)
        st = conv_cublas_create(&r->pc.cublas, msg);
    return st;
}

static void teardown(void *ctx)
{
    pipeline_row *r = ctx;
    conv_device_free(r->pc.d_work);
    r->pc.d_work = NULL;
    conv_cublas_destroy(r->pc.cublas);
    r->pc.cublas = NULL;
}

/* One stage of the pipeline, as timed work. */
typedef struct {
    conv_gpu_problem *pb;
    conv2d_pipeline *pc;
    int stage; /* 0 im2col, 1 GEMM, 2 permutation */
} stage_work;

static conv_status run_stage(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    stage_work *s = ctx;
    conv_gpu_problem *pb = s->pb;
    if (s->stage == 0)
        return im2col(&pb->p, pb->d_x, s->pc->d_work, stream, msg);
    if (s->stage == 1)
        return conv2d_im2col_gemm_stage_gemm(&pb->p, pb->d_w, pb->d_y, s->pc->d_work,
                                             s->pc->work_elems, s->pc->g, s->pc->cublas, stream,
                                             msg);
    return conv2d_im2col_gemm_stage_permute(&pb->p, pb->d_y, s->pc->d_work, s->pc->work_elems,
                                            stream, msg);
}

/* After a verified run: the time of each stage, into the verdict. */
static conv_status annotate(void *ctx, conv_gpu_problem *pb, const conv_run_opts *o, char *note,
                            size_t len, conv_msg *msg)
{
    pipeline_row *r = ctx;
    if (r->pc.implicit)
        return CONV_OK;
    double *ms[3] = {&r->stages.im2col_ms, &r->stages.gemm_ms, &r->stages.permute_ms};
    int stages = pb->p.layout == CONV_LAYOUT_NCHW && pb->p.n > 1 ? 3 : 2;
    for (int i = 0; i < stages; ++i) {
        stage_work s = {pb, &r->pc, i};
        conv_timing t;
        conv_status st = conv_time_gpu(run_stage, &s, pb->stream, o->warmup, o->repeat, &t, msg);
        if (st != CONV_OK)
            return st;
        *ms[i] = t.median_ms;
    }
    if (stages == 3)
        snprintf(note, len, "; im2col %.3f + GEMM %.3f + permute %.3f ms", r->stages.im2col_ms,
                 r->stages.gemm_ms, r->stages.permute_ms);
    else
        snprintf(note, len, "; im2col %.3f + GEMM %.3f ms", r->stages.im2col_ms, r->stages.gemm_ms);
    return CONV_OK;
}

/* A row's name: the GEMM's key first, then what runs ("6e im2col + double
 * buffered", "6e GEMM double buffered"); cuBLAS, a reference, has no key
 * ("im2col + cuBLAS SGEMM", "cuBLAS SGEMM"). */
static void keyed_name(char *out, size_t size, const char *what, const char *gemm)
{
    if (gemm[0] == '6' && gemm[2] == ' ')
        snprintf(out, size, "%.2s %s%s", gemm, what, gemm + 3);
    else
        snprintf(out, size, "%s%s", strcmp(what, "GEMM ") == 0 ? "" : what, gemm);
}

int conv_im2col_gemm_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)p;
    (void)select;
    int n = 0;
    for (; n < N_ROWS && n < max_rows; ++n) {
        int implicit = n == GEMM_VARIANT_COUNT;
        pipeline_row *r = &contexts[n];
        memset(r, 0, sizeof *r);
        r->pc.implicit = implicit;
        r->pc.g = implicit ? GEMM_6E_DBUF : (gemm_variant)n;
        if (implicit)
            snprintf(names[n], sizeof names[n], "6f implicit GEMM");
        else
            keyed_name(names[n], sizeof names[n], "im2col + ", gemm_variant_name(r->pc.g));
        rows[n] = conv_row_device(names[n], keys[n], conv2d_pipeline_conv, r);
        rows[n].check = check;
        rows[n].setup = setup;
        rows[n].teardown = teardown;
        rows[n].annotate = annotate;
    }
    return n;
}

int conv_im2col_gemm_row_stages(const conv_row *row, im2col_gemm_stages *out)
{
    for (int i = 0; i < GEMM_VARIANT_COUNT; ++i)
        if (row->ctx == &contexts[i]) {
            *out = contexts[i].stages;
            return 1;
        }
    return 0;
}

/* ---- the GEMMs alone ---- */

conv_params gemm_as_conv_params(long long m, long long n, long long k)
{
    conv_params p = conv_params_default();
    p.n = 1;
    p.h = (int)m;
    p.w = 1;
    p.c = (int)k;
    p.k = (int)n;
    p.r = p.s = 1;
    p.pad_h = p.pad_w = 0;
    p.layout = CONV_LAYOUT_NHWC;
    return p;
}

void gemm_of_conv_params(const conv_params *p, long long *m, long long *n, long long *k)
{
    *m = (long long)p->n * p->h * p->w;
    *n = p->k;
    *k = p->c;
}

typedef struct {
    gemm_variant v;
    conv_cublas *cublas;
} gemm_row;

static gemm_row gemm_contexts[GEMM_VARIANT_COUNT];
static char gemm_names[GEMM_VARIANT_COUNT][48];

static conv_status gemm_conv(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                             float *d_y, cudaStream_t stream, conv_msg *msg)
{
    const gemm_row *g = ctx;
    long long m, n, k;
    gemm_of_conv_params(p, &m, &n, &k);
    return gemm_sgemm(g->v, (int)m, (int)n, (int)k, d_x, d_w, d_y, g->cublas, stream, msg);
}

static conv_status gemm_check(void *ctx, const conv_params *p, conv_msg *msg)
{
    static const float dummy[4];
    const gemm_row *g = ctx;
    long long m, n, k;
    if (p->layout != CONV_LAYOUT_NHWC || p->r != 1 || p->s != 1 || p->pad_h || p->pad_w ||
        p->stride_h != 1 || p->stride_w != 1)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "a GEMM row runs a 1x1 NHWC problem only");
    gemm_of_conv_params(p, &m, &n, &k);
    /* sizes and grid; the handle is made in setup */
    return gemm_validate(g->v == GEMM_CUBLAS ? GEMM_6A_NAIVE : g->v, m, n, k, dummy, dummy, dummy,
                         NULL, msg);
}

static conv_status gemm_setup(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    (void)pb;
    gemm_row *g = ctx;
    return g->v == GEMM_CUBLAS ? conv_cublas_create(&g->cublas, msg) : CONV_OK;
}

static void gemm_teardown(void *ctx)
{
    gemm_row *g = ctx;
    conv_cublas_destroy(g->cublas);
    g->cublas = NULL;
}

int conv_gemm_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)p;
    (void)select;
    int n = 0;
    for (; n < GEMM_VARIANT_COUNT && n < max_rows; ++n) {
        gemm_contexts[n] = (gemm_row){(gemm_variant)n, NULL};
        keyed_name(gemm_names[n], sizeof gemm_names[n], "GEMM ", gemm_variant_name(n));
        rows[n] = conv_row_device(gemm_names[n], keys[n], gemm_conv, &gemm_contexts[n]);
        rows[n].check = gemm_check;
        rows[n].setup = gemm_setup;
        rows[n].teardown = gemm_teardown;
    }
    return n;
}
