#include "conv_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_tensor.h"

conv_status conv_cuda_fail(conv_msg *msg, cudaError_t err, const char *expr, const char *file,
                           int line)
{
    conv_status st = CONV_ERR_CUDA;
    if (err == cudaErrorMemoryAllocation)
        st = CONV_ERR_OUT_OF_MEMORY;
    else if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver)
        st = CONV_ERR_NO_DEVICE;
    const char *base = strrchr(file, '/');
    return conv_fail(msg, st, "%s failed at %s:%d: %s", expr, base ? base + 1 : file, line,
                     cudaGetErrorString(err));
}

/* cudaMemcpy from pageable host memory returns once the data is staged, not
 * when it is on the device; cudaMemset returns at once. Both are ordered on
 * the legacy default stream, which a stream created with
 * cudaStreamNonBlocking does not wait for. Waiting here makes an upload, a
 * poison and a canary visible to a kernel on any stream. */
static conv_status on_device(conv_msg *msg)
{
    CONV_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy), msg);
    return CONV_OK;
}

conv_status conv_device_alloc(float **d_buf, size_t count, const char *what, conv_msg *msg)
{
    size_t total, bytes;
    *d_buf = NULL;
    if (count == 0 || __builtin_add_overflow(count, (size_t)CONV_CANARY_FLOATS, &total) ||
        __builtin_mul_overflow(total, sizeof(float), &bytes))
        return conv_fail(msg, CONV_ERR_INVALID, "invalid size for device buffer %s: %zu floats",
                         what, count);
    cudaError_t e = cudaMalloc((void **)d_buf, bytes);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        *d_buf = NULL;
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of device memory: %s needs %zu bytes",
                         what, bytes);
    }
    if (e != cudaSuccess) {
        *d_buf = NULL;
        return conv_cuda_fail(msg, e, "cudaMalloc", __FILE__, __LINE__);
    }
    conv_status st = conv_device_canary_reset(*d_buf, count, msg);
    if (st != CONV_OK) {
        cudaFree(*d_buf);
        *d_buf = NULL;
    }
    return st;
}

conv_status conv_device_canary_reset(float *d_buf, size_t count, conv_msg *msg)
{
    float guard[CONV_CANARY_FLOATS];
    conv_canary_fill(guard, CONV_CANARY_FLOATS);
    CONV_CUDA_CHECK(cudaMemcpy(d_buf + count, guard, sizeof guard, cudaMemcpyHostToDevice), msg);
    return on_device(msg);
}

void conv_device_free(float *d_buf)
{
    if (d_buf != NULL)
        cudaFree(d_buf);
}

conv_status conv_device_canary_check(const float *d_buf, size_t count, size_t *bad, conv_msg *msg)
{
    float guard[CONV_CANARY_FLOATS];
    CONV_CUDA_CHECK(cudaMemcpy(guard, d_buf + count, sizeof guard, cudaMemcpyDeviceToHost), msg);
    *bad = conv_canary_check(guard, CONV_CANARY_FLOATS);
    return CONV_OK;
}

conv_status conv_device_poison(float *d_buf, size_t count, conv_msg *msg)
{
    CONV_CUDA_CHECK(cudaMemset(d_buf, 0xff, count * sizeof(float)), msg);
    return on_device(msg);
}

conv_status conv_device_upload(float *d_dst, const float *h_src, size_t count, conv_msg *msg)
{
    CONV_CUDA_CHECK(cudaMemcpy(d_dst, h_src, count * sizeof(float), cudaMemcpyHostToDevice), msg);
    return on_device(msg);
}

conv_status conv_device_download(float *h_dst, const float *d_src, size_t count, conv_msg *msg)
{
    CONV_CUDA_CHECK(cudaMemcpy(h_dst, d_src, count * sizeof(float), cudaMemcpyDeviceToHost), msg);
    return CONV_OK;
}
