/* mma.sync's rates in TF32 and FP16 measured for the programs' header: the
 * launcher of tensor_cores_peak.cu timed as every row is
 * (common/conv_timer.h: warm-up, the median of the repeats), its sums
 * checked. */
#include "tc_rows.h"

#include "conv_cuda.h"
#include "conv_tensor.h"
#include "conv_timer.h"
#include "tensor_cores.h"

#define TC_PEAK_ITERS         4096 /* about half a millisecond a launch on an H100 */
#define TC_PEAK_BLOCKS_PER_SM 4

typedef struct {
    tc_peak_precision prec;
    float *d_sink;
    int blocks, iters;
} peak_run;

static conv_status run_peak(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    const peak_run *r = ctx;
    return tc_mma_peak(r->prec, r->d_sink, r->blocks, r->iters, stream, msg);
}

static const char *peak_name(tc_peak_precision prec)
{
    return prec == TC_PEAK_FP16 ? "FP16" : "TF32";
}

conv_status tc_mma_peak_tflops(tc_peak_precision prec, int warmup, int repeat, double *tflops,
                               conv_msg *msg)
{
    *tflops = 0.0;
    int device = 0, sms = 0;
    CONV_CUDA_CHECK(cudaGetDevice(&device), msg);
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), msg);
    peak_run r = {prec, NULL, TC_PEAK_BLOCKS_PER_SM * sms, TC_PEAK_ITERS};
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
    const float want = tc_mma_peak_expected(prec, r.iters);
    for (size_t i = 0; st == CONV_OK && i < n; ++i)
        if (h[i] != want)
            st = conv_fail(msg, CONV_ERR_CUDA,
                           "mma.sync peak: thread %zu summed %g in %s, not %g: the products did "
                           "not run",
                           i, (double)h[i], peak_name(prec), (double)want);
    if (st == CONV_OK)
        *tflops = tc_mma_peak_flop(prec, r.blocks, r.iters) / (t.median_ms * 1e9);
    conv_device_free(r.d_sink);
    conv_host_free(h);
    return st;
}

void tc_print_mma_peak(FILE *out, const conv_cli_options *opt, double flop)
{
    static const char *const how = "on this GPU (measured: independent products on operands in "
                                   "registers, nothing loaded)";
    double tf32 = 0.0, fp16 = 0.0;
    conv_msg why_tf32 = {{0}}, why_fp16 = {{0}};
    const int tf32_ok =
        tc_mma_peak_tflops(TC_PEAK_TF32, opt->warmup, opt->repeat, &tf32, &why_tf32) == CONV_OK;
    const int fp16_ok =
        tc_mma_peak_tflops(TC_PEAK_FP16, opt->warmup, opt->repeat, &fp16, &why_fp16) == CONV_OK;
    if (tf32_ok && fp16_ok)
        fprintf(out,
                "mma.sync: %.1f TFLOP/s in TF32, %.1f in FP16 %s, the ceilings of 8b and "
                "8b-fp16; this problem at those rates: %.4f ms, %.4f ms\n",
                tf32, fp16, how, flop / (tf32 * 1e9), flop / (fp16 * 1e9));
    else if (tf32_ok)
        fprintf(out,
                "mma.sync: %.1f TFLOP/s in TF32 %s, the ceiling of 8b; this problem at that rate: "
                "%.4f ms; FP16 not measured: %s\n",
                tf32, how, flop / (tf32 * 1e9), why_fp16.text);
    else if (fp16_ok)
        fprintf(out,
                "mma.sync: %.1f TFLOP/s in FP16 %s, the ceiling of 8b-fp16; this problem at that "
                "rate: %.4f ms; TF32 not measured: %s\n",
                fp16, how, flop / (fp16 * 1e9), why_tf32.text);
    else
        fprintf(out, "mma.sync: its rates not measured: TF32: %s; FP16: %s\n", why_tf32.text,
                why_fp16.text);
}
