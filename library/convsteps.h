/* libconvsteps: the course's convolutions behind a small C API, for C
 * programs and for other languages (Python's ctypes): a forward
 * convolution, dgrad and wgrad of float32 tensors in device memory, each run
 * by the kernel conv2d_auto's rule picks (library/conv_auto.h) for the
 * problem, the pass and the precision class. This header needs nothing but
 * <stddef.h>: no CUDA or repository header. Library: <build>/lib/libconvsteps.so.
 *
 * Tensor layouts (device memory, float32, dense):
 *   NCHW: x[N][C][H][W], w[K][C][R][S], y[N][K][P][Q]
 *   NHWC: x[N][H][W][C], w[R][S][C][K]  (note: RSCK, not PyTorch's KRSC), y[N][P][Q][K]
 * P = (H + 2*pad_h - dil_h*(R-1) - 1) / stride_h + 1, Q likewise.
 *
 * Every call returns a status (CONVSTEPS_OK or an error); msg (may be NULL)
 * gets one line on failure, at most msg_len bytes with the terminating zero.
 * Every argument is checked before the first CUDA call. */
#ifndef CONVSTEPS_H
#define CONVSTEPS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONVSTEPS_API_VERSION 1
int convsteps_api_version(void); /* returns CONVSTEPS_API_VERSION */

/* status codes: the same numbers as conv_status */
enum {
    CONVSTEPS_OK = 0,
    CONVSTEPS_ERR_INVALID = 1,
    CONVSTEPS_ERR_UNSUPPORTED = 2,
    CONVSTEPS_ERR_NO_DEVICE = 3,
    CONVSTEPS_ERR_OUT_OF_MEMORY = 4,
    CONVSTEPS_ERR_CUDA = 5,
    CONVSTEPS_ERR_UNAVAILABLE = 6
};
enum { CONVSTEPS_NCHW = 0, CONVSTEPS_NHWC = 1 };                          /* layout */
enum { CONVSTEPS_FORWARD = 0, CONVSTEPS_DGRAD = 1, CONVSTEPS_WGRAD = 2 }; /* pass */
enum { CONVSTEPS_FP32 = 0, CONVSTEPS_TF32 = 1 };                          /* precision class */

typedef struct {
    int n, c, h, w; /* batch, input channels, image height, width */
    int k, r, s;    /* filters, filter height, width */
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
    int layout;      /* CONVSTEPS_NCHW or CONVSTEPS_NHWC */
} convsteps_problem; /* 14 ints, in this order (ctypes mirrors it) */

/* Bytes of workspace the kernel that would run needs (0 is possible), on
 * the current device. *bytes set on success. */
int convsteps_workspace_size(const convsteps_problem *p, int pass, int precision, size_t *bytes,
                             char *msg, size_t msg_len);

/* y = conv(x, w)            (pass FORWARD)
 * dx = dgrad(dy, w)          (pass DGRAD)
 * dw = wgrad(x, dy)          (pass WGRAD)
 * All pointers are device pointers; stream is a cudaStream_t (NULL: the
 * default stream); workspace may be NULL when workspace_bytes is 0 (a smaller
 * workspace than asked still runs: the rule picks among kernels whose
 * workspace fits). Only enqueues work on stream (no synchronisation);
 * everything is checked before the first launch. chosen (may be NULL) gets
 * the version key of the kernel that ran, e.g. "6f", "7b", "10d-7b"
 * (chosen_len bytes max). Safe to call from several threads on different
 * streams. */
int convsteps_forward(const convsteps_problem *p, int precision, const float *x, const float *w,
                      float *y, void *workspace, size_t workspace_bytes, void *stream, char *chosen,
                      size_t chosen_len, char *msg, size_t msg_len);
int convsteps_backward_data(const convsteps_problem *p, int precision, const float *dy,
                            const float *w, float *dx, void *workspace, size_t workspace_bytes,
                            void *stream, char *chosen, size_t chosen_len, char *msg,
                            size_t msg_len);
int convsteps_backward_filter(const convsteps_problem *p, int precision, const float *x,
                              const float *dy, float *dw, void *workspace, size_t workspace_bytes,
                              void *stream, char *chosen, size_t chosen_len, char *msg,
                              size_t msg_len);

#ifdef __cplusplus
}
#endif

#endif /* CONVSTEPS_H */
