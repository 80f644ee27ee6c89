#include "conv_fp16.h"

#include <math.h>
#include <stdlib.h>

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

static double fp16_point_tol(const void *ctx, int n, int k, int oh, int ow)
{
    const conv_fp16_tol *t = ctx;
    const conv_params *p = t->p;
    const double u = ldexp(1.0, -11), eta = ldexp(1.0, -25);
    const double depth = (double)p->c * p->r * p->s, nu = depth * ldexp(1.0, -23);
    const double g = nu < 1.0 ? nu / (1.0 - nu) : INFINITY;
    const double c = (1 + u) * (1 + u) - 1 + g * (1 + u) * (1 + u);
    double v, xw, sx, sw;
    conv_reference_point(p, t->x, t->w, n, k, oh, ow, &v, &xw);
    conv_reference_point(p, t->x, t->ones_w, n, k, oh, ow, &v, &sx);
    conv_reference_point(p, t->ones_x, t->w, n, k, oh, ow, &v, &sw);
    return c * xw + (1 + g) * ((1 + u) * eta * (sx + sw) + depth * eta * eta);
}

static float *ones(size_t count)
{
    float *a = malloc((count > 0 ? count : 1) * sizeof *a);
    for (size_t i = 0; a != NULL && i < count; ++i)
        a[i] = 1.0f;
    return a;
}

conv_status conv_fp16_tol_prepare(conv_fp16_tol *t, const conv_params *p, const float *x,
                                  const float *w, conv_verify_opts *opts, conv_msg *msg)
{
    t->p = p;
    t->x = x;
    t->w = w;
    t->ones_x = ones(conv_input_elems(p));
    t->ones_w = ones(conv_filter_elems(p));
    if (t->ones_x == NULL || t->ones_w == NULL) {
        conv_fp16_tol_free(t);
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the FP16 bound");
    }
    *opts = conv_verify_pointwise(fp16_point_tol, t);
    return CONV_OK;
}

void conv_fp16_tol_free(conv_fp16_tol *t)
{
    free(t->ones_x);
    free(t->ones_w);
    t->ones_x = t->ones_w = NULL;
}
