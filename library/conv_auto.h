/* One launcher above the steps: conv2d_auto() picks a step's kernel for a
 * convolution's pass (forward, dgrad or wgrad) and a precision class by a
 * small rule over the problem's sizes and the GPU's facts, then runs it.
 *
 *   conv_auto_device_query()  the GPU's facts the rule reads, asked of CUDA
 *                             (tests fill the struct by hand)
 *   conv_auto_device_facts()  the same, asked once per device and kept (what
 *                             conv2d_auto and libconvsteps read on each call)
 *   conv_auto_choose()        the rule: a decision tree over layout, filter,
 *                             stride, dilation, channels, image and batch, the
 *                             SM count, the shared memory and the capability.
 *                             No CUDA call. Each candidate is asked its own
 *                             check before it is chosen; a refused one falls
 *                             through to the next branch, down to 6f (NHWC) or
 *                             2a (any forward problem), 10b (any backward one).
 *   conv2d_auto_workspace()   the bytes of workspace the choice needs
 *   conv2d_auto()             validates, chooses, runs the chosen launcher
 *
 * The branches and the measurements behind each: docs/11_auto.md (the
 * backward passes: its section "The backward pass"). FP32, TF32 and FP16
 * classes (TF32 may run FP32 kernels where they are faster, conv_class_allows;
 * FP16 runs FP32 kernels where it has none). An FP16 kernel rounds x and w
 * to half precision in its workspace: values beyond +-65504 become
 * infinities.
 * Device pointers d_. The facts of each device are asked once and kept
 * behind a pthread mutex: several host threads may call conv2d_auto at once. */
#ifndef CONV_AUTO_H
#define CONV_AUTO_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_params.h"
#include "conv_status.h"
#include "conv_verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The facts the rule reads. */
typedef struct {
    int cc_major, cc_minor; /* compute capability, e.g. 9 and 0 */
    int sm_count;           /* streaming multiprocessors */
    size_t smem_per_block;  /* shared memory one block may use (the opt-in
                               maximum, capped by CONV_SMEM_LIMIT_KB) */
    size_t smem_per_sm;     /* shared memory of one SM */
    size_t free_bytes;      /* device memory for the tensors and a workspace */
    int tf32_tensor_cores;  /* 1: step 08's TF32 kernels run here (8.0+ and code for it) */
    int hopper_wgmma;       /* 1: 9a and 9b run here (9.0, sm_90a code, their shared memory) */
    int hopper_wgmma_fp16;  /* 1: 9a-fp16 and 9b-fp16 run here (the same, with theirs) */
} conv_auto_device;

/* Fills d for the current device (conv_current_device()): CONV_OK, or
 * CONV_ERR_NO_DEVICE / CONV_ERR_CUDA with one line. A dozen CUDA calls; on
 * an sm_90 GPU one of them (9b's check for sm_90a code) copies from the
 * device and so waits for the work queued on the default stream: ask it once
 * (conv_auto_device_facts), not per convolution. */
conv_status conv_auto_device_query(conv_auto_device *d, conv_msg *msg);

/* The current device's facts as conv2d_auto reads them: queried the first
 * time a device is asked for and kept (one table behind a mutex: several
 * host threads may ask at once), so a call per convolution costs one
 * cudaGetDevice. free_bytes is the device's free memory now (cudaMemGetInfo,
 * asked on every call) when free_now is 1, else 0. Errors as
 * conv_auto_device_query's. */
conv_status conv_auto_device_facts(conv_auto_device *d, int free_now, conv_msg *msg);

/* The kernels the rule picks from. */
typedef enum {
    CONV_AUTO_2A = 0, /* 2a naive grid-stride: any problem */
    CONV_AUTO_4A,     /* 4a strategy 1, 32x64 tile, 16 outputs/thread: one channel, NCHW */
    CONV_AUTO_5B,     /* 5b direct convolution, NCHW, stride 1 */
    CONV_AUTO_6B,     /* im2col + 6b GEMM, 32x32 tiles (workspace: the column buffer) */
    CONV_AUTO_6E,     /* im2col + 6e GEMM (workspace: the column buffer) */
    CONV_AUTO_6F,     /* 6f implicit GEMM, NHWC */
    CONV_AUTO_7A,     /* 7a Winograd F(2x2, 3x3) (workspace: U, V, M) */
    CONV_AUTO_7B,     /* 7b Winograd F(4x4, 3x3) (workspace: U, V, M) */
    CONV_AUTO_8B,     /* 8b mma.sync TF32, NHWC (workspace: the filter as KRSC) */
    CONV_AUTO_8C,     /* 8c mma.sync 3xTF32, NHWC (the same workspace) */
    CONV_AUTO_9B,     /* 9b wgmma TF32 fed by TMA, NHWC, Hopper */
    CONV_AUTO_9C,     /* 9c: 9b with its sum split, few tiles (workspace: the slices) */
    /* FP16 (workspace: the FP16 copies of x and w, step 08's) */
    CONV_AUTO_8B_FP16, /* 8b-fp16 mma.sync FP16, NHWC, every GPU of the course */
    CONV_AUTO_9A_FP16, /* 9a-fp16 wgmma FP16 fed by cp.async, NHWC, C % 8 == 0, Hopper */
    CONV_AUTO_9B_FP16, /* 9b-fp16 wgmma FP16 fed by TMA, NHWC, what its tensor maps take, Hopper */
    /* the backward passes, step 10 (10_backward/conv_backward.h) */
    CONV_AUTO_10B,    /* 10b implicit GEMMs, dgrad and wgrad (wgrad's workspace: split-K) */
    CONV_AUTO_10C,    /* 10c TF32 tensor cores, dgrad and wgrad, NHWC (wgrad: split-K) */
    CONV_AUTO_10D_6F, /* dgrad at stride 1 as a forward convolution by 6f (workspace: w') */
    CONV_AUTO_10D_7B, /* the same by 7b, 3x3 undilated, both layouts (w', U, V, M) */
    CONV_AUTO_10D_8B, /* the same by 8b, TF32, NHWC (w' and its copy as KRSC) */
    CONV_AUTO_10D_9B, /* the same by 9b, TF32, NHWC, Hopper (w') */
    CONV_AUTO_KERNEL_COUNT
} conv_auto_kernel;

/* The version key of a kernel ("2a", "4a", ... "9b", "9c", "8b-fp16", "9a-fp16",
 * "9b-fp16", "10b", "10c", "10d-6f" ... "10d-9b"; "?" for anything else). */
const char *conv_auto_kernel_key(conv_auto_kernel k);
/* 1 when kernel k computes `pass`: 10b and 10c both backward passes, the
 * 10d kernels dgrad, the others the forward pass. */
int conv_auto_kernel_runs(conv_auto_kernel k, conv_pass pass);
/* The precision class of a kernel's arithmetic (TF32 for 8b, 9b, 9c, 10c,
 * 10d-8b and 10d-9b; FP16 for 8b-fp16, 9a-fp16 and 9b-fp16). */
conv_class conv_auto_kernel_class(conv_auto_kernel k);

/* The forward rule gives TF32 to 9b where C is at least its slice of 32
 * channels per filter tap (TC9B_BK): with fewer, most of every stage is zero
 * padding (the RGB stem: 3 of 32) and 8b, which slices C*R*S as one sum, is
 * faster (docs/11_auto.md, "The evidence"). */
#define CONV_AUTO_9B_MIN_C 32
/* dgrad goes to 10d via 9b from this many floating-point operations per SM. */
#define CONV_AUTO_9B_FLOP_PER_SM 1e8

typedef struct {
    conv_auto_kernel kernel;
    const char *key;           /* conv_auto_kernel_key(kernel) */
    conv_class cls;            /* the class of its arithmetic */
    size_t workspace_bytes;    /* device bytes it needs besides x, w and y */
    int splits;                /* wgrad, 9c: slices of its sum (1: no workspace); else 0 */
    char reason[CONV_MSG_LEN]; /* one line: the branch that fired (and what fell through) */
} conv_auto_choice;

/* The rule for p->pass. CONV_OK with the choice in out; CONV_ERR_INVALID (a
 * bad problem, class, device fact or a NULL pointer) or CONV_ERR_UNSUPPORTED
 * (a problem no kernel takes) with one line. No CUDA call. The FP16 class
 * takes an FP16 kernel for a forward pass in NHWC and the FP32 rule's
 * kernel where no FP16 kernel takes the problem (NCHW, the backward
 * passes): more accurate than it asked for, never less.
 * free_bytes is the memory for the tensors and the workspace: a wgrad whose
 * split-K workspace does not fit gets fewer slices (down to 1: none). */
conv_status conv_auto_choose(const conv_params *p, conv_class cls, const conv_auto_device *d,
                             conv_auto_choice *out, conv_msg *msg);

/* The workspace conv_auto_choose's kernel needs, in bytes (0 where the
 * problem is refused). */
size_t conv2d_auto_workspace(const conv_params *p, conv_class cls, const conv_auto_device *d);

/* p->pass by the kernel the rule picks on the current device (its facts are
 * asked once per device and kept), with the harness's buffers
 * (conv_gpu_grad, common/conv_harness.h): forward y = conv(x, w) into d_y;
 * dgrad dx into d_x from dy in d_y and d_w; wgrad dw into d_w from d_x and
 * dy in d_y. The pass's output is written, the other two only read; only
 * work on stream is enqueued (no synchronisation). d_workspace holds
 * workspace_bytes (it may be NULL when workspace_bytes is 0): the rule picks
 * among the kernels whose workspace fits in it, so conv2d_auto_workspace's
 * size gets the kernel it names, and no workspace still runs (6f or 2a at
 * worst; 10b or 10c for dgrad, wgrad in one slice). chosen (may be NULL) receives
 * the choice. Everything is checked
 * before any launch: CONV_ERR_INVALID / CONV_ERR_UNSUPPORTED with one line. */
conv_status conv2d_auto(const conv_params *p, conv_class cls, float *d_x, float *d_w, float *d_y,
                        float *d_workspace, size_t workspace_bytes, cudaStream_t stream,
                        conv_auto_choice *chosen, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_AUTO_H */
