/* Step 08 on the host: TF32 rounding, the error bounds, the problems the
 * kernels take (tc_host.h). */
#include "tc_host.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "conv_verify.h"

const char *tc_precision_name(tc_precision t)
{
    return t == TC_3XTF32 ? "3xTF32" : t == TC_TF32_XTRUNC ? "TF32, x truncated" : "TF32";
}

/* excerpt: tf32 round */
/* x's bits plus `add`, then bits 0..12 cleared; NaN and infinity kept. */
static float tf32_from_bits(float x, uint32_t add)
{
    if (!isfinite(x))
        return x;
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits = (bits + add) & 0xffffe000u;
    memcpy(&x, &bits, sizeof x);
    return x;
}

float tc_tf32_round(float x)
{
    return tf32_from_bits(x, 0x1000u); /* + half of bit 13: to nearest, ties away */
}
/* excerpt end: tf32 round */

float tc_tf32_truncate(float x)
{
    return tf32_from_bits(x, 0);
}

/* gamma'_n = n * 2u / (1 - n * 2u): float additions that may truncate. */
static double gamma_truncating(size_t n)
{
    const double nu = (double)n * ldexp(1.0, -23);
    return nu < 1.0 ? nu / (1.0 - nu) : INFINITY;
}

double tc_bound_factor(tc_precision t, size_t n)
{
    const double ut = ldexp(1.0, -11), g = conv_gamma(n);
    double c;
    if (t == TC_3XTF32)
        c = 3.01 * ut * ut + gamma_truncating(3 * n) * (1 + ut) * (1 + ut) * (1 + 2 * ut);
    else if (t == TC_TF32_XTRUNC)
        c = (1 + 2 * ut) * (1 + ut) - 1 + gamma_truncating(n) * (1 + 2 * ut) * (1 + ut);
    else
        return conv_tf32_bound_factor(n); /* conv_verify.h: the same bound */
    return c / g > 1.0 ? c / g : 1.0;
}

conv_status tc_supports(const conv_params *p, conv_msg *msg)
{
    return conv_params_validate_layout(
        p, CONV_LAYOUT_NHWC,
        "--layout nchw: this version runs the NHWC implicit GEMM of 6f (x[N][H][W][C], "
        "w[R][S][C][K]), as only 8b and 8c of step 08 take NCHW; give --layout nhwc",
        msg);
}
