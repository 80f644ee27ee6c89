/* Step 07 on the host: which problems Winograd F(m x m, 3 x 3) takes, the
 * whole convolution computed tile by tile in float (the arithmetic the
 * kernels do, in one fixed order), and the error bound its tests and rows
 * verify within (wino_tolerance below), at every output of a tile:
 *
 *     |y - y_exact| <= gamma_n * ( |A^T| [ sum_c (|G| |g_kc| |G^T|) .* (|B^T| |d_c| |B|) ] |A| )
 *
 * with |M| the matrix of absolute values and n = 4 * alpha + C + 9 the
 * roundings on the longest path through the four stages. For F(2, 3) the
 * bracket stays within a small factor of the direct sum |x * w|; the 4s, 5s
 * and 8s of F(4, 3) make it much larger: the accuracy a larger tile costs.
 *
 * Lesson: docs/07_winograd.md, section "Accuracy: Winograd's own error bound". */
#ifndef WINOGRAD_HOST_H
#define WINOGRAD_HOST_H

#include "conv_params.h"
#include "conv_status.h"
#include "conv_verify.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    WINO_F2 = 0, /* F(2x2, 3x3): 4x4 input tiles, 16 products for 4 outputs */
    WINO_F4,     /* F(4x4, 3x3): 6x6 input tiles, 36 products for 16 outputs */
    WINO_TILE_COUNT
} wino_tile;

/* m (outputs per tile side) and alpha = m + 2 (input tile side). */
int wino_m(wino_tile t);
int wino_alpha(wino_tile t);
/* "F(2x2,3x3)" or "F(4x4,3x3)". */
const char *wino_tile_name(wino_tile t);

/* CONV_OK for a valid problem Winograd F(m, 3) computes: a 3x3 filter,
 * stride 1 and dilation 1 (any N, C, K, H, W, any padding, both layouts);
 * otherwise CONV_ERR_UNSUPPORTED with one line naming what it needs. */
conv_status wino_supports(const conv_params *p, wino_tile t, conv_msg *msg);

/* Output tiles per image: ceil(P / m) * ceil(Q / m). */
long long wino_tiles(const conv_params *p, wino_tile t);

/* The whole convolution, tile by tile, in float, with the transforms of
 * winograd_transforms.h: the filter transformed once, each input tile
 * transformed, the products summed over the channels in channel order, the
 * output transform cut to P x Q at the edges. */
conv_status wino_conv_host(const conv_params *p, wino_tile t, const float *x, const float *w,
                           float *y, conv_msg *msg);

/* The bound above, per output element (output order), in double. */
conv_status wino_error_bound(const conv_params *p, wino_tile t, const float *x, const float *w,
                             double *bound, conv_msg *msg);

/* The same bound at one output (n, k, oh, ow) of a valid problem that
 * wino_supports, computed from its tile alone: for checking a sample of
 * outputs of a problem too large for the whole table. */
double wino_error_bound_point(const conv_params *p, wino_tile t, const float *x, const float *w,
                              int n, int k, int oh, int ow);

/* n of gamma_n above for C channels. */
size_t wino_error_roundings(wino_tile t, int c);

/* The bound above as a verification's tolerance at each output
 * (conv_verify_pointwise): the problem, its tile, the host inputs the bound
 * is computed from (borrowed: they must outlive the verification) and, when
 * every output is verified, the whole table (owned); otherwise the bound of
 * each checked output is computed from its tile alone. */
typedef struct {
    conv_params p;
    wino_tile t;
    const float *x, *w;
    double *bound; /* every output's bound, or NULL */
} wino_tolerance;

/* Frees tol's previous table, keeps p, t, x and w, computes the whole table
 * when full is nonzero, and sets *opts to verify within tol (which must stay
 * where it is until then). CONV_ERR_OUT_OF_MEMORY without host memory for
 * the table. tol starts zeroed; wino_tolerance_free releases it. */
conv_status wino_tolerance_prepare(wino_tolerance *tol, const conv_params *p, wino_tile t,
                                   const float *x, const float *w, int full, conv_verify_opts *opts,
                                   conv_msg *msg);

/* Frees the table and forgets the inputs (they are not tol's); tol may be
 * prepared again. */
void wino_tolerance_free(wino_tolerance *tol);

#ifdef __cplusplus
}
#endif

#endif /* WINOGRAD_HOST_H */
