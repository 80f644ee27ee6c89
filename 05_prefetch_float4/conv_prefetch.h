/* Step 05: the direct convolution of the blog article (Pegessi's direct 2D
 * convolution, docs/sources.md), made correct for every shape, then tuned.
 *
 * Versions: 5a, 5a oc-outer, 5b (launchers):
 *   conv2d_prefetch_5a()  the article's kernel: one warp per block, edge blocks
 *                         grown, float4 "equal split" loads, 8 output channels'
 *                         accumulators in registers, the next channel prefetched
 *   conv2d_prefetch_5a_lecture_order()  5a oc-outer: the article's loop order
 *                         (every input tile loaded K times), to measure it
 *   conv2d_prefetch_5b()  the tuned kernel: OW outputs of a row for KC output
 *                         channels per thread
 *
 * All: NCHW, stride 1, dilation 1, any padding, any N, C, K, H, W, filters up
 * to CONV_PREFETCH_MAX_FILTER per side, device buffers aligned to a float.
 * Every launcher validates before any CUDA call (CONV_ERR_INVALID or
 * CONV_ERR_UNSUPPORTED, one line naming the parameter), then launches on
 * `stream` and checks the launch.
 *
 * Lesson: docs/05_prefetch_float4.md, sections "5a: the article's kernel, made
 * correct" and "5b: more outputs per thread". */
#ifndef CONV_PREFETCH_H
#define CONV_PREFETCH_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest filter side (R and S) of both variants. */
#define CONV_PREFETCH_MAX_FILTER 16

/* 5a: the lecture's block (8 wide, 4 tall: one warp) and its channel chunk. */
#define CONV_PREFETCH_5A_BW 8
#define CONV_PREFETCH_5A_BH 4
#define CONV_PREFETCH_5A_KC 8

/* The launch geometry a variant chooses for a problem (host-side, no CUDA
 * call: the tests and the step program print it). */
typedef struct {
    int kc;         /* output channels per thread (compile-time chunk) */
    int ow;         /* outputs per thread along a row (5b), 1 for 5a */
    int filter;     /* compiled-in filter side 3, 5, 6 or 7; 0 = generic path */
    int tx, ty;     /* threads per block */
    int bw, bh;     /* output tile of a regular block (5a: edge blocks grow) */
    int col_blocks; /* blocks along Q */
    int row_blocks; /* blocks along P */
    int k_chunks;   /* ceil(K / kc) (5b: one block each; 5a: a loop in the block) */
    long long blocks;
    int tile_rows;   /* rows of the shared input tile (largest block) */
    int tile_stride; /* floats per shared row (a multiple of 4) */
    size_t smem_bytes;
} conv_prefetch_plan;

typedef enum {
    CONV_PREFETCH_5A = 0,      /* lecture kernel, input channel outer */
    CONV_PREFETCH_5A_OC_OUTER, /* lecture kernel, the article's oc -> ic order */
    CONV_PREFETCH_5B           /* tuned kernel */
} conv_prefetch_variant;

/* A short name: "5a", "5a oc-outer", "5b". */
const char *conv_prefetch_variant_name(conv_prefetch_variant v);

/* The geometry a variant uses for p on a device that allows smem_limit bytes
 * of shared memory per block (conv_smem_limit() of common/conv_device.h; the
 * launchers pass the device's). Validates p first: CONV_OK, or an error
 * naming the parameter (invalid parameters, layout, stride, dilation, a
 * filter above CONV_PREFETCH_MAX_FILTER, a grid too large, a tile that needs
 * more shared memory than the limit). No CUDA call. */
conv_status conv2d_prefetch_plan(conv_prefetch_variant v, const conv_params *p, size_t smem_limit,
                                 conv_prefetch_plan *plan, conv_msg *msg);

/* The launchers' pointer checks: not NULL, aligned to a float. */
conv_status conv2d_prefetch_check_pointers(const float *d_x, const float *d_w, const float *d_y,
                                           conv_msg *msg);

/* One line, e.g. "5b: 7x7 kernel, 4 outputs x 16 channels per thread, 9x17
 * threads, 36x17 outputs per block, 2448 blocks, 15.9 KB shared". */
void conv_prefetch_plan_describe(conv_prefetch_variant v, const conv_prefetch_plan *plan, char *buf,
                                 size_t len);

conv_status conv2d_prefetch_5a(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                               cudaStream_t stream, conv_msg *msg);
conv_status conv2d_prefetch_5a_lecture_order(const conv_params *p, const float *d_x,
                                             const float *d_w, float *d_y, cudaStream_t stream,
                                             conv_msg *msg);
conv_status conv2d_prefetch_5b(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                               cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_PREFETCH_H */
