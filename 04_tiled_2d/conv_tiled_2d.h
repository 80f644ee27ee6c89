/* Step 04: tiled 2D convolution with halos (ECE408 lecture 8, 2D part): the
 * launchers of conv_tiled_2d.cu, each with several tile configurations.
 *
 * Versions: 4a, 4b, 4c, 4d (the keys of the program's --variant):
 *   4a conv2d_tiled_s1  strategy 1: block = output tile, the input tile loaded
 *                       in steps; ROWS outputs of a column per thread
 *   4b conv2d_tiled_s2  strategy 2: block = input tile, loaded in one step
 *   4c conv2d_tiled_s3  strategy 3: only the core in shared memory, the halo
 *                       read from global memory (through the caches)
 *   4d conv2d_tiled_mc  any N, C, K: strategy 1 per input channel, each input
 *                       tile feeding KB output channels
 * 4a to 4c take one channel (C = K = 1, any N); 4d keeps its weights in
 * __constant__ memory while they fit. All: NCHW, stride 1, dilation 1, any
 * padding, filters up to CONV_TILED_MAX_FILTER per side. A launcher validates
 * first (one line naming the parameter), then copies the weights to constant
 * memory on `stream`, launches and checks the launch; pointers are device
 * pointers. They share one constant buffer: never run two of them concurrently.
 *
 * Lesson: docs/04_tiled_2d.md, section "The three strategies"; the limits in
 * "Limits (each rejected before launch, with one line naming the parameter)". */
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
