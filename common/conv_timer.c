#include "conv_timer.h"

#include <stdlib.h>
#include <time.h>

#include "conv_cuda.h"

double conv_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double conv_median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static void summarise(double *ms, int repeats, conv_timing *out)
{
    out->repeats = repeats;
    out->median_ms = conv_median(ms, repeats); /* sorts ms */
    out->min_ms = ms[0];
    out->max_ms = ms[repeats - 1];
}

/* What both timers do first: check the counts, then allocate one time per
 * repeat (*ms, for the caller to free). */
static conv_status start_timing(int warmup, int repeats, double **ms, conv_msg *msg)
{
    if (warmup < 0)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid warm-up count (--warmup): must be >= 0, got %d", warmup);
    if (repeats < 1 || repeats > 100000)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid repeat count (--repeat): must be 1..100000, got %d", repeats);
    *ms = malloc((size_t)repeats * sizeof **ms);
    if (*ms == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for %d timings", repeats);
    return CONV_OK;
}

conv_status conv_time_cpu(conv_cpu_work work, void *ctx, int warmup, int repeats, conv_timing *out,
                          conv_msg *msg)
{
    double *ms;
    conv_status st = start_timing(warmup, repeats, &ms, msg);
    if (st != CONV_OK)
        return st;
    for (int i = 0; i < warmup && st == CONV_OK; ++i)
        st = work(ctx, msg);
    for (int i = 0; i < repeats && st == CONV_OK; ++i) {
        double t0 = conv_wall_seconds();
        st = work(ctx, msg);
        ms[i] = 1e3 * (conv_wall_seconds() - t0);
    }
    if (st == CONV_OK)
        summarise(ms, repeats, out);
    free(ms);
    return st;
}

conv_status conv_time_gpu(conv_gpu_work work, void *ctx, cudaStream_t stream, int warmup,
                          int repeats, conv_timing *out, conv_msg *msg)
{
    double *ms;
    conv_status st = start_timing(warmup, repeats, &ms, msg);
    if (st != CONV_OK)
        return st;
    /* One event pair per repeat, all queued back to back and read after one
     * synchronisation at the end: each pair brackets one run, and the host's
     * launch work overlaps the runs before it, as in a program that queues
     * one convolution after another (and as PyTorch is timed). */
    cudaEvent_t *events = calloc(2 * (size_t)repeats, sizeof *events);
    cudaError_t e = cudaSuccess;
    int made = 0;
    if (events == NULL) {
        st = conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for timing events");
        goto done;
    }
    for (; made < 2 * repeats && e == cudaSuccess; ++made)
        e = cudaEventCreate(&events[made]);
    if (e != cudaSuccess) {
        --made; /* the one that failed holds nothing */
        st = conv_cuda_fail(msg, e, "cudaEventCreate", __FILE__, __LINE__);
        goto done;
    }
    for (int i = 0; i < warmup && st == CONV_OK; ++i)
        st = work(ctx, stream, msg);
    if (st == CONV_OK && (e = cudaStreamSynchronize(stream)) != cudaSuccess)
        st = conv_cuda_fail(msg, e, "cudaStreamSynchronize (warm-up)", __FILE__, __LINE__);
    for (int i = 0; i < repeats && st == CONV_OK; ++i) {
        if ((e = cudaEventRecord(events[2 * i], stream)) != cudaSuccess) {
            st = conv_cuda_fail(msg, e, "cudaEventRecord", __FILE__, __LINE__);
            break;
        }
        st = work(ctx, stream, msg);
        if (st == CONV_OK && (e = cudaEventRecord(events[2 * i + 1], stream)) != cudaSuccess)
            st = conv_cuda_fail(msg, e, "cudaEventRecord", __FILE__, __LINE__);
    }
    if (st == CONV_OK && (e = cudaEventSynchronize(events[2 * repeats - 1])) != cudaSuccess)
        st = conv_cuda_fail(msg, e, "cudaEventSynchronize (timed runs)", __FILE__, __LINE__);
    for (int i = 0; i < repeats && st == CONV_OK; ++i) {
        float elapsed = 0.0f;
        if ((e = cudaEventElapsedTime(&elapsed, events[2 * i], events[2 * i + 1])) != cudaSuccess)
            st = conv_cuda_fail(msg, e, "cudaEventElapsedTime", __FILE__, __LINE__);
        ms[i] = elapsed;
    }
    if (st == CONV_OK)
        summarise(ms, repeats, out);
done:
    for (int i = 0; i < made; ++i)
        cudaEventDestroy(events[i]);
    free(events);
    free(ms);
    return st;
}
