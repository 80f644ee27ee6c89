/* Half precision (IEEE binary16, "FP16") seen from the host: rounding a float
 * to it, the range a kernel that rounds its inputs to it accepts, and the
 * error bound of such a kernel: inputs rounded to FP16, products exact in
 * float, sums in float (step 08's 8a-fp16).
 *
 * Lesson: docs/08_tensor_cores.md, section "8a in half precision". */
#ifndef CONV_FP16_H
#define CONV_FP16_H

#include <stddef.h>

#include "conv_status.h"
#include "conv_verify.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CONV_FP16_MAX 65504.0f /* the largest finite FP16 value */

/* v rounded to the nearest FP16 value, ties to even (as __float2half_rn):
 * 11 significant bits down to 2^-14, then the fixed spacing 2^-24 of the
 * subnormals; +-infinity from 65520 on; NaN kept. Returned as a float
 * (exact: every FP16 value is one). */
float conv_round_fp16(float v);

/* CONV_OK when every one of v's count values is finite and within
 * +-CONV_FP16_MAX; else CONV_ERR_UNSUPPORTED with one line naming `what`,
 * the first value beyond and its offset. */
conv_status conv_fp16_check_range(const float *v, size_t count, const char *what, conv_msg *msg);

/* The bound of a kernel that rounds x and w to FP16 (u = 2^-11 for normal
 * values, an absolute error of at most 2^-25 below 2^-14), multiplies
 * exactly and sums n = depth products in float:
 *   |got - exact| <= c sum|x w| + (1 + g)((1 + u) 2^-25 n (max|x| + max|w|) + n 2^-50)
 * c = (1 + u)^2 - 1 + g (1 + u)^2, g = n 2^-23 / (1 - n 2^-23): TF32's
 * factor (conv_tf32_bound_factor), plus an absolute term (abs_term) from the
 * largest inputs, nx of x and nw of w. */
conv_verify_opts conv_fp16_bound(size_t depth, const float *x, size_t nx, const float *w,
                                 size_t nw);

#ifdef __cplusplus
}
#endif

#endif /* CONV_FP16_H */
