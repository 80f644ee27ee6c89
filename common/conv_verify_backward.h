/* The double references of the backward pass, what every dgrad and wgrad
 * (step 10's, cuDNN's) is verified against, as conv_verify.h is for the
 * forward pass:
 *   dgrad: dx[n][c][h][w] = sum over k, r, s of dy[n][k][oh][ow] * w[k][c][r][s]
 *          for the taps whose output position (h + pad_h - r*dil_h) / stride_h
 *          (and likewise along w) divides exactly and lies in the output;
 *   wgrad: dw[k][c][r][s] = sum over n, oh, ow of x[n][c][ih][iw] * dy[n][k][oh][ow]
 *          with ih = oh*stride_h - pad_h + r*dil_h (likewise iw), x = 0 outside.
 * dy has the output's shape; both layouts (conv_params.h). The bound of a
 * float result is gamma_n * sum |term| with n the depth of its sum.
 * Lesson: docs/10_backward.md. */
#ifndef CONV_VERIFY_BACKWARD_H
#define CONV_VERIFY_BACKWARD_H

#include <stddef.h>
#include <stdint.h>

#include "conv_params.h"
#include "conv_verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One element's sum in double and its sum |term|: dx at (n, c, ih, iw),
 * dw at (k, c, r, s). For sampled verification of large problems. */
void conv_backward_data_point(const conv_params *p, const float *dy, const float *w, int n, int c,
                              int ih, int iw, double *value, double *abs_sum);
void conv_backward_filter_point(const conv_params *p, const float *x, const float *dy, int k, int c,
                                int r, int s, double *value, double *abs_sum);

/* The same sums in double, with sum |term| beside each (either output may be
 * NULL): what the verification's bound is made of. No validation: the
 * callers validate first. */
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
 * opts.bound_factor * gamma_depth * sum|term| per element, or within
 * opts.point_tol(ctx, a, b, c, d) (conv_verify_pointwise) called with the
 * element's indices: (n, c, ih, iw) of dx, (k, c, r, s) of dw. The same
 * three modes hold for the functions below. */
conv_verify_report conv_backward_data_verify(const conv_params *p, const float *dy, const float *w,
                                             const float *got, conv_verify_opts opts);
conv_verify_report conv_backward_filter_verify(const conv_params *p, const float *x,
                                               const float *dy, const float *got,
                                               conv_verify_opts opts);

/* ---- any pass, as the harness checks a row: p->pass names the output ---- */

/* The depth n of the bound of p->pass's sums: C*R*S for the forward pass,
 * conv_backward_data_depth or conv_backward_filter_depth for the others. */
size_t conv_pass_depth(const conv_params *p);
/* The double reference of every element of p->pass's output (y, dx or dw)
 * from the two tensors it reads, x, w and dy (y's shape): either result
 * array may be NULL. */
void conv_pass_reference_double(const conv_params *p, const float *x, const float *w,
                                const float *dy, double *ref, double *abs_sum);
/* A float output against that reference computed beforehand (forward:
 * conv_verify_precomputed); ref_abs is the magnitudes array the reference
 * filled, and must not be NULL: the bound of every element reads it. */
conv_verify_report conv_pass_verify_precomputed(const conv_params *p, const float *got,
                                                const double *ref, const double *ref_abs,
                                                conv_verify_opts opts);
/* A sample of `samples` elements chosen by the random stream (the first and
 * the last among them), each computed in double (forward:
 * conv_verify_sampled); for wgrad no more than CONV_PASS_SAMPLED_TERMS
 * terms in all (at least 64 samples). */
#define CONV_PASS_SAMPLED_TERMS ((size_t)100000000)
conv_verify_report conv_pass_verify_sampled(const conv_params *p, const float *x, const float *w,
                                            const float *dy, const float *got, size_t samples,
                                            uint64_t seed, conv_verify_opts opts);

#ifdef __cplusplus
}
#endif

#endif /* CONV_VERIFY_BACKWARD_H */
