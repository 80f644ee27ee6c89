/* Step 06: the device fill and the sampled check of large GEMMs
 * (gemm_check.h). The fill is a grid-stride loop over conv_hash_uniform, the
 * hash common/conv_hash.h shares between host and device; the check is host
 * code that downloads only the rows and columns its samples need.
 *
 * Launch of the fill: one item per float, blocks of GS_THREADS = 256 threads,
 * grid_for(n) = min(ceil(n / 256), 65536) blocks (grid_stride.cuh). */
#include "gemm_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cuda.h"
#include "conv_hash.h"
#include "conv_verify.h"
#include "grid_stride.cuh"

/* Element i of the fill depends only on (seed, i): whichever thread writes it. */
__global__ void fill_uniform_kernel(float *__restrict__ x, size_t count, uint64_t seed, float lo,
                                    float hi)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = conv_hash_uniform(seed, i, lo, hi);
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
            uint64_t h = conv_hash64(seed, s);
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
