/* Step 10: dgrad and wgrad on the CPU, the references of the step's GPU
 * versions: each element's sum in double (common/conv_verify_backward.c, the
 * sums the verification is made of), rounded once to float. */
#include "conv_backward_cpu.h"

#include <stdlib.h>

#include "conv_verify_backward.h"

static conv_status check_args(const conv_params *p, const float *a, const char *a_name,
                              const float *b, const char *b_name, const float *out,
                              const char *out_name, conv_msg *msg)
{
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    return conv_check_pointers(a, a_name, b, b_name, out, out_name, msg);
}

/* The double sums of one gradient: (p, a, b, sum, abs_sum), as the two above. */
typedef void (*gradient_sums)(const conv_params *p, const float *a, const float *b, double *sum,
                              double *abs_sum);

/* count sums in double, rounded once into out. */
static conv_status rounded(const conv_params *p, gradient_sums sums, const float *a, const float *b,
                           float *out, size_t count, conv_msg *msg)
{
    double *d = malloc(count * sizeof *d);
    if (d == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "could not allocate %zu doubles for the sums",
                         count);
    sums(p, a, b, d, NULL);
    for (size_t i = 0; i < count; ++i)
        out[i] = (float)d[i];
    free(d);
    return CONV_OK;
}

conv_status conv2d_backward_data_cpu(const conv_params *p, const float *h_dy, const float *h_w,
                                     float *h_dx, conv_msg *msg)
{
    conv_status st = check_args(p, h_dy, "dy", h_w, "filter", h_dx, "dx", msg);
    if (st != CONV_OK)
        return st;
    return rounded(p, conv_backward_data_double, h_dy, h_w, h_dx, conv_input_elems(p), msg);
}

conv_status conv2d_backward_filter_cpu(const conv_params *p, const float *h_x, const float *h_dy,
                                       float *h_dw, conv_msg *msg)
{
    conv_status st = check_args(p, h_x, "input", h_dy, "dy", h_dw, "dw", msg);
    if (st != CONV_OK)
        return st;
    return rounded(p, conv_backward_filter_double, h_x, h_dy, h_dw, conv_filter_elems(p), msg);
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
