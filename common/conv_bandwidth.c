#include "conv_bandwidth.h"

#include "conv_cuda.h"

typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
} copy_work;

static conv_status run_copy(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    copy_work *c = ctx;
    CONV_CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, stream),
                    msg);
    return CONV_OK;
}

conv_status conv_bandwidth_d2d(size_t bytes, int warmup, int repeat, cudaStream_t stream,
                               conv_bandwidth *out, conv_msg *msg)
{
    if (out == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid argument: bandwidth result is NULL");
    if (bytes < CONV_BANDWIDTH_MIN_BYTES)
        bytes = CONV_BANDWIDTH_MIN_BYTES;
    void *src = NULL, *dst = NULL;
    cudaError_t e = cudaMalloc(&src, bytes);
    if (e == cudaSuccess)
        e = cudaMalloc(&dst, bytes);
    conv_status st = CONV_OK;
    if (e != cudaSuccess)
        st = conv_cuda_fail(msg, e, "cudaMalloc (bandwidth buffers)", __FILE__, __LINE__);
    else if ((e = cudaMemsetAsync(src, 0, bytes, stream)) != cudaSuccess)
        st = conv_cuda_fail(msg, e, "cudaMemsetAsync (bandwidth source)", __FILE__, __LINE__);
    if (st == CONV_OK) {
        copy_work work = {dst, src, bytes};
        st = conv_time_gpu(run_copy, &work, stream, warmup, repeat, &out->timing, msg);
    }
    if (st == CONV_OK) {
        out->bytes = bytes;
        out->gbps = conv_effective_gbps(2.0 * (double)bytes, out->timing.median_ms);
    }
    cudaFree(src);
    cudaFree(dst);
    return st;
}

double conv_effective_gbps(double bytes, double ms)
{
    return ms > 0.0 ? bytes / (ms * 1e6) : 0.0;
}
