/* CUDA helpers: error checks that name the failed expression or kernel, and
 * device buffers with the same canary guard region as host buffers. (The
 * device itself, its properties and its limits: conv_device.h.) */
#ifndef CONV_CUDA_H
#define CONV_CUDA_H

#include <stddef.h>
#include <stdio.h>

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

/* Checks a kernel launch: "<kernel_name> launch failed at <file>:<line>:
 * <CUDA's error string>". Configuration errors appear at once; errors inside
 * the kernel appear at the next synchronising call. */
#define CONV_CHECK_LAUNCH(kernel_name, msg)                                                        \
    do {                                                                                           \
        cudaError_t conv_err_ = cudaGetLastError();                                                \
        if (conv_err_ != cudaSuccess)                                                              \
            return conv_cuda_fail((msg), conv_err_, kernel_name " launch", __FILE__, __LINE__);    \
    } while (0)

/* The same check for a kernel whose name is known only at run time (one
 * launcher function for several kernels), with the same message. */
#define CONV_CHECK_LAUNCH_OF(kernel_name, msg)                                                     \
    do {                                                                                           \
        cudaError_t conv_err_ = cudaGetLastError();                                                \
        if (conv_err_ != cudaSuccess)                                                              \
            return conv_launch_fail((msg), conv_err_, (kernel_name), __FILE__, __LINE__);          \
    } while (0)

/* conv_cuda_fail with "<kernel_name> launch" as the failed expression. */
static inline conv_status conv_launch_fail(conv_msg *msg, cudaError_t err, const char *kernel_name,
                                           const char *file, int line)
{
    char what[128];
    snprintf(what, sizeof what, "%s launch", kernel_name);
    return conv_cuda_fail(msg, err, what, file, line);
}

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
/* The upload, the poison and the canary reset return once the data is on the
 * device, so that a kernel on any stream (a non-blocking one too) sees it. */
conv_status conv_device_upload(float *d_dst, const float *h_src, size_t count, conv_msg *msg);
conv_status conv_device_download(float *h_dst, const float *d_src, size_t count, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_CUDA_H */
