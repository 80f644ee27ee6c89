/* Step 10: the backward pass of a convolution layer on the CPU, the
 * references every GPU version of the step is checked against.
 *   dgrad: dx = the gradient of a loss with respect to the input x,
 *   wgrad: dw = the gradient with respect to the filter w,
 * both from dy, the gradient with respect to the output y = conv(x, w).
 * Both layouts, batch, padding, stride and dilation (conv_params.h); each sum
 * in double (common/conv_verify_backward.h), the float result rounded once.
 * Lesson: docs/10_backward.md, sections "Two gradients, two sums" and
 * "How far a float result may be off". */
#ifndef CONV_BACKWARD_CPU_H
#define CONV_BACKWARD_CPU_H

#include <stddef.h>

#include "conv_params.h"
#include "conv_verify_backward.h"

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

/* 10d's flipped filter on the CPU: h_wf at (kf = c, cf = k, r, s) of the
 * forward problem f (conv2d_backward_data_forward_params) is h_w at
 * (k, c, R-1-r, S-1-s) of p, each through its problem's offsets. */
void conv2d_backward_data_flip_filter_cpu(const conv_params *p, const conv_params *f,
                                          const float *h_w, float *h_wf);

#ifdef __cplusplus
}
#endif

#endif /* CONV_BACKWARD_CPU_H */
