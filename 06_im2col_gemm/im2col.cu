/* Step 06: im2col and col2im for both layouts, the NCHW layout change, and the
 * convolution pipeline im2col -> GEMM (-> permutation).
 *
 * All kernels are grid-stride loops (seed 003's CUDA_KERNEL_LOOP) over a 64-bit
 * index: the lab problem's column buffer has 1.47e9 floats (5.9 GB), and a
 * larger batch passes 2^31. Index decomposition uses 32-bit division whenever
 * both operands fit, which is almost always (a 64-bit division is a ~70
 * instruction subroutine; the fast path is ~20). */
#include "im2col_gemm.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cuda.h"
#include "conv_verify.h"

#define GS_THREADS    256
#define GS_MAX_BLOCKS 65536

/* q = a / b, r = a % b, through 32-bit division when both fit. */
__device__ __forceinline__ size_t divmod(size_t a, size_t b, size_t *r)
{
    if ((a | b) <= 0xffffffffu) {
        unsigned q = (unsigned)a / (unsigned)b;
        *r = (unsigned)a - q * (unsigned)b;
        return q;
    }
    size_t q = a / b;
    *r = a - q * b;
    return q;
}

/* Conv geometry for the kernels, all in one by-value struct. */
typedef struct {
    int n, c, h, w, k, r, s, p, q;
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
} geom;

static geom make_geom(const conv_params *p)
{
    geom g;
    g.n = p->n, g.c = p->c, g.h = p->h, g.w = p->w, g.k = p->k, g.r = p->r, g.s = p->s;
    g.p = conv_out_h(p), g.q = conv_out_w(p);
    g.pad_h = p->pad_h, g.pad_w = p->pad_w, g.stride_h = p->stride_h, g.stride_w = p->stride_w;
    g.dil_h = p->dil_h, g.dil_w = p->dil_w;
    return g;
}

static unsigned grid_for(size_t total)
{
    size_t blocks = (total + GS_THREADS - 1) / GS_THREADS;
    return (unsigned)(blocks < GS_MAX_BLOCKS ? blocks : GS_MAX_BLOCKS);
}

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
    }
}

/* For one input coordinate `pos` (h or w) and filter tap t, the output index
 * whose window puts tap t on pos: o = (pos + pad - t*dil) / stride when that
 * division is exact and 0 <= o < out; -1 otherwise. */
__device__ __forceinline__ int source_out(int pos, int pad, int t, int dil, int stride, int out)
{
    int v = pos + pad - t * dil;
    if (v < 0 || v % stride != 0)
        return -1;
    v /= stride;
    return v < out ? v : -1;
}

/* col2im, NCHW (MXNet's col2im_gpu_kernel without its range trick): one thread
 * per x element sums every column entry that im2col copied it into. Each
 * output is written by exactly one thread, so no atomics are needed. */
__global__ void col2im_nchw_kernel(geom g, const float *__restrict__ col, float *__restrict__ x)
{
    size_t npq = (size_t)g.n * g.p * g.q, total = (size_t)g.n * g.c * g.h * g.w;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
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
    }
}

/* col2im, NHWC: the same gather in the row-per-pixel column layout. */
__global__ void col2im_nhwc_kernel(geom g, const float *__restrict__ col, float *__restrict__ x)
{
    size_t total = (size_t)g.n * g.h * g.w * g.c, rsc = (size_t)g.r * g.s * g.c;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
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
    }
}

/* NCHW with N > 1: the GEMM wrote y'[K][N*P*Q]; y[n][k][pq] = y'[k][n*PQ + pq].
 * Runs of P*Q floats are contiguous on both sides. */
__global__ void nchw_permute_kernel(geom g, const float *__restrict__ src, float *__restrict__ y)
{
    size_t pq = (size_t)g.p * g.q, npq = (size_t)g.n * pq, total = (size_t)g.k * npq;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t o, ko;
        size_t t = divmod(i, pq, &o);
        size_t img = divmod(t, g.k, &ko);
        y[i] = src[ko * npq + img * pq + o];
    }
}

/* A counter-based hash (splitmix64 finaliser) for the device fills. */
__device__ __forceinline__ uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__global__ void fill_uniform_kernel(float *__restrict__ x, size_t count, uint64_t seed, float lo,
                                    float hi)
{
    uint64_t key = mix64(seed);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        float u = (float)(mix64(key ^ i) >> 40) * (1.0f / 16777216.0f);
        x[i] = lo + (hi - lo) * u;
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

/* The column buffer, rounded up to whole float4s so that what follows it in
 * the workspace stays 16-byte aligned. */
static size_t col_region(const conv_params *p)
{
    return (conv_im2col_elems(p) + 3) & ~(size_t)3;
}

static int needs_permute(const conv_params *p)
{
    return p->layout == CONV_LAYOUT_NCHW && p->n > 1;
}

extern "C" size_t conv2d_im2col_gemm_workspace_elems(const conv_params *p)
{
    return col_region(p) + (needs_permute(p) ? conv_output_elems(p) : 0);
}

extern "C" conv_status conv2d_im2col_gemm_check(const conv_params *p, size_t device_bytes,
                                                conv_msg *msg)
{
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    long long npq = (long long)p->n * conv_out_h(p) * conv_out_w(p);
    long long crs = (long long)p->c * p->r * p->s;
    if (npq > GEMM_MAX_DIM)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "GEMM rows N*P*Q = %lld exceed this step's limit %d (--n)", npq,
                         GEMM_MAX_DIM);
    if (crs > GEMM_MAX_DIM)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "GEMM depth C*R*S = %lld exceeds this step's limit %d (--c)", crs,
                         GEMM_MAX_DIM);
    /* In doubles: the sum of sizes that each fit size_t may not. */
    double col_bytes = 4.0 * (double)conv2d_im2col_gemm_workspace_elems(p);
    double tensor_bytes = 4.0 * ((double)conv_input_elems(p) + (double)conv_filter_elems(p) +
                                 (double)conv_output_elems(p));
    if (col_bytes + tensor_bytes > (double)device_bytes)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY,
                         "im2col column buffer too large: %lld x %lld floats (%.2f GB) plus "
                         "the tensors (%.2f GB) exceed the %.2f GB of device memory available",
                         crs, npq, col_bytes / 1e9, tensor_bytes / 1e9, (double)device_bytes / 1e9);
    return CONV_OK;
}

/* Everything conv2d_im2col_gemm and its stages check before a launch. */
static conv_status check_pipeline(const conv_params *p, const float *d_w, const float *d_y,
                                  const float *d_work, size_t work_elems, gemm_variant g,
                                  const conv_cublas *cublas, conv_msg *msg)
{
    conv_status st = conv2d_im2col_gemm_check(p, SIZE_MAX, msg);
    if (st != CONV_OK)
        return st;
    if (d_w == NULL || d_y == NULL || d_work == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: %s is NULL",
                         d_w == NULL   ? "d_w"
                         : d_y == NULL ? "d_y"
                                       : "d_work (the column buffer)");
    size_t need = conv2d_im2col_gemm_workspace_elems(p);
    if (work_elems < need)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "workspace too small: %zu floats given, the column buffer needs %zu",
                         work_elems, need);
    if ((unsigned)g >= GEMM_VARIANT_COUNT)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid GEMM variant (--gemm): %d", (int)g);
    if (g == GEMM_CUBLAS && cublas == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid cuBLAS handle: NULL");
    return CONV_OK;
}

extern "C" conv_status conv2d_im2col_gemm_stage_gemm(const conv_params *p, const float *d_w,
                                                     float *d_y, float *d_work, size_t work_elems,
                                                     gemm_variant g, conv_cublas *cublas,
                                                     cudaStream_t stream, conv_msg *msg)
{
    conv_status st = check_pipeline(p, d_w, d_y, d_work, work_elems, g, cublas, msg);
    if (st != CONV_OK)
        return st;
    int npq = p->n * conv_out_h(p) * conv_out_w(p); /* fits: checked above */
    int crs = p->c * p->r * p->s;
    if (p->layout == CONV_LAYOUT_NHWC) /* y[NPQ][K] = col[NPQ][RSC] * w[RSC][K] */
        return gemm_sgemm(g, npq, p->k, crs, d_work, d_w, d_y, cublas, stream, msg);
    /* y'[K][NPQ] = w[K][CRS] * col[CRS][NPQ]; straight into y when N == 1 */
    float *dst = needs_permute(p) ? d_work + col_region(p) : d_y;
    return gemm_sgemm(g, p->k, npq, crs, d_w, d_work, dst, cublas, stream, msg);
}

extern "C" conv_status conv2d_im2col_gemm_stage_permute(const conv_params *p, float *d_y,
                                                        float *d_work, size_t work_elems,
                                                        cudaStream_t stream, conv_msg *msg)
{
    conv_status st = check_pipeline(p, d_y, d_y, d_work, work_elems, GEMM_6A_NAIVE, NULL, msg);
    if (st != CONV_OK || !needs_permute(p))
        return st;
    geom g = make_geom(p);
    nchw_permute_kernel<<<grid_for(conv_output_elems(p)), GS_THREADS, 0, stream>>>(
        g, d_work + col_region(p), d_y);
    CONV_CHECK_LAUNCH("nchw_permute_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status conv2d_im2col_gemm(const conv_params *p, const float *d_x, const float *d_w,
                                          float *d_y, float *d_work, size_t work_elems,
                                          gemm_variant g, conv_cublas *cublas, cudaStream_t stream,
                                          conv_msg *msg)
{
    conv_status st = check_pipeline(p, d_w, d_y, d_work, work_elems, g, cublas, msg);
    if (st != CONV_OK)
        return st;
    if (d_x == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: d_x is NULL");
    if ((st = im2col(p, d_x, d_work, stream, msg)) != CONV_OK ||
        (st = conv2d_im2col_gemm_stage_gemm(p, d_w, d_y, d_work, work_elems, g, cublas, stream,
                                            msg)) != CONV_OK)
        return st;
    return conv2d_im2col_gemm_stage_permute(p, d_y, d_work, work_elems, stream, msg);
}

extern "C" conv_status gemm_fill_uniform(float *d_x, size_t count, uint64_t seed, float lo,
                                         float hi, cudaStream_t stream, conv_msg *msg)
{
    if (d_x == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: d_x is NULL");
    if (count == 0)
        return CONV_OK;
    fill_uniform_kernel<<<grid_for(count), GS_THREADS, 0, stream>>>(d_x, count, seed, lo, hi);
    CONV_CHECK_LAUNCH("fill_uniform_kernel", msg);
    return CONV_OK;
}

static uint64_t host_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

extern "C" conv_status gemm_check_sampled(int m, int n, int k, const float *d_a, const float *d_b,
                                          const float *d_c, size_t samples, uint64_t seed,
                                          gemm_check_report *rep, char *verdict, size_t verdict_len,
                                          conv_msg *msg)
{
    memset(rep, 0, sizeof *rep);
    rep->first_row = rep->first_col = -1;
    if (m < 1 || n < 1 || k < 1 || d_a == NULL || d_b == NULL || d_c == NULL || samples < 2)
        return conv_fail(msg, CONV_ERR_INVALID, "gemm_check_sampled: invalid arguments");
    float *a_row = (float *)malloc((size_t)k * sizeof(float));
    float *b_col = (float *)malloc((size_t)k * sizeof(float));
    if (a_row == NULL || b_col == NULL) {
        free(a_row);
        free(b_col);
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for a GEMM row");
    }
    conv_status st = CONV_OK;
    cudaError_t e = cudaDeviceSynchronize();
    double gamma = conv_gamma((size_t)k);
    long long cached_row = -1;
    for (size_t s = 0; s < samples && e == cudaSuccess; ++s) {
        long long row, col;
        if (s == 0)
            row = 0, col = 0;
        else if (s == 1)
            row = m - 1, col = n - 1;
        else {
            uint64_t h = host_mix64(seed ^ host_mix64(s));
            row = (long long)(h % (uint64_t)m);
            col = (long long)((h >> 32) % (uint64_t)n);
        }
        if (row != cached_row) {
            e = cudaMemcpy(a_row, d_a + (size_t)row * k, (size_t)k * sizeof(float),
                           cudaMemcpyDeviceToHost);
            cached_row = row;
        }
        if (e == cudaSuccess)
            e = cudaMemcpy2D(b_col, sizeof(float), d_b + col, (size_t)n * sizeof(float),
                             sizeof(float), (size_t)k, cudaMemcpyDeviceToHost);
        float got = 0.0f;
        if (e == cudaSuccess)
            e = cudaMemcpy(&got, d_c + (size_t)row * n + col, sizeof(float),
                           cudaMemcpyDeviceToHost);
        if (e != cudaSuccess)
            break;
        double want = 0.0, abs_sum = 0.0;
        for (int i = 0; i < k; ++i) {
            double t = (double)a_row[i] * (double)b_col[i];
            want += t;
            abs_sum += fabs(t);
        }
        double tol = gamma * abs_sum, err = fabs((double)got - want);
        int finite = isfinite(got);
        rep->checked++;
        if (!finite)
            rep->nan_count++;
        if (finite && err > rep->max_abs_err)
            rep->max_abs_err = err;
        if (!finite || err > tol) {
            if (rep->mismatches++ == 0) {
                rep->first_row = row, rep->first_col = col;
                rep->first_got = got, rep->first_want = want, rep->first_tol = tol;
            }
        }
    }
    if (e != cudaSuccess)
        st = conv_cuda_fail(msg, e, "gemm_check_sampled copy", __FILE__, __LINE__);
    free(a_row);
    free(b_col);
    if (verdict != NULL) {
        if (rep->mismatches == 0)
            snprintf(verdict, verdict_len, "OK (%zu sampled, max abs err %.3g)", rep->checked,
                     rep->max_abs_err);
        else
            snprintf(verdict, verdict_len,
                     "FAILED: %zu of %zu sampled mismatch; first C[%lld][%lld]: got %.9g want "
                     "%.9g (tol %.3g)",
                     rep->mismatches, rep->checked, rep->first_row, rep->first_col, rep->first_got,
                     rep->first_want, rep->first_tol);
    }
    return st;
}

extern "C" conv_status conv2d_pipeline_run(void *ctx, const conv_params *p, const float *d_x,
                                           const float *d_w, float *d_y, cudaStream_t stream,
                                           conv_msg *msg)
{
    const conv2d_pipeline *pc = (const conv2d_pipeline *)ctx;
    if (pc->implicit)
        return conv2d_implicit_gemm(p, d_x, d_w, d_y, stream, msg);
    return conv2d_im2col_gemm(p, d_x, d_w, d_y, pc->d_work, pc->work_elems, pc->g, pc->cublas,
                              stream, msg);
}
