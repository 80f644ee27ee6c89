/* The parameters of one 2D convolution, the sizes derived from them, and the
 * validation every launcher runs before it touches memory.
 *
 * Shapes (layout CONV_LAYOUT_NCHW, the default):
 *   input  x[N][C][H][W]    filter w[K][C][R][S]    output y[N][K][P][Q]
 * Layout CONV_LAYOUT_NHWC (the HPC101 lab's layout, step 06):
 *   input  x[N][H][W][C]    filter w[R][S][C][K]    output y[N][P][Q][K]
 *
 * Output size, per axis (H shown; W likewise with S, pad_w, stride_w, dil_w):
 *   P = (H + 2*pad_h - dil_h*(R-1) - 1) / stride_h + 1
 * The operation is cross-correlation, as in every deep-learning library:
 *   y[n][k][p][q] = sum_{c,r,s} x[n][c][p*stride_h - pad_h + r*dil_h]
 *                                     [q*stride_w - pad_w + s*dil_w] * w[k][c][r][s]
 * with x = 0 outside the image (zero padding). */
#ifndef CONV_PARAMS_H
#define CONV_PARAMS_H

#include <stddef.h>

#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CONV_LAYOUT_NCHW = 0, CONV_LAYOUT_NHWC = 1 } conv_layout;

/* Which of a convolution layer's three computations a problem asks for; the
 * tensors are the same three (x, w, y), one of them written:
 *   FORWARD  y  = conv(x, w)
 *   DGRAD    dx = the gradient of the input, from dy (y's shape) and w
 *   WGRAD    dw = the gradient of the filter, from x and dy
 * All three take 2*N*K*P*Q*C*R*S floating-point operations (step 10). */
typedef enum { CONV_PASS_FORWARD = 0, CONV_PASS_DGRAD, CONV_PASS_WGRAD, CONV_PASS_COUNT } conv_pass;

/* "forward", "dgrad", "wgrad" ("?" for anything else). */
const char *conv_pass_name(conv_pass pass);

typedef struct {
    int n, c, h, w; /* batch, input channels, image height and width */
    int k;          /* output channels (number of filters) */
    int r, s;       /* filter height and width */
    int pad_h, pad_w;
    int stride_h, stride_w;
    int dil_h, dil_w;
    conv_layout layout;
    conv_pass pass; /* the computation asked for (zero: the forward pass) */
} conv_params;

/* The lecture's problem (the direct-convolution article's): N=1, C=6,
 * 768x512, K=6, 6x6, no padding, stride 1, dilation 1, NCHW. */
conv_params conv_params_default(void);

/* Sets pad_h/pad_w for "same" output size at stride 1: pad = dil*(R-1)/2.
 * Padding is symmetric, so for an even effective filter the output is one
 * row/column smaller than the image (as with cuDNN's symmetric padding). */
void conv_params_set_same_padding(conv_params *p);

/* Output height P and width Q; 0 or negative when the filter does not fit. */
int conv_out_h(const conv_params *p);
int conv_out_w(const conv_params *p);

/* Element counts. Only meaningful for parameters that passed validation
 * (which guarantees they and their byte sizes fit in size_t). */
size_t conv_input_elems(const conv_params *p);
size_t conv_filter_elems(const conv_params *p);
size_t conv_output_elems(const conv_params *p);
/* The im2col column buffer: (C*R*S) x (N*P*Q) floats. */
size_t conv_im2col_elems(const conv_params *p);

/* Floating-point operations: 2*N*K*P*Q*C*R*S (one multiply and one add each). */
double conv_flops(const conv_params *p);
/* Minimum bytes a kernel must move: read input and filter once, write the output. */
double conv_min_bytes(const conv_params *p);

/* Checks every parameter and every derived size. Returns CONV_OK, or
 * CONV_ERR_INVALID with one line naming the parameter (non-positive sizes,
 * negative padding, empty output, a filter larger than the padded image,
 * size_t overflow of any tensor or of the im2col buffer, an unknown pass). */
conv_status conv_params_validate(const conv_params *p, conv_msg *msg);

/* The check of a version that runs one layout only: conv_params_validate,
 * then CONV_ERR_UNSUPPORTED with the version's own line `why` when p has
 * the other layout. */
conv_status conv_params_validate_layout(const conv_params *p, conv_layout layout, const char *why,
                                        conv_msg *msg);

/* The 1D "same" convolution of steps 01 and 03: width >= 1 and an odd mask
 * width >= 1 (the mask is centred: half = (mask_width-1)/2 on each side). */
conv_status conv1d_params_validate(long long width, long long mask_width, conv_msg *msg);

/* A 1D problem written as a 2D convolution: N = C = K = H = R = 1, width W,
 * mask S, "same" padding pad_w = (S-1)/2, stride and dilation 1, NCHW. The
 * harness, the 2D checks and cuDNN then apply to it unchanged. */
conv_params conv1d_as_conv_params(long long width, int mask_width);
/* 1 when p has that shape. */
int conv1d_is_1d_problem(const conv_params *p);

/* Writes a one-line description, e.g. "N=1 C=6 H=768 W=512 K=6 R=6 S=6 pad=0x0
 * stride=1x1 dil=1x1 NCHW -> P=763 Q=507" (", dgrad" or ", wgrad" after it
 * for a backward pass). */
void conv_params_describe(const conv_params *p, char *buf, size_t len);

/* Linear offsets of one element, in the layout p->layout selects. */
size_t conv_input_offset(const conv_params *p, int n, int c, int h, int w);
size_t conv_filter_offset(const conv_params *p, int k, int c, int r, int s);
size_t conv_output_offset(const conv_params *p, int n, int k, int out_h, int out_w);
/* The inverse of conv_output_offset. */
void conv_output_coords(const conv_params *p, size_t offset, int *n, int *k, int *out_h,
                        int *out_w);

#ifdef __cplusplus
}
#endif

#endif /* CONV_PARAMS_H */
