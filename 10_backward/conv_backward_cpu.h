/* Step 10: the backward pass of a convolution layer on the CPU, the
 * references every GPU version of the step is checked against.
 *   dgrad: dx = the gradient of a loss with respect to the input x,
 *   wgrad: dw = the gradient with respect to the filter w,
 * both from dy, the gradient with respect to the output y = conv(x, w).
 * Both layouts, batch, padding, stride and dilation (conv_params.h); each sum
 * in double, the float result rounded once.
 * Lesson: docs/10_backward.md, sections "Two gradients, two sums" and
 * "How far a float result may be off". */
#ifndef CONV_BACKWARD_CPU_H
#define CONV_BACKWARD_CPU_H

#include <stddef.h>

#include "conv_params.h"
#include "conv_verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dx[n][c][h][w] = sum over k, r, s of dy[n][k][oh][ow] * w[k][c][r][s],
 * for the (r, s) whose output position oh = (h + pad_h - r*dil_h) / stride_h
 * (ow likewise) divides exactly and lies in [0, P) x [0, Q).
 * h_dy has the output's shape, h_dx the input's. */
conv_status conv2d_backward_data_cpu(const conv_params *p, const float *h_dy, const float *h_w,
                                     float *h_dx, conv_msg *msg);

/* dw[k][c][r][s] = sum over n, oh, ow of x[n][c][ih][iw] * dy[n][k][oh][ow],
 * ih = oh*stride_h - pad_h + r*dil_h (iw likewise), x = 0 outside the image.
 * h_dy has the output's shape, h_dw the filter's. */
conv_status conv2d_backward_filter_cpu(const conv_params *p, const float *h_x, const float *h_dy,
                                       float *h_dw, conv_msg *msg);

/* The same sums in double, with sum |term| beside each (either output may be
 * NULL): what the verification's bound is made of. No validation: the
 * callers above and the tests validate first. */
void conv_backward_data_double(const conv_params *p, const float *dy, const float *w, double *dx,
                               double *abs_sum);
void conv_backward_filter_double(const conv_params *p, const float *x, const float *dy, double *dw,
                                 double *abs_sum);

/* How many terms an element's sum has at most: K*R*S for dgrad (fewer with a
 * stride: only the taps that land on an output), N*P*Q for wgrad. The depth n
 * of the bound gamma_n * sum|term| (conv_verify.h). */
size_t conv_backward_data_depth(const conv_params *p);
size_t conv_backward_filter_depth(const conv_params *p);

/* A float dx (or dw) against the double sums: exactly, or within
 * opts.bound_factor * gamma_depth * sum|term| per element. */
conv_verify_report conv_backward_data_verify(const conv_params *p, const float *dy, const float *w,
                                             const float *got, conv_verify_opts opts);
conv_verify_report conv_backward_filter_verify(const conv_params *p, const float *x,
                                               const float *dy, const float *got,
                                               conv_verify_opts opts);

#ifdef __cplusplus
}
#endif

#endif /* CONV_BACKWARD_CPU_H */
