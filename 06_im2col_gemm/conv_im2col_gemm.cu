/* Step 06: convolution through a matrix product, im2col -> GEMM (-> layout
 * change), for both layouts (conv_im2col_gemm.h gives the matrices).
 * Versions: 6a, 6b, 6c, 6d, 6e and cuBLAS, each as the GEMM of the same
 * pipeline (their kernels: gemm_6a.cu .. gemm_6e.cu; 6f, which has no column
 * buffer: conv_implicit_gemm_6f.cu). The
 * column buffer and, for NCHW with a batch, the GEMM's [K][N*P*Q] output
 * share one workspace; the only kernel of its own here is the NCHW
 * permutation, a grid-stride loop like im2col's (grid_stride.cuh).
 *
 * Launch of the permutation: one item per element of y, blocks of GS_THREADS
 * = 256 threads, grid_for(n) = min(ceil(n / 256), 65536) blocks. */
#include "conv_im2col_gemm.h"

#include <stdint.h>

#include "conv_cuda.h"
#include "grid_stride.cuh"
#include "im2col.h"

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

/* ---------------------------------------------------------------------------
 * Host side. */

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
    if (st == CONV_OK)
        st = conv_check_pointers(d_w, "d_w", d_y, "d_y", d_work, "d_work (the column buffer)", msg);
    if (st != CONV_OK)
        return st;
    size_t need = conv2d_im2col_gemm_workspace_elems(p);
    if (work_elems < need)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "workspace too small: %zu floats given, the column buffer needs %zu",
                         work_elems, need);
    if ((unsigned)g >= GEMM_VARIANT_COUNT)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid GEMM variant (--variant): %d", (int)g);
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

extern "C" conv_status conv2d_pipeline_conv(void *ctx, const conv_params *p, const float *d_x,
                                            const float *d_w, float *d_y, cudaStream_t stream,
                                            conv_msg *msg)
{
    const conv2d_pipeline *pc = (const conv2d_pipeline *)ctx;
    if (pc->implicit)
        return conv2d_implicit_gemm(p, d_x, d_w, d_y, stream, msg);
    return conv2d_im2col_gemm(p, d_x, d_w, d_y, pc->d_work, pc->work_elems, pc->g, pc->cublas,
                              stream, msg);
}
