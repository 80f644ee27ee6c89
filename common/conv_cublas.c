#include "conv_cublas.h"

#include <stdlib.h>

#include <cublas_v2.h>

#include "conv_cuda.h"
#include "conv_device.h"

struct conv_cublas {
    cublasHandle_t handle;
};

static conv_status cublas_fail(conv_msg *msg, cublasStatus_t st, const char *what)
{
    return conv_fail(msg, st == CUBLAS_STATUS_ALLOC_FAILED ? CONV_ERR_OUT_OF_MEMORY : CONV_ERR_CUDA,
                     "%s failed: %s", what, cublasGetStatusString(st));
}

static conv_status create(conv_cublas **out, cublasMath_t math, conv_msg *msg);

conv_status conv_cublas_create(conv_cublas **out, conv_msg *msg)
{
    return create(out, CUBLAS_DEFAULT_MATH, msg);
}

conv_status conv_cublas_create_tf32(conv_cublas **out, conv_msg *msg)
{
    return create(out, CUBLAS_TF32_TENSOR_OP_MATH, msg);
}

static conv_status create(conv_cublas **out, cublasMath_t math, conv_msg *msg)
{
    *out = NULL;
    conv_status st = conv_cuda_require_device(msg);
    if (st != CONV_OK)
        return st;
    conv_cublas *h = calloc(1, sizeof *h);
    if (h == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the cuBLAS handle");
    cublasStatus_t cs = cublasCreate(&h->handle);
    if (cs != CUBLAS_STATUS_SUCCESS) {
        free(h);
        return cublas_fail(msg, cs, "cublasCreate");
    }
    cs = cublasSetMathMode(h->handle, math);
    if (cs != CUBLAS_STATUS_SUCCESS) {
        conv_cublas_destroy(h);
        return cublas_fail(msg, cs, "cublasSetMathMode");
    }
    *out = h;
    return CONV_OK;
}

void conv_cublas_destroy(conv_cublas *h)
{
    if (h == NULL)
        return;
    cublasDestroy(h->handle);
    free(h);
}

conv_status conv_cublas_sgemm(conv_cublas *h, int m, int n, int k, const float *d_a,
                              const float *d_b, float *d_c, cudaStream_t stream, conv_msg *msg)
{
    if (m < 1 || n < 1 || k < 1)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid GEMM size m=%d n=%d k=%d (each must be >= 1)", m, n, k);
    const float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t cs = cublasSetStream(h->handle, stream);
    if (cs != CUBLAS_STATUS_SUCCESS)
        return cublas_fail(msg, cs, "cublasSetStream");
    /* Row-major C = A*B is column-major C^T = B^T * A^T: swap the operands. */
    cs = cublasSgemm(h->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, d_b, n, d_a, k, &beta,
                     d_c, n);
    if (cs != CUBLAS_STATUS_SUCCESS)
        return cublas_fail(msg, cs, "cublasSgemm");
    return CONV_OK;
}
