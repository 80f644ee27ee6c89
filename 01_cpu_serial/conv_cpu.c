/* Step 01: the serial 5-loop convolution and its OpenMP version.
 *
 * Versions: 1a (conv2d_cpu_serial), 1b (conv2d_cpu_openmp), 1c
 * (conv1d_cpu_same, the 1D convolution, step 03's reference).
 *
 * The layout only changes the strides, so one loop nest serves NCHW and NHWC:
 * an element (n, c, h, w) lives at n*x_n + c*x_c + h*x_h + w*x_w. */
#include "conv_cpu.h"

#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
    size_t x_n, x_c, x_h, x_w; /* input strides */
    size_t w_k, w_c, w_r, w_s; /* filter strides */
    size_t y_n, y_k, y_p, y_q; /* output strides */
} conv_strides;

static conv_strides strides_of(const conv_params *p)
{
    size_t C = p->c, H = p->h, W = p->w, K = p->k, R = p->r, S = p->s;
    size_t P = conv_out_h(p), Q = conv_out_w(p);
    conv_strides st;
    /* excerpt: strides_of */
    if (p->layout == CONV_LAYOUT_NHWC) { /* x[N][H][W][C], w[R][S][C][K], y[N][P][Q][K] */
        st = (conv_strides){H * W * C, 1, W * C, C, 1, K, S * C * K, C * K, P * Q * K, 1, Q * K, K};
    } else { /* x[N][C][H][W], w[K][C][R][S], y[N][K][P][Q] */
        st = (conv_strides){C * H * W, H * W, W, 1, C * R * S, R * S, S, 1, K * P * Q, P * Q, Q, 1};
    }
    /* excerpt end: strides_of */
    return st;
}

static conv_status check_args(const conv_params *p, const float *x, const float *w, const float *y,
                              conv_msg *msg)
{
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    return conv_check_pointers(x, "input", w, "filter", y, "output", msg);
}

/* One output row (n, oc, oh): the inner four of the lecture's loops.
 * Rows of the filter that fall into the padding are skipped, not multiplied by 0. */
static void conv_row(const conv_params *p, const float *x, const float *w, float *y, int n, int oc,
                     int oh)
{
    const conv_strides st = strides_of(p);
    int Q = conv_out_w(p);
    /* excerpt: conv_row */
    /* exercise 01-loops begin: the inner loops ow -> ic -> kh -> kw of one output row */
    for (int ow = 0; ow < Q; ++ow) {
        float acc = 0.0f;
        for (int ic = 0; ic < p->c; ++ic)
            for (int kh = 0; kh < p->r; ++kh) {
                long long ih = (long long)oh * p->stride_h - p->pad_h + (long long)kh * p->dil_h;
                if (ih < 0 || ih >= p->h)
                    continue;
                for (int kw = 0; kw < p->s; ++kw) {
                    long long iw =
                        (long long)ow * p->stride_w - p->pad_w + (long long)kw * p->dil_w;
                    if (iw < 0 || iw >= p->w)
                        continue;
                    acc += x[n * st.x_n + ic * st.x_c + ih * st.x_h + iw * st.x_w] *
                           w[oc * st.w_k + ic * st.w_c + kh * st.w_r + kw * st.w_s];
                }
            }
        y[n * st.y_n + oc * st.y_k + oh * st.y_p + ow * st.y_q] = acc;
    }
    /* exercise 01-loops stub
    // TODO(exercise 01-loops): for each ow in [0, Q): one float accumulator, the sum over
    // ic, kh, kw of x[n][ic][ih][iw] * w[oc][ic][kh][kw] with ih = oh*stride_h - pad_h +
    // kh*dil_h (iw likewise), skipping taps outside the image; store it at y[n][oc][oh][ow].
    // The strides in st give every offset in both layouts. Graded by
    // tests/test_01_cpu_serial.c (suite cpu_serial) and the 01_cpu_serial program.
    (void)st, (void)Q, (void)x, (void)w, (void)y, (void)n, (void)oc, (void)oh;
       exercise 01-loops end */
    /* excerpt end: conv_row */
}

conv_status conv2d_cpu_serial(const conv_params *p, const float *h_x, const float *h_w, float *h_y,
                              conv_msg *msg)
{
    conv_status status = check_args(p, h_x, h_w, h_y, msg);
    if (status != CONV_OK)
        return status;
    int P = conv_out_h(p);
    /* excerpt: serial loops */
    for (int n = 0; n < p->n; ++n)
        for (int oc = 0; oc < p->k; ++oc)
            for (int oh = 0; oh < P; ++oh)
                conv_row(p, h_x, h_w, h_y, n, oc, oh);
    /* excerpt end: serial loops */
    return CONV_OK;
}

conv_status conv2d_cpu_openmp(const conv_params *p, const float *h_x, const float *h_w, float *h_y,
                              conv_msg *msg)
{
    conv_status status = check_args(p, h_x, h_w, h_y, msg);
    if (status != CONV_OK)
        return status;
    /* excerpt: openmp rows */
    long long P = conv_out_h(p), rows = (long long)p->n * p->k * P;
#pragma omp parallel for schedule(static)
    for (long long row = 0; row < rows; ++row) {
        int oh = (int)(row % P);
        int oc = (int)(row / P % p->k);
        int n = (int)(row / P / p->k);
        conv_row(p, h_x, h_w, h_y, n, oc, oh);
    }
    /* excerpt end: openmp rows */
    return CONV_OK;
}

int conv2d_cpu_openmp_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

conv_status conv1d_cpu_same(const float *h_x, size_t width, const float *h_mask, int mask_width,
                            float *h_y, conv_msg *msg)
{
    conv_status st = conv1d_params_validate((long long)width, mask_width, msg);
    if (st == CONV_OK)
        st = conv_check_pointers(h_x, "input", h_mask, "mask", h_y, "output", msg);
    if (st != CONV_OK)
        return st;
    long long half = (mask_width - 1) / 2;
    /* exercise 01-conv1d begin: the 1D "same" convolution */
    for (size_t i = 0; i < width; ++i) {
        float acc = 0.0f;
        for (int j = 0; j < mask_width; ++j) {
            long long at = (long long)i - half + j;
            if (at >= 0 && at < (long long)width)
                acc += h_x[at] * h_mask[j];
        }
        h_y[i] = acc;
    }
    /* exercise 01-conv1d stub
    // TODO(exercise 01-conv1d): h_y[i] = sum over j of h_x[i - half + j] * h_mask[j], with
    // h_x = 0 outside [0, width). Graded by tests/test_01_cpu_serial.c (suite cpu_conv1d).
    (void)half;
       exercise 01-conv1d end */
    return CONV_OK;
}
