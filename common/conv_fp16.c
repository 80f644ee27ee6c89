#include "conv_fp16.h"

#include <math.h>

float conv_round_fp16(float v)
{
    if (isnan(v) || isinf(v))
        return v;
    const double a = fabs((double)v);
    if (a >= 65520.0) /* halfway between 65504 and 65536, which FP16 no longer holds */
        return v > 0 ? INFINITY : -INFINITY;
    int e = 0;
    frexp(a, &e); /* a = m 2^e, m in [0.5, 1): the leading bit is 2^(e - 1) */
    const int lead = e - 1 < -14 ? -14 : e - 1; /* below 2^-14 the spacing stays 2^-24 */
    const double spacing = ldexp(1.0, lead - 10);
    const double r = nearbyint(a / spacing) * spacing; /* ties to even */
    return (float)(v < 0 ? -r : r);
}

conv_status conv_fp16_check_range(const float *v, size_t count, const char *what, conv_msg *msg)
{
    for (size_t i = 0; i < count; ++i)
        if (!(fabsf(v[i]) <= CONV_FP16_MAX))
            return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                             "%s[%zu] = %g is beyond FP16's range (+-65504): scale the inputs "
                             "into it, or take an FP32 or TF32 row",
                             what, i, (double)v[i]);
    return CONV_OK;
}

static double largest(const float *v, size_t count)
{
    double m = 0.0;
    for (size_t i = 0; i < count; ++i)
        m = fabs((double)v[i]) > m ? fabs((double)v[i]) : m;
    return m;
}

conv_verify_opts conv_fp16_bound(size_t depth, const float *x, size_t nx, const float *w, size_t nw)
{
    const double u = ldexp(1.0, -11), eta = ldexp(1.0, -25), n = (double)depth;
    const double nu = n * ldexp(1.0, -23), g = nu < 1.0 ? nu / (1.0 - nu) : INFINITY;
    conv_verify_opts o = conv_verify_bound(conv_tf32_bound_factor(depth));
    o.abs_term = (1 + g) * ((1 + u) * eta * n * (largest(x, nx) + largest(w, nw)) + n * eta * eta);
    return o;
}
