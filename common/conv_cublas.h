/* The cuBLAS reference GEMM: SGEMM in plain FP32 (CUBLAS_DEFAULT_MATH, which
 * never uses TF32 for float data), on row-major matrices as step 06 stores them. */
#ifndef CONV_CUBLAS_H
#define CONV_CUBLAS_H

#include <cuda_runtime_api.h>

#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct conv_cublas conv_cublas;

conv_status conv_cublas_create(conv_cublas **handle, conv_msg *msg);
/* A handle whose SGEMM may use TF32 tensor cores (CUBLAS_TF32_TENSOR_OP_MATH;
 * plain FP32 below compute capability 8.0): a labelled extra reference. */
conv_status conv_cublas_create_tf32(conv_cublas **handle, conv_msg *msg);
void conv_cublas_destroy(conv_cublas *handle);

/* C[m][n] = A[m][k] * B[k][n], all row-major, on the stream. */
conv_status conv_cublas_sgemm(conv_cublas *handle, int m, int n, int k, const float *d_a,
                              const float *d_b, float *d_c, cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_CUBLAS_H */
