/* Step 10: dgrad and wgrad on the GPU, one thread per gradient element.
 * Each thread gathers its element's whole sum, in float, as the CPU
 * references do in double (conv_backward_cpu.c): dgrad over the taps that
 * reach its input and every output channel, wgrad over the batch and every
 * output position. The index arithmetic is 64-bit wherever a tensor's size
 * may pass 2^31. Lesson: docs/10_backward.md, section "On the GPU: one thread
 * per gradient element". */
#include "conv_backward.h"

#include <limits.h>

#include "conv_cuda.h"
#include "conv_device.h"

/* The problem as the kernels read it, by value. Each tensor's four strides
 * are those of its indices in the order (n, c, h, w) for x and dx,
 * (k, c, r, s) for w and dw and (n, k, oh, ow) for dy: whatever the layout,
 * element (a, b, c, d) lives at a*s[0] + b*s[1] + c*s[2] + d*s[3]. */
typedef struct {
    int n, c, h, w, k, r, s, p, q;
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
    long long xs[4], ws[4], ys[4];
    int nhwc; /* the order of the elements in memory: 0 NCHW/KCRS, 1 NHWC/RSCK */
} bwd_shape;

/* An offset function of conv_params.h is linear in the indices, so the
 * offset of each unit index is that index's stride. */
static void strides_of(size_t (*offset)(const conv_params *, int, int, int, int),
                       const conv_params *p, long long st[4])
{
    st[0] = (long long)offset(p, 1, 0, 0, 0);
    st[1] = (long long)offset(p, 0, 1, 0, 0);
    st[2] = (long long)offset(p, 0, 0, 1, 0);
    st[3] = (long long)offset(p, 0, 0, 0, 1);
}

static bwd_shape make_shape(const conv_params *p)
{
    bwd_shape sh;
    sh.n = p->n, sh.c = p->c, sh.h = p->h, sh.w = p->w, sh.k = p->k, sh.r = p->r, sh.s = p->s;
    sh.p = conv_out_h(p), sh.q = conv_out_w(p);
    sh.pad_h = p->pad_h, sh.pad_w = p->pad_w, sh.stride_h = p->stride_h, sh.stride_w = p->stride_w;
    sh.dil_h = p->dil_h, sh.dil_w = p->dil_w;
    strides_of(conv_input_offset, p, sh.xs);
    strides_of(conv_filter_offset, p, sh.ws);
    strides_of(conv_output_offset, p, sh.ys);
    sh.nhwc = p->layout == CONV_LAYOUT_NHWC;
    return sh;
}

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

/* Everything both launchers check before touching the device: the pointers,
 * the problem, and window coordinates that fit an int. */
static conv_status validate(const conv_params *p, const float *a, const char *a_name,
                            const float *b, const char *b_name, const float *out,
                            const char *out_name, conv_msg *msg)
{
    conv_status st = conv_check_pointers(a, a_name, b, b_name, out, out_name, msg);
    if (st == CONV_OK)
        st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    if ((long long)p->h + 2LL * p->pad_h + (long long)p->dil_h * p->r > INT_MAX ||
        (long long)p->w + 2LL * p->pad_w + (long long)p->dil_w * p->s > INT_MAX)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "unsupported image (--h, --w, --pad, --dilation): a window coordinate "
                         "exceeds 2^31-1");
    return CONV_OK;
}

/* Blocks for total elements, one thread each, capped. */
static unsigned blocks_for(long long total, int max_blocks)
{
    long long cap = max_blocks > 0 ? max_blocks : CONV_BACKWARD_MAX_BLOCKS;
    long long blocks = (total + CONV_BACKWARD_THREADS - 1) / CONV_BACKWARD_THREADS;
    return (unsigned)(blocks < cap ? blocks : cap);
}

extern "C" conv_status conv2d_backward_data_naive(const conv_params *p, const float *d_dy,
                                                  const float *d_w, float *d_dx, int max_blocks,
                                                  cudaStream_t stream, conv_msg *msg)
{
    conv_status st = validate(p, d_dy, "d_dy", d_w, "d_w", d_dx, "d_dx", msg);
    if (st != CONV_OK)
        return st;
    st = conv_kernel_fits((const void *)conv2d_backward_data_naive_kernel,
                          "conv2d_backward_data_naive_kernel", CONV_BACKWARD_THREADS, 0, msg);
    if (st != CONV_OK)
        return st;
    const long long total = (long long)conv_input_elems(p);
    conv2d_backward_data_naive_kernel<<<blocks_for(total, max_blocks), CONV_BACKWARD_THREADS, 0,
                                        stream>>>(d_dy, d_w, d_dx, make_shape(p), total);
    CONV_CHECK_LAUNCH("conv2d_backward_data_naive_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status conv2d_backward_filter_naive(const conv_params *p, const float *d_x,
                                                    const float *d_dy, float *d_dw, int max_blocks,
                                                    cudaStream_t stream, conv_msg *msg)
{
    conv_status st = validate(p, d_x, "d_x", d_dy, "d_dy", d_dw, "d_dw", msg);
    if (st != CONV_OK)
        return st;
    st = conv_kernel_fits((const void *)conv2d_backward_filter_naive_kernel,
                          "conv2d_backward_filter_naive_kernel", CONV_BACKWARD_THREADS, 0, msg);
    if (st != CONV_OK)
        return st;
    const long long total = (long long)conv_filter_elems(p);
    conv2d_backward_filter_naive_kernel<<<blocks_for(total, max_blocks), CONV_BACKWARD_THREADS, 0,
                                          stream>>>(d_x, d_dy, d_dw, make_shape(p), total);
    CONV_CHECK_LAUNCH("conv2d_backward_filter_naive_kernel", msg);
    return CONV_OK;
}
