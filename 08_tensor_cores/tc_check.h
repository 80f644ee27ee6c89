/* Step 08: what every launcher of the step's kernels checks before a launch,
 * and step 09's kernels with them (09_hopper/hopper.h): the problem
 * (tc_supports(), tc_host.h), the grid it needs and the three device
 * pointers. No CUDA call. */
#ifndef TC_CHECK_H
#define TC_CHECK_H

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The smallest block tile of any version, 8a's 64 pixels x 64 output
 * channels: the grid the check allows for is the largest one a version
 * launches (a larger tile needs fewer blocks). */
#define TC_CHECK_BM 64
#define TC_CHECK_BN 64

/* tc_supports and the grid's limits: ceil(M / 64) blocks along x, ceil(K /
 * 64) along y, J = R*S*C within an int. */
conv_status tc_check(const conv_params *p, conv_msg *msg);

/* The three device pointers (none NULL), then tc_check. */
conv_status tc_check_call(const conv_params *p, const float *d_x, const float *d_w,
                          const float *d_y, conv_msg *msg);

/* 1 when 8b and 8c copy x of this NCHW problem 16 bytes (4 pixels) at a
 * time: a 1x1 filter, stride 1, no padding, H W and C multiples of 4 (and,
 * checked at the launch, x and the workspace 16-byte aligned); else 0, and
 * they copy 4 bytes at a time, each pixel checked against the image. */
int tc_nchw_copies16(const conv_params *p);

/* The same for 8b and 8c (conv2d_tc_mma), which take NCHW too: any valid
 * problem, in either layout, within the grid's limits. */
conv_status tc_check_mma(const conv_params *p, conv_msg *msg);
conv_status tc_check_call_mma(const conv_params *p, const float *d_x, const float *d_w,
                              const float *d_y, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* TC_CHECK_H */
