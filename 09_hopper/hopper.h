/* Step 09 on the GPU: step 08's implicit GEMM (NHWC, TF32) on Hopper's own
 * tensor-core instructions:
 *   9a  TF32 through wgmma, asynchronous warpgroup products with one operand
 *       read from shared memory, fed by a cp.async pipeline (hopper_wgmma_9a.cu);
 *   9b  9a's products with their copies made by the Tensor Memory
 *       Accelerator, one producer warpgroup feeding two consumers, in
 *       persistent blocks (hopper_tma_9b.cu);
 *   9c  9b with its sum split into slices where the output tiles are fewer
 *       than the SMs, the slices added in a fixed order (split-K, the same
 *       file);
 * and each in half precision, on step 08's FP16 copies (9a-fp16:
 * hopper_wgmma_fp16.cu, 9b-fp16: hopper_tma_fp16.cu). In TF32 both keep x
 * as stored, truncated to TF32 by the tensor cores (step 08's
 * TC_TF32_XTRUNC bound, tc_host.h). Any N, C, K, H, W, filter, padding,
 * stride and dilation; NHWC only (step 08's checks, tc_check.h). Needs a GPU
 * of compute capability 9.0 and code built for sm_90a; otherwise
 * CONV_ERR_UNSUPPORTED with one line, before any launch. Device pointers d_. */
#ifndef HOPPER_H
#define HOPPER_H

#include <cuda_runtime_api.h>

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What 9a and 9b need before a launch (hopper_wgmma_9a.cu): TF32 tensor
 * cores, compute capability 9.0, sm_90a code in this build and `kernel`'s
 * block (threads, dynamic shared memory); the message names `what` and
 * `name`. */
conv_status tc_wgmma_runs(const void *kernel, const char *what, const char *name, int threads,
                          size_t smem, conv_msg *msg);

/* CONV_OK when 9a runs here: a GPU of compute capability 9.0, a build with
 * sm_90a code, and the shared memory 9a needs (201 KB per block); else
 * CONV_ERR_UNSUPPORTED with one line saying which is missing. */
conv_status tc_wgmma_available(conv_msg *msg);

/* 9a: y = conv(x, w) with wgmma.mma_async (the weights rounded to TF32, x
 * truncated by the tensor cores); 128 output channels x 256 pixels per
 * block. */
conv_status conv2d_tc_wgmma(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                            cudaStream_t stream, conv_msg *msg);

/* 1 when a TMA tensor map can describe the problem: C and K multiples of 4,
 * x, w and y 16-byte aligned, padding and pad - (filter - 1) * dilation within
 * [-128, 127] on each axis, strides up to 8. No CUDA call. */
int tc_tma_fits(const conv_params *p, const float *d_x, const float *d_w, const float *d_y);

/* CONV_OK when 9b runs here (as tc_wgmma_available, 197 KB per block). */
conv_status tc_tma_available(conv_msg *msg);

/* 9b: 9a's product with its copies made by TMA (im2col mode for x) and its
 * warps in roles, one producer warpgroup and two consumer warpgroups
 * synchronised by mbarriers (hopper_tma_9b.cu), in persistent blocks (one
 * per SM, each walking many tiles); the same precision and tile as 9a. A
 * problem no tensor map describes (tc_tma_fits) runs 9a. */
conv_status conv2d_tc_tma(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                          cudaStream_t stream, conv_msg *msg);

/* 9c: 9b's kernel with each output tile's sum (its stages of 32 channels
 * of one tap) cut into `splits` slices, one work item per tile and slice,
 * each slice's partial tile written to d_work, then the slices added in
 * slice order into y: the same bits on every run for the same splits.
 *
 * conv2d_tc_tma_splits(): the slices the rule picks on a GPU of sm_count
 * SMs: as many as fit in one wave beside the tiles (SMs / tiles), each at
 * least TC9C_MIN_SLICE_STAGES stages deep, at most TC9C_MAX_SPLITS; 1 where
 * the tiles alone fill half the SMs or more (or for an invalid p).
 * conv2d_tc_tma_split_workspace(): the bytes `splits` slices need (one
 * output per slice; 0 for one slice, or a problem no tensor map describes).
 * conv2d_tc_tma_split(): splits <= 0 asks the rule on the current device;
 * too small or unaligned a workspace is CONV_ERR_INVALID with one line. A
 * problem no tensor map describes runs 9a, unsplit. */
#define TC9C_MIN_SLICE_STAGES 8
#define TC9C_MAX_SPLITS       16
int conv2d_tc_tma_splits(const conv_params *p, int sm_count);
size_t conv2d_tc_tma_split_workspace(const conv_params *p, int splits);
conv_status conv2d_tc_tma_split(const conv_params *p, const float *d_x, const float *d_w,
                                float *d_y, int splits, float *d_work, size_t work_bytes,
                                cudaStream_t stream, conv_msg *msg);

/* 9a-fp16: 9a in half precision, wgmma m64n256k16 with both operands in
 * shared memory, copied by cp.async from step 08's FP16 copies
 * (tensor_cores.h: x and the filter rounded to FP16, float accumulators,
 * 8b-fp16's bound); 9a's block. In two parts or both at once, as 8b-fp16:
 * conv2d_tc_fp16_copies() then conv2d_tc_wgmma_fp16_run(), or
 * conv2d_tc_wgmma_fp16(); the workspace as 8b-fp16's. A problem with C not
 * a multiple of 8 (tc_wgmma_fp16_fits; no CUDA call) runs 8b-fp16 on the
 * same copies. */
int tc_wgmma_fp16_fits(const conv_params *p);
conv_status tc_wgmma_fp16_available(conv_msg *msg);
conv_status conv2d_tc_wgmma_fp16_run(const conv_params *p, const float *d_x, const float *d_work,
                                     size_t work_elems, float *d_y, cudaStream_t stream,
                                     conv_msg *msg);
conv_status conv2d_tc_wgmma_fp16(const conv_params *p, const float *d_x, const float *d_w,
                                 float *d_y, float *d_work, size_t work_elems, cudaStream_t stream,
                                 conv_msg *msg);

/* 9b-fp16: 9b in half precision, wgmma m64n256k16 with both operands in
 * shared memory, on step 08's FP16 copies (tensor_cores.h: x and the filter
 * rounded to FP16, float accumulators, 8b-fp16's bound), its output stored
 * by TMA too. In two parts or both at once, as 8b-fp16:
 * conv2d_tc_fp16_copies() then conv2d_tc_tma_fp16_run(), or
 * conv2d_tc_tma_fp16(); the workspace as 8b-fp16's. A problem no tensor map
 * describes (tc_tma_fp16_fits: C % 8 == 0, K % 4 == 0, y 16-byte aligned,
 * N P Q within an int, the window and the strides as for 9b; no CUDA call)
 * runs 8b-fp16 on the same copies. */
int tc_tma_fp16_fits(const conv_params *p, const float *d_y);
conv_status tc_tma_fp16_available(conv_msg *msg);
conv_status conv2d_tc_tma_fp16_run(const conv_params *p, const float *d_x, const float *d_work,
                                   size_t work_elems, float *d_y, cudaStream_t stream,
                                   conv_msg *msg);
conv_status conv2d_tc_tma_fp16(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                               float *d_work, size_t work_elems, cudaStream_t stream,
                               conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* HOPPER_H */
