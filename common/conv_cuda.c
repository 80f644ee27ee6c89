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

int conv_cuda_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky-free error state */
        return 0;
    }
    return count;
}

conv_status conv_cuda_require_device(conv_msg *msg)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return conv_fail(msg, CONV_ERR_NO_DEVICE, "no CUDA device (%s)", cudaGetErrorString(e));
    }
    if (count < 1)
        return conv_fail(msg, CONV_ERR_NO_DEVICE, "no CUDA device (none found)");
    return CONV_OK;
}

int conv_fp32_lanes_per_sm(int cc_major, int cc_minor)
{
    switch (cc_major) {
    case 6: return cc_minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return cc_minor == 0 ? 64 : 128;
    case 9: return 128;
    case 10:
    case 11:
    case 12: return 128;
    default: return 0;
    }
}

conv_status conv_cuda_device_info(int device, conv_device_info *info, conv_msg *msg)
{
    struct cudaDeviceProp prop;
    memset(info, 0, sizeof *info);
    conv_status st = conv_cuda_require_device(msg); /* "no CUDA device (...)", not a raw error */
    if (st != CONV_OK)
        return st;
    CONV_CUDA_CHECK(cudaGetDeviceProperties(&prop, device), msg);
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sm_count = prop.multiProcessorCount;
    info->global_mem_bytes = prop.totalGlobalMem;
    info->const_mem_bytes = prop.totalConstMem;
    info->smem_per_block_optin = prop.sharedMemPerBlockOptin;
    info->mem_bus_bits = prop.memoryBusWidth;
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&info->sm_clock_khz, cudaDevAttrClockRate, device), msg);
    CONV_CUDA_CHECK(
        cudaDeviceGetAttribute(&info->mem_clock_khz, cudaDevAttrMemoryClockRate, device), msg);
    CONV_CUDA_CHECK(cudaDriverGetVersion(&info->driver_version), msg);
    CONV_CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version), msg);
    /* The kernel module's release, which nvidia-smi calls the driver version. */
    FILE *module = fopen("/proc/driver/nvidia/version", "r");
    if (module != NULL) {
        char line[256];
        if (fgets(line, sizeof line, module) != NULL)
            conv_parse_driver_release(line, info->driver_release, sizeof info->driver_release);
        fclose(module);
    }
    info->fp32_lanes_per_sm = conv_fp32_lanes_per_sm(prop.major, prop.minor);
    info->peak_fp32_gflops =
        2.0 * info->fp32_lanes_per_sm * info->sm_count * (info->sm_clock_khz * 1e3) / 1e9;
    info->peak_dram_gbps = 2.0 * (info->mem_clock_khz * 1e3) * (info->mem_bus_bits / 8.0) / 1e9;
    return CONV_OK;
}

void conv_parse_driver_release(const char *line, char *release, size_t size)
{
    if (size == 0)
        return;
    release[0] = '\0';
    const char *at = strstr(line, "Kernel Module");
    if (at == NULL)
        return;
    /* The release is the first word after "Kernel Module" made of digits and
     * dots with at least one dot ("for x86_64" may come first). */
    at += strlen("Kernel Module");
    while (*at != '\0') {
        at += strspn(at, " \t");
        size_t len = strcspn(at, " \t\n");
        if (len > 0 && len < size && strspn(at, "0123456789.") == len && memchr(at, '.', len)) {
            memcpy(release, at, len);
            release[len] = '\0';
            return;
        }
        at += len;
    }
}

int conv_gpu_required(void)
{
    const char *v = getenv("CONV_REQUIRE_GPU");
    return v != NULL && strcmp(v, "1") == 0;
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
    return CONV_OK;
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
    return CONV_OK;
}

conv_status conv_device_upload(float *d_dst, const float *h_src, size_t count, conv_msg *msg)
{
    CONV_CUDA_CHECK(cudaMemcpy(d_dst, h_src, count * sizeof(float), cudaMemcpyHostToDevice), msg);
    return CONV_OK;
}

conv_status conv_device_download(float *h_dst, const float *d_src, size_t count, conv_msg *msg)
{
    CONV_CUDA_CHECK(cudaMemcpy(h_dst, d_src, count * sizeof(float), cudaMemcpyDeviceToHost), msg);
    return CONV_OK;
}
