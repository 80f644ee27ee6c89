/* Step 06, the lowering: im2col copies every filter window of the input into
 * one column (NCHW, MXNet/Caffe layout) or one row (NHWC, the HPC101 lab's
 * layout) of a matrix, so that the convolution becomes one matrix product
 * (gemm.h, conv_im2col_gemm.h); col2im is its adjoint.
 *
 * Column layouts (cols = C*R*S, rows = N*P*Q output pixels):
 *   NCHW: col[(c*R + r)*S + s][(n*P + p)*Q + q]     a cols x rows matrix;
 *   NHWC: col[(n*P + p)*Q + q][(r*S + s)*C + c]     a rows x cols matrix.
 *
 * Both launchers validate all their arguments before they touch the device,
 * so a bad argument is one line in msg and nothing runs. Device pointers d_. */
#ifndef IM2COL_H
#define IM2COL_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Floats of the column buffer (C*R*S * N*P*Q, the same for both layouts). */
size_t im2col_col_elems(const conv_params *p);

/* Lowers x (layout p->layout) into d_col (layout above). Grid-stride loops. */
conv_status im2col(const conv_params *p, const float *d_x, float *d_col, cudaStream_t stream,
                   conv_msg *msg);
/* The adjoint: d_x[i] = sum of every column entry im2col copied x[i] into
 * (entries that came from the zero padding are dropped). Each x element is
 * written by one thread (a gather, no atomics). */
conv_status col2im(const conv_params *p, const float *d_col, float *d_x, cudaStream_t stream,
                   conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* IM2COL_H */
