/* Step 04: tiled 2D convolution with halos (ECE408 lecture 8, 2D part).
 *
 * Versions: 4a, 4b, 4c, 4d (the keys of the program's --variant; 4a to 4c are
 * the lecture's strategies 1 to 3). Each has several tile configurations.
 *
 * Single channel (C = K = 1, any batch N), the mask in __constant__ memory:
 *   4a (strategy 1) conv2d_tiled_s1   block = output tile; the input tile
 *                                     (output tile + halo) is loaded in
 *                                     several steps; each thread computes ROWS
 *                                     outputs of a column (ROWS = 1 is the
 *                                     lecture's kernel)
 *   4b (strategy 2) conv2d_tiled_s2   block = input tile (TILE + R - 1 threads
 *                                     per side), loaded in one step; threads
 *                                     outside the output tile idle during the
 *                                     compute
 *   4c (strategy 3) conv2d_tiled_s3   block = output tile; only the core of the
 *                                     input tile in shared memory, halo
 *                                     elements read from global memory
 *                                     (through the caches)
 * Multi-channel (any N, C, K):
 *   4d conv2d_tiled_mc                strategy 1 tiling per input channel; one
 *                                     input tile feeds KB output channels;
 *                                     weights in constant memory while
 *                                     K*C*R*S fits in CONV_TILED_CONST_FLOATS,
 *                                     else read from global memory through the
 *                                     read-only cache
 *
 * All of them: layout NCHW, stride 1, dilation 1, any padding pad_h/pad_w
 * (valid, "same", or anything conv_params_validate accepts; an even filter
 * with "same" padding uses the symmetric pad (R-1)/2 of
 * conv_params_set_same_padding). Filters up to CONV_TILED_MAX_FILTER per side
 * (strategy 2: up to 33 - TILE, so that its block has at most 32x32 threads).
 * Every launcher validates everything first and returns an error with one line
 * naming the parameter before any CUDA call; then it copies the weights to
 * constant memory on `stream` (device to device), launches on `stream` and
 * checks the launch. Pointers are device pointers.
 *
 * The constant-memory weights are one buffer shared by all kernels of this
 * step: do not run two of these launchers concurrently on different streams. */
#ifndef CONV_TILED_2D_H
#define CONV_TILED_2D_H

#include <cuda_runtime_api.h>

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* __constant__ memory is 64 KiB on every GPU so far: 16384 floats. */
#define CONV_TILED_CONST_FLOATS 16384
/* Largest filter side of strategies 1 and 3 and of the multi-channel kernel
 * (their shared input tile is at most (64 + 31) x (32 + 31) floats, 24 KB). */
#define CONV_TILED_MAX_FILTER 32
/* Threads per block side are limited to 32 in strategy 2: R, S <= 33 - TILE. */
#define CONV_TILED_S2_MAX_SIDE 32

typedef enum {
    CONV_TILED_S1 = 1, /* 4a, strategy 1: block = output tile, multi-step load */
    CONV_TILED_S2 = 2, /* 4b, strategy 2: block = input tile, one-step load */
    CONV_TILED_S3 = 3, /* 4c, strategy 3: core in shared memory, halo from the caches */
    CONV_TILED_MC = 4  /* 4d, multi-channel: strategy 1 per input channel, KB outputs */
} conv_tiled_strategy;

/* Where the multi-channel kernel reads its weights from. */
typedef enum {
    CONV_TILED_WEIGHTS_AUTO = 0, /* constant while K*C*R*S <= CONV_TILED_CONST_FLOATS */
    CONV_TILED_WEIGHTS_CONSTANT, /* constant memory; an error when they do not fit */
    CONV_TILED_WEIGHTS_GLOBAL    /* global memory through the read-only data cache */
} conv_tiled_weights;

/* One kernel of this step: a strategy, one of its compile-time tile
 * configurations, and (multi-channel only) where the weights live. */
typedef struct {
    conv_tiled_strategy strategy;
    int config;
    conv_tiled_weights weights;
} conv_tiled_choice;

/* Number of compile-time configurations of a strategy (0 if unknown). */
int conv2d_tiled_num_configs(conv_tiled_strategy strategy);
/* A short name (at most 28 characters, the width of the table's first column),
 * e.g. "s1 32x64, 8 outputs/thread" (the program's row drops the strategy:
 * "4a 32x64, 8 outputs/thread"); "?" if unknown. */
const char *conv2d_tiled_config_name(conv_tiled_strategy strategy, int config);
/* Output tile of a configuration (width x height), for tests and docs. */
void conv2d_tiled_config_tile(conv_tiled_strategy strategy, int config, int *tile_w, int *tile_h);
/* Largest filter side a configuration accepts. */
int conv2d_tiled_max_filter(conv_tiled_strategy strategy, int config);

/* 1 when the multi-channel kernel reads its weights from constant memory
 * (weights not CONV_TILED_WEIGHTS_GLOBAL, and K*C*R*S within
 * CONV_TILED_CONST_FLOATS). */
int conv2d_tiled_mc_weights_in_constant(const conv_params *p, conv_tiled_weights weights);

/* The launchers' checks of a problem (no pointers, no CUDA call): CONV_OK, or
 * CONV_ERR_INVALID / CONV_ERR_UNSUPPORTED with one line naming the parameter. */
conv_status conv2d_tiled_check(const conv_tiled_choice *choice, const conv_params *p,
                               conv_msg *msg);

/* The per-strategy launchers (config: 0 .. conv2d_tiled_num_configs - 1). */
conv_status conv2d_tiled_s1(const conv_params *p, int config, const float *d_x, const float *d_w,
                            float *d_y, cudaStream_t stream, conv_msg *msg);
conv_status conv2d_tiled_s2(const conv_params *p, int config, const float *d_x, const float *d_w,
                            float *d_y, cudaStream_t stream, conv_msg *msg);
conv_status conv2d_tiled_s3(const conv_params *p, int config, const float *d_x, const float *d_w,
                            float *d_y, cudaStream_t stream, conv_msg *msg);
conv_status conv2d_tiled_mc(const conv_params *p, int config, conv_tiled_weights weights,
                            const float *d_x, const float *d_w, float *d_y, cudaStream_t stream,
                            conv_msg *msg);

/* Dispatches on choice->strategy. */
conv_status conv2d_tiled(const conv_tiled_choice *choice, const conv_params *p, const float *d_x,
                         const float *d_w, float *d_y, cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_TILED_2D_H */
