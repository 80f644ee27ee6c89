#include "cpu_rows.h"

#include <stdio.h>

#include "conv_cpu.h"

/* The 1D problem through the 2D signature: the row of W floats, mask S. */
static conv_status conv1d_cpu_as_conv(const conv_params *p, const float *h_x, const float *h_w,
                                      float *h_y, conv_msg *msg)
{
    return conv1d_cpu_same(h_x, (size_t)p->w, h_w, p->s, h_y, msg);
}

int conv_cpu_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)select;
    static char openmp[48];
    snprintf(openmp, sizeof openmp, "1b OpenMP (%d threads)", conv2d_cpu_openmp_threads());
    conv_row all[3];
    int n = 0;
    all[n++] = conv_row_host("1a serial (CPU)", "1a", conv2d_cpu_serial);
    all[n++] = conv_row_host(openmp, "1b", conv2d_cpu_openmp);
    if (conv1d_is_1d_problem(p))
        all[n++] = conv_row_host("1c conv1d_cpu_same (CPU)", "1c", conv1d_cpu_as_conv);
    for (int i = 0; i < n && i < max_rows; ++i)
        rows[i] = all[i];
    return n < max_rows ? n : max_rows;
}
