/* The backward pass's double references (docs/10_backward.md): dgrad and
 * wgrad, each sum in double with sum |term| beside it, and the checks of a
 * float result against them.
 *
 * Both are the forward convolution's sum read another way. The forward pass
 * pairs input (ih, iw) with output (oh, ow) through the filter tap (r, s):
 *     ih = oh*stride_h - pad_h + r*dil_h,   iw = ow*stride_w - pad_w + s*dil_w.
 * dgrad walks that relation from the input side (for each input element, the
 * taps and outputs that read it), wgrad from the filter side (for each tap,
 * the pairs of input and output it joined). The layout only changes the
 * offsets (conv_input_offset and its siblings, conv_params.h). */
#include "conv_verify_backward.h"

#include <math.h>
#include <stdlib.h>

#include "conv_tensor.h"

/* The output row oh that reads input row ih through filter row r, or -1 when
 * none does (the stride skips it, or it falls outside [0, P)). */
/* excerpt: output_of */
static int output_of(int in, int tap, int pad, int stride, int dil, int out_size)
{
    long long num = (long long)in + pad - (long long)tap * dil;
    if (num < 0 || num % stride != 0)
        return -1;
    long long out = num / stride;
    return out < out_size ? (int)out : -1;
}
/* excerpt end: output_of */

/* One element's sum and sum |term| into the arrays asked for (either may be NULL). */
static void store(double *sums, double *abs_sums, size_t at, double sum, double mag)
{
    if (sums)
        sums[at] = sum;
    if (abs_sums)
        abs_sums[at] = mag;
}

/* One element's double sum and sum |term|: (p, a, b, the element's four
 * indices, value, abs_sum), as conv_backward_data_point and
 * conv_backward_filter_point below. */
typedef void (*point_sum)(const conv_params *p, const float *a, const float *b, int i0, int i1,
                          int i2, int i3, double *value, double *abs_sum);

/* Every element of a gradient of dims (dx's (N, C, H, W) or dw's (K, C, R,
 * S)), each point's sums stored at offset(p, its indices). The planes
 * (i0, i1) are independent: shared among threads where OpenMP is available
 * (each element is still one sequential double sum). */
static void every_point(const conv_params *p, const int dims[4], point_sum point,
                        size_t (*offset)(const conv_params *, int, int, int, int), const float *a,
                        const float *b, double *sums, double *abs_sums)
{
    long long planes = (long long)dims[0] * dims[1];
#pragma omp parallel for schedule(dynamic, 1)
    for (long long plane = 0; plane < planes; ++plane) {
        int i0 = (int)(plane / dims[1]), i1 = (int)(plane % dims[1]);
        for (int i2 = 0; i2 < dims[2]; ++i2)
            for (int i3 = 0; i3 < dims[3]; ++i3) {
                double sum, mag;
                point(p, a, b, i0, i1, i2, i3, &sum, &mag);
                store(sums, abs_sums, offset(p, i0, i1, i2, i3), sum, mag);
            }
    }
}

void conv_backward_data_point(const conv_params *p, const float *dy, const float *w, int n, int c,
                              int ih, int iw, double *value, double *abs_sum)
{
    const int P = conv_out_h(p), Q = conv_out_w(p);
    double sum = 0.0, mag = 0.0;
    /* excerpt: dgrad gather */
    for (int r = 0; r < p->r; ++r) {
        int oh = output_of(ih, r, p->pad_h, p->stride_h, p->dil_h, P);
        if (oh < 0)
            continue;
        for (int s = 0; s < p->s; ++s) {
            int ow = output_of(iw, s, p->pad_w, p->stride_w, p->dil_w, Q);
            if (ow < 0)
                continue;
            for (int k = 0; k < p->k; ++k) {
                double t = (double)dy[conv_output_offset(p, n, k, oh, ow)] *
                           w[conv_filter_offset(p, k, c, r, s)];
                sum += t;
                mag += fabs(t);
            }
        }
    }
    /* excerpt end: dgrad gather */
    *value = sum;
    *abs_sum = mag;
}

void conv_backward_data_double(const conv_params *p, const float *dy, const float *w, double *dx,
                               double *abs_sum)
{
    const int dims[4] = {p->n, p->c, p->h, p->w};
    every_point(p, dims, conv_backward_data_point, conv_input_offset, dy, w, dx, abs_sum);
}

void conv_backward_filter_point(const conv_params *p, const float *x, const float *dy, int k, int c,
                                int r, int s, double *value, double *abs_sum)
{
    const int P = conv_out_h(p), Q = conv_out_w(p);
    double sum = 0.0, mag = 0.0;
    /* excerpt: wgrad sum */
    for (int n = 0; n < p->n; ++n)
        for (int oh = 0; oh < P; ++oh) {
            long long ih = (long long)oh * p->stride_h - p->pad_h + (long long)r * p->dil_h;
            if (ih < 0 || ih >= p->h)
                continue;
            for (int ow = 0; ow < Q; ++ow) {
                long long iw = (long long)ow * p->stride_w - p->pad_w + (long long)s * p->dil_w;
                if (iw < 0 || iw >= p->w)
                    continue;
                double t = (double)x[conv_input_offset(p, n, c, (int)ih, (int)iw)] *
                           dy[conv_output_offset(p, n, k, oh, ow)];
                sum += t;
                mag += fabs(t);
            }
        }
    /* excerpt end: wgrad sum */
    *value = sum;
    *abs_sum = mag;
}

void conv_backward_filter_double(const conv_params *p, const float *x, const float *dy, double *dw,
                                 double *abs_sum)
{
    const int dims[4] = {p->k, p->c, p->r, p->s};
    every_point(p, dims, conv_backward_filter_point, conv_filter_offset, x, dy, dw, abs_sum);
}

/* The double sums of one gradient: (p, a, b, sum, abs_sum), as the two above. */
typedef void (*gradient_sums)(const conv_params *p, const float *a, const float *b, double *sum,
                              double *abs_sum);

/* The most filter rows (or columns) that meet one input row: a stride lets
 * only every stride-th tap land on an output. */
static int most_taps(int in_size, int taps, int pad, int stride, int dil, int out_size)
{
    int most = 0;
    for (int in = 0; in < in_size; ++in) {
        int count = 0;
        for (int t = 0; t < taps; ++t)
            count += output_of(in, t, pad, stride, dil, out_size) >= 0;
        if (count > most)
            most = count;
    }
    return most;
}

size_t conv_backward_data_depth(const conv_params *p)
{
    size_t rows = (size_t)most_taps(p->h, p->r, p->pad_h, p->stride_h, p->dil_h, conv_out_h(p));
    size_t cols = (size_t)most_taps(p->w, p->s, p->pad_w, p->stride_w, p->dil_w, conv_out_w(p));
    return (size_t)p->k * rows * cols;
}

size_t conv_backward_filter_depth(const conv_params *p)
{
    return (size_t)p->n * conv_out_h(p) * conv_out_w(p);
}

static void coords_of(size_t (*offset)(const conv_params *, int, int, int, int),
                      const conv_params *p, const int dims[4], size_t at, int idx[4]);

/* The tolerance of the gradient's element at offset `at`: opts' own
 * function of its indices ((n, c, ih, iw) of dx, (k, c, r, s) of dw) where
 * it has one, else factor * gamma_depth * sum|products|. */
static double tolerance_at(const conv_params *p, int dgrad, conv_verify_opts opts, size_t at,
                           double gamma, double mag)
{
    if (opts.point_tol == NULL)
        return opts.bound_factor * gamma * mag + opts.abs_term;
    int idx[4];
    if (dgrad) {
        const int dims[4] = {p->n, p->c, p->h, p->w};
        coords_of(conv_input_offset, p, dims, at, idx);
    } else {
        const int dims[4] = {p->k, p->c, p->r, p->s};
        coords_of(conv_filter_offset, p, dims, at, idx);
    }
    return opts.point_tol(opts.point_ctx, idx[0], idx[1], idx[2], idx[3]);
}

/* got against the double sums, within each element's tolerance; no
 * coordinates (the report's output coordinates name y's elements, not x's
 * or w's). */
static conv_verify_report verify(const conv_params *p, int dgrad, gradient_sums sums,
                                 const float *a, const float *b, const float *got, size_t count,
                                 size_t depth, conv_verify_opts opts)
{
    double *want = malloc(count * sizeof *want), *mag = malloc(count * sizeof *mag);
    conv_verify_report rep = conv_report_init();
    if (want && mag) {
        sums(p, a, b, want, mag);
        int exact = opts.mode == CONV_VERIFY_EXACT;
        double gamma = conv_gamma(depth);
        for (size_t i = 0; i < count; ++i)
            conv_report_add(&rep, i, got[i], want[i],
                            tolerance_at(p, dgrad, opts, i, gamma, mag[i]), exact);
    }
    conv_report_finish(&rep); /* no element checked: not passed */
    free(want);
    free(mag);
    return rep;
}

conv_verify_report conv_backward_data_verify(const conv_params *p, const float *dy, const float *w,
                                             const float *got, conv_verify_opts opts)
{
    return verify(p, 1, conv_backward_data_double, dy, w, got, conv_input_elems(p),
                  conv_backward_data_depth(p), opts);
}

conv_verify_report conv_backward_filter_verify(const conv_params *p, const float *x,
                                               const float *dy, const float *got,
                                               conv_verify_opts opts)
{
    return verify(p, 0, conv_backward_filter_double, x, dy, got, conv_filter_elems(p),
                  conv_backward_filter_depth(p), opts);
}

size_t conv_pass_depth(const conv_params *p)
{
    if (p->pass == CONV_PASS_DGRAD)
        return conv_backward_data_depth(p);
    if (p->pass == CONV_PASS_WGRAD)
        return conv_backward_filter_depth(p);
    return (size_t)p->c * p->r * p->s;
}

void conv_pass_reference_double(const conv_params *p, const float *x, const float *w,
                                const float *dy, double *ref, double *abs_sum)
{
    if (p->pass == CONV_PASS_DGRAD)
        conv_backward_data_double(p, dy, w, ref, abs_sum);
    else if (p->pass == CONV_PASS_WGRAD)
        conv_backward_filter_double(p, x, dy, ref, abs_sum);
    else
        conv_reference_double(p, x, w, ref, abs_sum);
}

conv_verify_report conv_pass_verify_precomputed(const conv_params *p, const float *got,
                                                const double *ref, const double *ref_abs,
                                                conv_verify_opts opts)
{
    if (p->pass == CONV_PASS_FORWARD)
        return conv_verify_precomputed(p, got, ref, ref_abs, opts);
    size_t count = p->pass == CONV_PASS_DGRAD ? conv_input_elems(p) : conv_filter_elems(p);
    double gamma = conv_gamma(conv_pass_depth(p));
    int exact = opts.mode == CONV_VERIFY_EXACT;
    conv_verify_report rep = conv_report_init();
    for (size_t i = 0; i < count; ++i)
        conv_report_add(&rep, i, got[i], ref[i],
                        tolerance_at(p, p->pass == CONV_PASS_DGRAD, opts, i, gamma, ref_abs[i]),
                        exact);
    conv_report_finish(&rep);
    return rep;
}

/* The indices (a, b, c, d) of the element at offset `at` of a tensor whose
 * offset function is `offset`: its strides are the offsets of unit indices
 * (the function is linear), sorted from the largest. */
static void coords_of(size_t (*offset)(const conv_params *, int, int, int, int),
                      const conv_params *p, const int dims[4], size_t at, int idx[4])
{
    size_t st[4] = {offset(p, 1, 0, 0, 0), offset(p, 0, 1, 0, 0), offset(p, 0, 0, 1, 0),
                    offset(p, 0, 0, 0, 1)};
    int order[4] = {0, 1, 2, 3};
    for (int i = 0; i < 4; ++i) /* slowest index first */
        for (int j = i + 1; j < 4; ++j)
            if (st[order[j]] > st[order[i]] ||
                (st[order[j]] == st[order[i]] && dims[order[j]] > dims[order[i]])) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    for (int i = 3; i >= 0; --i) {
        idx[order[i]] = (int)(at % (size_t)dims[order[i]]);
        at /= (size_t)dims[order[i]];
    }
}

conv_verify_report conv_pass_verify_sampled(const conv_params *p, const float *x, const float *w,
                                            const float *dy, const float *got, size_t samples,
                                            uint64_t seed, conv_verify_opts opts)
{
    if (p->pass == CONV_PASS_FORWARD)
        return conv_verify_sampled(p, x, w, got, samples, seed, opts);
    int dgrad = p->pass == CONV_PASS_DGRAD;
    size_t total = dgrad ? conv_input_elems(p) : conv_filter_elems(p);
    double gamma = conv_gamma(conv_pass_depth(p));
    conv_verify_report rep = conv_report_init();
    /* wgrad's elements are deep (N*P*Q terms, over a million on the lab
     * problem): as many samples as CONV_PASS_SAMPLED_TERMS terms allow, at
     * least 64, so that one check stays around a second. */
    size_t depth = conv_pass_depth(p) > 0 ? conv_pass_depth(p) : 1;
    if (!dgrad && samples > 64 && samples > CONV_PASS_SAMPLED_TERMS / depth)
        samples = CONV_PASS_SAMPLED_TERMS / depth > 64 ? CONV_PASS_SAMPLED_TERMS / depth : 64;
    if (samples > total)
        samples = total;
    for (size_t i = 0; i < samples; ++i) {
        size_t at = i == 0 ? 0 : i == 1 ? total - 1 : (size_t)(conv_rng_hash(seed, i) % total);
        int idx[4];
        double want, mag;
        if (dgrad) {
            const int dims[4] = {p->n, p->c, p->h, p->w};
            coords_of(conv_input_offset, p, dims, at, idx);
            conv_backward_data_point(p, dy, w, idx[0], idx[1], idx[2], idx[3], &want, &mag);
        } else {
            const int dims[4] = {p->k, p->c, p->r, p->s};
            coords_of(conv_filter_offset, p, dims, at, idx);
            conv_backward_filter_point(p, x, dy, idx[0], idx[1], idx[2], idx[3], &want, &mag);
        }
        conv_report_add(&rep, at, got[at], want, tolerance_at(p, dgrad, opts, at, gamma, mag),
                        opts.mode == CONV_VERIFY_EXACT);
    }
    conv_report_finish(&rep);
    return rep;
}
