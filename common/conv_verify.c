#include "conv_verify.h"

#include "conv_tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* excerpt: conv_gamma */
double conv_gamma(size_t n)
{
    const double u = ldexp(1.0, -24);
    double nu = (double)n * u;
    return nu >= 1.0 ? INFINITY : nu / (1.0 - nu);
}
/* excerpt end: conv_gamma */

double conv_tf32_bound_factor(size_t n)
{
    const double ut = ldexp(1.0, -11), nu = (double)n * ldexp(1.0, -23);
    const double g2 = nu < 1.0 ? nu / (1.0 - nu) : INFINITY;
    const double c = (1 + ut) * (1 + ut) - 1 + g2 * (1 + ut) * (1 + ut);
    return c / conv_gamma(n) > 1.0 ? c / conv_gamma(n) : 1.0;
}

conv_verify_opts conv_verify_exact(void)
{
    conv_verify_opts o = {.mode = CONV_VERIFY_EXACT, .bound_factor = 1.0};
    return o;
}

conv_verify_opts conv_verify_bound(double factor)
{
    conv_verify_opts o = {.mode = CONV_VERIFY_BOUND, .bound_factor = factor};
    return o;
}

conv_verify_opts conv_verify_pointwise(conv_point_tol tol, const void *ctx)
{
    conv_verify_opts o = {
        .mode = CONV_VERIFY_BOUND, .bound_factor = 1.0, .point_tol = tol, .point_ctx = ctx};
    return o;
}

void conv_reference_point(const conv_params *p, const float *x, const float *w, int n, int k,
                          int out_h, int out_w, double *value, double *abs_sum)
{
    double sum = 0.0, mag = 0.0;
    for (int c = 0; c < p->c; ++c)
        for (int r = 0; r < p->r; ++r) {
            long long ih = (long long)out_h * p->stride_h - p->pad_h + (long long)r * p->dil_h;
            if (ih < 0 || ih >= p->h)
                continue;
            for (int s = 0; s < p->s; ++s) {
                long long iw = (long long)out_w * p->stride_w - p->pad_w + (long long)s * p->dil_w;
                if (iw < 0 || iw >= p->w)
                    continue;
                double prod = (double)x[conv_input_offset(p, n, c, (int)ih, (int)iw)] *
                              (double)w[conv_filter_offset(p, k, c, r, s)];
                sum += prod;
                mag += fabs(prod);
            }
        }
    *value = sum;
    if (abs_sum != NULL)
        *abs_sum = mag;
}

void conv_reference_double(const conv_params *p, const float *x, const float *w, double *y,
                           double *abs_sum)
{
    /* Rows (n, k, oh) are independent: shared among threads where OpenMP is
     * available (each output is still one sequential double sum). */
    long long P = conv_out_h(p), Q = conv_out_w(p), rows = (long long)p->n * p->k * P;
#pragma omp parallel for schedule(dynamic, 16)
    for (long long row = 0; row < rows; ++row) {
        int oh = (int)(row % P), k = (int)(row / P % p->k), n = (int)(row / P / p->k);
        for (int ow = 0; ow < Q; ++ow) {
            size_t at = conv_output_offset(p, n, k, oh, ow);
            double v, m;
            conv_reference_point(p, x, w, n, k, oh, ow, &v, &m);
            if (y != NULL)
                y[at] = v;
            if (abs_sum != NULL)
                abs_sum[at] = m;
        }
    }
}

conv_verify_report conv_report_init(void)
{
    conv_verify_report r = {0};
    r.first_index = -1;
    r.first_n = r.first_k = r.first_p = r.first_q = -1;
    return r;
}

void conv_report_add(conv_verify_report *rep, size_t index, double got, double want, double tol,
                     int exact)
{
    rep->checked++;
    /* excerpt: verdict of one output */
    int finite = isfinite(got);
    double err = fabs(got - want);
    int bad = !finite || (exact ? got != want : err > tol);
    /* excerpt end: verdict of one output */
    if (!finite)
        rep->nan_count++;
    if (finite) {
        if (err > rep->max_abs_err)
            rep->max_abs_err = err;
        if (want != 0.0 && err / fabs(want) > rep->max_rel_err)
            rep->max_rel_err = err / fabs(want);
        rep->sum_err2 += err * err;
        rep->sum_want2 += want * want;
    }
    if (bad) {
        if (rep->mismatches == 0) {
            rep->first_index = (long long)index;
            rep->first_got = got;
            rep->first_want = want;
            rep->first_tol = exact ? 0.0 : tol;
        }
        rep->mismatches++;
    }
}

void conv_report_finish(conv_verify_report *rep)
{
    rep->rel_l2_err =
        rep->sum_want2 > 0.0 ? sqrt(rep->sum_err2 / rep->sum_want2) : sqrt(rep->sum_err2);
    rep->passed = rep->checked > 0 && rep->mismatches == 0;
}

static void locate_first(const conv_params *p, conv_verify_report *rep)
{
    if (p != NULL && rep->first_index >= 0)
        conv_output_coords(p, (size_t)rep->first_index, &rep->first_n, &rep->first_k, &rep->first_p,
                           &rep->first_q);
}

/* excerpt: tolerance */
static double tolerance(conv_verify_opts opts, size_t depth, double abs_sum)
{
    return opts.bound_factor * conv_gamma(depth) * abs_sum + opts.abs_term;
}
/* excerpt end: tolerance */

/* The tolerance of output (n, k, oh, ow): its own, where the options give one. */
static double tolerance_at(conv_verify_opts opts, size_t depth, double abs_sum, int n, int k,
                           int oh, int ow)
{
    if (opts.point_tol != NULL)
        return opts.point_tol(opts.point_ctx, n, k, oh, ow);
    return tolerance(opts, depth, abs_sum);
}

conv_verify_report conv_verify_full(const conv_params *p, const float *x, const float *w,
                                    const float *got, conv_verify_opts opts)
{
    conv_verify_report rep = conv_report_init();
    size_t depth = (size_t)p->c * p->r * p->s;
    int P = conv_out_h(p), Q = conv_out_w(p);
    int exact = opts.mode == CONV_VERIFY_EXACT;
    for (int n = 0; n < p->n; ++n)
        for (int k = 0; k < p->k; ++k)
            for (int oh = 0; oh < P; ++oh)
                for (int ow = 0; ow < Q; ++ow) {
                    size_t at = conv_output_offset(p, n, k, oh, ow);
                    double want, mag;
                    conv_reference_point(p, x, w, n, k, oh, ow, &want, &mag);
                    conv_report_add(&rep, at, got[at], want,
                                    tolerance_at(opts, depth, mag, n, k, oh, ow), exact);
                }
    conv_report_finish(&rep);
    locate_first(p, &rep);
    return rep;
}

conv_verify_report conv_verify_precomputed(const conv_params *p, const float *got,
                                           const double *ref, const double *ref_abs,
                                           conv_verify_opts opts)
{
    conv_verify_report rep = conv_report_init();
    size_t depth = (size_t)p->c * p->r * p->s, total = conv_output_elems(p);
    for (size_t at = 0; at < total; ++at) {
        double tol = tolerance(opts, depth, ref_abs[at]);
        if (opts.point_tol != NULL) {
            int n, k, oh, ow;
            conv_output_coords(p, at, &n, &k, &oh, &ow);
            tol = opts.point_tol(opts.point_ctx, n, k, oh, ow);
        }
        conv_report_add(&rep, at, got[at], ref[at], tol, opts.mode == CONV_VERIFY_EXACT);
    }
    conv_report_finish(&rep);
    locate_first(p, &rep);
    return rep;
}

conv_verify_report conv_verify_sampled(const conv_params *p, const float *x, const float *w,
                                       const float *got, size_t samples, uint64_t seed,
                                       conv_verify_opts opts)
{
    conv_verify_report rep = conv_report_init();
    size_t total = conv_output_elems(p);
    size_t depth = (size_t)p->c * p->r * p->s;
    if (samples > total)
        samples = total;
    for (size_t i = 0; i < samples; ++i) {
        size_t at = i == 0 ? 0 : i == 1 ? total - 1 : (size_t)(conv_rng_hash(seed, i) % total);
        int n, k, oh, ow;
        double want, mag;
        conv_output_coords(p, at, &n, &k, &oh, &ow);
        conv_reference_point(p, x, w, n, k, oh, ow, &want, &mag);
        conv_report_add(&rep, at, got[at], want, tolerance_at(opts, depth, mag, n, k, oh, ow),
                        opts.mode == CONV_VERIFY_EXACT);
    }
    conv_report_finish(&rep);
    locate_first(p, &rep);
    return rep;
}

conv_verify_report conv_compare_exact(const conv_params *p, const float *got, const float *want,
                                      size_t count)
{
    conv_verify_report rep = conv_report_init();
    for (size_t i = 0; i < count; ++i)
        conv_report_add(&rep, i, got[i], want[i], 0.0, 1);
    conv_report_finish(&rep);
    locate_first(p, &rep);
    return rep;
}

void conv1d_reference_double(const float *x, size_t width, const float *mask, int mask_width,
                             double *y, double *abs_sum)
{
    long long half = (mask_width - 1) / 2;
    for (size_t i = 0; i < width; ++i) {
        double sum = 0.0, mag = 0.0;
        for (int j = 0; j < mask_width; ++j) {
            long long at = (long long)i - half + j;
            if (at < 0 || at >= (long long)width)
                continue;
            double prod = (double)x[at] * (double)mask[j];
            sum += prod;
            mag += fabs(prod);
        }
        if (y != NULL)
            y[i] = sum;
        if (abs_sum != NULL)
            abs_sum[i] = mag;
    }
}

conv_verify_report conv1d_verify_full(const float *x, size_t width, const float *mask,
                                      int mask_width, const float *got, conv_verify_opts opts)
{
    conv_verify_report rep = conv_report_init();
    double *want = malloc(width * sizeof *want);
    double *mag = malloc(width * sizeof *mag);
    if (want == NULL || mag == NULL) {
        free(want);
        free(mag);
        rep.mismatches = 1; /* cannot verify: report a failure, never a pass */
        return rep;
    }
    conv1d_reference_double(x, width, mask, mask_width, want, mag);
    for (size_t i = 0; i < width; ++i)
        conv_report_add(&rep, i, got[i], want[i], tolerance(opts, (size_t)mask_width, mag[i]),
                        opts.mode == CONV_VERIFY_EXACT);
    conv_report_finish(&rep);
    free(want);
    free(mag);
    return rep;
}

void conv_report_describe(const conv_verify_report *rep, char *buf, size_t len)
{
    if (rep->passed) {
        snprintf(buf, len, "OK (%zu checked, max abs err %.3g, max rel err %.3g, rel L2 %.3g)",
                 rep->checked, rep->max_abs_err, rep->max_rel_err, rep->rel_l2_err);
    } else if (rep->checked == 0) {
        snprintf(buf, len, "FAILED: nothing was checked");
    } else if (rep->first_n >= 0) {
        snprintf(buf, len,
                 "FAILED: %zu of %zu mismatch (%zu NaN/inf); first at %lld (n=%d k=%d p=%d q=%d): "
                 "got %.9g want %.9g (tol %.3g)",
                 rep->mismatches, rep->checked, rep->nan_count, rep->first_index, rep->first_n,
                 rep->first_k, rep->first_p, rep->first_q, rep->first_got, rep->first_want,
                 rep->first_tol);
    } else {
        snprintf(buf, len,
                 "FAILED: %zu of %zu mismatch (%zu NaN/inf); first at %lld: got %.9g want %.9g "
                 "(tol %.3g)",
                 rep->mismatches, rep->checked, rep->nan_count, rep->first_index, rep->first_got,
                 rep->first_want, rep->first_tol);
    }
}

const char *conv_class_name(conv_class cls)
{
    static const char *const names[CONV_CLASS_COUNT] = {"FP32", "TF32", "FP16"};
    return (int)cls >= 0 && cls < CONV_CLASS_COUNT ? names[cls] : "?";
}

int conv_class_allows(conv_class allowed, conv_class cls)
{
    return cls == allowed || (allowed == CONV_CLASS_TF32 && cls == CONV_CLASS_FP32);
}
