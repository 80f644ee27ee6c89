/* Step 10: dgrad and wgrad on the CPU, the references of the step's GPU
 * versions: each element's sum in double (common/conv_verify_backward.c, the
 * sums the verification is made of), rounded once to float. */
#include "conv_backward_cpu.h"

#include <stdlib.h>

#include "conv_verify_backward.h"

/* The double sums of one gradient: (p, a, b, sum, abs_sum), as
 * conv_backward_data_double and conv_backward_filter_double. */
typedef void (*gradient_sums)(const conv_params *p, const float *a, const float *b, double *sum,
                              double *abs_sum);

/* The gradient out (count(p) floats) from a and b: the arguments checked
 * (each pointer named for the message), the sums in double, rounded once. */
static conv_status rounded_gradient(const conv_params *p, gradient_sums sums,
                                    size_t (*count)(const conv_params *), const float *a,
                                    const char *a_name, const float *b, const char *b_name,
                                    float *out, const char *out_name, conv_msg *msg)
{
    conv_status st = conv_params_validate(p, msg);
    if (st == CONV_OK)
        st = conv_check_pointers(a, a_name, b, b_name, out, out_name, msg);
    if (st != CONV_OK)
        return st;
    size_t n = count(p);
    double *d = malloc(n * sizeof *d);
    if (d == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "could not allocate %zu doubles for the sums",
                         n);
    sums(p, a, b, d, NULL);
    for (size_t i = 0; i < n; ++i)
        out[i] = (float)d[i];
    free(d);
    return CONV_OK;
}

conv_status conv2d_backward_data_cpu(const conv_params *p, const float *h_dy, const float *h_w,
                                     float *h_dx, conv_msg *msg)
{
    return rounded_gradient(p, conv_backward_data_double, conv_input_elems, h_dy, "dy", h_w,
                            "filter", h_dx, "dx", msg);
}

conv_status conv2d_backward_filter_cpu(const conv_params *p, const float *h_x, const float *h_dy,
                                       float *h_dw, conv_msg *msg)
{
    return rounded_gradient(p, conv_backward_filter_double, conv_filter_elems, h_x, "input", h_dy,
                            "dy", h_dw, "dw", msg);
}

void conv2d_backward_data_flip_filter_cpu(const conv_params *p, const conv_params *f,
                                          const float *h_w, float *h_wf)
{
    for (int k = 0; k < p->k; ++k)
        for (int c = 0; c < p->c; ++c)
            for (int r = 0; r < p->r; ++r)
                for (int s = 0; s < p->s; ++s)
                    h_wf[conv_filter_offset(f, c, k, r, s)] =
                        h_w[conv_filter_offset(p, k, c, p->r - 1 - r, p->s - 1 - s)];
}
