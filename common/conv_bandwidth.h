/* Memory bandwidth: the device-to-device copy bandwidth measured on this GPU
 * (the practical ceiling of a streaming kernel, lower than the DRAM peak of
 * the data sheet), and the effective bandwidth of a kernel.
 *
 * Bandwidths count every byte read and every byte written: a copy of S bytes
 * moves 2*S bytes. */
#ifndef CONV_BANDWIDTH_H
#define CONV_BANDWIDTH_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_status.h"
#include "conv_timer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Smallest copy measured: far larger than the L2 cache (50 MB on an H100), so
 * the copy streams from and to DRAM. */
#define CONV_BANDWIDTH_MIN_BYTES ((size_t)256 << 20)

typedef struct {
    size_t bytes;       /* size of the copied buffer (each of source and destination) */
    conv_timing timing; /* of one cudaMemcpyAsync */
    double gbps;        /* 2 * bytes / median time, in GB/s (1e9 bytes per second) */
} conv_bandwidth;

/* Times cudaMemcpyAsync device-to-device of max(bytes, CONV_BANDWIDTH_MIN_BYTES)
 * bytes on `stream` (conv_time_gpu: warm-up, median of repeats) between two
 * buffers it allocates and frees. Errors: no device, out of device memory. */
conv_status conv_bandwidth_d2d(size_t bytes, int warmup, int repeat, cudaStream_t stream,
                               conv_bandwidth *out, conv_msg *msg);

/* Effective bandwidth in GB/s of moving `bytes` in `ms` milliseconds (0 when
 * ms <= 0). */
double conv_effective_gbps(double bytes, double ms);

#ifdef __cplusplus
}
#endif

#endif /* CONV_BANDWIDTH_H */
