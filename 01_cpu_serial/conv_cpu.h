/* Step 01: convolution on the CPU. The serial version is the reference that
 * every GPU step is compared with (exactly, on small-integer inputs).
 * Versions: 1a conv2d_cpu_serial, 1b conv2d_cpu_openmp, 1c conv1d_cpu_same. */
#ifndef CONV_CPU_H
#define CONV_CPU_H

#include <stddef.h>

#include "conv_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The five loops of the lecture, oc -> h -> w -> ic -> kh -> kw (inside a loop
 * over the batch), one float accumulator per output element. Both layouts;
 * batch, padding, stride and dilation. */
conv_status conv2d_cpu_serial(const conv_params *p, const float *h_x, const float *h_w, float *h_y,
                              conv_msg *msg);

/* The same loops with the (n, oc, h) iterations shared among OpenMP threads;
 * each output is still summed by one thread in the same order, so the result
 * is bit-identical to the serial version. */
conv_status conv2d_cpu_openmp(const conv_params *p, const float *h_x, const float *h_w, float *h_y,
                              conv_msg *msg);
/* Threads conv2d_cpu_openmp uses (1 when built without OpenMP). */
int conv2d_cpu_openmp_threads(void);

/* 1D convolution with "same" zero padding: y[i] = sum_j x[i - half + j] * mask[j],
 * half = (mask_width - 1) / 2, x = 0 outside [0, width). Step 03's reference. */
conv_status conv1d_cpu_same(const float *h_x, size_t width, const float *h_mask, int mask_width,
                            float *h_y, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_CPU_H */
