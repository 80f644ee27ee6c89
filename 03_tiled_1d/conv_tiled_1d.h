/* Step 03: 1D "same" convolution with the mask in constant memory, and the
 * three tiling strategies of ECE408 lecture 8 (kernels: conv_tiled_1d.cu).
 *
 *   y[i] = sum_{j < M} x[i - half + j] * mask[j],  half = (M - 1) / 2,
 *   x = 0 outside [0, width)                      (step 01's conv1d_cpu_same)
 *
 * Versions: 3a, 3b, 3c, 3d, 3e (the program's --variant), by launcher:
 *   3a conv1d_naive()     every tap read from global memory
 *   3b conv1d_naive_x4()  3a with 4 outputs per thread: the control experiment
 *   3c conv1d_tiled_s1()  strategy 1: block = output tile, halos loaded in steps
 *   3d conv1d_tiled_s2()  strategy 2: block = input tile, one load per thread
 *   3e conv1d_tiled_s3()  strategy 3: block = output tile, halos from the caches
 *
 * Upload the mask first (conv1d_upload_mask()); odd widths up to
 * CONV1D_MAX_MASK_WIDTH, strategy 2 up to CONV1D_S2_MAX_MASK_WIDTH. Every
 * launcher validates before any CUDA call and returns a conv_status with one
 * line naming the parameter.
 *
 * Lesson: docs/03_tiled_1d.md, section "Output tiles and input tiles"; the
 * limits in "The mask in constant memory". */
#ifndef CONV_TILED_1D_H
#define CONV_TILED_1D_H

#include <cuda_runtime_api.h>

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* __constant__ memory holds 64 KiB = 16384 floats; the mask width is odd. */
#define CONV1D_CONST_FLOATS   16384
#define CONV1D_MAX_MASK_WIDTH (CONV1D_CONST_FLOATS - 1)
/* Threads per block of the naive kernels and of strategies 1 and 3. */
#define CONV1D_THREADS 256
/* Outputs per block (the output tile) of strategies 1 and 3 and naive x4: each thread
 * computes CONV1D_TILE / CONV1D_THREADS = 4 outputs, CONV1D_THREADS apart. */
#define CONV1D_TILE       1024
#define CONV1D_PER_THREAD (CONV1D_TILE / CONV1D_THREADS)
/* Strategy 2: the output tile; the block has CONV1D_S2_TILE + M - 1 threads. */
#define CONV1D_S2_TILE           256
#define CONV1D_MAX_BLOCK_THREADS 1024
#define CONV1D_S2_MAX_MASK_WIDTH (CONV1D_MAX_BLOCK_THREADS - CONV1D_S2_TILE + 1)
/* Widths above this are rejected (2^38 floats: 1 TiB, beyond any GPU; it keeps
 * every grid below 2^31 blocks). */
#define CONV1D_MAX_WIDTH (1LL << 38)

typedef enum {
    CONV1D_NAIVE = 0,
    CONV1D_NAIVE_X4,
    CONV1D_S1,
    CONV1D_S2,
    CONV1D_S3,
    CONV1D_N_STRATEGIES
} conv1d_strategy;

/* "naive", "naive x4", "strategy 1", ... (the lecture's names of 3a to 3e) */
const char *conv1d_strategy_name(conv1d_strategy s);
/* The largest mask width a strategy accepts. */
int conv1d_max_mask_width(conv1d_strategy s);

/* Copies mask_width floats from the host into constant memory (ordered on
 * `stream` with the launches that follow). The launchers then accept exactly
 * this mask width. */
conv_status conv1d_upload_mask(const float *h_mask, int mask_width, cudaStream_t stream,
                               conv_msg *msg);

conv_status conv1d_naive(const float *d_x, float *d_y, long long width, int mask_width,
                         cudaStream_t stream, conv_msg *msg);
conv_status conv1d_naive_x4(const float *d_x, float *d_y, long long width, int mask_width,
                            cudaStream_t stream, conv_msg *msg);
conv_status conv1d_tiled_s1(const float *d_x, float *d_y, long long width, int mask_width,
                            cudaStream_t stream, conv_msg *msg);
conv_status conv1d_tiled_s2(const float *d_x, float *d_y, long long width, int mask_width,
                            cudaStream_t stream, conv_msg *msg);
conv_status conv1d_tiled_s3(const float *d_x, float *d_y, long long width, int mask_width,
                            cudaStream_t stream, conv_msg *msg);

/* The launchers' checks of a problem (no pointers, no CUDA call): width,
 * mask width, and the strategy's own limit. */
conv_status conv1d_tiled_check(conv1d_strategy s, long long width, int mask_width, conv_msg *msg);

/* Dispatches to one of the five launchers. */
conv_status conv1d_tiled(conv1d_strategy s, const float *d_x, float *d_y, long long width,
                         int mask_width, cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_TILED_1D_H */
