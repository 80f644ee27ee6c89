/* Step 03: 1D "same" convolution, the mask in constant memory, and the three
 * tiling strategies of ECE408 lecture 8.
 *
 * Versions: 3a, 3b, 3c, 3d, 3e (key: launcher <- kernel; 3c, 3d, 3e are the
 * lecture's strategies 1, 2, 3):
 *   3a conv1d_naive()    <- conv1d_naive_kernel     all taps from global memory
 *   3b conv1d_naive_x4() <- conv1d_naive_x4_kernel  the same, 4 outputs per thread (control)
 *   3c conv1d_tiled_s1() <- conv1d_tiled_s1_kernel  block = output tile, halos loaded too
 *   3d conv1d_tiled_s2() <- conv1d_tiled_s2_kernel  block = input tile, one load per thread
 *   3e conv1d_tiled_s3() <- conv1d_tiled_s3_kernel  block = output tile, halos from the cache
 *
 * Napkin math: an output costs M multiply-adds and, ideally, 8 bytes of DRAM
 * traffic (one input read, one output written). With M = 7 that is 14 FLOP
 * per 8 bytes, under 2 FLOP/byte: every version is bound by memory
 * bandwidth, and the best one can do is to stream x and y at the speed of a
 * device-to-device copy. Tiling removes the M-fold re-reading of each input
 * from the load path; whether that matters depends on how well L1 already
 * catches those re-reads (see docs/03_tiled_1d.md). */
#include "conv_tiled_1d.h"

#include <limits.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "conv_params.h"

/* excerpt: mask-constant */
/* The mask: every thread of a warp reads the same mask[j] at the same time,
 * and the constant cache broadcasts one value to all 32 lanes in one go. */
__constant__ float conv1d_mask[CONV1D_CONST_FLOATS];
/* excerpt end: mask-constant */

/* The mask width last uploaded (host side): a launch with another width
 * would read stale constants, so it is refused. */
static int uploaded_mask_width = 0;

/* 3a, naive: one thread per output; each of the M taps is a global load. The
 * neighbours of a thread load M-1 of the same inputs, so the L1 cache serves
 * most of them: DRAM still sees each input about once. */
__global__ void conv1d_naive_kernel(const float *__restrict__ x, float *__restrict__ y,
                                    long long width, int mask_width)
{
    /* excerpt: naive-kernel */
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= width)
        return;
    const long long start = i - mask_width / 2;
    float acc = 0.0f;
    for (int j = 0; j < mask_width; ++j) {
        const long long k = start + j;
        if (k >= 0 && k < width) /* the "ghost" cells outside x count as zero */
            acc += x[k] * conv1d_mask[j];
    }
    y[i] = acc;
    /* excerpt end: naive-kernel */
}

/* 3b, naive x4: still every tap from global memory, but with the thread mapping
 * of strategies 1 and 3 (a block of CONV1D_THREADS threads covers
 * CONV1D_TILE outputs, CONV1D_PER_THREAD per thread, CONV1D_THREADS apart).
 * It is the control experiment: against strategy 1 it differs only in where
 * the re-read inputs come from (L1 instead of shared memory); against the
 * naive kernel only in how many independent loads a thread has in flight. */
__global__ void conv1d_naive_x4_kernel(const float *__restrict__ x, float *__restrict__ y,
                                       long long width, int mask_width)
{
    const long long first = (long long)blockIdx.x * CONV1D_TILE + threadIdx.x - mask_width / 2;
    float acc[CONV1D_PER_THREAD];
#pragma unroll
    for (int r = 0; r < CONV1D_PER_THREAD; ++r)
        acc[r] = 0.0f;
    /* excerpt: naive-x4-loop */
    for (int j = 0; j < mask_width; ++j) {
        const float m = conv1d_mask[j];
#pragma unroll
        for (int r = 0; r < CONV1D_PER_THREAD; ++r) {
            const long long k = first + r * CONV1D_THREADS + j;
            if (k >= 0 && k < width)
                acc[r] += x[k] * m;
        }
    }
    /* excerpt end: naive-x4-loop */
#pragma unroll
    for (int r = 0; r < CONV1D_PER_THREAD; ++r) {
        const long long i = (long long)blockIdx.x * CONV1D_TILE + r * CONV1D_THREADS + threadIdx.x;
        if (i < width)
            y[i] = acc[r];
    }
}

/* 3c, strategy 1: the block covers an output tile of CONV1D_TILE outputs; the
 * input tile (the tile plus half = (M-1)/2 halo cells each side, TILE + M - 1
 * floats) is loaded into shared memory in steps of CONV1D_THREADS elements:
 * the left halo and the start of the core first, the right halo last.
 * Afterwards every tap comes from shared memory, with no bounds test at all
 * (the zero padding was stored in the tile). Each thread computes
 * CONV1D_PER_THREAD outputs, CONV1D_THREADS apart (coalesced), so its loads
 * are independent of each other and all are in flight at once. The kernel
 * assumes blockDim.x == CONV1D_THREADS (the launcher's choice). */
__global__ void conv1d_tiled_s1_kernel(const float *__restrict__ x, float *__restrict__ y,
                                       long long width, int mask_width)
{
    extern __shared__ float tile_s1[]; /* CONV1D_TILE + mask_width - 1 floats */
    /* excerpt: s1-load */
    const long long out0 = (long long)blockIdx.x * CONV1D_TILE;
    const long long in0 = out0 - mask_width / 2; /* global index of tile_s1[0] */
    const int n_in = CONV1D_TILE + mask_width - 1;
    /* exercise 03-s1 begin: strategy 1's input tile, halos and zero padding included */
    /* Step 1: the first CONV1D_TILE elements (left halo and most of the core),
     * one element per thread per round; the rounds are unrolled so that all
     * of a thread's loads are in flight together. */
#pragma unroll
    for (int r = 0; r < CONV1D_PER_THREAD; ++r) {
        const int j = r * CONV1D_THREADS + threadIdx.x;
        const long long g = in0 + j;
        tile_s1[j] = (g >= 0 && g < width) ? x[g] : 0.0f;
    }
    /* Step 2: the remaining M - 1 elements (the end of the core and the right halo). */
    for (int j = CONV1D_TILE + threadIdx.x; j < n_in; j += CONV1D_THREADS) {
        const long long g = in0 + j;
        tile_s1[j] = (g >= 0 && g < width) ? x[g] : 0.0f;
    }
    /* exercise 03-s1 stub
    // TODO(exercise 03-s1): fill tile_s1[0 .. n_in) with x[in0 + j], zero where in0 + j
    // lies outside [0, width): the block's CONV1D_THREADS threads take the first
    // CONV1D_TILE elements in CONV1D_PER_THREAD rounds, then the last mask_width - 1
    // (the right halo). Graded by tests/test_03_tiled_1d.c (suite gpu_conv1d_tiled_s1).
    (void)in0, (void)n_in;
       exercise 03-s1 end */
    __syncthreads();
    /* excerpt end: s1-load */
    /* The four outputs advance together, in four independent accumulators:
     * each mask value is read once and used four times. On sm_90 the uniform
     * index j makes mask[j] a ULDC (a load on the uniform datapath), one per
     * four FMAs; with one output at a time there would be one per two FMAs,
     * and the loads, not the FMAs, would set the pace for wide masks (see
     * docs/03_tiled_1d.md, "Going further"). Outputs past the end read zeros
     * from the tile and are not stored. */
    /* excerpt: s1-compute */
    float acc[CONV1D_PER_THREAD];
#pragma unroll
    for (int r = 0; r < CONV1D_PER_THREAD; ++r)
        acc[r] = 0.0f;
    for (int j = 0; j < mask_width; ++j) {
        const float m = conv1d_mask[j];
#pragma unroll
        for (int r = 0; r < CONV1D_PER_THREAD; ++r) /* consecutive threads: no bank conflict */
            acc[r] += tile_s1[r * CONV1D_THREADS + threadIdx.x + j] * m;
    }
    /* excerpt end: s1-compute */
#pragma unroll
    for (int r = 0; r < CONV1D_PER_THREAD; ++r) {
        const long long i = out0 + r * CONV1D_THREADS + threadIdx.x;
        if (i < width)
            y[i] = acc[r];
    }
}

/* 3d, strategy 2: the block covers the input tile, CONV1D_S2_TILE + M - 1
 * threads, and each thread loads exactly one element: the whole tile arrives
 * in one step with the simplest index arithmetic. Only the first
 * CONV1D_S2_TILE threads have an output; the other M - 1 idle during the
 * compute phase (and the block size is rarely a multiple of 32, so the last
 * warp is partly empty). */
__global__ void conv1d_tiled_s2_kernel(const float *__restrict__ x, float *__restrict__ y,
                                       long long width, int mask_width)
{
    extern __shared__ float tile_s2[]; /* blockDim.x floats */
    /* excerpt: s2-kernel */
    const long long out0 = (long long)blockIdx.x * CONV1D_S2_TILE;
    const long long g = out0 - mask_width / 2 + threadIdx.x;
    tile_s2[threadIdx.x] = (g >= 0 && g < width) ? x[g] : 0.0f;
    __syncthreads();
    const int t = threadIdx.x;
    if (t < CONV1D_S2_TILE && out0 + t < width) {
        float acc = 0.0f;
        for (int j = 0; j < mask_width; ++j)
            acc += tile_s2[t + j] * conv1d_mask[j];
        y[out0 + t] = acc;
    }
    /* excerpt end: s2-kernel */
}

/* 3e, strategy 3: the block covers the output tile and loads only its core
 * (CONV1D_TILE floats, no halo). A tap inside the tile reads shared memory; a
 * tap in the halo reads global memory, which the neighbouring block has just
 * loaded too, so it is an L2 (often L1) hit. Only threads near the tile's
 * edges take that second path: the divergence is confined to the first and
 * last warps of the tile. */
__global__ void conv1d_tiled_s3_kernel(const float *__restrict__ x, float *__restrict__ y,
                                       long long width, int mask_width)
{
    __shared__ float tile_s3[CONV1D_TILE];
    const long long out0 = (long long)blockIdx.x * CONV1D_TILE;
#pragma unroll
    for (int r = 0; r < CONV1D_PER_THREAD; ++r) {
        const int t = r * CONV1D_THREADS + threadIdx.x;
        tile_s3[t] = out0 + t < width ? x[out0 + t] : 0.0f;
    }
    __syncthreads();
    const int half = mask_width / 2;
    float acc[CONV1D_PER_THREAD];
#pragma unroll
    for (int r = 0; r < CONV1D_PER_THREAD; ++r)
        acc[r] = 0.0f;
    /* excerpt: s3-compute */
    for (int j = 0; j < mask_width; ++j) {
        const float m = conv1d_mask[j];
#pragma unroll
        for (int r = 0; r < CONV1D_PER_THREAD; ++r) {
            /* exercise 03-s3 begin: strategy 3's tap, from the tile or from the cache */
            const int s = r * CONV1D_THREADS + threadIdx.x - half + j; /* tap, tile-relative */
            float v;
            if (s >= 0 && s < CONV1D_TILE) {
                v = tile_s3[s];
            } else { /* a halo cell: global memory, normally an L1 or L2 hit */
                const long long g = out0 + s;
                v = (g >= 0 && g < width) ? x[g] : 0.0f;
            }
            /* exercise 03-s3 stub
            // TODO(exercise 03-s3): v = input out0 + s of output r's tap j, s tile-relative:
            // from tile_s3 when s lies in the core [0, CONV1D_TILE), else (a halo cell) from
            // x in global memory, zero outside [0, width). Graded by
            // tests/test_03_tiled_1d.c (suite gpu_conv1d_tiled_s3).
            (void)half;
            const float v = 0.0f;
               exercise 03-s3 end */
            acc[r] += v * m;
        }
    }
    /* excerpt end: s3-compute */
#pragma unroll
    for (int r = 0; r < CONV1D_PER_THREAD; ++r) {
        const long long i = out0 + r * CONV1D_THREADS + threadIdx.x;
        if (i < width)
            y[i] = acc[r];
    }
}

extern "C" const char *conv1d_strategy_name(conv1d_strategy s)
{
    switch (s) {
    case CONV1D_NAIVE: return "naive";
    case CONV1D_NAIVE_X4: return "naive x4";
    case CONV1D_S1: return "strategy 1";
    case CONV1D_S2: return "strategy 2";
    case CONV1D_S3: return "strategy 3";
    default: return "unknown";
    }
}

extern "C" int conv1d_max_mask_width(conv1d_strategy s)
{
    return s == CONV1D_S2 ? CONV1D_S2_MAX_MASK_WIDTH : CONV1D_MAX_MASK_WIDTH;
}

/* The mask width alone: odd, positive, fits in constant memory. */
static conv_status validate_mask_width(long long mask_width, conv_msg *msg)
{
    conv_status st = conv1d_params_validate(1, mask_width, msg);
    if (st != CONV_OK)
        return st;
    if (mask_width > CONV1D_MAX_MASK_WIDTH)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid mask width (--mask): %lld floats do not fit in the 64 KiB of "
                         "constant memory (at most %d)",
                         mask_width, CONV1D_MAX_MASK_WIDTH);
    return CONV_OK;
}

extern "C" conv_status conv1d_upload_mask(const float *h_mask, int mask_width, cudaStream_t stream,
                                          conv_msg *msg)
{
    if (h_mask == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid argument: host mask h_mask is NULL");
    conv_status st = validate_mask_width(mask_width, msg);
    if (st != CONV_OK)
        return st;
    CONV_CUDA_CHECK(cudaMemcpyToSymbolAsync(conv1d_mask, h_mask, (size_t)mask_width * sizeof(float),
                                            0, cudaMemcpyHostToDevice, stream),
                    msg);
    uploaded_mask_width = mask_width;
    return CONV_OK;
}

extern "C" conv_status conv1d_tiled_check(conv1d_strategy s, long long width, int mask_width,
                                          conv_msg *msg)
{
    if ((int)s < 0 || s >= CONV1D_N_STRATEGIES)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid strategy %d", (int)s);
    conv_status st = conv1d_params_validate(width, mask_width, msg);
    if (st != CONV_OK)
        return st;
    if (width > CONV1D_MAX_WIDTH)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid width (--width): %lld exceeds 2^38",
                         width);
    st = validate_mask_width(mask_width, msg);
    if (st != CONV_OK)
        return st;
    if (mask_width > conv1d_max_mask_width(s))
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "unsupported mask width (--mask) for %s: %d needs a block of %d + %d - 1 "
                         "threads (at most %d: mask width <= %d)",
                         conv1d_strategy_name(s), mask_width, CONV1D_S2_TILE, mask_width,
                         CONV1D_MAX_BLOCK_THREADS, conv1d_max_mask_width(s));
    return CONV_OK;
}

/* Everything a launcher checks before any CUDA call. */
static conv_status validate(conv1d_strategy s, const float *d_x, const float *d_y, long long width,
                            int mask_width, conv_msg *msg)
{
    if (d_x == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid argument: device input d_x is NULL");
    if (d_y == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid argument: device output d_y is NULL");
    if (d_x == d_y)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid argument: d_y == d_x (in-place convolution is not supported)");
    conv_status st = conv1d_tiled_check(s, width, mask_width, msg);
    if (st != CONV_OK)
        return st;
    if (mask_width != uploaded_mask_width)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid mask width (--mask): %d, but the mask in constant memory has "
                         "width %d (call conv1d_upload_mask first)",
                         mask_width, uploaded_mask_width);
    return CONV_OK;
}

static unsigned blocks_for(long long width, long long per_block)
{
    return (unsigned)((width + per_block - 1) / per_block);
}

/* What every launcher ends with, once the arguments are valid: checks that
 * `kernel` fits the GPU with this block and shared memory, launches it over
 * the blocks of `per_block` outputs that cover width, and checks the launch
 * (CONV_CHECK_LAUNCH_OF: "<name> launch failed at ..."). */
static conv_status launch(void (*kernel)(const float *, float *, long long, int), const char *name,
                          long long per_block, int threads, size_t smem, const float *d_x,
                          float *d_y, long long width, int mask_width, cudaStream_t stream,
                          conv_msg *msg)
{
    conv_status st = conv_kernel_fits((const void *)kernel, name, threads, smem, msg);
    if (st != CONV_OK)
        return st;
    kernel<<<blocks_for(width, per_block), threads, smem, stream>>>(d_x, d_y, width, mask_width);
    CONV_CHECK_LAUNCH_OF(name, msg);
    return CONV_OK;
}

extern "C" conv_status conv1d_naive(const float *d_x, float *d_y, long long width, int mask_width,
                                    cudaStream_t stream, conv_msg *msg)
{
    conv_status st = validate(CONV1D_NAIVE, d_x, d_y, width, mask_width, msg);
    if (st != CONV_OK)
        return st;
    return launch(conv1d_naive_kernel, "conv1d_naive_kernel", CONV1D_THREADS, CONV1D_THREADS, 0,
                  d_x, d_y, width, mask_width, stream, msg);
}

extern "C" conv_status conv1d_naive_x4(const float *d_x, float *d_y, long long width,
                                       int mask_width, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = validate(CONV1D_NAIVE_X4, d_x, d_y, width, mask_width, msg);
    if (st != CONV_OK)
        return st;
    return launch(conv1d_naive_x4_kernel, "conv1d_naive_x4_kernel", CONV1D_TILE, CONV1D_THREADS, 0,
                  d_x, d_y, width, mask_width, stream, msg);
}

extern "C" conv_status conv1d_tiled_s1(const float *d_x, float *d_y, long long width,
                                       int mask_width, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = validate(CONV1D_S1, d_x, d_y, width, mask_width, msg);
    if (st != CONV_OK)
        return st;
    /* Above 48 KiB of dynamic shared memory (masks wider than about 11,000
     * floats) the kernel must opt in, which conv_kernel_fits does; GPUs allow
     * 64 KiB (Turing) to 227 KiB (Hopper) per block. */
    const size_t smem = (size_t)(CONV1D_TILE + mask_width - 1) * sizeof(float);
    return launch(conv1d_tiled_s1_kernel, "conv1d_tiled_s1_kernel", CONV1D_TILE, CONV1D_THREADS,
                  smem, d_x, d_y, width, mask_width, stream, msg);
}

extern "C" conv_status conv1d_tiled_s2(const float *d_x, float *d_y, long long width,
                                       int mask_width, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = validate(CONV1D_S2, d_x, d_y, width, mask_width, msg);
    if (st != CONV_OK)
        return st;
    const int threads = CONV1D_S2_TILE + mask_width - 1; /* the input tile */
    return launch(conv1d_tiled_s2_kernel, "conv1d_tiled_s2_kernel", CONV1D_S2_TILE, threads,
                  (size_t)threads * sizeof(float), d_x, d_y, width, mask_width, stream, msg);
}

extern "C" conv_status conv1d_tiled_s3(const float *d_x, float *d_y, long long width,
                                       int mask_width, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = validate(CONV1D_S3, d_x, d_y, width, mask_width, msg);
    if (st != CONV_OK)
        return st;
    return launch(conv1d_tiled_s3_kernel, "conv1d_tiled_s3_kernel", CONV1D_TILE, CONV1D_THREADS, 0,
                  d_x, d_y, width, mask_width, stream, msg);
}

extern "C" conv_status conv1d_tiled(conv1d_strategy s, const float *d_x, float *d_y,
                                    long long width, int mask_width, cudaStream_t stream,
                                    conv_msg *msg)
{
    switch (s) {
    case CONV1D_NAIVE: return conv1d_naive(d_x, d_y, width, mask_width, stream, msg);
    case CONV1D_NAIVE_X4: return conv1d_naive_x4(d_x, d_y, width, mask_width, stream, msg);
    case CONV1D_S1: return conv1d_tiled_s1(d_x, d_y, width, mask_width, stream, msg);
    case CONV1D_S2: return conv1d_tiled_s2(d_x, d_y, width, mask_width, stream, msg);
    case CONV1D_S3: return conv1d_tiled_s3(d_x, d_y, width, mask_width, stream, msg);
    default: return conv_fail(msg, CONV_ERR_INVALID, "invalid strategy %d", (int)s);
    }
}
