/* Step 04: tiled 2D convolution with halos. The three tiling strategies of
 * ECE408 lecture 8 in 2D for one channel, and their multi-channel extension:
 * the kernels and their launchers. Versions: 4a, 4b, 4c (strategies 1, 2, 3)
 * and 4d (multi-channel). See conv_tiled_2d.h for the API,
 * conv_tiled_2d_configs.c for the tile configurations and the checks of a
 * problem, and docs/04_tiled_2d.md for the index math and the measurements.
 *
 * Notation of every kernel (NCHW, stride 1, dilation 1):
 *   y[n][k][p][q] = sum_{c,r,s} x[n][c][p - pad_h + r][q - pad_w + s] * w[k][c][r][s]
 * An output tile starts at (p0, q0); the input it needs starts at
 * (p0 - pad_h, q0 - pad_w) and is TILE_H + R - 1 rows by TILE_W + S - 1
 * columns: the tile plus its halo. Inputs outside the image read as 0.
 *
 * Large batches: gridDim.z is at most 65535, so every kernel loops over its
 * z index (image, or image and output-channel group) with stride gridDim.z. */
#include <pthread.h>
#include <stddef.h>

#include <cuda_runtime.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "conv_tiled_2d.h"

/* The weights of the constant-memory paths (64 KiB, all of constant memory
 * a module may declare). Every warp reads the same weight at the same time,
 * which the constant cache serves as one broadcast. */
__constant__ float c_weights[CONV_TILED_CONST_FLOATS];

#define MAX_GRID_Z 65535

/* Zero outside the image: the halo of the border tiles. */
__device__ __forceinline__ float load_or_zero(const float *__restrict__ img, int H, int W, int row,
                                              int col)
{
    return (row >= 0 && row < H && col >= 0 && col < W) ? img[(size_t)row * W + col] : 0.0f;
}

/* ---------------------------------------------------------------------------
 * 4b, strategy 2: the block covers the INPUT tile, TILE + S - 1 by TILE + R - 1
 * threads. Each thread loads exactly one input element (one step, no loop),
 * then only the TILE x TILE threads of the top-left corner compute an output.
 * Why faster than the baseline: each input element is read from global memory
 * once per block instead of R*S times. What limits it: for a 13x13 mask and
 * TILE = 16 only 256 of 784 threads compute; every multiply-add still needs a
 * shared-memory load. */
template <int TILE>
__global__ void conv2d_tiled_s2_kernel(const float *__restrict__ x, float *__restrict__ y, int N,
                                       int H, int W, int R, int S, int pad_h, int pad_w, int P,
                                       int Q)
{
    /* excerpt: s2-body */
    extern __shared__ float tile[]; /* (TILE + R - 1) x (TILE + S - 1), pitch blockDim.x */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int in_w = blockDim.x;
    /* exercise 04-s2 begin: strategy 2 in 2D, the block is the input tile */
    const int row_o = blockIdx.y * TILE + ty, col_o = blockIdx.x * TILE + tx;
    const int row_i = row_o - pad_h, col_i = col_o - pad_w;
    for (int n = blockIdx.z; n < N; n += gridDim.z) {
        const float *img = x + (size_t)n * H * W;
        tile[ty * in_w + tx] = load_or_zero(img, H, W, row_i, col_i);
        __syncthreads();
        if (ty < TILE && tx < TILE && row_o < P && col_o < Q) {
            float acc = 0.0f;
            for (int r = 0; r < R; ++r)
                for (int s = 0; s < S; ++s)
                    acc += c_weights[r * S + s] * tile[(ty + r) * in_w + tx + s];
            y[(size_t)n * P * Q + (size_t)row_o * Q + col_o] = acc;
        }
        __syncthreads(); /* the tile is overwritten by the next image */
    }
    /* exercise 04-s2 stub
    // TODO(exercise 04-s2): thread (tx, ty) loads input element (row_i, col_i) of the
    // input tile (load_or_zero), the output (row_o, col_o) = the block's output tile
    // origin + (ty, tx), input = output - padding; after a barrier the TILE x TILE
    // threads of the top-left corner with an output inside P x Q sum c_weights[r * S + s]
    // times the tile, and store y; a second barrier before the next image (loop n from
    // blockIdx.z in steps of gridDim.z). Graded by tests/test_04_tiled_2d.c
    // (suite gpu_conv2d_tiled_s2).
    (void)tile, (void)tx, (void)ty, (void)in_w;
       exercise 04-s2 end */
    /* excerpt end: s2-body */
}

/* Step r of strategy 1's sliding window (j = r mod ROWS, a compile-time
 * constant once the caller's loop is unrolled): load the one new tile row
 * r + ROWS - 1 into the register that held row r - 1, then add row r + v
 * times M[r][s] to output v. The window is a ring of registers whose slots
 * are all fixed at compile time, so sliding it costs no moves. */
/* excerpt: s1-window-step */
template <int ROWS>
__device__ __forceinline__ void s1_window_step(float (&acc)[ROWS], float (&buf)[ROWS],
                                               const float *col, int in_w, int S, int s, int r,
                                               int j)
{
    /* exercise 04-rows begin: one step of the ROWS register window */
    buf[(j + ROWS - 1) % ROWS] = col[(r + ROWS - 1) * in_w];
    const float m = c_weights[r * S + s]; /* the same for the whole warp: a broadcast */
#pragma unroll
    for (int v = 0; v < ROWS; ++v)
        acc[v] += buf[(j + v) % ROWS] * m;
    /* exercise 04-rows stub
    // TODO(exercise 04-rows): the window holds tile rows r-1 .. r+ROWS-2 of this column
    // (tile row i in buf[i % ROWS]); load row r + ROWS - 1 (col[(r + ROWS - 1) * in_w]) into
    // the slot of row r - 1, then add the window's row r + v times M[r][s] (c_weights) to
    // acc[v] for every v. Every index must be a compile-time constant once the caller's
    // loops are unrolled (j = r mod ROWS). Graded by tests/test_04_tiled_2d.c
    // (suite gpu_conv2d_tiled_s1).
       exercise 04-rows end */
}
/* excerpt end: s1-window-step */

/* ---------------------------------------------------------------------------
 * 4a, strategy 1: the block covers the OUTPUT tile, TILE_W x TILE_H outputs with
 * TILE_W x (TILE_H / ROWS) threads; the larger input tile is loaded in a loop of
 * block-sized steps. ROWS = 1 is the lecture's kernel: one shared load per
 * multiply-add, at most a quarter of the FP32 peak. With ROWS > 1 a thread
 * computes ROWS outputs of one column from a ring of ROWS registers
 * (s1_window_step): one shared load per step feeds ROWS multiply-adds.
 * Measured on an H100 (2000x2000, 13x13): ROWS = 4 and 16 are the fast
 * configurations, well ahead of cuDNN. Lesson: docs/04_tiled_2d.md, section
 * "Shared memory bandwidth, and why strategy 1 computes several outputs per
 * thread"; a window slid by copying registers, and ROWS = 8, in "Going
 * further (optional)". */
/* On sm_120 ptxas, left without a blocks-per-SM hint, held the ROWS = 16
 * version to 72 registers and spilled 12 bytes; the hint "1 block" lifts that
 * limit there. Elsewhere the kernel compiles without the hint, as measured. */
#if __CUDA_ARCH__ >= 1200
#define S1_LAUNCH_BOUNDS(threads) __launch_bounds__(threads, 1)
#else
#define S1_LAUNCH_BOUNDS(threads) __launch_bounds__(threads)
#endif

template <int TILE_W, int TILE_H, int ROWS>
__global__ void S1_LAUNCH_BOUNDS(TILE_W *(TILE_H / ROWS))
    conv2d_tiled_s1_kernel(const float *__restrict__ x, float *__restrict__ y, int N, int H, int W,
                           int R, int S, int pad_h, int pad_w, int P, int Q)
{
    /* excerpt: s1-indices */
    constexpr int BLOCK_Y = TILE_H / ROWS;
    extern __shared__ float tile[]; /* (TILE_H + R - 1) x (TILE_W + S - 1) */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int in_h = TILE_H + R - 1, in_w = TILE_W + S - 1;
    const int p0 = blockIdx.y * TILE_H, q0 = blockIdx.x * TILE_W;
    const int base = ty * ROWS; /* first tile row of this thread's outputs */
    /* excerpt end: s1-indices */
    for (int n = blockIdx.z; n < N; n += gridDim.z) {
        const float *img = x + (size_t)n * H * W;
        /* excerpt: s1-load */
        /* The multi-step load: the block walks over the input tile. */
        for (int ir = ty; ir < in_h; ir += BLOCK_Y)
            for (int ic = tx; ic < in_w; ic += TILE_W)
                tile[ir * in_w + ic] = load_or_zero(img, H, W, p0 - pad_h + ir, q0 - pad_w + ic);
        __syncthreads();
        /* excerpt end: s1-load */

        float acc[ROWS];
#pragma unroll
        for (int v = 0; v < ROWS; ++v)
            acc[v] = 0.0f;
        /* excerpt: s1-ring */
        for (int s = 0; s < S; ++s) {
            const float *col = tile + base * in_w + tx + s; /* tile[base][tx + s] */
            float buf[ROWS]; /* the window: tile row base + i lives in buf[i % ROWS] */
#pragma unroll
            for (int v = 0; v < ROWS - 1; ++v)
                buf[v] = col[v * in_w];
            int r0 = 0;
#pragma unroll(ROWS == 1 ? 4 : 1)
            for (; r0 + ROWS <= R; r0 += ROWS)
#pragma unroll
                for (int j = 0; j < ROWS; ++j)
                    s1_window_step<ROWS>(acc, buf, col, in_w, S, s, r0 + j, j);
#pragma unroll
            for (int j = 0; j < ROWS - 1; ++j) /* the last R % ROWS steps */
                if (r0 + j < R)
                    s1_window_step<ROWS>(acc, buf, col, in_w, S, s, r0 + j, j);
        }
        /* excerpt end: s1-ring */
        const int q = q0 + tx;
#pragma unroll
        for (int v = 0; v < ROWS; ++v) {
            const int p = p0 + base + v;
            if (p < P && q < Q)
                y[(size_t)n * P * Q + (size_t)p * Q + q] = acc[v];
        }
        __syncthreads(); /* the tile is overwritten by the next image */
    }
}

/* ---------------------------------------------------------------------------
 * 4c, strategy 3: the block covers the output tile and loads only the CORE: the
 * input elements at the output tile's own coordinates, one per thread, in one
 * step. Halo elements (other tiles' cores, or the padding) come from global
 * memory, where the neighbouring blocks' loads have usually brought them into
 * L1/L2. Why it can pay: less shared memory, no halo loading code. What
 * limits it: the in-core test runs for every multiply-add and the warps
 * diverge at the tile edges; the halo loads wait on the cache. */
template <int TILE_W, int TILE_H>
__global__ void __launch_bounds__(TILE_W *TILE_H)
    conv2d_tiled_s3_kernel(const float *__restrict__ x, float *__restrict__ y, int N, int H, int W,
                           int R, int S, int pad_h, int pad_w, int P, int Q)
{
    __shared__ float core[TILE_H][TILE_W];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int p0 = blockIdx.y * TILE_H, q0 = blockIdx.x * TILE_W;
    const int row_o = p0 + ty, col_o = q0 + tx;
    for (int n = blockIdx.z; n < N; n += gridDim.z) {
        const float *img = x + (size_t)n * H * W;
        core[ty][tx] = load_or_zero(img, H, W, row_o, col_o);
        __syncthreads();
        if (row_o < P && col_o < Q) {
            /* excerpt: s3-core-or-halo */
            float acc = 0.0f;
            for (int r = 0; r < R; ++r) {
                const int ir = row_o - pad_h + r;
                if (ir < 0 || ir >= H)
                    continue; /* zero padding contributes nothing */
                const bool row_in_core = ir >= p0 && ir < p0 + TILE_H;
                for (int s = 0; s < S; ++s) {
                    const int ic = col_o - pad_w + s;
                    if (ic < 0 || ic >= W)
                        continue;
                    const float v = (row_in_core && ic >= q0 && ic < q0 + TILE_W)
                                        ? core[ir - p0][ic - q0]
                                        : __ldg(&img[(size_t)ir * W + ic]);
                    acc += v * c_weights[r * S + s];
                }
            }
            /* excerpt end: s3-core-or-halo */
            y[(size_t)n * P * Q + (size_t)row_o * Q + col_o] = acc;
        }
        __syncthreads(); /* the core is overwritten by the next image */
    }
}

/* ---------------------------------------------------------------------------
 * 4d, multi-channel: strategy 1 per input channel. A block computes a TILE_W x
 * TILE_H tile of output pixels for KB output channels of one image; a thread
 * computes one pixel for the KB channels. Input channels are looped: the
 * block loads channel c's input tile (with halo) into shared memory, every
 * thread adds that channel's R x S window times the KB filters, and the next
 * channel's tile replaces it. Each value read from shared memory feeds KB
 * multiply-adds (the reuse across output channels the single-channel kernels
 * cannot have), and each input tile is loaded once per group of KB outputs.
 * W_CONST picks where the weights live at compile time (like the tile, so the
 * inner loop has no branch): constant memory (one broadcast per warp through
 * the constant cache), or global memory through the read-only data cache when
 * K*C*R*S exceeds CONV_TILED_CONST_FLOATS. */
template <int TILE_W, int TILE_H, int KB, bool W_CONST>
__global__ void __launch_bounds__(TILE_W *TILE_H)
    conv2d_tiled_mc_kernel(const float *__restrict__ x, const float *__restrict__ w,
                           float *__restrict__ y, int N, int C, int H, int W, int K, int R, int S,
                           int pad_h, int pad_w, int P, int Q)
{
    extern __shared__ float tile[]; /* (TILE_H + R - 1) x (TILE_W + S - 1) */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int in_h = TILE_H + R - 1, in_w = TILE_W + S - 1;
    const int p0 = blockIdx.y * TILE_H, q0 = blockIdx.x * TILE_W;
    const int groups = (K + KB - 1) / KB;
    const int RS = R * S, CRS = C * R * S;
    for (int z = blockIdx.z; z < N * groups; z += gridDim.z) {
        const int n = z / groups, k0 = (z - n * groups) * KB;
        const int kcount = min(KB, K - k0);
        float acc[KB];
#pragma unroll
        for (int kk = 0; kk < KB; ++kk)
            acc[kk] = 0.0f;
        /* excerpt: mc-channel-loop */
        for (int c = 0; c < C; ++c) {
            const float *img = x + ((size_t)n * C + c) * H * W;
            for (int ir = ty; ir < in_h; ir += TILE_H)
                for (int ic = tx; ic < in_w; ic += TILE_W)
                    tile[ir * in_w + ic] =
                        load_or_zero(img, H, W, p0 - pad_h + ir, q0 - pad_w + ic);
            __syncthreads();
            /* exercise 04-mc begin: one channel's window times KB filters, KB accumulators */
            const int wbase = k0 * CRS + c * RS;
            for (int r = 0; r < R; ++r) {
                const float *trow = tile + (ty + r) * in_w + tx;
                for (int s = 0; s < S; ++s) {
                    const float v = trow[s];
                    const int wi = wbase + r * S + s;
#pragma unroll
                    for (int kk = 0; kk < KB; ++kk) {
                        if (kk < kcount) {
                            const float wv =
                                W_CONST ? c_weights[wi + kk * CRS] : __ldg(&w[wi + kk * CRS]);
                            acc[kk] += v * wv;
                        }
                    }
                }
            }
            /* exercise 04-mc stub
            // TODO(exercise 04-mc): add channel c's R x S window of the tile (the window of
            // output (ty, tx) starts at tile[ty * in_w + tx]) times the weights of output
            // channels k0 .. k0 + kcount - 1 to acc[0 .. kcount): each value read from the
            // tile feeds KB multiply-adds. Weight (k, c, r, s) is at (k*C + c)*R*S + r*S + s,
            // in c_weights when W_CONST, else w (__ldg). Graded by
            // tests/test_04_tiled_2d.c (suite gpu_conv2d_tiled_mc).
            (void)RS, (void)CRS;
               exercise 04-mc end */
            __syncthreads(); /* the tile is overwritten by the next channel */
        }
        /* excerpt end: mc-channel-loop */
        const int p = p0 + ty, q = q0 + tx;
        if (p < P && q < Q) {
#pragma unroll
            for (int kk = 0; kk < KB; ++kk)
                if (kk < kcount)
                    y[((size_t)n * K + k0 + kk) * P * Q + (size_t)p * Q + q] = acc[kk];
        }
    }
}

/* ---------------------------------------------------------------------------
 * Host side: the launchers. For each strategy: the launch of one compile-time
 * configuration, the choice among its instantiations (one per configuration,
 * in the order of conv_tiled_2d_configs.c, which also holds the checks of a
 * problem), and the strategy's launcher. */

/* Everything a launcher checks before any CUDA call. */
static conv_status validate(const conv_tiled_choice *choice, const conv_params *p, const float *d_x,
                            const float *d_w, const float *d_y, conv_msg *msg)
{
    conv_status st = conv_check_pointers(d_x, "d_x", d_w, "d_w", d_y, "d_y", msg);
    return st != CONV_OK ? st : conv2d_tiled_check(choice, p, msg);
}

/* Copies `count` weights from device memory to c_weights, on the stream. */
static conv_status upload_weights(const float *d_w, size_t count, cudaStream_t stream,
                                  conv_msg *msg)
{
    CONV_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_weights, d_w, count * sizeof(float), 0,
                                            cudaMemcpyDeviceToDevice, stream),
                    msg);
    return CONV_OK;
}

static dim3 grid_for(const conv_params *p, int tile_w, int tile_h, long long z)
{
    const int P = conv_out_h(p), Q = conv_out_w(p);
    return dim3((unsigned)((Q + tile_w - 1) / tile_w), (unsigned)((P + tile_h - 1) / tile_h),
                (unsigned)(z < MAX_GRID_Z ? z : MAX_GRID_Z));
}

/* What the launch of one configuration needs. */
typedef struct {
    const conv_params *p;
    const float *d_x, *d_w;
    float *d_y;
    int w_const; /* multi-channel: the weights are in c_weights */
    cudaStream_t stream;
} launch_args;

/* A strategy's launch of one of its configurations. */
typedef conv_status (*config_launch)(const launch_args *a, int config, conv_msg *msg);

/* c_weights is one bank per device, shared by every stream: a launch that
 * reads it must end before a call on another stream overwrites it. So the
 * calls take turns: each makes its stream wait for the event recorded after
 * the previous call's launch, then records the event after its own, under
 * a lock for calls from several host threads. */
#define BANK_MAX_DEVICES 64
static pthread_mutex_t bank_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaEvent_t bank_done[BANK_MAX_DEVICES]; /* NULL until the device's first call */

static conv_status wait_for_bank(int device, cudaStream_t stream, conv_msg *msg)
{
    if (device < 0 || device >= BANK_MAX_DEVICES)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "device %d: step 04 counts at most %d devices",
                         device, BANK_MAX_DEVICES);
    if (bank_done[device] == NULL)
        CONV_CUDA_CHECK(cudaEventCreateWithFlags(&bank_done[device], cudaEventDisableTiming), msg);
    else
        CONV_CUDA_CHECK(cudaStreamWaitEvent(stream, bank_done[device], 0), msg);
    return CONV_OK;
}

/* Uploads `count` weights and launches, the bank's turn taken. */
static conv_status launch_with_bank(const launch_args *a, config_launch launch, int config,
                                    size_t count, conv_msg *msg)
{
    const int device = conv_current_device();
    pthread_mutex_lock(&bank_lock);
    conv_status st = wait_for_bank(device, a->stream, msg);
    if (st == CONV_OK)
        st = upload_weights(a->d_w, count, a->stream, msg);
    if (st == CONV_OK)
        st = launch(a, config, msg);
    if (st == CONV_OK && cudaEventRecord(bank_done[device], a->stream) != cudaSuccess)
        st = conv_cuda_fail(msg, cudaGetLastError(), "cudaEventRecord", __FILE__, __LINE__);
    pthread_mutex_unlock(&bank_lock);
    return st;
}

/* Every launcher: validates everything, copies the weights to constant memory
 * where its kernel reads them from there (on the stream, device to device),
 * then launches the instantiation of its configuration, which checks the
 * launch. */
static conv_status run(const conv_tiled_choice *choice, config_launch launch, const conv_params *p,
                       const float *d_x, const float *d_w, float *d_y, cudaStream_t stream,
                       conv_msg *msg)
{
    conv_status status = validate(choice, p, d_x, d_w, d_y, msg);
    if (status != CONV_OK)
        return status;
    launch_args a = {p, d_x, d_w, d_y, 0, stream};
    if (choice->strategy != CONV_TILED_MC)
        return launch_with_bank(&a, launch, choice->config, (size_t)p->r * p->s, msg);
    if ((a.w_const = conv2d_tiled_mc_weights_in_constant(p, choice->weights)))
        return launch_with_bank(&a, launch, choice->config, conv_filter_elems(p), msg);
    return launch(&a, choice->config, msg);
}

#define KERNEL_ARGS_SINGLE                                                                         \
    a->d_x, a->d_y, p->n, p->h, p->w, p->r, p->s, p->pad_h, p->pad_w, conv_out_h(p), conv_out_w(p)

template <int TILE_W, int TILE_H, int ROWS>
static conv_status launch_s1(const launch_args *a, conv_msg *msg)
{
    const conv_params *p = a->p;
    const dim3 block(TILE_W, TILE_H / ROWS);
    const size_t smem = sizeof(float) * (TILE_H + p->r - 1) * (TILE_W + p->s - 1);
    conv_status st =
        conv_kernel_fits((const void *)conv2d_tiled_s1_kernel<TILE_W, TILE_H, ROWS>,
                         "conv2d_tiled_s1_kernel", (int)(block.x * block.y), smem, msg);
    if (st != CONV_OK)
        return st;
    conv2d_tiled_s1_kernel<TILE_W, TILE_H, ROWS>
        <<<grid_for(p, TILE_W, TILE_H, p->n), block, smem, a->stream>>>(KERNEL_ARGS_SINGLE);
    CONV_CHECK_LAUNCH("conv2d_tiled_s1_kernel", msg);
    return CONV_OK;
}

/* Strategy 1's configurations, in the order of conv_tiled_2d_configs.c. */
static conv_status launch_s1_config(const launch_args *a, int config, conv_msg *msg)
{
    switch (config) {
    case 0: return launch_s1<16, 16, 1>(a, msg);
    case 1: return launch_s1<32, 32, 4>(a, msg);
    case 2: return launch_s1<32, 64, 8>(a, msg);
    default: return launch_s1<32, 64, 16>(a, msg);
    }
}

extern "C" conv_status conv2d_tiled_s1(const conv_params *p, int config, const float *d_x,
                                       const float *d_w, float *d_y, cudaStream_t stream,
                                       conv_msg *msg)
{
    const conv_tiled_choice choice = {CONV_TILED_S1, config, CONV_TILED_WEIGHTS_AUTO};
    return run(&choice, launch_s1_config, p, d_x, d_w, d_y, stream, msg);
}

template <int TILE> static conv_status launch_s2(const launch_args *a, conv_msg *msg)
{
    const conv_params *p = a->p;
    const dim3 block(TILE + p->s - 1, TILE + p->r - 1);
    const size_t smem = sizeof(float) * block.x * block.y;
    conv_status st =
        conv_kernel_fits((const void *)conv2d_tiled_s2_kernel<TILE>, "conv2d_tiled_s2_kernel",
                         (int)(block.x * block.y), smem, msg);
    if (st != CONV_OK)
        return st;
    conv2d_tiled_s2_kernel<TILE>
        <<<grid_for(p, TILE, TILE, p->n), block, smem, a->stream>>>(KERNEL_ARGS_SINGLE);
    CONV_CHECK_LAUNCH("conv2d_tiled_s2_kernel", msg);
    return CONV_OK;
}

static conv_status launch_s2_config(const launch_args *a, int config, conv_msg *msg)
{
    return config == 0 ? launch_s2<8>(a, msg) : launch_s2<16>(a, msg);
}

extern "C" conv_status conv2d_tiled_s2(const conv_params *p, int config, const float *d_x,
                                       const float *d_w, float *d_y, cudaStream_t stream,
                                       conv_msg *msg)
{
    const conv_tiled_choice choice = {CONV_TILED_S2, config, CONV_TILED_WEIGHTS_AUTO};
    return run(&choice, launch_s2_config, p, d_x, d_w, d_y, stream, msg);
}

template <int TILE_W, int TILE_H> static conv_status launch_s3(const launch_args *a, conv_msg *msg)
{
    const conv_params *p = a->p;
    conv_status st = conv_kernel_fits((const void *)conv2d_tiled_s3_kernel<TILE_W, TILE_H>,
                                      "conv2d_tiled_s3_kernel", TILE_W * TILE_H, 0, msg);
    if (st != CONV_OK)
        return st;
    conv2d_tiled_s3_kernel<TILE_W, TILE_H>
        <<<grid_for(p, TILE_W, TILE_H, p->n), dim3(TILE_W, TILE_H), 0, a->stream>>>(
            KERNEL_ARGS_SINGLE);
    CONV_CHECK_LAUNCH("conv2d_tiled_s3_kernel", msg);
    return CONV_OK;
}

static conv_status launch_s3_config(const launch_args *a, int config, conv_msg *msg)
{
    return config == 0 ? launch_s3<16, 16>(a, msg) : launch_s3<32, 8>(a, msg);
}

extern "C" conv_status conv2d_tiled_s3(const conv_params *p, int config, const float *d_x,
                                       const float *d_w, float *d_y, cudaStream_t stream,
                                       conv_msg *msg)
{
    const conv_tiled_choice choice = {CONV_TILED_S3, config, CONV_TILED_WEIGHTS_AUTO};
    return run(&choice, launch_s3_config, p, d_x, d_w, d_y, stream, msg);
}

template <int TILE_W, int TILE_H, int KB>
static conv_status launch_mc(const launch_args *a, conv_msg *msg)
{
    const conv_params *p = a->p;
    const long long z = (long long)p->n * ((p->k + KB - 1) / KB);
    const dim3 grid = grid_for(p, TILE_W, TILE_H, z), block(TILE_W, TILE_H);
    const size_t smem = sizeof(float) * (TILE_H + p->r - 1) * (TILE_W + p->s - 1);
    const int P = conv_out_h(p), Q = conv_out_w(p);
    const void *kernel = a->w_const
                             ? (const void *)conv2d_tiled_mc_kernel<TILE_W, TILE_H, KB, true>
                             : (const void *)conv2d_tiled_mc_kernel<TILE_W, TILE_H, KB, false>;
    conv_status st = conv_kernel_fits(kernel, "conv2d_tiled_mc_kernel", TILE_W * TILE_H, smem, msg);
    if (st != CONV_OK)
        return st;
    if (a->w_const)
        conv2d_tiled_mc_kernel<TILE_W, TILE_H, KB, true>
            <<<grid, block, smem, a->stream>>>(a->d_x, a->d_w, a->d_y, p->n, p->c, p->h, p->w, p->k,
                                               p->r, p->s, p->pad_h, p->pad_w, P, Q);
    else
        conv2d_tiled_mc_kernel<TILE_W, TILE_H, KB, false>
            <<<grid, block, smem, a->stream>>>(a->d_x, a->d_w, a->d_y, p->n, p->c, p->h, p->w, p->k,
                                               p->r, p->s, p->pad_h, p->pad_w, P, Q);
    CONV_CHECK_LAUNCH("conv2d_tiled_mc_kernel", msg);
    return CONV_OK;
}

static conv_status launch_mc_config(const launch_args *a, int config, conv_msg *msg)
{
    return config == 0 ? launch_mc<32, 8, 4>(a, msg) : launch_mc<32, 8, 8>(a, msg);
}

extern "C" conv_status conv2d_tiled_mc(const conv_params *p, int config, conv_tiled_weights weights,
                                       const float *d_x, const float *d_w, float *d_y,
                                       cudaStream_t stream, conv_msg *msg)
{
    const conv_tiled_choice choice = {CONV_TILED_MC, config, weights};
    return run(&choice, launch_mc_config, p, d_x, d_w, d_y, stream, msg);
}

extern "C" conv_status conv2d_tiled(const conv_tiled_choice *choice, const conv_params *p,
                                    const float *d_x, const float *d_w, float *d_y,
                                    cudaStream_t stream, conv_msg *msg)
{
    if (choice == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "choice is NULL");
    switch (choice->strategy) {
    case CONV_TILED_S1: return conv2d_tiled_s1(p, choice->config, d_x, d_w, d_y, stream, msg);
    case CONV_TILED_S2: return conv2d_tiled_s2(p, choice->config, d_x, d_w, d_y, stream, msg);
    case CONV_TILED_S3: return conv2d_tiled_s3(p, choice->config, d_x, d_w, d_y, stream, msg);
    case CONV_TILED_MC:
        return conv2d_tiled_mc(p, choice->config, choice->weights, d_x, d_w, d_y, stream, msg);
    }
    return validate(choice, p, d_x, d_w, d_y, msg); /* the unknown-strategy message */
}
