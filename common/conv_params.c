#include "conv_params.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

conv_params conv_params_default(void)
{
    conv_params p = {.n = 1, .c = 6, .h = 768, .w = 512, .k = 6, .r = 6, .s = 6};
    p.pad_h = p.pad_w = 0;
    p.stride_h = p.stride_w = 1;
    p.dil_h = p.dil_w = 1;
    p.layout = CONV_LAYOUT_NCHW;
    return p;
}

void conv_params_set_same_padding(conv_params *p)
{
    p->pad_h = p->dil_h * (p->r - 1) / 2;
    p->pad_w = p->dil_w * (p->s - 1) / 2;
}

/* One axis of the output-size formula, in 64 bits so that no input overflows. */
/* excerpt: out_extent */
static long long out_extent(int in, int filt, int pad, int stride, int dil)
{
    long long span = (long long)dil * (filt - 1) + 1;
    long long padded = (long long)in + 2LL * pad;
    if (stride < 1 || padded < span)
        return 0;
    return (padded - span) / stride + 1;
}
/* excerpt end: out_extent */

int conv_out_h(const conv_params *p)
{
    long long v = out_extent(p->h, p->r, p->pad_h, p->stride_h, p->dil_h);
    return v > INT32_MAX ? INT32_MAX : (int)v;
}

int conv_out_w(const conv_params *p)
{
    long long v = out_extent(p->w, p->s, p->pad_w, p->stride_w, p->dil_w);
    return v > INT32_MAX ? INT32_MAX : (int)v;
}

size_t conv_input_elems(const conv_params *p)
{
    return (size_t)p->n * p->c * p->h * p->w;
}

size_t conv_filter_elems(const conv_params *p)
{
    return (size_t)p->k * p->c * p->r * p->s;
}

size_t conv_output_elems(const conv_params *p)
{
    return (size_t)p->n * p->k * conv_out_h(p) * conv_out_w(p);
}

size_t conv_im2col_elems(const conv_params *p)
{
    return (size_t)p->c * p->r * p->s * ((size_t)p->n * conv_out_h(p) * conv_out_w(p));
}

double conv_flops(const conv_params *p)
{
    return 2.0 * p->n * p->k * (double)conv_out_h(p) * conv_out_w(p) * p->c * p->r * p->s;
}

double conv_min_bytes(const conv_params *p)
{
    return sizeof(float) *
           ((double)conv_input_elems(p) + conv_filter_elems(p) + conv_output_elems(p));
}

/* *out = a*b*c*d*elem_bytes; returns 0 when the product overflows size_t. */
static int product_fits(size_t *out, size_t a, size_t b, size_t c, size_t d, size_t elem_bytes)
{
    size_t v = a;
    int ok = !__builtin_mul_overflow(v, b, &v) && !__builtin_mul_overflow(v, c, &v) &&
             !__builtin_mul_overflow(v, d, &v) && !__builtin_mul_overflow(v, elem_bytes, &v);
    *out = v;
    return ok;
}

static conv_status check_positive(const char *name, const char *flag, int v, conv_msg *msg)
{
    if (v < 1)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid %s (%s): must be >= 1, got %d", name, flag,
                         v);
    return CONV_OK;
}

static conv_status check_axis(const char *axis, int in, int filt, int pad, int stride, int dil,
                              conv_msg *msg)
{
    long long span = (long long)dil * (filt - 1) + 1;
    long long padded = (long long)in + 2LL * pad;
    if (span > padded)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "filter %s is larger than the padded image: the filter spans %lld "
                         "(size %d, dilation %d) but the image is %d + 2*%d = %lld",
                         axis, span, filt, dil, in, pad, padded);
    if (out_extent(in, filt, pad, stride, dil) > INT32_MAX)
        return conv_fail(msg, CONV_ERR_INVALID, "output %s exceeds %d", axis, INT32_MAX);
    return CONV_OK;
}

conv_status conv_params_validate(const conv_params *p, conv_msg *msg)
{
    if (p == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid parameters: NULL pointer");
    const struct {
        const char *name, *flag;
        int value;
    } sizes[] = {
        {"batch N", "--n", p->n},
        {"channels C", "--c", p->c},
        {"height H", "--h", p->h},
        {"width W", "--w", p->w},
        {"output channels K", "--k", p->k},
        {"filter height R", "--r", p->r},
        {"filter width S", "--s", p->s},
        {"vertical stride", "--stride-h", p->stride_h},
        {"horizontal stride", "--stride-w", p->stride_w},
        {"vertical dilation", "--dil-h", p->dil_h},
        {"horizontal dilation", "--dil-w", p->dil_w},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        conv_status st = check_positive(sizes[i].name, sizes[i].flag, sizes[i].value, msg);
        if (st != CONV_OK)
            return st;
    }
    if (p->pad_h < 0)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid vertical padding (--pad-h): must be >= 0, got %d", p->pad_h);
    if (p->pad_w < 0)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid horizontal padding (--pad-w): must be >= 0, got %d", p->pad_w);
    if (p->layout != CONV_LAYOUT_NCHW && p->layout != CONV_LAYOUT_NHWC)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid layout (--layout): %d", (int)p->layout);
    if (p->pass < 0 || p->pass >= CONV_PASS_COUNT)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pass (--pass): %d", (int)p->pass);

    conv_status st = check_axis("height", p->h, p->r, p->pad_h, p->stride_h, p->dil_h, msg);
    if (st == CONV_OK)
        st = check_axis("width", p->w, p->s, p->pad_w, p->stride_w, p->dil_w, msg);
    if (st != CONV_OK)
        return st;

    size_t P = (size_t)conv_out_h(p), Q = (size_t)conv_out_w(p), bytes, crs, npq;
    if (!product_fits(&bytes, p->n, p->c, p->h, p->w, sizeof(float)))
        return conv_fail(msg, CONV_ERR_INVALID,
                         "input tensor too large: N*C*H*W*4 bytes = %d*%d*%d*%d*4 overflows size_t",
                         p->n, p->c, p->h, p->w);
    if (!product_fits(&bytes, p->k, p->c, p->r, p->s, sizeof(float)))
        return conv_fail(
            msg, CONV_ERR_INVALID,
            "filter tensor too large: K*C*R*S*4 bytes = %d*%d*%d*%d*4 overflows size_t", p->k, p->c,
            p->r, p->s);
    if (!product_fits(&bytes, p->n, p->k, P, Q, sizeof(float)))
        return conv_fail(
            msg, CONV_ERR_INVALID,
            "output tensor too large: N*K*P*Q*4 bytes = %d*%d*%zu*%zu*4 overflows size_t", p->n,
            p->k, P, Q);
    if (!product_fits(&crs, p->c, p->r, p->s, 1, 1) || !product_fits(&npq, p->n, P, Q, 1, 1) ||
        !product_fits(&bytes, crs, npq, 1, 1, sizeof(float)))
        return conv_fail(msg, CONV_ERR_INVALID,
                         "im2col buffer too large: (C*R*S)*(N*P*Q)*4 bytes = "
                         "(%d*%d*%d)*(%d*%zu*%zu)*4 overflows size_t",
                         p->c, p->r, p->s, p->n, P, Q);
    return CONV_OK;
}

conv_status conv_params_validate_layout(const conv_params *p, conv_layout layout, const char *why,
                                        conv_msg *msg)
{
    conv_status st = conv_params_validate(p, msg);
    if (st == CONV_OK && p->layout != layout)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "%s", why);
    return st;
}

conv_status conv1d_params_validate(long long width, long long mask_width, conv_msg *msg)
{
    if (width < 1)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid width (--width): must be >= 1, got %lld",
                         width);
    if (width > (long long)(SIZE_MAX / sizeof(float)))
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid width (--width): %lld floats overflow size_t", width);
    if (mask_width < 1)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid mask width (--mask): must be >= 1, got %lld", mask_width);
    if (mask_width % 2 == 0)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid mask width (--mask): must be odd for a centred \"same\" "
                         "convolution, got %lld",
                         mask_width);
    return CONV_OK;
}

conv_params conv1d_as_conv_params(long long width, int mask_width)
{
    conv_params p = conv_params_default();
    p.n = p.c = p.k = p.h = p.r = 1;
    p.w = (int)(width > INT_MAX ? INT_MAX : width);
    p.s = mask_width;
    p.pad_h = 0;
    p.pad_w = (mask_width - 1) / 2;
    return p;
}

int conv1d_is_1d_problem(const conv_params *p)
{
    return p->n == 1 && p->c == 1 && p->k == 1 && p->h == 1 && p->r == 1 && p->pad_h == 0 &&
           p->stride_h == 1 && p->stride_w == 1 && p->dil_h == 1 && p->dil_w == 1 &&
           p->s % 2 == 1 && p->pad_w == (p->s - 1) / 2 && p->layout == CONV_LAYOUT_NCHW;
}

void conv_params_describe(const conv_params *p, char *buf, size_t len)
{
    snprintf(
        buf, len,
        "N=%d C=%d H=%d W=%d K=%d R=%d S=%d pad=%dx%d stride=%dx%d dil=%dx%d %s -> P=%d Q=%d%s%s",
        p->n, p->c, p->h, p->w, p->k, p->r, p->s, p->pad_h, p->pad_w, p->stride_h, p->stride_w,
        p->dil_h, p->dil_w, p->layout == CONV_LAYOUT_NHWC ? "NHWC" : "NCHW", conv_out_h(p),
        conv_out_w(p), p->pass != CONV_PASS_FORWARD ? ", " : "",
        p->pass != CONV_PASS_FORWARD ? conv_pass_name(p->pass) : "");
}

size_t conv_input_offset(const conv_params *p, int n, int c, int h, int w)
{
    if (p->layout == CONV_LAYOUT_NHWC)
        return (((size_t)n * p->h + h) * p->w + w) * p->c + c;
    return (((size_t)n * p->c + c) * p->h + h) * p->w + w;
}

size_t conv_filter_offset(const conv_params *p, int k, int c, int r, int s)
{
    if (p->layout == CONV_LAYOUT_NHWC)
        return (((size_t)r * p->s + s) * p->c + c) * p->k + k;
    return (((size_t)k * p->c + c) * p->r + r) * p->s + s;
}

size_t conv_output_offset(const conv_params *p, int n, int k, int out_h, int out_w)
{
    size_t P = (size_t)conv_out_h(p), Q = (size_t)conv_out_w(p);
    if (p->layout == CONV_LAYOUT_NHWC)
        return (((size_t)n * P + out_h) * Q + out_w) * p->k + k;
    return (((size_t)n * p->k + k) * P + out_h) * Q + out_w;
}

void conv_output_coords(const conv_params *p, size_t offset, int *n, int *k, int *out_h, int *out_w)
{
    size_t P = (size_t)conv_out_h(p), Q = (size_t)conv_out_w(p), K = (size_t)p->k;
    if (p->layout == CONV_LAYOUT_NHWC) {
        *k = (int)(offset % K);
        offset /= K;
        *out_w = (int)(offset % Q);
        offset /= Q;
        *out_h = (int)(offset % P);
        *n = (int)(offset / P);
    } else {
        *out_w = (int)(offset % Q);
        offset /= Q;
        *out_h = (int)(offset % P);
        offset /= P;
        *k = (int)(offset % K);
        *n = (int)(offset / K);
    }
}

const char *conv_pass_name(conv_pass pass)
{
    static const char *const names[CONV_PASS_COUNT] = {"forward", "dgrad", "wgrad"};
    return pass >= 0 && pass < CONV_PASS_COUNT ? names[pass] : "?";
}
