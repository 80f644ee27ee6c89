/* Step 10: dgrad and wgrad on the GPU, one thread per gradient element.
 * Each thread gathers its element's whole sum, in float, as the CPU
 * references do in double (conv_backward_cpu.c): dgrad over the taps that
 * reach its input and every output channel, wgrad over the batch and every
 * output position. The index arithmetic is 64-bit wherever a tensor's size
 * may pass 2^31. Lesson: docs/10_backward.md, section "On the GPU: one thread
 * per gradient element". */
#include "conv_backward.h"

#include "conv_backward_shape.cuh"
#include "conv_cuda.h"
#include "conv_device.h"

/* The output position that reads input `in` through tap `tap`, or -1 (the
 * division is not exact, or the position lies outside [0, out_size)). */
__device__ __forceinline__ int output_of(int in, int tap, int pad, int stride, int dil,
                                         int out_size)
{
    const int num = in + pad - tap * dil;
    if (num < 0 || num % stride != 0)
        return -1;
    return num / stride < out_size ? num / stride : -1;
}

/* The indices (a, b, c, d) of the element at offset i of a tensor whose
 * dimensions, slowest first, are (-, d1, d2, d3). */
__device__ __forceinline__ void indices_of(long long i, int d1, int d2, int d3, int *a, int *b,
                                           int *c, int *d)
{
    *d = (int)(i % d3), i /= d3;
    *c = (int)(i % d2), i /= d2;
    *b = (int)(i % d1), *a = (int)(i / d1);
}

/* dgrad: thread i computes dx's element at memory offset i (consecutive
 * threads write consecutive addresses), then every later i of the grid. */
__global__ void conv2d_backward_data_naive_kernel(const float *__restrict__ dy,
                                                  const float *__restrict__ w,
                                                  float *__restrict__ dx, bwd_shape sh,
                                                  long long total)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        int n, c, ih, iw;
        if (sh.nhwc) /* dx[N][H][W][C] */
            indices_of(i, sh.h, sh.w, sh.c, &n, &ih, &iw, &c);
        else /* dx[N][C][H][W] */
            indices_of(i, sh.c, sh.h, sh.w, &n, &c, &ih, &iw);
        /* excerpt: dgrad naive */
        /* exercise 10-dgrad begin: the gather of one dx element over its taps and K */
        float acc = 0.0f;
        for (int r = 0; r < sh.r; ++r) {
            const int oh = output_of(ih, r, sh.pad_h, sh.stride_h, sh.dil_h, sh.p);
            if (oh < 0)
                continue; /* no output reads ih through this row of taps */
            for (int s = 0; s < sh.s; ++s) {
                const int ow = output_of(iw, s, sh.pad_w, sh.stride_w, sh.dil_w, sh.q);
                if (ow < 0)
                    continue;
                const float *dyp = dy + n * sh.ys[0] + oh * sh.ys[2] + ow * sh.ys[3];
                const float *wp = w + c * sh.ws[1] + r * sh.ws[2] + s * sh.ws[3];
                for (int k = 0; k < sh.k; ++k)
                    acc += dyp[k * sh.ys[1]] * wp[k * sh.ws[0]];
            }
        }
        dx[i] = acc;
        /* exercise 10-dgrad stub
        // TODO(exercise 10-dgrad): dx[i] = the sum over the taps (r, s) that reach (ih, iw)
        // (output_of() gives the output row or column that reads it, or -1) and over every
        // k of dy[n][k][oh][ow] * w[k][c][r][s], read through the strides sh.ys and sh.ws.
        // Graded by tests/test_10_backward.c (suite gpu_backward_data_naive).
        (void)n, (void)c, (void)ih, (void)iw, (void)dy, (void)w;
        dx[i] = 0.0f;
           exercise 10-dgrad end */
        /* excerpt end: dgrad naive */
    }
}

/* wgrad: thread i computes dw's element at memory offset i, a sum over the
 * whole batch and image (N*P*Q terms). */
__global__ void conv2d_backward_filter_naive_kernel(const float *__restrict__ x,
                                                    const float *__restrict__ dy,
                                                    float *__restrict__ dw, bwd_shape sh,
                                                    long long total)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        int k, c, r, s;
        if (sh.nhwc) /* dw[R][S][C][K] */
            indices_of(i, sh.s, sh.c, sh.k, &r, &s, &c, &k);
        else /* dw[K][C][R][S] */
            indices_of(i, sh.c, sh.r, sh.s, &k, &c, &r, &s);
        /* excerpt: wgrad naive */
        float acc = 0.0f;
        for (int n = 0; n < sh.n; ++n)
            for (int oh = 0; oh < sh.p; ++oh) {
                const int ih = oh * sh.stride_h - sh.pad_h + r * sh.dil_h;
                if (ih < 0 || ih >= sh.h)
                    continue;
                for (int ow = 0; ow < sh.q; ++ow) {
                    const int iw = ow * sh.stride_w - sh.pad_w + s * sh.dil_w;
                    if (iw >= 0 && iw < sh.w)
                        acc += x[n * sh.xs[0] + c * sh.xs[1] + ih * sh.xs[2] + iw * sh.xs[3]] *
                               dy[n * sh.ys[0] + k * sh.ys[1] + oh * sh.ys[2] + ow * sh.ys[3]];
                }
            }
        dw[i] = acc;
        /* excerpt end: wgrad naive */
    }
}

/* Blocks for total elements, one thread each, capped. */
static unsigned blocks_for(long long total, int max_blocks)
{
    long long cap = max_blocks > 0 ? max_blocks : CONV_BACKWARD_MAX_BLOCKS;
    long long blocks = (total + CONV_BACKWARD_THREADS - 1) / CONV_BACKWARD_THREADS;
    return (unsigned)(blocks < cap ? blocks : cap);
}

/* The two launchers' common body: their checks, then `kernel` over the
 * `elems(p)` elements of its gradient, and the launch's check as
 * CONV_CHECK_LAUNCH_OF makes it ("<name> launch failed at ..."). Both kernels
 * read (a, b) and write out. */
static conv_status
launch_naive(void (*kernel)(const float *, const float *, float *, bwd_shape, long long),
             const char *name, size_t (*elems)(const conv_params *), const conv_params *p,
             const float *a, const char *a_name, const float *b, const char *b_name, float *out,
             const char *out_name, int max_blocks, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = bwd_validate(p, a, a_name, b, b_name, out, out_name, msg);
    if (st != CONV_OK)
        return st;
    st = conv_kernel_fits((const void *)kernel, name, CONV_BACKWARD_THREADS, 0, msg);
    if (st != CONV_OK)
        return st;
    const long long total = (long long)elems(p);
    kernel<<<blocks_for(total, max_blocks), CONV_BACKWARD_THREADS, 0, stream>>>(
        a, b, out, make_shape(p), total);
    CONV_CHECK_LAUNCH_OF(name, msg);
    return CONV_OK;
}

extern "C" conv_status conv2d_backward_data_naive(const conv_params *p, const float *d_dy,
                                                  const float *d_w, float *d_dx, int max_blocks,
                                                  cudaStream_t stream, conv_msg *msg)
{
    return launch_naive(conv2d_backward_data_naive_kernel, "conv2d_backward_data_naive_kernel",
                        conv_input_elems, p, d_dy, "d_dy", d_w, "d_w", d_dx, "d_dx", max_blocks,
                        stream, msg);
}

extern "C" conv_status conv2d_backward_filter_naive(const conv_params *p, const float *d_x,
                                                    const float *d_dy, float *d_dw, int max_blocks,
                                                    cudaStream_t stream, conv_msg *msg)
{
    return launch_naive(conv2d_backward_filter_naive_kernel, "conv2d_backward_filter_naive_kernel",
                        conv_filter_elems, p, d_x, "d_x", d_dy, "d_dy", d_dw, "d_dw", max_blocks,
                        stream, msg);
}
