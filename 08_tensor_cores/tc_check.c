/* Step 08: the checks before a launch (tc_check.h). */
#include "tc_check.h"

#include "tc_host.h"

/* The grid's limits, for a problem already valid. */
static conv_status check_grid(const conv_params *p, conv_msg *msg)
{
    const long long m = (long long)p->n * conv_out_h(p) * conv_out_w(p);
    const long long j = (long long)p->r * p->s * p->c;
    const long long mblocks = (m + TC_CHECK_BM - 1) / TC_CHECK_BM;
    const int kblocks = (p->k + TC_CHECK_BN - 1) / TC_CHECK_BN;
    if (mblocks > 0x7fffffffLL || kblocks > 65535 || j > 0x7fffffffLL)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "--n %d --k %d: %lld x %d blocks of %d x %d outputs, more than a grid "
                         "holds",
                         p->n, p->k, mblocks, kblocks, TC_CHECK_BM, TC_CHECK_BN);
    return CONV_OK;
}

conv_status tc_check(const conv_params *p, conv_msg *msg)
{
    conv_status st = tc_supports(p, msg);
    return st == CONV_OK ? check_grid(p, msg) : st;
}

int tc_nchw_copies16(const conv_params *p)
{
    return p->layout == CONV_LAYOUT_NCHW && p->r == 1 && p->s == 1 && p->stride_h == 1 &&
           p->stride_w == 1 && p->pad_h == 0 && p->pad_w == 0 &&
           ((long long)p->h * p->w) % 4 == 0 && p->c % 4 == 0;
}

conv_status tc_check_mma(const conv_params *p, conv_msg *msg)
{
    conv_status st = conv_params_validate(p, msg);
    return st == CONV_OK ? check_grid(p, msg) : st;
}

conv_status tc_check_call(const conv_params *p, const float *d_x, const float *d_w,
                          const float *d_y, conv_msg *msg)
{
    conv_status st = conv_check_pointers(d_x, "x", d_w, "w", d_y, "y", msg);
    return st == CONV_OK ? tc_check(p, msg) : st;
}

conv_status tc_check_call_mma(const conv_params *p, const float *d_x, const float *d_w,
                              const float *d_y, conv_msg *msg)
{
    conv_status st = conv_check_pointers(d_x, "x", d_w, "w", d_y, "y", msg);
    return st == CONV_OK ? tc_check_mma(p, msg) : st;
}
