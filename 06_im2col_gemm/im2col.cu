/* Step 06: im2col and col2im for both layouts (the column layouts are in
 * im2col.h). Every kernel is a grid-stride loop over a 64-bit index with 32-bit
 * division where it fits (grid_stride.cuh says why).
 *
 * Launch (all four kernels): blocks of GS_THREADS = 256 threads, grid_for(n) =
 * min(ceil(n / 256), 65536) blocks for n items (grid_stride.cuh); the items
 * are (channel, output pixel) pairs for NCHW im2col, (output pixel, group of
 * V channels) for NHWC im2col, and the elements of x for col2im. */
#include "im2col.h"

#include <stdint.h>

#include "conv_cuda.h"
#include "grid_stride.cuh"

/* NCHW im2col (MXNet's im2col_gpu_kernel, with a batch): one thread per
 * (c, n, p, q) writes the R*S entries of that output pixel's window over
 * channel c, col[(c*R + r)*S + s][(n*P + p)*Q + q]. Consecutive threads take
 * consecutive q: both the reads of x and the writes of col are coalesced. */
__global__ void im2col_nchw_kernel(geom g, const float *__restrict__ x, float *__restrict__ col)
{
    size_t npq = (size_t)g.n * g.p * g.q, total = (size_t)g.c * npq;
    size_t pq = (size_t)g.p * g.q;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t col_idx, rem, oq;
        size_t ch = divmod(i, npq, &col_idx);
        size_t img = divmod(col_idx, pq, &rem);
        size_t op = divmod(rem, g.q, &oq);
        int h0 = (int)op * g.stride_h - g.pad_h, w0 = (int)oq * g.stride_w - g.pad_w;
        const float *plane = x + (img * g.c + ch) * g.h * g.w;
        float *dst = col + ch * g.r * g.s * npq + col_idx;
        for (int r = 0; r < g.r; ++r) {
            int h = h0 + r * g.dil_h;
            for (int s = 0; s < g.s; ++s) {
                int w = w0 + s * g.dil_w;
                *dst = (h >= 0 && h < g.h && w >= 0 && w < g.w) ? plane[(size_t)h * g.w + w] : 0.0f;
                dst += npq;
            }
        }
    }
}

/* NHWC im2col: one thread per (output pixel, group of V channels) copies those
 * channels for all R*S window positions: col[(n*P + p)*Q + q][(r*S + s)*C + c].
 * Consecutive threads take consecutive channels of one pixel, so reads of x
 * (C contiguous floats per pixel) and writes of col are contiguous; with
 * C % 4 == 0 each copy is a 16-byte load and store (V = 4). */
template <int V>
__global__ void im2col_nhwc_kernel(geom g, const float *__restrict__ x, float *__restrict__ col)
{
    size_t cv = (size_t)g.c / V, pq = (size_t)g.p * g.q;
    size_t total = (size_t)g.n * pq * cv, rsc = (size_t)g.r * g.s * g.c;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        /* excerpt: im2col nhwc window */
        /* exercise 06-im2col begin: NHWC im2col, one pixel's V channels for every tap */
        size_t cg, rem, oq;
        size_t row = divmod(i, cv, &cg);
        size_t img = divmod(row, pq, &rem);
        size_t op = divmod(rem, g.q, &oq);
        int h0 = (int)op * g.stride_h - g.pad_h, w0 = (int)oq * g.stride_w - g.pad_w;
        const float *image = x + img * g.h * g.w * g.c + cg * V;
        float *dst = col + row * rsc + cg * V;
        for (int r = 0; r < g.r; ++r) {
            int h = h0 + r * g.dil_h;
            for (int s = 0; s < g.s; ++s) {
                int w = w0 + s * g.dil_w;
                int inside = h >= 0 && h < g.h && w >= 0 && w < g.w;
                const float *src = image + ((size_t)h * g.w + w) * g.c;
                if (V == 4) {
                    float4 v = inside ? *reinterpret_cast<const float4 *>(src)
                                      : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    *reinterpret_cast<float4 *>(dst) = v;
                } else {
                    *dst = inside ? *src : 0.0f;
                }
                dst += g.c;
            }
        }
        /* exercise 06-im2col stub
        // TODO(exercise 06-im2col): item i = (output pixel row = (n*P + p)*Q + q, channel
        // group cg of V channels), cg fastest (divmod). For every tap (r, s) copy channels
        // cg*V .. cg*V + V - 1 of input pixel (p*stride_h - pad_h + r*dil_h, q*stride_w -
        // pad_w + s*dil_w) of image n, zeros outside the image, to
        // col[row][(r*S + s)*C + cg*V ..]; with V == 4 as one float4 load and store.
        // Graded by tests/test_06_im2col.c (gpu_im2col/nhwc_*).
        (void)rsc;
           exercise 06-im2col end */
        /* excerpt end: im2col nhwc window */
    }
}

/* For one input coordinate `pos` (h or w) and filter tap t, the output index
 * whose window puts tap t on pos: o = (pos + pad - t*dil) / stride when that
 * division is exact and 0 <= o < out; -1 otherwise. */
__device__ __forceinline__ int source_out(int pos, int pad, int t, int dil, int stride, int out)
{
    /* exercise 06-col2im begin: which output's window puts tap t on input coordinate pos */
    int v = pos + pad - t * dil;
    if (v < 0 || v % stride != 0)
        return -1;
    v /= stride;
    return v < out ? v : -1;
    /* exercise 06-col2im stub
    // TODO(exercise 06-col2im): the output o with o*stride - pad + t*dil == pos, when it
    // exists and 0 <= o < out; else -1. Graded by tests/test_06_im2col.c (suite gpu_col2im).
    return -1;
       exercise 06-col2im end */
}

/* col2im, NCHW (MXNet's col2im_gpu_kernel without its range trick): one thread
 * per x element sums every column entry that im2col copied it into. Each
 * output is written by exactly one thread, so no atomics are needed. */
__global__ void col2im_nchw_kernel(geom g, const float *__restrict__ col, float *__restrict__ x)
{
    size_t npq = (size_t)g.n * g.p * g.q, total = (size_t)g.n * g.c * g.h * g.w;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        /* exercise 06-col2im begin: the gather of one x element, NCHW */
        size_t wi, hi, ci;
        size_t t = divmod(i, g.w, &wi);
        t = divmod(t, g.h, &hi);
        size_t img = divmod(t, g.c, &ci);
        float sum = 0.0f;
        for (int r = 0; r < g.r; ++r) {
            int op = source_out((int)hi, g.pad_h, r, g.dil_h, g.stride_h, g.p);
            if (op < 0)
                continue;
            for (int s = 0; s < g.s; ++s) {
                int oq = source_out((int)wi, g.pad_w, s, g.dil_w, g.stride_w, g.q);
                if (oq < 0)
                    continue;
                size_t crs = (ci * g.r + r) * g.s + s;
                sum += col[crs * npq + (img * g.p + op) * g.q + oq];
            }
        }
        x[i] = sum;
        /* exercise 06-col2im stub
        // TODO(exercise 06-col2im): x[i] (i = ((n*C + c)*H + h)*W + w) = the sum of every
        // column entry im2col copied x[n][c][h][w] into: for each tap (r, s) whose output
        // (op, oq) exists (source_out), entry col[(c*R + r)*S + s][(n*P + op)*Q + oq].
        (void)npq;
           exercise 06-col2im end */
    }
}

/* col2im, NHWC: the same gather in the row-per-pixel column layout. */
__global__ void col2im_nhwc_kernel(geom g, const float *__restrict__ col, float *__restrict__ x)
{
    size_t total = (size_t)g.n * g.h * g.w * g.c, rsc = (size_t)g.r * g.s * g.c;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        /* exercise 06-col2im begin: the gather of one x element, NHWC */
        size_t ci, wi, hi;
        size_t t = divmod(i, g.c, &ci);
        t = divmod(t, g.w, &wi);
        size_t img = divmod(t, g.h, &hi);
        float sum = 0.0f;
        for (int r = 0; r < g.r; ++r) {
            int op = source_out((int)hi, g.pad_h, r, g.dil_h, g.stride_h, g.p);
            if (op < 0)
                continue;
            for (int s = 0; s < g.s; ++s) {
                int oq = source_out((int)wi, g.pad_w, s, g.dil_w, g.stride_w, g.q);
                if (oq < 0)
                    continue;
                size_t row = (img * g.p + op) * g.q + oq;
                sum += col[row * rsc + ((size_t)r * g.s + s) * g.c + ci];
            }
        }
        x[i] = sum;
        /* exercise 06-col2im stub
        // TODO(exercise 06-col2im): the same gather in NHWC: i = ((n*H + h)*W + w)*C + c,
        // entry col[(n*P + op)*Q + oq][(r*S + s)*C + c].
        (void)rsc;
           exercise 06-col2im end */
    }
}

/* ---------------------------------------------------------------------------
 * Host side. */

extern "C" size_t im2col_col_elems(const conv_params *p)
{
    return conv_im2col_elems(p);
}

static conv_status check_ptrs(const conv_params *p, const void *a, const char *a_name,
                              const void *b, const char *b_name, conv_msg *msg)
{
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    if (a == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: %s is NULL", a_name);
    if (b == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: %s is NULL", b_name);
    return CONV_OK;
}

extern "C" conv_status im2col(const conv_params *p, const float *d_x, float *d_col,
                              cudaStream_t stream, conv_msg *msg)
{
    conv_status st = check_ptrs(p, d_x, "d_x", d_col, "d_col", msg);
    if (st != CONV_OK)
        return st;
    geom g = make_geom(p);
    size_t npq = (size_t)g.n * g.p * g.q;
    if (p->layout == CONV_LAYOUT_NCHW) {
        im2col_nchw_kernel<<<grid_for((size_t)g.c * npq), GS_THREADS, 0, stream>>>(g, d_x, d_col);
        CONV_CHECK_LAUNCH("im2col_nchw_kernel", msg);
    } else if (g.c % 4 == 0 && (uintptr_t)d_x % 16 == 0 && (uintptr_t)d_col % 16 == 0) {
        im2col_nhwc_kernel<4><<<grid_for(npq * (g.c / 4)), GS_THREADS, 0, stream>>>(g, d_x, d_col);
        CONV_CHECK_LAUNCH("im2col_nhwc_kernel<4>", msg);
    } else {
        im2col_nhwc_kernel<1><<<grid_for(npq * g.c), GS_THREADS, 0, stream>>>(g, d_x, d_col);
        CONV_CHECK_LAUNCH("im2col_nhwc_kernel<1>", msg);
    }
    return CONV_OK;
}

extern "C" conv_status col2im(const conv_params *p, const float *d_col, float *d_x,
                              cudaStream_t stream, conv_msg *msg)
{
    conv_status st = check_ptrs(p, d_col, "d_col", d_x, "d_x", msg);
    if (st != CONV_OK)
        return st;
    geom g = make_geom(p);
    unsigned blocks = grid_for(conv_input_elems(p));
    if (p->layout == CONV_LAYOUT_NCHW) {
        col2im_nchw_kernel<<<blocks, GS_THREADS, 0, stream>>>(g, d_col, d_x);
        CONV_CHECK_LAUNCH("col2im_nchw_kernel", msg);
    } else {
        col2im_nhwc_kernel<<<blocks, GS_THREADS, 0, stream>>>(g, d_col, d_x);
        CONV_CHECK_LAUNCH("col2im_nhwc_kernel", msg);
    }
    return CONV_OK;
}
