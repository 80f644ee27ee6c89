/* Timing: a CPU wall clock, and timers that run a piece of work a few times
 * untimed (warm-up), then `repeats` times timed, and report the median.
 * GPU work is timed with CUDA events recorded on the work's stream, a pair
 * around each run and the runs queued back to back, so the numbers are
 * device time, not host launch overhead. */
#ifndef CONV_TIMER_H
#define CONV_TIMER_H

#include <cuda_runtime_api.h>

#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double median_ms, min_ms, max_ms;
    int repeats;
} conv_timing;

/* Seconds from a monotonic clock. */
double conv_wall_seconds(void);

/* Work run on the CPU; returns CONV_OK or an error that stops the timing. */
typedef conv_status (*conv_cpu_work)(void *ctx, conv_msg *msg);
/* Work enqueued on a CUDA stream (a kernel launch, a library call). */
typedef conv_status (*conv_gpu_work)(void *ctx, cudaStream_t stream, conv_msg *msg);

conv_status conv_time_cpu(conv_cpu_work work, void *ctx, int warmup, int repeats, conv_timing *out,
                          conv_msg *msg);
conv_status conv_time_gpu(conv_gpu_work work, void *ctx, cudaStream_t stream, int warmup,
                          int repeats, conv_timing *out, conv_msg *msg);

/* Median of n values (the array is sorted in place). */
double conv_median(double *values, int n);

#ifdef __cplusplus
}
#endif

#endif /* CONV_TIMER_H */
