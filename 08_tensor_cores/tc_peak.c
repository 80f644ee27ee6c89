/* mma.sync's TF32 rate measured for the programs' header: the launcher of
 * tensor_cores_peak.cu timed as every row is (common/conv_timer.h: warm-up,
 * the median of the repeats), its sums checked. */
#include "tc_rows.h"

#include "conv_cuda.h"
#include "conv_tensor.h"
#include "conv_timer.h"
#include "tensor_cores.h"

#define TC_PEAK_ITERS         4096 /* about half a millisecond a launch on an H100 */
#define TC_PEAK_BLOCKS_PER_SM 4

typedef struct {
    float *d_sink;
    int blocks, iters;
} peak_run;

static conv_status run_peak(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    const peak_run *r = ctx;
    return tc_mma_peak(r->d_sink, r->blocks, r->iters, stream, msg);
}

conv_status tc_mma_peak_tflops(int warmup, int repeat, double *tflops, conv_msg *msg)
{
    *tflops = 0.0;
    int device = 0, sms = 0;
    CONV_CUDA_CHECK(cudaGetDevice(&device), msg);
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), msg);
    peak_run r = {NULL, TC_PEAK_BLOCKS_PER_SM * sms, TC_PEAK_ITERS};
    size_t n = (size_t)r.blocks * (size_t)tc_mma_peak_threads();
    float *h = conv_host_alloc(n);
    if (h == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "mma.sync peak: no host memory for %zu sums",
                         n);
    conv_timing t;
    conv_status st = conv_device_alloc(&r.d_sink, n, "the mma.sync peak's sums", msg);
    if (st == CONV_OK)
        st = conv_time_gpu(run_peak, &r, NULL, warmup, repeat, &t, msg);
    if (st == CONV_OK)
        st = conv_device_download(h, r.d_sink, n, msg);
    const float want = tc_mma_peak_expected(r.iters);
    for (size_t i = 0; st == CONV_OK && i < n; ++i)
        if (h[i] != want)
            st = conv_fail(msg, CONV_ERR_CUDA,
                           "mma.sync peak: thread %zu summed %g, not %g: the products did not run",
                           i, (double)h[i], (double)want);
    if (st == CONV_OK)
        *tflops = tc_mma_peak_flop(r.blocks, r.iters) / (t.median_ms * 1e9);
    conv_device_free(r.d_sink);
    conv_host_free(h);
    return st;
}

void tc_print_mma_peak(FILE *out, const conv_cli_options *opt, double flop)
{
    double tflops = 0.0;
    conv_msg msg = {{0}};
    if (tc_mma_peak_tflops(opt->warmup, opt->repeat, &tflops, &msg) != CONV_OK) {
        fprintf(out, "mma.sync: its TF32 rate not measured: %s\n", msg.text);
        return;
    }
    fprintf(out,
            "mma.sync: %.1f TFLOP/s in TF32 on this GPU (measured: independent products on "
            "operands in registers, nothing loaded), the ceiling of 8b; this problem at that "
            "rate: %.4f ms\n",
            tflops, flop / (tflops * 1e9));
}
