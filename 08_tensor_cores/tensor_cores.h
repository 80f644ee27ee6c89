/* Step 08 on the GPU: 6f's implicit GEMM (NHWC) with its inner products on
 * the tensor cores:
 *   8a  through WMMA, TF32 inputs, float accumulation (tensor_cores_wmma_8a.cu),
 *       and in FP16 (8a-fp16), which every GPU from compute capability 7.0 runs;
 *   8b-fp16  mma.sync in FP16, ldmatrix, a cp.async pipeline fed by FP16
 *       copies of x and w (registers on Turing), from 7.5 (tensor_cores_mma_fp16.cu);
 *   8b  the same through mma.sync with a cp.async pipeline
 *       (tensor_cores_mma.cu); also with x truncated (8b-xt: the arithmetic
 *       of step 09's wgmma kernels);
 *   8c  8b in 3xTF32: each input split into a TF32 part and a TF32
 *       remainder, three products per term, float's accuracy (tc_host.h);
 * and mma.sync's rates in TF32 and FP16 on this GPU, measured
 * (tensor_cores_peak.cu). Step 09 (09_hopper/) runs the same product with
 * Hopper's wgmma and TMA, on this step's checks and helpers.
 * Any N, C, K, H, W, filter, padding, stride and dilation; NHWC, and for
 * 8b and 8c (conv2d_tc_mma) NCHW too. Needs
 * a GPU of compute capability 8.0 or newer and code built for one;
 * otherwise CONV_ERR_UNSUPPORTED with one line, before any launch. Device
 * pointers d_. */
#ifndef TENSOR_CORES_H
#define TENSOR_CORES_H

#include <cuda_runtime_api.h>

#include "conv_params.h"
#include "conv_status.h"
#include "tc_check.h"
#include "tc_host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CONV_OK when this GPU and this build run TF32 on tensor cores; else
 * CONV_ERR_UNSUPPORTED with one line saying which is missing (for one
 * kernel: conv_tf32_available(), common/conv_device.h). */
conv_status tc_available(conv_msg *msg);

/* 8a: y = conv(x, w) in TF32 through WMMA; 64 x 64 outputs per block. */
conv_status conv2d_tc_wmma(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                           cudaStream_t stream, conv_msg *msg);

/* 8a-fp16: the same in half precision (x and w rounded to FP16, float
 * accumulators), on every GPU from compute capability 7.0; x and w within
 * +-65504, FP16's largest value, or the output is infinite. */
conv_status conv2d_tc_wmma_fp16(const conv_params *p, const float *d_x, const float *d_w,
                                float *d_y, cudaStream_t stream, conv_msg *msg);

/* 8b-fp16: 8b's product in half precision through mma.sync (m16n8k16 from
 * compute capability 8.0, two m16n8k8 on 7.5), float accumulators; 128 x
 * 128 outputs per block; on every GPU from compute capability 7.5. In two
 * parts, or both at once:
 *   conv2d_tc_fp16_copies() writes into d_work x in FP16 (from its start)
 *     and the filter as KRSC in FP16 (from half conv2d_tc_fp16_filter_at(p)),
 *     each value rounded to nearest: what a network in half precision holds;
 *     step 09's 9b-fp16 reads the same copies;
 *   conv2d_tc_mma_fp16_run() is the convolution on those copies (on Turing,
 *     or where C % 8 != 0, it reads x itself and rounds it as it copies it);
 *   conv2d_tc_mma_fp16() calls the two.
 * d_work must hold conv2d_tc_fp16_workspace_elems(p) floats, 16-byte
 * aligned (work_elems says how many it holds; fewer, or no d_work:
 * CONV_ERR_INVALID before any launch). x and w within +-65504, as for
 * 8a-fp16. */
conv_status conv2d_tc_fp16_copies(const conv_params *p, const float *d_x, const float *d_w,
                                  float *d_work, size_t work_elems, cudaStream_t stream,
                                  conv_msg *msg);
conv_status conv2d_tc_mma_fp16_run(const conv_params *p, const float *d_x, const float *d_work,
                                   size_t work_elems, float *d_y, cudaStream_t stream,
                                   conv_msg *msg);
conv_status conv2d_tc_mma_fp16(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                               float *d_work, size_t work_elems, cudaStream_t stream,
                               conv_msg *msg);

/* Floats of the workspace of the FP16 copies; the half where the filter's
 * starts; CONV_OK when d_work is given, holds work_elems >= that many floats
 * and is 16-byte aligned (else CONV_ERR_INVALID, one line). */
size_t conv2d_tc_fp16_workspace_elems(const conv_params *p);
size_t conv2d_tc_fp16_filter_at(const conv_params *p);
conv_status conv2d_tc_fp16_check_work(const conv_params *p, const float *d_work, size_t work_elems,
                                      conv_msg *msg);

/* Floats of the workspace 8b and 8c need: the filter as KRSC, K*R*S*C. */
size_t conv2d_tc_mma_workspace_elems(const conv_params *p);

/* 8b (TC_TF32) and 8c (TC_3XTF32): the same product with mma.sync.m16n8k8
 * and a cp.async pipeline; 128 x 128 outputs per block. TC_TF32_XTRUNC runs
 * 8b with x not rounded, truncated by the tensor cores (8b-xt: step 09's
 * arithmetic). In NHWC or NCHW (p->layout): in NCHW a stage holds x's
 * pixels side by side, the layout's neighbours.
 * First the filter is written into d_work as KRSC (w[k][r][s][c]; in NCHW
 * copied as it is, KCRS), rounded
 * to TF32 but for 3xTF32; d_work must hold conv2d_tc_mma_workspace_elems(p)
 * floats (work_elems says how many it holds; fewer, or no d_work:
 * CONV_ERR_INVALID before any launch). */
conv_status conv2d_tc_mma(const conv_params *p, tc_precision t, const float *d_x, const float *d_w,
                          float *d_y, float *d_work, size_t work_elems, cudaStream_t stream,
                          conv_msg *msg);

/* The precision of mma.sync's rate: TF32, m16n8k8 products, the ceiling of
 * 8b; FP16, m16n8k16 (two m16n8k8 on compute capability 7.5), that of
 * 8b-fp16. Both with float accumulators. */
typedef enum { TC_PEAK_TF32 = 0, TC_PEAK_FP16 } tc_peak_precision;

/* mma.sync's rate in precision prec (tensor_cores_peak.cu): `blocks`
 * blocks of tc_mma_peak_threads() threads, each warp issuing iters rounds of
 * independent products on operands held in registers (all 1.0), each
 * thread then writing the sum of its accumulators to d_sink[thread], which
 * must equal tc_mma_peak_expected(prec, iters). That is
 * tc_mma_peak_flop(prec, blocks, iters) floating-point operations.
 * CONV_ERR_INVALID (one line) for a precision other than the two, a NULL
 * d_sink, blocks < 1 or iters outside [1, TC_PEAK_ITERS_MAX];
 * CONV_ERR_UNSUPPORTED where the precision does not run here (TF32: where
 * conv_tf32_available says no; FP16: below compute capability 7.5); both
 * before any launch. */
#define TC_PEAK_ITERS_MAX 32768 /* the sums stay exact in float (tensor_cores_peak.cu checks) */
conv_status tc_mma_peak(tc_peak_precision prec, float *d_sink, int blocks, int iters,
                        cudaStream_t stream, conv_msg *msg);
int tc_mma_peak_threads(void);
double tc_mma_peak_flop(tc_peak_precision prec, int blocks, int iters);
float tc_mma_peak_expected(tc_peak_precision prec, int iters);

#ifdef __cplusplus
}
#endif

#endif /* TENSOR_CORES_H */
