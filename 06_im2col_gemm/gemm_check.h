/* Step 06: checking GEMMs too large for a host copy (the lab's A matrix is
 * 5.9 GB): the operands are filled on the device, and the product is checked
 * on a sample of its entries, each computed in double on the host. Used by the
 * step program's --mode gemm, the tests and the tuning harness. */
#ifndef GEMM_CHECK_H
#define GEMM_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Uniform floats in [lo, hi) from conv_hash_uniform(seed, i, lo, hi)
 * (common/conv_hash.h), generated on the device, no host copy made. The same
 * hash as conv_fill_uniform (common/conv_tensor.h) on the CPU, so a buffer
 * filled here with seed s equals conv_fill_uniform(h_x, count, s, lo, hi).
 * Bit for bit when hi - lo is a power of two, as for [-1, 1): the product
 * (hi - lo) * u is then exact, and the device's fused multiply-add rounds
 * lo + (hi - lo) * u as the CPU's two operations do; for other bounds the two
 * may differ in the last bit. */
conv_status gemm_fill_uniform(float *d_x, size_t count, uint64_t seed, float lo, float hi,
                              cudaStream_t stream, conv_msg *msg);

/* Sampled check of C = A*B on the device: `samples` entries (the first and the
 * last always among them, the others at rows and columns drawn from
 * conv_hash64(seed, i)) computed in double on the host from the rows of A and
 * columns of B they need (downloaded one by one), each compared within
 * gamma_K * sum|a*b|. mismatches and the first bad entry are returned; the
 * description goes to verdict. Returns an error only when a copy failed. */
typedef struct {
    size_t checked, mismatches, nan_count;
    long long first_row, first_col;
    double first_got, first_want, first_tol, max_abs_err;
} gemm_check_report;
conv_status gemm_check_sampled(int m, int n, int k, const float *d_a, const float *d_b,
                               const float *d_c, size_t samples, uint64_t seed,
                               gemm_check_report *rep, char *verdict, size_t verdict_len,
                               conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* GEMM_CHECK_H */
