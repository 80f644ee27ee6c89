/* CUDA helpers: error checks that name the failed expression, the device
 * query ("no CUDA device" is an answer, not a crash), and device buffers with
 * the same canary guard region as host buffers. */
#ifndef CONV_CUDA_H
#define CONV_CUDA_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Turns a CUDA error into a status and the message
 * "<expr> failed at <file>:<line>: <CUDA's error string>".
 * cudaErrorMemoryAllocation maps to CONV_ERR_OUT_OF_MEMORY, a missing device
 * or driver to CONV_ERR_NO_DEVICE, anything else to CONV_ERR_CUDA. */
conv_status conv_cuda_fail(conv_msg *msg, cudaError_t err, const char *expr, const char *file,
                           int line);

/* Evaluates a CUDA runtime call; on failure returns the status from the
 * enclosing function (which must return conv_status and have `msg` in scope). */
#define CONV_CUDA_CHECK(expr, msg)                                                                 \
    do {                                                                                           \
        cudaError_t conv_err_ = (expr);                                                            \
        if (conv_err_ != cudaSuccess)                                                              \
            return conv_cuda_fail((msg), conv_err_, #expr, __FILE__, __LINE__);                    \
    } while (0)

/* Checks a kernel launch (configuration errors appear at once; errors inside
 * the kernel appear at the next synchronising call). */
#define CONV_CHECK_LAUNCH(kernel_name, msg) CONV_CUDA_CHECK(cudaGetLastError(), msg)

/* Number of usable CUDA devices; 0 when there is none, no driver, or any error
 * (without a driver cudaGetDeviceCount returns an error, not 0). */
int conv_cuda_device_count(void);

/* CONV_OK when device 0 can be used, else CONV_ERR_NO_DEVICE with the reason. */
conv_status conv_cuda_require_device(conv_msg *msg);

typedef struct {
    char name[256];
    int cc_major, cc_minor;
    int sm_count;
    int sm_clock_khz;  /* peak SM clock */
    int mem_clock_khz; /* peak memory clock */
    int mem_bus_bits;
    int fp32_lanes_per_sm; /* FP32 FMA units per SM for this architecture */
    size_t global_mem_bytes;
    size_t const_mem_bytes; /* __constant__ memory: 64 KiB on every GPU so far */
    size_t smem_per_block_optin;
    int driver_version, runtime_version; /* CUDA versions, e.g. 13000 = 13.0 */
    char driver_release[32];             /* NVIDIA driver, e.g. "580.159.04"; "" if unknown */
    double peak_fp32_gflops;             /* 2 * lanes * SMs * clock */
    double peak_dram_gbps;               /* 2 (DDR) * memory clock * bus width / 8 */
} conv_device_info;

conv_status conv_cuda_device_info(int device, conv_device_info *info, conv_msg *msg);

/* The driver release ("580.159.04") from the first line of
 * /proc/driver/nvidia/version; "" when the line has none. */
void conv_parse_driver_release(const char *line, char *release, size_t size);

/* FP32 lanes per SM of a compute capability (64 or 128; 0 if unknown). */
int conv_fp32_lanes_per_sm(int cc_major, int cc_minor);

/* 1 when the environment variable CONV_REQUIRE_GPU is "1": a missing device
 * is then a test failure instead of a skip. */
int conv_gpu_required(void);

/* Device buffer of count floats followed by CONV_CANARY_FLOATS floats of
 * canary (what names the buffer in the out-of-memory message). */
conv_status conv_device_alloc(float **d_buf, size_t count, const char *what, conv_msg *msg);
void conv_device_free(float *d_buf);
/* *bad = how many canary floats after d_buf[count] were overwritten. */
conv_status conv_device_canary_check(const float *d_buf, size_t count, size_t *bad, conv_msg *msg);
/* Writes the canary after d_buf[count] again (after a run that broke it, so
 * the next measurement on the same buffer starts from an intact guard). */
conv_status conv_device_canary_reset(float *d_buf, size_t count, conv_msg *msg);
/* Fills count floats with NaN (all bits set). */
conv_status conv_device_poison(float *d_buf, size_t count, conv_msg *msg);
conv_status conv_device_upload(float *d_dst, const float *h_src, size_t count, conv_msg *msg);
conv_status conv_device_download(float *h_dst, const float *d_src, size_t count, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_CUDA_H */
