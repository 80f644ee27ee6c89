#include "winograd_rows.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "conv_cuda.h"
#include "winograd.h"

/* What one row needs around its measurement. */
typedef struct {
    wino_tile t;
    int fused; /* 7c */
    float *d_work;
    size_t work_elems;
    wino_tolerance tol; /* Winograd's bound of the problem being verified */
    double stage_ms[WINO_STAGE_COUNT];
} wino_row;

static wino_row contexts[WINO_ROW_COUNT];
static char names[WINO_ROW_COUNT][40];
static const char *const keys[WINO_ROW_COUNT] = {"7a", "7b", "7c"};

conv_status conv2d_winograd_conv(void *ctx, const conv_params *p, const float *d_x,
                                 const float *d_w, float *d_y, cudaStream_t stream, conv_msg *msg)
{
    const wino_row *r = ctx;
    if (r->fused)
        return conv2d_winograd_fused(p, d_x, d_w, d_y, r->d_work, r->work_elems, stream, msg);
    return conv2d_winograd(p, r->t, d_x, d_w, d_y, r->d_work, r->work_elems, stream, msg);
}

/* The problem and the GEMM's sizes; the memory is checked against the device in setup. */
static conv_status check(void *ctx, const conv_params *p, conv_msg *msg)
{
    const wino_row *r = ctx;
    return r->fused ? wino_fused_check(p, SIZE_MAX, msg) : wino_check(p, r->t, SIZE_MAX, msg);
}

static conv_status setup(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    wino_row *r = ctx;
    memset(r->stage_ms, 0, sizeof r->stage_ms);
    size_t free_b = 0, total_b = 0;
    CONV_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b), msg);
    /* the tensors are allocated already: the workspace alone must fit */
    size_t tensors =
        (conv_input_elems(&pb->p) + conv_filter_elems(&pb->p) + conv_output_elems(&pb->p)) *
        sizeof(float);
    conv_status st = r->fused ? wino_fused_check(&pb->p, free_b + tensors, msg)
                              : wino_check(&pb->p, r->t, free_b + tensors, msg);
    if (st != CONV_OK)
        return st;
    r->work_elems =
        r->fused ? wino_fused_workspace_elems(&pb->p) : wino_workspace_elems(&pb->p, r->t);
    return conv_device_alloc(&r->d_work, r->work_elems, "Winograd workspace (U, V, M)", msg);
}

static void teardown(void *ctx)
{
    wino_row *r = ctx;
    conv_device_free(r->d_work);
    r->d_work = NULL;
    wino_tolerance_free(&r->tol);
}

/* Winograd's own bound at every output verified (winograd_host.h). */
static conv_status tolerance(void *ctx, const conv_gpu_problem *pb, conv_verify_opts *opts,
                             conv_msg *msg)
{
    wino_row *r = ctx;
    return wino_tolerance_prepare(&r->tol, &pb->p, r->t, pb->h_x, pb->h_w, pb->full_verify, opts,
                                  msg);
}

/* One stage alone, as timed work. */
typedef struct {
    conv_gpu_problem *pb;
    const wino_row *r;
    wino_stage stage;
} stage_work;

static conv_status run_stage(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    const stage_work *s = ctx;
    const conv_gpu_problem *pb = s->pb;
    if (s->r->fused) /* two launches: the filter transform, then the rest */
        return conv2d_winograd_fused_stages(&pb->p, s->stage == WINO_STAGE_FILTER,
                                            s->stage != WINO_STAGE_FILTER, pb->d_x, pb->d_w,
                                            pb->d_y, s->r->d_work, s->r->work_elems, stream, msg);
    return conv2d_winograd_stages(&pb->p, s->r->t, s->stage, s->stage, pb->d_x, pb->d_w, pb->d_y,
                                  s->r->d_work, s->r->work_elems, stream, msg);
}

/* After a verified run (the workspace holds every stage's input): the time
 * of each stage, into the verdict. */
static conv_status annotate(void *ctx, conv_gpu_problem *pb, const conv_run_opts *o, char *note,
                            size_t len, conv_msg *msg)
{
    wino_row *r = ctx;
    const int stages = r->fused ? 2 : WINO_STAGE_COUNT;
    for (int i = 0; i < stages; ++i) {
        stage_work s = {pb, r, (wino_stage)i};
        conv_timing t;
        conv_status st = conv_time_gpu(run_stage, &s, pb->stream, o->warmup, o->repeat, &t, msg);
        if (st != CONV_OK)
            return st;
        r->stage_ms[i] = t.median_ms;
    }
    if (r->fused) {
        snprintf(note, len, "; filter %.3f + fused %.3f ms", r->stage_ms[0], r->stage_ms[1]);
        return CONV_OK;
    }
    snprintf(note, len, "; filter %.3f + input %.3f + GEMMs %.3f + output %.3f ms",
             r->stage_ms[WINO_STAGE_FILTER], r->stage_ms[WINO_STAGE_INPUT],
             r->stage_ms[WINO_STAGE_GEMM], r->stage_ms[WINO_STAGE_OUTPUT]);
    return CONV_OK;
}

int conv_winograd_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)p;
    (void)select;
    for (int i = 0; i < WINO_ROW_COUNT && i < max_rows; ++i) {
        wino_row *r = &contexts[i];
        wino_tolerance_free(&r->tol);
        memset(r, 0, sizeof *r);
        r->fused = i == 2;
        r->t = r->fused ? WINO_F4 : (wino_tile)i;
        snprintf(names[i], sizeof names[i], "%s %s%s", keys[i], r->fused ? "fused " : "",
                 wino_tile_name(r->t));
    }
    static const char *const row_names[WINO_ROW_COUNT] = {names[0], names[1], names[2]};
    conv_row like = conv_row_device(NULL, NULL, conv2d_winograd_conv, NULL);
    like.check = check;
    like.setup = setup;
    like.teardown = teardown;
    like.tolerance = tolerance;
    like.annotate = annotate;
    return conv_rows_table(&like, row_names, keys, contexts, sizeof contexts[0], WINO_ROW_COUNT,
                           rows, max_rows);
}

int conv_winograd_row_stages(const conv_row *row, wino_tile *tile, int *fused, double ms[4])
{
    for (int i = 0; i < WINO_ROW_COUNT; ++i)
        if (row->ctx == &contexts[i]) {
            *tile = contexts[i].t;
            *fused = contexts[i].fused;
            memcpy(ms, contexts[i].stage_ms, sizeof contexts[i].stage_ms);
            return 1;
        }
    return 0;
}
