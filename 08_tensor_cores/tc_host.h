/* Step 08 on the host: TF32 as the tensor cores see it, the problems the
 * step's kernels take, and the error bound of each variant.
 *
 * TF32 keeps float's 8 exponent bits and 10 of its 23 mantissa bits. 8a to
 * 8c round each input to TF32 to nearest (cvt.rna.tf32.f32, which
 * wmma::__float_to_tf32 uses; 8b and 8c on sm_90 use cvt.rn, ties to even,
 * one instruction there), so each input carries a relative error of at most
 * u_t = 2^-11. 8d rounds the weights the same way, but the tensor cores read
 * its activations from shared memory as stored and ignore their low 13 bits:
 * x is truncated, a relative error below 2 u_t (and so in 8e, and in 8b's
 * row "x truncated", which hands x to mma.sync unconverted to show what the
 * rounding costs). The tensor core multiplies
 * the TF32 inputs exactly (two 11-bit significands fit in float's 24) and
 * adds the products in float. Its additions are not IEEE round-to-nearest
 * on every GPU, so the bound allows them twice float's unit roundoff:
 * gamma'_n = n*2u / (1 - n*2u), u = 2^-24. Per output, with S = sum |x * w|
 * over its n = C*R*S products (Higham, ch. 3):
 *
 *   TF32 (8a, 8b):  |y - y_exact| <= [ (1 + u_t)^2 - 1 + gamma'_n (1 + u_t)^2 ] S
 *
 *   8d, 8e, 8b-xt:  |y - y_exact| <= [ (1 + 2u_t)(1 + u_t) - 1
 *                                      + gamma'_n (1 + 2u_t)(1 + u_t) ] S
 *
 *   3xTF32 (8c):  each input split as x = big + small + e, big = tf32(x),
 *                 small = tf32(x - big) (x - big is exact in float), so
 *                 |small| <= u_t (1 + u_t) |x| and |e| <= u_t |small|; the
 *                 product x*w ~ big*big + big*small + small*big drops
 *                 small*small and the e terms, in all at most 3.01 u_t^2 |x w|,
 *                 and the sum has 3n terms:
 *                 |y - y_exact| <= [ 3.01 u_t^2 + gamma'_{3n} (1 + u_t)^2 (1 + 2 u_t) ] S
 *                 (8c adds each k-step's three products in the tensor core,
 *                 then the step's sum to the output's in float, rounded to
 *                 nearest: fewer truncating additions than the bound allows.)
 *
 * TF32's term (about 2^-10 S) does not shrink with n: a sum of three
 * products already carries it. 3xTF32's (about 2^-20 S) is below float's
 * accumulation error for n above about 16, which is why it is "FP32
 * accuracy on tensor cores". Each is written as a factor of the dot
 * product's bound gamma_n S (conv_verify.h), the form the harness uses. */
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
    TC_TF32_XTRUNC, /* one, x truncated to TF32 (8d, 8e, 8b-xt) */
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
 * kernels take any N, C, K, H, W, filter, padding, stride and dilation.
 * Otherwise CONV_ERR_UNSUPPORTED (NCHW) or CONV_ERR_INVALID, with one line. */
conv_status tc_supports(const conv_params *p, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* TC_HOST_H */
