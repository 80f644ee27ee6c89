/* Step 08 on the host: TF32 as the tensor cores see it, the problems the
 * step's kernels take, and the error bound of each variant, per output, with
 * S = sum |x * w| over its n = C*R*S products (Higham, ch. 3):
 *
 *   TF32 (8a, 8b):  |y - y_exact| <= [ (1 + u_t)^2 - 1 + gamma'_n (1 + u_t)^2 ] S
 *   8b-xt (9a, 9b): |y - y_exact| <= [ (1 + 2u_t)(1 + u_t) - 1
 *                                       + gamma'_n (1 + 2u_t)(1 + u_t) ] S
 *   3xTF32 (8c):    |y - y_exact| <= [ 3.01 u_t^2 + gamma'_{3n} (1 + u_t)^2 (1 + 2 u_t) ] S
 *
 * u_t = 2^-11 bounds an input rounded to TF32 (one truncated, as x in 8b-xt
 * and step 09's 9a and 9b, stays below 2 u_t); u = 2^-24; gamma'_n =
 * n*2u / (1 - n*2u), since the tensor cores' additions need not round to
 * nearest. Each bound is written
 * as a factor of the dot product's gamma_n S (conv_verify.h), the form the
 * harness uses (tc_bound_factor()).
 *
 * Lesson: docs/08_tensor_cores.md, section "Accuracy: three bounds". */
#ifndef TC_HOST_H
#define TC_HOST_H

#include <stddef.h>

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TC_TF32 = 0,    /* one TF32 product per term */
    TC_3XTF32,      /* three: big*big + big*small + small*big */
    TC_TF32_XTRUNC, /* one, x truncated to TF32 (8b-xt; step 09's 9a, 9b) */
    TC_PRECISION_COUNT
} tc_precision;

/* "TF32", "3xTF32" or "TF32, x truncated". */
const char *tc_precision_name(tc_precision t);

/* x rounded to TF32 as cvt.rna.tf32.f32 does (the low 13 mantissa bits
 * cleared after adding half of the last kept bit; NaN and infinity kept). */
float tc_tf32_round(float x);

/* x truncated to TF32 (its low 13 mantissa bits cleared), as the tensor
 * cores read a float they were given unconverted. */
float tc_tf32_truncate(float x);

/* The bound above for n products, as a factor of gamma_n (>= 1). */
double tc_bound_factor(tc_precision t, size_t n);

/* CONV_OK for a valid NHWC problem (x[N][H][W][C], w[R][S][C][K]); the
 * kernels take any N, C, K, H, W, filter, padding, stride and dilation
 * (8b and 8c NCHW too: tc_check_mma(), tc_check.h).
 * Otherwise CONV_ERR_UNSUPPORTED (NCHW) or CONV_ERR_INVALID, with one line. */
conv_status tc_supports(const conv_params *p, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* TC_HOST_H */
