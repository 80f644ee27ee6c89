/* Step 07 on the host: the problems Winograd takes, the whole convolution in
 * float tile by tile, and its error bound, also as a verification's
 * tolerance (see winograd_host.h). */
#include "winograd_host.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_verify.h"
#include "winograd_transforms.h"

#define WINO_MAX_ALPHA 6

int wino_m(wino_tile t)
{
    return t == WINO_F4 ? 4 : 2;
}

int wino_alpha(wino_tile t)
{
    return wino_m(t) + 2;
}

const char *wino_tile_name(wino_tile t)
{
    return t == WINO_F4 ? "F(4x4,3x3)" : "F(2x2,3x3)";
}

conv_status wino_supports(const conv_params *p, wino_tile t, conv_msg *msg)
{
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    if ((unsigned)t >= WINO_TILE_COUNT)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid Winograd tile %d", (int)t);
    /* the first flag that is not what Winograd F(m, 3) computes */
    char what[48] = "";
    if (p->r != 3 || p->s != 3)
        snprintf(what, sizeof what, "--r %d --s %d", p->r, p->s);
    else if (p->stride_h != 1 || p->stride_w != 1)
        snprintf(what, sizeof what, "--stride %dx%d", p->stride_h, p->stride_w);
    else if (p->dil_h != 1 || p->dil_w != 1)
        snprintf(what, sizeof what, "--dilation %dx%d", p->dil_h, p->dil_w);
    if (what[0] != '\0')
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "%s: Winograd %s needs a 3x3 filter, stride 1 and dilation 1", what,
                         wino_tile_name(t));
    return CONV_OK;
}

long long wino_tiles(const conv_params *p, wino_tile t)
{
    const long long m = wino_m(t);
    return ((conv_out_h(p) + m - 1) / m) * ((conv_out_w(p) + m - 1) / m);
}

size_t wino_error_roundings(wino_tile t, int c)
{
    return (size_t)(4 * wino_alpha(t) + c + 9);
}

/* The four transforms in float, chosen by tile size. */
static void filter_2d(wino_tile t, const float *g, float *u)
{
    if (t == WINO_F4)
        wino_f4_filter_2d(g, u);
    else
        wino_f2_filter_2d(g, u);
}

static void input_2d(wino_tile t, const float *d, float *v)
{
    if (t == WINO_F4)
        wino_f4_input_2d(d, v);
    else
        wino_f2_input_2d(d, v);
}

static void output_2d(wino_tile t, const float *m, float *y)
{
    if (t == WINO_F4)
        wino_f4_output_2d(m, y);
    else
        wino_f2_output_2d(m, y);
}

/* The alpha x alpha input tile of image n, channel c whose top-left corner is
 * (h0, w0) in image coordinates, zeros outside the image (padding and past
 * the last row or column). */
static void gather_tile(const conv_params *p, const float *x, int n, int c, int h0, int w0,
                        int alpha, float *d)
{
    for (int i = 0; i < alpha; ++i)
        for (int j = 0; j < alpha; ++j) {
            const int h = h0 + i, w = w0 + j;
            d[i * alpha + j] = (h >= 0 && h < p->h && w >= 0 && w < p->w)
                                   ? x[conv_input_offset(p, n, c, h, w)]
                                   : 0.0f;
        }
}

static void gather_filter(const conv_params *p, const float *w, int k, int c, float *g)
{
    for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s)
            g[r * 3 + s] = w[conv_filter_offset(p, k, c, r, s)];
}

/* The start of the whole-problem functions below: the checks (the three
 * pointers, out named out_name in the message; then wino_supports), then
 * their two buffers, of elem_size bytes an element: bufs[0] the transformed
 * filters U[k][c], bufs[1] one tile's sums acc[k] (alpha x alpha elements
 * each). Both buffers or neither (CONV_ERR_OUT_OF_MEMORY naming what). */
static conv_status start(const conv_params *p, wino_tile t, const float *x, const float *w,
                         const void *out, const char *out_name, size_t elem_size, const char *what,
                         void *bufs[2], conv_msg *msg)
{
    conv_status st = conv_check_pointers(x, "x", w, "w", out, out_name, msg);
    if (st == CONV_OK)
        st = wino_supports(p, t, msg);
    if (st != CONV_OK)
        return st;
    const size_t a2 = (size_t)wino_alpha(t) * (size_t)wino_alpha(t);
    bufs[0] = malloc(elem_size * (size_t)p->k * (size_t)p->c * a2);
    bufs[1] = malloc(elem_size * (size_t)p->k * a2);
    if (bufs[0] != NULL && bufs[1] != NULL)
        return CONV_OK;
    free(bufs[0]);
    free(bufs[1]);
    return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory (%s)", what);
}

conv_status wino_conv_host(const conv_params *p, wino_tile t, const float *x, const float *w,
                           float *y, conv_msg *msg)
{
    const int m = wino_m(t), alpha = wino_alpha(t), a2 = alpha * alpha;
    void *bufs[2];
    conv_status st = start(p, t, x, w, y, "y", sizeof(float), "Winograd model", bufs, msg);
    if (st != CONV_OK)
        return st;
    const int P = conv_out_h(p), Q = conv_out_w(p);
    /* The transformed filters, U[k][c] (alpha x alpha each), computed once. */
    float *u = bufs[0], *acc = bufs[1];
    float g[9], d[WINO_MAX_ALPHA * WINO_MAX_ALPHA], v[WINO_MAX_ALPHA * WINO_MAX_ALPHA];
    float tile_y[4 * 4];
    for (int k = 0; k < p->k; ++k)
        for (int c = 0; c < p->c; ++c) {
            gather_filter(p, w, k, c, g);
            filter_2d(t, g, u + ((size_t)k * p->c + c) * a2);
        }
    for (int n = 0; n < p->n; ++n)
        for (int th = 0; th < P; th += m)
            for (int tw = 0; tw < Q; tw += m) {
                memset(acc, 0, sizeof(float) * (size_t)p->k * (size_t)a2);
                for (int c = 0; c < p->c; ++c) {
                    gather_tile(p, x, n, c, th - p->pad_h, tw - p->pad_w, alpha, d);
                    input_2d(t, d, v);
                    for (int k = 0; k < p->k; ++k) {
                        const float *uk = u + ((size_t)k * p->c + c) * a2;
                        for (int e = 0; e < a2; ++e)
                            acc[(size_t)k * a2 + e] += uk[e] * v[e];
                    }
                }
                for (int k = 0; k < p->k; ++k) {
                    output_2d(t, acc + (size_t)k * a2, tile_y);
                    for (int i = 0; i < m && th + i < P; ++i)
                        for (int j = 0; j < m && tw + j < Q; ++j)
                            y[conv_output_offset(p, n, k, th + i, tw + j)] = tile_y[i * m + j];
                }
            }
    free(u);
    free(acc);
    return CONV_OK;
}

/* ---- The bound: the same stages with the matrices' absolute values ------ */

/* |B^T|, |G|, |A^T| of each tile size, row-major. */
static const double BT2[4][4] = {{1, 0, 1, 0}, {0, 1, 1, 0}, {0, 1, 1, 0}, {0, 1, 0, 1}};
static const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0, 0, 1}};
static const double AT2[2][4] = {{1, 1, 1, 0}, {0, 1, 1, 1}};
static const double BT4[6][6] = {{4, 0, 5, 0, 1, 0}, {0, 4, 4, 1, 1, 0}, {0, 4, 4, 1, 1, 0},
                                 {0, 2, 1, 2, 1, 0}, {0, 2, 1, 2, 1, 0}, {0, 4, 0, 5, 0, 1}};
static const double G4[6][3] = {{1.0 / 4, 0, 0},
                                {1.0 / 6, 1.0 / 6, 1.0 / 6},
                                {1.0 / 6, 1.0 / 6, 1.0 / 6},
                                {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                {0, 0, 1}};
static const double AT4[4][6] = {
    {1, 1, 1, 1, 1, 0}, {0, 1, 1, 2, 2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, 1, 8, 8, 1}};

/* out (rows x cols) = a (rows x inner, row-major) * b, whose element (q, j)
 * is b[q * bq + j * bj]: row-major b with (bq, bj) = (cols, 1), a transposed
 * row-major matrix with (1, inner). */
static void product(const double *a, int rows, int inner, const double *b, int bq, int bj, int cols,
                    double *out)
{
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
            double s = 0;
            for (int q = 0; q < inner; ++q)
                s += a[i * inner + q] * b[q * bq + j * bj];
            out[i * cols + j] = s;
        }
}

/* out (rows x cols) = L (rows x inner) * in (inner x inner2) * R^T (cols x inner2)^T,
 * all row-major; the form of G g G^T, B^T d B (R = B^T) and A^T M A (R = A^T). */
static void sandwich(const double *l, int rows, int inner, const double *in, int inner2,
                     const double *r, int cols, double *out)
{
    double t[WINO_MAX_ALPHA * WINO_MAX_ALPHA];
    product(l, rows, inner, in, inner2, 1, inner2, t); /* L * in */
    product(t, rows, inner2, r, 1, inner2, cols, out); /* (L * in) * R^T */
}

/* The matrices of tile t. */
typedef struct {
    const double *bt, *gm, *at;
    int m, alpha, a2;
} abs_mats;

static abs_mats mats_of(wino_tile t)
{
    abs_mats a = {t == WINO_F4 ? &BT4[0][0] : &BT2[0][0],
                  t == WINO_F4 ? &G4[0][0] : &G2[0][0],
                  t == WINO_F4 ? &AT4[0][0] : &AT2[0][0],
                  wino_m(t),
                  wino_alpha(t),
                  0};
    a.a2 = a.alpha * a.alpha;
    return a;
}

/* |G| |g_kc| |G^T| and |B^T| |d| |B| of input tile (n, c) at output (th, tw). */
static void abs_filter(const conv_params *p, const abs_mats *a, const float *w, int k, int c,
                       double *u)
{
    float g[9];
    double ga[9];
    gather_filter(p, w, k, c, g);
    for (int e = 0; e < 9; ++e)
        ga[e] = fabs((double)g[e]);
    sandwich(a->gm, a->alpha, 3, ga, 3, a->gm, a->alpha, u);
}

static void abs_input(const conv_params *p, const abs_mats *a, const float *x, int n, int c, int th,
                      int tw, double *v)
{
    float d[WINO_MAX_ALPHA * WINO_MAX_ALPHA];
    double da[WINO_MAX_ALPHA * WINO_MAX_ALPHA];
    gather_tile(p, x, n, c, th - p->pad_h, tw - p->pad_w, a->alpha, d);
    for (int e = 0; e < a->a2; ++e)
        da[e] = fabs((double)d[e]);
    sandwich(a->bt, a->alpha, a->alpha, da, a->alpha, a->bt, a->alpha, v);
}

conv_status wino_error_bound(const conv_params *p, wino_tile t, const float *x, const float *w,
                             double *bound, conv_msg *msg)
{
    const abs_mats a = mats_of(t);
    const int m = a.m, a2 = a.a2;
    void *bufs[2];
    conv_status st = start(p, t, x, w, bound, "bound", sizeof(double), "Winograd bound", bufs, msg);
    if (st != CONV_OK)
        return st;
    const double gamma = conv_gamma(wino_error_roundings(t, p->c));
    const int P = conv_out_h(p), Q = conv_out_w(p);
    double *u = bufs[0], *acc = bufs[1];
    double v[WINO_MAX_ALPHA * WINO_MAX_ALPHA], ty[4 * 4];
    for (int k = 0; k < p->k; ++k)
        for (int c = 0; c < p->c; ++c)
            abs_filter(p, &a, w, k, c, u + ((size_t)k * p->c + c) * a2);
    for (int n = 0; n < p->n; ++n)
        for (int th = 0; th < P; th += m)
            for (int tw = 0; tw < Q; tw += m) {
                memset(acc, 0, sizeof(double) * (size_t)p->k * (size_t)a2);
                for (int c = 0; c < p->c; ++c) {
                    abs_input(p, &a, x, n, c, th, tw, v);
                    for (int k = 0; k < p->k; ++k)
                        for (int e = 0; e < a2; ++e)
                            acc[(size_t)k * a2 + e] += u[((size_t)k * p->c + c) * a2 + e] * v[e];
                }
                for (int k = 0; k < p->k; ++k) {
                    sandwich(a.at, m, a.alpha, acc + (size_t)k * a2, a.alpha, a.at, m, ty);
                    for (int i = 0; i < m && th + i < P; ++i)
                        for (int j = 0; j < m && tw + j < Q; ++j)
                            bound[conv_output_offset(p, n, k, th + i, tw + j)] =
                                gamma * ty[i * m + j];
                }
            }
    free(u);
    free(acc);
    return CONV_OK;
}

double wino_error_bound_point(const conv_params *p, wino_tile t, const float *x, const float *w,
                              int n, int k, int oh, int ow)
{
    const abs_mats a = mats_of(t);
    const int th = oh - oh % a.m, tw = ow - ow % a.m;
    double acc[WINO_MAX_ALPHA * WINO_MAX_ALPHA] = {0}, u[WINO_MAX_ALPHA * WINO_MAX_ALPHA],
                                v[WINO_MAX_ALPHA * WINO_MAX_ALPHA], ty[4 * 4];
    for (int c = 0; c < p->c; ++c) {
        abs_filter(p, &a, w, k, c, u);
        abs_input(p, &a, x, n, c, th, tw, v);
        for (int e = 0; e < a.a2; ++e)
            acc[e] += u[e] * v[e];
    }
    sandwich(a.at, a.m, a.alpha, acc, a.alpha, a.at, a.m, ty);
    return conv_gamma(wino_error_roundings(t, p->c)) * ty[(oh - th) * a.m + (ow - tw)];
}

/* The tolerance of output (n, k, oh, ow): from the table when there is one,
 * else from its tile alone. */
static double tolerance_at(const void *ctx, int n, int k, int oh, int ow)
{
    const wino_tolerance *tol = ctx;
    if (tol->bound != NULL)
        return tol->bound[conv_output_offset(&tol->p, n, k, oh, ow)];
    return wino_error_bound_point(&tol->p, tol->t, tol->x, tol->w, n, k, oh, ow);
}

conv_status wino_tolerance_prepare(wino_tolerance *tol, const conv_params *p, wino_tile t,
                                   const float *x, const float *w, int full, conv_verify_opts *opts,
                                   conv_msg *msg)
{
    wino_tolerance_free(tol);
    tol->p = *p;
    tol->t = t;
    tol->x = x;
    tol->w = w;
    if (full) {
        tol->bound = malloc(conv_output_elems(p) * sizeof *tol->bound);
        if (tol->bound == NULL)
            return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY,
                             "out of host memory for Winograd's error bound");
        conv_status st = wino_error_bound(p, t, x, w, tol->bound, msg);
        if (st != CONV_OK)
            return st;
    }
    *opts = conv_verify_pointwise(tolerance_at, tol);
    return CONV_OK;
}

void wino_tolerance_free(wino_tolerance *tol)
{
    free(tol->bound);
    tol->bound = NULL;
    tol->x = tol->w = NULL;
}
