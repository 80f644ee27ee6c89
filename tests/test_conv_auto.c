/* conv2d_auto (library/conv_auto.h): the rule, then the launcher, for the
 * forward pass and for dgrad and wgrad.
 *
 * On the CPU: the rule on a table of problems (the course's problems, every
 * ResNet-50 layer in both layouts, the usual awkward shapes and a few more)
 * and of GPUs (compute capability 7.5 without TF32, 8.0, 9.0, and a tiny one
 * with little shared memory and memory), each choice asked again of the
 * chosen kernel's own check; the branches the note names, on the problems
 * they were measured on; bad input refused in one line before any work.
 * On the GPU (suites gpu_*): conv2d_auto against the double reference on the
 * awkward shapes for each class, exact on small integers where the chosen
 * kernel is (every kernel but Winograd's), within the chosen kernel's bound
 * otherwise, the output poisoned with NaN and a canary after it; dgrad and
 * wgrad the same way against the double references of the backward pass
 * (common/conv_verify_backward.h), on the awkward and the strided shapes. */
#include <stdint.h>
#include <string.h>

#include "auto_rows.h"
#include "conv_auto.h"
#include "conv_backward.h"
#include "conv_cuda.h"
#include "conv_im2col_gemm.h"
#include "conv_models.h"
#include "conv_naive.h"
#include "conv_prefetch.h"
#include "conv_problems.h"
#include "conv_sweep_shapes.h"
#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_tiled_2d.h"
#include "conv_verify_backward.h"
#include "hopper.h"
#include "tensor_cores.h"
#include "winograd.h"

#define GIB ((size_t)1 << 30)

/* GPUs by their facts: Turing (no TF32), Ampere, Hopper, and a tiny one. */
static const conv_auto_device t4 = {7, 5, 40, 64 * 1024, 64 * 1024, 14 * GIB, 0, 0, 0};
static const conv_auto_device a100 = {8, 0, 108, 163 * 1024, 164 * 1024, 39 * GIB, 1, 0, 0};
static const conv_auto_device h200 = {9, 0, 132, 227 * 1024, 228 * 1024, 139 * GIB, 1, 1, 1};
static const conv_auto_device tiny = {7, 5, 1, 48 * 1024, 48 * 1024, (size_t)1 << 20, 0, 0, 0};

/* The chosen kernel's own check and workspace, asked here apart from the rule. */
static conv_status own_check(conv_auto_kernel k, const conv_params *p, const conv_auto_device *d,
                             size_t *work_bytes, conv_msg *msg)
{
    conv_status st = CONV_OK;
    size_t elems = 0;
    switch (k) {
    case CONV_AUTO_2A: st = conv2d_naive_check(p, msg); break;
    case CONV_AUTO_4A: {
        const conv_tiled_choice c = {CONV_TILED_S1, 3, CONV_TILED_WEIGHTS_AUTO};
        st = conv2d_tiled_check(&c, p, msg);
        break;
    }
    case CONV_AUTO_5B: {
        conv_prefetch_plan plan;
        st = conv2d_prefetch_plan(CONV_PREFETCH_5B, p, d->smem_per_block, &plan, msg);
        break;
    }
    case CONV_AUTO_6B:
    case CONV_AUTO_6E:
        st = conv2d_im2col_gemm_check(p, d->free_bytes, msg);
        elems = conv2d_im2col_gemm_workspace_elems(p);
        break;
    case CONV_AUTO_6F:
        st = p->layout == CONV_LAYOUT_NHWC ? conv2d_im2col_gemm_check(p, SIZE_MAX, msg)
                                           : CONV_ERR_UNSUPPORTED;
        break;
    case CONV_AUTO_7A:
    case CONV_AUTO_7B: {
        const wino_tile t = k == CONV_AUTO_7A ? WINO_F2 : WINO_F4;
        st = wino_check(p, t, d->free_bytes, msg);
        elems = wino_workspace_elems(p, t);
        break;
    }
    case CONV_AUTO_8B:
    case CONV_AUTO_8C:
        st = d->tf32_tensor_cores ? tc_check_mma(p, msg) : CONV_ERR_UNSUPPORTED;
        elems = conv2d_tc_mma_workspace_elems(p);
        break;
    case CONV_AUTO_9B: st = d->hopper_wgmma ? tc_check(p, msg) : CONV_ERR_UNSUPPORTED; break;
    case CONV_AUTO_9C: /* its slices for d's SMs, each an output of floats */
        st = d->hopper_wgmma ? tc_check(p, msg) : CONV_ERR_UNSUPPORTED;
        if (st == CONV_OK && !tc_tma_fits(p, NULL, NULL, NULL))
            st = CONV_ERR_UNSUPPORTED;
        elems =
            conv2d_tc_tma_split_workspace(p, conv2d_tc_tma_splits(p, d->sm_count)) / sizeof(float);
        break;
    case CONV_AUTO_8B_FP16: /* FP16 mma.sync from compute capability 7.5 */
        st = 10 * d->cc_major + d->cc_minor >= 75 ? tc_check(p, msg) : CONV_ERR_UNSUPPORTED;
        elems = conv2d_tc_fp16_workspace_elems(p);
        break;
    case CONV_AUTO_9A_FP16:
    case CONV_AUTO_9B_FP16:
        st = d->hopper_wgmma_fp16 ? tc_check(p, msg) : CONV_ERR_UNSUPPORTED;
        if (st == CONV_OK && !(k == CONV_AUTO_9A_FP16 ? tc_wgmma_fp16_fits(p)
                                                      : tc_tma_fp16_fits(p, (const float *)64)))
            st = CONV_ERR_UNSUPPORTED;
        elems = conv2d_tc_fp16_workspace_elems(p);
        break;
    default: st = CONV_ERR_INVALID;
    }
    *work_bytes = elems * sizeof(float);
    return st;
}

/* The same for the backward kernels: step 10's own checks, the forward
 * kernel's on 10d's forward problem, and the workspace for `splits` (wgrad). */
static conv_status own_check_backward(conv_auto_kernel k, const conv_params *p,
                                      const conv_auto_device *d, int splits, size_t *work_bytes,
                                      conv_msg *msg)
{
    const int dgrad = p->pass == CONV_PASS_DGRAD;
    *work_bytes = 0;
    if (k == CONV_AUTO_10B) {
        *work_bytes = dgrad ? 0 : conv2d_backward_filter_igemm_workspace(p, splits);
        return dgrad ? conv2d_backward_data_igemm_check(p, msg)
                     : conv2d_backward_filter_igemm_check(p, msg);
    }
    if (k == CONV_AUTO_10C) {
        *work_bytes = dgrad ? 0 : conv2d_backward_filter_tf32_workspace(p, splits);
        if (!d->tf32_tensor_cores)
            return CONV_ERR_UNSUPPORTED;
        return dgrad ? conv2d_backward_data_tf32_check(p, msg)
                     : conv2d_backward_filter_tf32_check(p, msg);
    }
    static const conv_backward_forward_kernel which[] = {
        CONV_BACKWARD_FORWARD_6F, CONV_BACKWARD_FORWARD_7B, CONV_BACKWARD_FORWARD_8B,
        CONV_BACKWARD_FORWARD_9B};
    static const conv_auto_kernel forward[] = {CONV_AUTO_6F, CONV_AUTO_7B, CONV_AUTO_8B,
                                               CONV_AUTO_9B};
    if (!dgrad || k < CONV_AUTO_10D_6F || k > CONV_AUTO_10D_9B)
        return CONV_ERR_INVALID;
    conv_params f;
    conv_status st = conv2d_backward_data_forward_params(p, &f, msg);
    if (st != CONV_OK)
        return st;
    size_t unused;
    *work_bytes = conv2d_backward_data_forward_workspace(p, which[k - CONV_AUTO_10D_6F]);
    return own_check(forward[k - CONV_AUTO_10D_6F], &f, d, &unused, msg);
}

/* The rule on p for each class: a choice whose own check accepts p, of a
 * class the request allows (FP32 for an FP16 request too), a one-line
 * reason, the workspace the kernel itself asks for (and within the memory
 * given). */
static void check_choice(const conv_params *p, const conv_auto_device *d, const char *gpu)
{
    for (int c = CONV_CLASS_FP32; c <= CONV_CLASS_FP16; ++c) {
        conv_auto_choice ch;
        conv_msg msg = {{0}};
        conv_status st = conv_auto_choose(p, (conv_class)c, d, &ch, &msg);
        cr_assert_eq(st, CONV_OK, "%s on %s (%s): %s", conv_class_name((conv_class)c),
                     conv_shape_name(p), gpu, msg.text);
        cr_assert_str_eq(ch.key, conv_auto_kernel_key(ch.kernel));
        cr_assert(conv_class_allows((conv_class)c, ch.cls) ||
                      (c == CONV_CLASS_FP16 && ch.cls == CONV_CLASS_FP32),
                  "%s picked %s, of class %s", conv_class_name((conv_class)c), ch.key,
                  conv_class_name(ch.cls));
        size_t work16 = 0;
        if (c == CONV_CLASS_FP16 && p->pass == CONV_PASS_FORWARD &&
            own_check(CONV_AUTO_8B_FP16, p, d, &work16, &msg) == CONV_OK &&
            (conv_input_elems(p) + conv_filter_elems(p) + conv_output_elems(p)) * sizeof(float) +
                    work16 <=
                d->free_bytes) /* 8b-fp16 takes it: an FP16 kernel must be chosen */
            cr_assert_eq(ch.cls, CONV_CLASS_FP16, "FP16 on %s (%s) picked %s: %s",
                         conv_shape_name(p), gpu, ch.key, ch.reason);
        cr_assert(ch.reason[0] != '\0' && strchr(ch.reason, '\n') == NULL,
                  "reason of %s on %s: '%s'", ch.key, conv_shape_name(p), ch.reason);
        size_t work = 0;
        cr_assert(conv_auto_kernel_runs(ch.kernel, p->pass), "%s for %s", ch.key,
                  conv_pass_name(p->pass));
        st = p->pass == CONV_PASS_FORWARD
                 ? own_check(ch.kernel, p, d, &work, &msg)
                 : own_check_backward(ch.kernel, p, d, ch.splits, &work, &msg);
        cr_assert_eq(st, CONV_OK, "%s (%s, %s) refuses %s: %s", ch.key, ch.reason, gpu,
                     conv_shape_name(p), msg.text);
        cr_assert_eq(ch.workspace_bytes, work, "%s's workspace on %s", ch.key, conv_shape_name(p));
        cr_assert_eq(conv2d_auto_workspace(p, (conv_class)c, d), work);
        if (!d->hopper_wgmma_fp16)
            cr_assert(ch.kernel != CONV_AUTO_9A_FP16 && ch.kernel != CONV_AUTO_9B_FP16, "%s on %s",
                      ch.key, gpu);
        if (d->cc_major < 8)
            cr_assert(ch.kernel != CONV_AUTO_8B && ch.kernel != CONV_AUTO_8C &&
                          ch.kernel != CONV_AUTO_9B && ch.kernel != CONV_AUTO_9C &&
                          ch.kernel != CONV_AUTO_10C && ch.kernel != CONV_AUTO_10D_8B &&
                          ch.kernel != CONV_AUTO_10D_9B,
                      "%s on sm_%d%d", ch.key, d->cc_major, d->cc_minor);
        if (p->layout == CONV_LAYOUT_NCHW) /* of the tensor-core kernels, 8b and 8c only */
            cr_assert(ch.kernel == CONV_AUTO_10B || ch.kernel == CONV_AUTO_10D_7B ||
                          (ch.kernel != CONV_AUTO_6F && ch.kernel <= CONV_AUTO_8C),
                      "%s on NCHW", ch.key);
        if (ch.kernel == CONV_AUTO_9C) /* split only where the rule of 9c splits */
            cr_assert(ch.splits > 1 && ch.splits == conv2d_tc_tma_splits(p, d->sm_count) &&
                          ch.workspace_bytes > 0,
                      "9c on %s: %d splits, %zu bytes", conv_shape_name(p), ch.splits,
                      ch.workspace_bytes);
        if (p->pass == CONV_PASS_WGRAD)
            cr_assert(ch.splits >= 1 && (ch.splits > 1 || ch.workspace_bytes == 0),
                      "%s: %d splits, %zu bytes", ch.key, ch.splits, ch.workspace_bytes);
    }
}

static void check_on_every_gpu(const conv_params *p)
{
    check_choice(p, &t4, "T4");
    check_choice(p, &a100, "A100");
    check_choice(p, &h200, "H200");
    check_choice(p, &tiny, "a tiny GPU");
}

/* The usual shapes, and a few more: strides 3, a prime channel count, one
 * channel on a large image, more filters than a tile holds. */
static size_t awkward_shapes(conv_params *t)
{
    size_t n = conv_usual_shapes(t);
    t[n++] = conv_shape(2, 3, 23, 17, 5, 3, 3, 1, 3, 1);
    t[n++] = conv_shape(1, 7, 13, 13, 131, 1, 1, 0, 1, 1);
    t[n++] = conv_shape(1, 1, 70, 40, 1, 5, 5, 2, 1, 1);
    t[n++] = conv_shape(3, 5, 9, 11, 37, 3, 3, 1, 1, 1);
    t[n++] = conv_shape(1, 17, 1, 1, 3, 1, 1, 0, 1, 1);
    return n;
}

/* The awkward shapes and the strided kin of the usual ones (the backward
 * pass's index arithmetic turns on the stride). */
static size_t awkward_and_strided_shapes(conv_params *t)
{
    conv_params strided[CONV_USUAL_SHAPES + CONV_STRIDED_SHAPES];
    size_t n = awkward_shapes(t);
    const size_t m = conv_strided_shapes(strided);
    for (size_t i = CONV_USUAL_SHAPES; i < m; ++i)
        t[n++] = strided[i];
    return n;
}

/* The n shapes of t in NCHW, then each again in NHWC after them: 2n shapes. */
static size_t in_both_layouts(conv_params *t, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        t[i].layout = CONV_LAYOUT_NCHW;
        t[n + i] = t[i];
        t[n + i].layout = CONV_LAYOUT_NHWC;
    }
    return 2 * n;
}

/* ResNet-50's convolutions at batch 32 in both layouts, into t (room for
 * 2 * CONV_MODEL_MAX_CONVS); returns how many. */
static size_t resnet50_layers(conv_params *t)
{
    static conv_model_layer layers[CONV_MODEL_MAX_CONVS];
    int count = 0;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_model_layers("resnet50", 32, CONV_LAYOUT_NCHW, layers, CONV_MODEL_MAX_CONVS,
                                     &count, &msg),
                   msg);
    cr_assert(count > 10);
    for (int i = 0; i < count; ++i)
        t[i] = layers[i].params;
    return in_both_layouts(t, (size_t)count);
}

Test(conv_auto_rule, picks_a_kernel_that_accepts_every_awkward_shape_on_every_gpu)
{
    conv_params t[2 * (CONV_USUAL_SHAPES + 8)];
    const size_t n = in_both_layouts(t, awkward_shapes(t));
    for (size_t i = 0; i < n; ++i)
        check_on_every_gpu(&t[i]);
}

Test(conv_auto_rule, picks_a_kernel_that_accepts_every_problem_of_the_course)
{
    int count = 0;
    const conv_problem *all = conv_problems(&count);
    cr_assert(count > 0);
    for (int i = 0; i < count; ++i)
        check_on_every_gpu(&all[i].params);
}

Test(conv_auto_rule, picks_a_kernel_that_accepts_every_resnet50_layer)
{
    static conv_params t[2 * CONV_MODEL_MAX_CONVS];
    const size_t n = resnet50_layers(t);
    for (size_t i = 0; i < n; ++i)
        check_on_every_gpu(&t[i]);
}

/* The backward passes of p on every GPU. */
static void check_backward_on_every_gpu(conv_params p)
{
    for (int pass = CONV_PASS_DGRAD; pass <= CONV_PASS_WGRAD; ++pass) {
        p.pass = (conv_pass)pass;
        check_on_every_gpu(&p);
    }
}

Test(conv_auto_rule, picks_a_backward_kernel_that_accepts_every_awkward_and_strided_shape)
{
    conv_params t[2 * (CONV_USUAL_SHAPES + CONV_STRIDED_SHAPES + 8)];
    const size_t n = in_both_layouts(t, awkward_and_strided_shapes(t));
    for (size_t i = 0; i < n; ++i)
        check_backward_on_every_gpu(t[i]);
}

Test(conv_auto_rule, picks_a_backward_kernel_that_accepts_every_shape_of_the_sweep)
{
    conv_sweep_draw d = {2, 0}; /* the backward sweep's stream (tests/test_sweep.c) */
    for (int i = 0; i < 300; ++i)
        check_backward_on_every_gpu(conv_sweep_shape(&d));
}

Test(conv_auto_rule, picks_a_backward_kernel_for_every_resnet50_layer)
{
    static conv_params t[2 * CONV_MODEL_MAX_CONVS];
    const size_t n = resnet50_layers(t);
    for (size_t i = 0; i < n; ++i)
        check_backward_on_every_gpu(t[i]);
}

/* The key the rule picks for p in pass `pass` and class cls on d. */
static const char *backward_key(conv_params p, conv_pass pass, conv_class cls,
                                const conv_auto_device *d)
{
    static conv_auto_choice ch;
    conv_msg msg = {{0}};
    p.pass = pass;
    CONV_ASSERT_OK(conv_auto_choose(&p, cls, d, &ch, &msg), msg);
    return ch.key;
}

Test(conv_auto_rule, takes_the_backward_branches_the_note_measured)
{
    /* ResNet-50's layer1.0.conv2 (3x3, stride 1) and layer2.0.conv2 (3x3, stride 2) */
    conv_params s1 = conv_shape(32, 64, 56, 56, 64, 3, 3, 1, 1, 1);
    conv_params s2 = conv_shape(32, 128, 56, 56, 128, 3, 3, 1, 2, 1);
    conv_params one = conv_shape(32, 256, 56, 56, 64, 1, 1, 0, 1, 1); /* 1x1 */
    const conv_pass dg = CONV_PASS_DGRAD, wg = CONV_PASS_WGRAD;
    const conv_class f32 = CONV_CLASS_FP32, t32 = CONV_CLASS_TF32;
    /* NCHW: Winograd for 3x3 at stride 1, else 10b */
    cr_assert_str_eq(backward_key(s1, dg, t32, &h200), "10d-7b");
    cr_assert_str_eq(backward_key(one, dg, t32, &h200), "10b");
    cr_assert_str_eq(backward_key(s2, dg, t32, &h200), "10b");
    cr_assert_str_eq(backward_key(s1, wg, t32, &h200), "10b");
    s1.layout = s2.layout = one.layout = CONV_LAYOUT_NHWC;
    /* NHWC FP32: 7b for 3x3, 6f otherwise, 10b at stride 2 */
    cr_assert_str_eq(backward_key(s1, dg, f32, &h200), "10d-7b");
    cr_assert_str_eq(backward_key(one, dg, f32, &h200), "10d-6f");
    cr_assert_str_eq(backward_key(s2, dg, f32, &h200), "10b");
    /* NHWC TF32: 9b (large, on Hopper: the forward rule's bound) or 8b, 10c at
     * stride 2 and for wgrad */
    cr_assert_str_eq(backward_key(s1, dg, t32, &h200), "10d-8b");
    conv_params large = s1;
    large.n = 128;
    cr_assert_str_eq(backward_key(large, dg, t32, &h200), "10d-9b");
    cr_assert_str_eq(backward_key(s1, dg, t32, &a100), "10d-8b");
    cr_assert_str_eq(backward_key(s1, dg, t32, &t4), "10d-7b"); /* no TF32 on 7.5 */
    cr_assert_str_eq(backward_key(s2, dg, t32, &a100), "10c");
    cr_assert_str_eq(backward_key(s2, dg, t32, &t4), "10b");
    cr_assert_str_eq(backward_key(s1, wg, t32, &a100), "10c");
    cr_assert_str_eq(backward_key(s1, wg, t32, &t4), "10b");
    cr_assert_str_eq(backward_key(s1, wg, f32, &h200), "10b");
    /* a padding beyond the filter's reach: no 10d */
    conv_params wide = conv_shape_nhwc(2, 8, 20, 20, 8, 3, 3, 3, 1, 1);
    cr_assert_str_eq(backward_key(wide, dg, f32, &h200), "10b");
    cr_assert_str_eq(backward_key(wide, dg, t32, &h200), "10c");
}

Test(conv_auto_rule, takes_fewer_wgrad_slices_where_the_workspace_does_not_fit)
{
    conv_params p = conv_shape_nhwc(32, 64, 56, 56, 64, 3, 3, 1, 1, 1);
    p.pass = CONV_PASS_WGRAD;
    for (int c = CONV_CLASS_FP32; c <= CONV_CLASS_TF32; ++c) {
        conv_auto_choice ch;
        conv_msg msg = {{0}};
        CONV_ASSERT_OK(conv_auto_choose(&p, (conv_class)c, &h200, &ch, &msg), msg);
        const int rule = c == CONV_CLASS_TF32
                             ? conv2d_backward_filter_tf32_splits(&p, h200.sm_count)
                             : conv2d_backward_filter_igemm_splits(&p, 132);
        cr_assert_eq(ch.splits, rule, "%s: %s", ch.key, ch.reason);
        cr_assert(rule > 2, "%d slices: the test wants a few more", rule);
        const size_t part = conv_filter_elems(&p) * sizeof(float);
        const size_t tensors =
            (conv_input_elems(&p) + conv_filter_elems(&p) + conv_output_elems(&p)) * sizeof(float);
        conv_auto_device d = h200;
        d.free_bytes = tensors + 2 * part + part / 2; /* room for two slices */
        CONV_ASSERT_OK(conv_auto_choose(&p, (conv_class)c, &d, &ch, &msg), msg);
        cr_assert_eq(ch.splits, 2, "%s: %s", ch.key, ch.reason);
        cr_assert_eq(ch.workspace_bytes, 2 * part);
        CONV_ASSERT_ONE_LINE(ch.reason, "2 slices");
        d.free_bytes = tensors; /* none: one slice */
        CONV_ASSERT_OK(conv_auto_choose(&p, (conv_class)c, &d, &ch, &msg), msg);
        cr_assert_eq(ch.splits, 1);
        cr_assert_eq(ch.workspace_bytes, 0);
        cr_assert_eq(conv2d_auto_workspace(&p, (conv_class)c, &d), 0);
    }
}

Test(conv_auto_rule, runs_dgrad_without_a_workspace_by_10b_or_10c)
{
    conv_params p = conv_shape(32, 64, 56, 56, 64, 3, 3, 1, 1, 1);
    p.pass = CONV_PASS_DGRAD;
    conv_auto_device d = h200;
    d.free_bytes = (conv_input_elems(&p) + conv_filter_elems(&p) + conv_output_elems(&p)) * 4;
    for (int l = 0; l < 2; ++l) {
        p.layout = l ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
        conv_auto_choice ch;
        conv_msg msg = {{0}};
        CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP32, &d, &ch, &msg), msg);
        cr_assert_str_eq(ch.key, "10b", "%s: %s", ch.key, ch.reason);
        CONV_ASSERT_ONE_LINE(ch.reason, "10d-7b refused");
        CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_TF32, &d, &ch, &msg), msg);
        cr_assert_str_eq(ch.key, l ? "10c" : "10b", "%s: %s", ch.key, ch.reason);
        cr_assert_eq(ch.workspace_bytes, 0);
    }
}

Test(conv_auto_rule, refuses_a_backward_problem_no_kernel_takes_in_one_line)
{
    /* 78125 tiles of 64 channels: more than 10b's grid holds, and no 10d (1x1 NCHW) */
    conv_params p = conv_shape(1, 5000000, 1, 1, 1, 1, 1, 0, 1, 1);
    p.pass = CONV_PASS_DGRAD;
    conv_auto_choice ch;
    conv_msg msg = {{0}};
    cr_assert_eq(conv_auto_choose(&p, CONV_CLASS_FP32, &h200, &ch, &msg), CONV_ERR_UNSUPPORTED,
                 "%s", ch.reason);
    CONV_ASSERT_ONE_LINE(msg.text, "no kernel takes it: 10b refused");
    cr_assert_eq(conv2d_auto_workspace(&p, CONV_CLASS_FP32, &h200), 0);
}

/* The key the rule picks for a named problem of the course. */
static const char *key_of(const char *problem, conv_class cls, const conv_auto_device *d)
{
    const conv_problem *pr = conv_problem_find(problem);
    cr_assert(pr != NULL, "no problem %s", problem);
    static conv_auto_choice ch;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_auto_choose(&pr->params, cls, d, &ch, &msg), msg);
    return ch.key;
}

Test(conv_auto_rule, takes_the_branches_the_note_measured)
{
    /* NHWC 3x3 stride 1: Winograd in FP32, the tensor cores in TF32 (9b on Hopper) */
    cr_assert_str_eq(key_of("hpc101-nhwc", CONV_CLASS_FP32, &h200), "7b");
    cr_assert_str_eq(key_of("hpc101-nhwc", CONV_CLASS_TF32, &h200), "9b");
    cr_assert_str_eq(key_of("hpc101-nhwc", CONV_CLASS_TF32, &a100), "8b");
    cr_assert_str_eq(key_of("hpc101-nhwc", CONV_CLASS_TF32, &t4), "7b"); /* no TF32 on 7.5 */
    cr_assert_str_eq(key_of("cutlass", CONV_CLASS_TF32, &h200), "7b");   /* NCHW 3x3 */
    /* NCHW: few filters, one channel, the 1D problem */
    cr_assert_str_eq(key_of("lecture", CONV_CLASS_FP32, &h200), "5b");
    cr_assert_str_eq(key_of("ece408-l2", CONV_CLASS_TF32, &t4), "5b");
    cr_assert_str_eq(key_of("hpc101-image", CONV_CLASS_FP32, &h200), "4a");
    cr_assert_str_eq(key_of("conv1d", CONV_CLASS_FP32, &h200), "5b");
    /* FP16: wgmma fed by TMA on Hopper, mma.sync elsewhere; NCHW: the FP32 rule */
    cr_assert_str_eq(key_of("hpc101-nhwc", CONV_CLASS_FP16, &h200), "9b-fp16");
    cr_assert_str_eq(key_of("hpc101-nhwc", CONV_CLASS_FP16, &a100), "8b-fp16");
    cr_assert_str_eq(key_of("hpc101-nhwc", CONV_CLASS_FP16, &t4), "8b-fp16");
    cr_assert_str_eq(key_of("cutlass", CONV_CLASS_FP16, &h200), "7b");
}

/* FP16 on Hopper: 9b-fp16 where a tensor map describes the problem, 9a-fp16
 * where C is a multiple of 8 all the same, else 8b-fp16; the FP32 rule for
 * NCHW and the backward passes, saying so. */
Test(conv_auto_rule, takes_the_fp16_branches)
{
    conv_params p = conv_shape_nhwc(2, 16, 20, 20, 32, 3, 3, 1, 1, 1);
    conv_auto_choice ch;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP16, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "9b-fp16");
    p.k = 30; /* y's rows of 120 bytes: no tensor map */
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP16, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "9a-fp16", "%s", ch.reason);
    cr_assert(strstr(ch.reason, "9b-fp16 refused") != NULL, "%s", ch.reason);
    p.c = 12; /* 8 columns span two taps */
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP16, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "8b-fp16", "%s", ch.reason);
    cr_assert_eq(ch.workspace_bytes, conv2d_tc_fp16_workspace_elems(&p) * sizeof(float));
    conv_auto_device small = h200; /* the FP16 copies do not fit: the FP32 rule */
    small.free_bytes =
        (conv_input_elems(&p) + conv_filter_elems(&p) + conv_output_elems(&p)) * sizeof(float);
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP16, &small, &ch, &msg), msg);
    cr_assert_eq(ch.cls, CONV_CLASS_FP32, "%s: %s", ch.key, ch.reason);
    p.layout = CONV_LAYOUT_NCHW;
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP16, &h200, &ch, &msg), msg);
    cr_assert_eq(ch.cls, CONV_CLASS_FP32);
    cr_assert(strstr(ch.reason, "no FP16 kernel for NCHW") != NULL, "%s", ch.reason);
    p.layout = CONV_LAYOUT_NHWC, p.pass = CONV_PASS_WGRAD;
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP16, &h200, &ch, &msg), msg);
    cr_assert_eq(ch.cls, CONV_CLASS_FP32);
    cr_assert(strstr(ch.reason, "no FP16 kernel for the backward passes") != NULL, "%s", ch.reason);
}

Test(conv_auto_rule, fills_the_sms_before_it_takes_3xtf32)
{
    /* ResNet-50's layer4.0.conv2 in NHWC: 32 x 7 x 7 outputs of 512 channels,
     * 13 x 4 = 52 tiles of 128 x 128, fewer than half of 132 SMs: 6f (its
     * 64 x 128 tiles make 104 blocks); with batch 128, 8c */
    conv_params p = conv_shape_nhwc(32, 512, 14, 14, 512, 3, 3, 1, 2, 1);
    conv_auto_choice ch;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "6f", "%s: %s", ch.key, ch.reason);
    p.n = 128;
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "8c", "%s: %s", ch.key, ch.reason);
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP32, &t4, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "6f", "%s: %s", ch.key, ch.reason);
}

/* Batch 1: few tiles. ResNet-50's layers in NHWC (torchvision's shapes). */
Test(conv_auto_rule, takes_smaller_tiles_where_few_would_fill_the_sms)
{
    conv_auto_choice ch;
    conv_msg msg = {{0}};
    /* layer1.0.conv2, 3x3 on 56x56: 14 x 14 = 196 F(4x4) tiles, fewer than
     * twice 132 SMs: 7a; at batch 32 (6272 tiles): 7b */
    conv_params p = conv_shape_nhwc(1, 64, 56, 56, 64, 3, 3, 1, 1, 1);
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "7a", "%s: %s", ch.key, ch.reason);
    p.n = 32;
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "7b", "%s: %s", ch.key, ch.reason);
    /* layer4.1.conv2, 3x3 on 7x7: 2 x 2 tiles an image, 128 at batch 32: still 7a */
    p = conv_shape_nhwc(32, 512, 7, 7, 512, 3, 3, 1, 1, 1);
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "7a", "%s: %s", ch.key, ch.reason);
    /* layer4.0.conv3, 1x1 on 7x7, 2048 filters: 2 x 64 = 128 tiles of 32 x 32,
     * no more than 132 SMs: 6b; 3 x 64 = 192 with 1.5 times the pixels: 6f */
    p = conv_shape_nhwc(1, 512, 7, 7, 2048, 1, 1, 0, 1, 1);
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "6b", "%s: %s", ch.key, ch.reason);
    p.h = p.w = 9; /* 81 outputs: 3 rows of 32 */
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "6f", "%s: %s", ch.key, ch.reason);
    /* in TF32 the tensor cores, whatever the number of tiles: on Hopper 9c
     * where 9b's 256 x 128 tiles are few (1 x 16 here), 8b on Ampere; at
     * batch 32 (7 x 16 = 112 tiles) 9b */
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_TF32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "9c", "%s: %s", ch.key, ch.reason);
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_TF32, &a100, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "8b", "%s: %s", ch.key, ch.reason);
    p = conv_shape_nhwc(32, 512, 7, 7, 2048, 1, 1, 0, 1, 1);
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_TF32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "9b", "%s: %s", ch.key, ch.reason);
}

/* 9b slices C into stages of 32 channels per filter tap: the RGB stem (C = 3)
 * would fill 3 of each 32, so TF32 goes to 8b there; from C = 32 on, 9b. */
Test(conv_auto_rule, tf32_on_hopper_needs_channels_for_9b)
{
    conv_auto_choice ch;
    conv_msg msg = {{0}};
    conv_params p = conv_shape_nhwc(32, 3, 224, 224, 64, 7, 7, 3, 2, 1); /* ResNet-50's conv1 */
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_TF32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "8b", "%s: %s", ch.key, ch.reason);
    p.c = CONV_AUTO_9B_MIN_C - 1;
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_TF32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "8b", "%s: %s", ch.key, ch.reason);
    p.c = CONV_AUTO_9B_MIN_C;
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_TF32, &h200, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "9b", "%s: %s", ch.key, ch.reason);
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_TF32, &a100, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "8b", "%s: %s", ch.key, ch.reason);
}

/* The rule's choice for p, asserted to succeed and to be `key`. */
static conv_auto_choice chosen(const conv_params *p, conv_class cls, const conv_auto_device *d,
                               const char *key)
{
    conv_auto_choice ch;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_auto_choose(p, cls, d, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, key, "%s: %s", ch.key, ch.reason);
    return ch;
}

/* Where 9b's tiles of 256 pixels x 128 filters fill less than half the SMs,
 * TF32 on Hopper goes to 9c, 9b with its sum in slices: ResNet-50's
 * layer4.0.conv2 at batch 32 has 7 x 4 = 28 tiles and 9 x 16 = 144 stages,
 * so 132 / 28 = 4 slices of 36 stages. Without room for the slices, 9b. */
Test(conv_auto_rule, splits_the_sum_where_9b_has_few_tiles)
{
    conv_params p = conv_shape_nhwc(32, 512, 14, 14, 512, 3, 3, 1, 2, 1);
    conv_auto_choice ch = chosen(&p, CONV_CLASS_TF32, &h200, "9c");
    cr_assert_eq(ch.splits, 4, "%s", ch.reason);
    cr_assert_eq(ch.workspace_bytes, 4 * conv_output_elems(&p) * sizeof(float));
    conv_auto_device small = h200;
    small.free_bytes =
        (conv_input_elems(&p) + conv_filter_elems(&p) + conv_output_elems(&p)) * sizeof(float);
    ch = chosen(&p, CONV_CLASS_TF32, &small, "9b");
    cr_assert(strstr(ch.reason, "9c refused") != NULL, "%s", ch.reason);
    chosen(&p, CONV_CLASS_TF32, &a100, "8b");
    p.n = 128; /* 25 x 4 = 100 tiles: 9b alone */
    ch = chosen(&p, CONV_CLASS_TF32, &h200, "9b");
    cr_assert_eq(ch.workspace_bytes, 0);
}

Test(conv_auto_rule, falls_back_where_the_workspace_does_not_fit)
{
    const conv_problem *pr = conv_problem_find("hpc101");             /* NCHW */
    conv_auto_device d = t4;                                          /* no TF32: no 8c */
    d.free_bytes = conv_input_elems(&pr->params) * 3 * sizeof(float); /* no room for U, V, M */
    conv_auto_choice ch;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_auto_choose(&pr->params, CONV_CLASS_FP32, &d, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "2a", "%s: %s", ch.key, ch.reason);
    cr_assert_eq(ch.workspace_bytes, 0);
    CONV_ASSERT_ONE_LINE(ch.reason, "7b refused");
    d = h200; /* 8c: not in NCHW for a 3x3 filter (4-byte copies) */
    d.free_bytes = conv_input_elems(&pr->params) * 3 * sizeof(float);
    CONV_ASSERT_OK(conv_auto_choose(&pr->params, CONV_CLASS_FP32, &d, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "2a", "%s: %s", ch.key, ch.reason);
    conv_params nhwc = pr->params;
    nhwc.layout = CONV_LAYOUT_NHWC;
    CONV_ASSERT_OK(conv_auto_choose(&nhwc, CONV_CLASS_FP32, &d, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "8c", "%s: %s", ch.key, ch.reason); /* the filter's copy fits */
    d = t4;
    d.free_bytes = conv_input_elems(&pr->params) * 3 * sizeof(float);
    CONV_ASSERT_OK(conv_auto_choose(&nhwc, CONV_CLASS_TF32, &d, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, "6f", "%s: %s", ch.key, ch.reason);
    cr_assert_eq(ch.workspace_bytes, 0);
}

/* NCHW: 8b for TF32 below Winograd (3x3 stride 1: 7b); 8c for FP32 only on
 * 1x1 layers whose x it copies 16 bytes at a time (tc_nchw_copies16()) and
 * where its tiles fill half the SMs. ResNet-50's shapes: a 56x56 1x1, a 7x7
 * one, a strided one, a 3x3. */
Test(conv_auto_rule, takes_8b_and_8c_in_nchw_where_their_copies_are_wide)
{
    conv_params p = conv_shape(32, 256, 56, 56, 64, 1, 1, 0, 1, 1); /* NCHW */
    chosen(&p, CONV_CLASS_FP32, &h200, "8c");
    chosen(&p, CONV_CLASS_FP32, &a100, "8c");
    chosen(&p, CONV_CLASS_TF32, &h200, "8b");
    chosen(&p, CONV_CLASS_FP32, &t4, "6e");
    chosen(&p, CONV_CLASS_TF32, &t4, "6e");
    conv_params late = conv_shape(32, 2048, 7, 7, 512, 1, 1, 0, 1, 1); /* H W = 49 */
    chosen(&late, CONV_CLASS_FP32, &h200, "6e");
    chosen(&late, CONV_CLASS_TF32, &h200, "8b");
    conv_params strided = conv_shape(32, 512, 28, 28, 1024, 1, 1, 0, 2, 1);
    chosen(&strided, CONV_CLASS_FP32, &h200, "6e");
    chosen(&strided, CONV_CLASS_TF32, &h200, "8b");
    conv_params wino = conv_shape(32, 64, 56, 56, 64, 3, 3, 1, 1, 1);
    chosen(&wino, CONV_CLASS_TF32, &h200, "7b");
    conv_params small = p; /* 1 x 1 of 128x128 tiles: fewer than half the SMs */
    small.n = 1, small.h = small.w = 8;
    chosen(&small, CONV_CLASS_FP32, &h200, "6e");
}

Test(conv_auto_rule, refuses_bad_input_in_one_line)
{
    conv_params p = conv_shape(1, 2, 9, 9, 3, 3, 3, 1, 1, 1);
    conv_auto_choice ch;
    conv_msg msg = {{0}};
    cr_assert_eq(conv_auto_choose(NULL, CONV_CLASS_FP32, &h200, &ch, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "p is NULL");
    cr_assert_eq(conv_auto_choose(&p, CONV_CLASS_FP32, NULL, &ch, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "d is NULL");
    cr_assert_eq(conv_auto_choose(&p, CONV_CLASS_FP32, &h200, NULL, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "out is NULL");
    conv_params bad = p;
    bad.c = 0;
    cr_assert_eq(conv_auto_choose(&bad, CONV_CLASS_FP32, &h200, &ch, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "C");
    cr_assert_eq(conv_auto_choose(&p, (conv_class)7, &h200, &ch, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "class");
    conv_auto_device d = h200;
    d.sm_count = 0;
    cr_assert_eq(conv_auto_choose(&p, CONV_CLASS_FP32, &d, &ch, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "sm_count");
    conv_params back = p;
    back.pass = (conv_pass)3;
    cr_assert_eq(conv_auto_choose(&back, CONV_CLASS_FP32, &h200, &ch, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "pass");
    cr_assert_eq(conv2d_auto_workspace(&back, CONV_CLASS_FP32, &h200), 0);
}

/* Without a GPU a call that reached the device would say so: these must stop first. */
Test(conv_auto_launcher, refuses_bad_input_before_any_cuda_call)
{
    conv_test_hide_gpus();
    const conv_params p = conv_shape(1, 2, 9, 9, 3, 3, 3, 1, 1, 1);
    conv_params wgrad = p, dgrad = p, no_k = p;
    wgrad.pass = CONV_PASS_WGRAD;
    dgrad.pass = CONV_PASS_DGRAD;
    no_k.k = -1;
    float fake[4];
    float *f = fake;
    /* conv2d_auto(p, cls, x, w, y, NULL, workspace_bytes) */
    const struct {
        const conv_params *p;
        conv_class cls;
        float *x, *w, *y;
        size_t workspace_bytes;
        conv_status want;
        const char *text;
    } refused[] = {
        {&p, CONV_CLASS_FP32, NULL, f, f, 0, CONV_ERR_INVALID, "d_x"},
        {&p, CONV_CLASS_FP32, f, f, NULL, 0, CONV_ERR_INVALID, "d_y"},
        {&p, CONV_CLASS_FP32, f, f, f, 64, CONV_ERR_INVALID, "d_workspace"},
        {NULL, CONV_CLASS_FP32, f, f, f, 0, CONV_ERR_INVALID, "p is NULL"},
        {&wgrad, CONV_CLASS_FP16, f, f, NULL, 0, CONV_ERR_INVALID, "d_y"},
        {&dgrad, CONV_CLASS_FP32, f, NULL, f, 0, CONV_ERR_INVALID, "d_w"},
        {&p, (conv_class)7, f, f, f, 0, CONV_ERR_INVALID, "class"},
        {&no_k, CONV_CLASS_TF32, f, f, f, 0, CONV_ERR_INVALID, "K"},
    };
    conv_msg msg = {{0}};
    for (size_t i = 0; i < CONV_COUNT(refused); ++i)
        CONV_ASSERT_REFUSES(conv2d_auto(refused[i].p, refused[i].cls, refused[i].x, refused[i].w,
                                        refused[i].y, NULL, refused[i].workspace_bytes, 0, NULL,
                                        &msg),
                            refused[i].want, msg, refused[i].text);
}

Test(conv_auto_launcher, says_no_device_in_one_line)
{
    conv_test_hide_gpus();
    conv_params p = conv_shape(1, 2, 9, 9, 3, 3, 3, 1, 1, 1);
    float fake[4];
    conv_msg msg = {{0}};
    conv_auto_device d;
    cr_assert_eq(conv_auto_device_query(&d, &msg), CONV_ERR_NO_DEVICE);
    cr_assert(strchr(msg.text, '\n') == NULL, "%s", msg.text);
    cr_assert_eq(conv2d_auto(&p, CONV_CLASS_FP32, fake, fake, fake, NULL, 0, 0, NULL, &msg),
                 CONV_ERR_NO_DEVICE);
}

Test(conv_auto_rows, run_the_pass_of_the_problem)
{
    conv_params p = conv_shape(1, 2, 9, 9, 3, 3, 3, 1, 1, 1);
    for (int pass = CONV_PASS_FORWARD; pass <= CONV_PASS_WGRAD; ++pass) {
        p.pass = (conv_pass)pass;
        conv_row rows[AUTO_ROW_COUNT];
        cr_assert_eq(conv_auto_rows(&p, NULL, rows, AUTO_ROW_COUNT), AUTO_ROW_COUNT);
        conv_msg msg = {{0}};
        for (int i = 0; i < AUTO_ROW_COUNT; ++i) {
            cr_assert_eq(rows[i].pass, p.pass);
            cr_assert((rows[i].grad != NULL) == (pass != CONV_PASS_FORWARD));
            CONV_ASSERT_OK(rows[i].check(rows[i].ctx, &p, &msg), msg);
        }
        cr_assert_eq(rows[0].cls, CONV_CLASS_FP32);
        cr_assert_eq(rows[1].cls, CONV_CLASS_TF32);
        cr_assert_eq(rows[2].cls, CONV_CLASS_FP16);
    }
}

/* ---- on the GPU ---- */

/* conv2d_auto's row for p in class `which` (0: FP32, 1: TF32, 2: FP16), out of rows
 * (AUTO_ROW_COUNT of them), once its check has accepted p. */
static conv_row *checked_row(const conv_params *p, int which, conv_row *rows)
{
    conv_auto_rows(p, NULL, rows, AUTO_ROW_COUNT);
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(rows[which].check(rows[which].ctx, p, &msg), msg);
    return &rows[which];
}

/* conv2d_auto through its row on p in class `which` (0: FP32, 1: TF32, 2: FP16):
 * small integers exact where the chosen kernel is exact (all but Winograd's), else
 * within its bound; uniform floats within the chosen kernel's bound. */
static void check_auto_on(const conv_params *p, int which)
{
    conv_row rows[AUTO_ROW_COUNT];
    conv_row *row = checked_row(p, which, rows);
    conv_msg msg = {{0}};
    conv_gpu_problem pb = conv_test_device_problem(*p, 1);
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *want = conv_host_alloc(ny);
    cr_assert(want != NULL);
    char label[2 * CONV_MSG_LEN];
    for (int ints = 1; ints >= 0; --ints) {
        if (ints) {
            conv_fill_small_int(pb.h_x, nx, 11, -3, 3);
            conv_fill_small_int(pb.h_w, nw, 12, -3, 3);
        } else {
            conv_fill_uniform(pb.h_x, nx, 13, -1.0f, 1.0f);
            conv_fill_uniform(pb.h_w, nw, 14, -1.0f, 1.0f);
        }
        conv_test_run_row(&pb, row, row->name); /* poisoned output, canary checked */
        const conv_auto_choice *ch = conv_auto_row_choice(row);
        cr_assert(ch != NULL);
        conv_verify_report rep;
        if (ints && ch->kernel != CONV_AUTO_7A && ch->kernel != CONV_AUTO_7B) {
            CONV_ASSERT_OK(conv_test_host_reference(p, pb.h_x, pb.h_w, want, &msg), msg);
            rep = conv_compare_exact(p, pb.h_y, want, ny);
        } else {
            rep = conv_test_verify_row(row, &pb);
        }
        snprintf(label, sizeof label, "%s chose %s (%s), %s", row->name, ch->key, ch->reason,
                 ints ? "small integers" : "uniform floats");
        CONV_ASSERT_REPORT(rep, label, p);
    }
    conv_host_free(want);
    conv_gpu_problem_destroy(&pb);
}

static void check_awkward_shapes(int which)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params t[2 * (CONV_USUAL_SHAPES + 8)];
    const size_t n = in_both_layouts(t, awkward_shapes(t));
    for (size_t i = 0; i < n; ++i)
        check_auto_on(&t[i], which);
}

Test(gpu_conv_auto, fp32_matches_the_reference_on_awkward_shapes)
{
    check_awkward_shapes(0);
}

Test(gpu_conv_auto, tf32_matches_the_reference_on_awkward_shapes)
{
    check_awkward_shapes(1);
}

Test(gpu_conv_auto, fp16_matches_the_reference_on_awkward_shapes)
{
    check_awkward_shapes(2);
}

/* Without a workspace it still runs: a kernel that needs none, within its bound. */
Test(gpu_conv_auto, runs_without_a_workspace)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params p = conv_shape(2, 8, 20, 18, 16, 3, 3, 1, 1, 1);
    for (int l = 0; l < 2; ++l) {
        p.layout = l ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
        conv_gpu_problem pb = conv_test_device_problem(p, 1);
        conv_fill_small_int(pb.h_x, conv_input_elems(&p), 21, -3, 3);
        conv_fill_small_int(pb.h_w, conv_filter_elems(&p), 22, -3, 3);
        conv_msg msg = {{0}};
        CONV_ASSERT_OK(conv_device_upload(pb.d_x, pb.h_x, conv_input_elems(&p), &msg), msg);
        CONV_ASSERT_OK(conv_device_upload(pb.d_w, pb.h_w, conv_filter_elems(&p), &msg), msg);
        CONV_ASSERT_OK(conv_device_poison(pb.d_y, conv_output_elems(&p), &msg), msg);
        conv_auto_choice ch;
        CONV_ASSERT_OK(
            conv2d_auto(&p, CONV_CLASS_FP32, pb.d_x, pb.d_w, pb.d_y, NULL, 0, pb.stream, &ch, &msg),
            msg);
        cr_assert_eq(ch.workspace_bytes, 0, "%s: %s", ch.key, ch.reason);
        cr_assert_eq(cudaStreamSynchronize(pb.stream), cudaSuccess);
        CONV_ASSERT_OK(conv_device_download(pb.h_y, pb.d_y, conv_output_elems(&p), &msg), msg);
        conv_test_assert_canary(pb.d_y, conv_output_elems(&p), "conv2d_auto (%s)", ch.key);
        float *want = conv_host_alloc(conv_output_elems(&p));
        CONV_ASSERT_OK(conv_test_host_reference(&p, pb.h_x, pb.h_w, want, &msg), msg);
        conv_verify_report rep = conv_compare_exact(&p, pb.h_y, want, conv_output_elems(&p));
        CONV_ASSERT_REPORT(rep, ch.key, &p);
        conv_host_free(want);
        conv_gpu_problem_destroy(&pb);
    }
}

/* Enough 128x128 tiles for 8c's branch on any GPU of up to 266 SMs (133 of
 * them): 3xTF32 where the GPU has TF32 tensor cores, verified as above. */
Test(gpu_conv_auto, takes_8c_where_its_tiles_fill_the_gpu)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params p = conv_shape_nhwc(4, 16, 130, 130, 16, 3, 3, 1, 2, 1);
    conv_auto_device d;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_auto_device_query(&d, &msg), msg);
    conv_auto_choice ch;
    CONV_ASSERT_OK(conv_auto_choose(&p, CONV_CLASS_FP32, &d, &ch, &msg), msg);
    cr_assert_str_eq(ch.key, d.tf32_tensor_cores ? "8c" : "6f", "%s: %s", ch.key, ch.reason);
    check_auto_on(&p, 0);
    check_auto_on(&p, 1);
}

/* conv2d_auto's backward pass through its row on p (p->pass) in class
 * `which`: small integers exact (every sum exact in float and in TF32)
 * where the chosen kernel is (all but 10d via 7b), else within its bound;
 * uniform floats within the chosen kernel's bound, as step 10's rows set it. */
static void check_auto_backward_on(const conv_params *p, int which)
{
    conv_row rows[AUTO_ROW_COUNT];
    conv_row *row = checked_row(p, which, rows);
    conv_msg msg = {{0}};
    conv_gpu_problem pb = conv_test_device_problem(*p, 1);
    const size_t sizes[3] = {conv_input_elems(p), conv_filter_elems(p), conv_output_elems(p)};
    float *host[3] = {pb.h_x, pb.h_w, pb.h_y};
    const int out = p->pass == CONV_PASS_DGRAD ? 0 : 1; /* dx or dw */
    double *ref = malloc(sizes[out] * sizeof *ref), *mag = malloc(sizes[out] * sizeof *mag);
    cr_assert(ref != NULL && mag != NULL);
    char label[2 * CONV_MSG_LEN];
    for (int ints = 1; ints >= (conv_test_under_racecheck() ? 1 : 0); --ints) {
        for (int t = 0; t < 3; ++t)
            if (t != out) {
                if (ints)
                    conv_fill_small_int(host[t], sizes[t], 31 + (uint64_t)t, -3, 3);
                else
                    conv_fill_uniform(host[t], sizes[t], 41 + (uint64_t)t, -1.0f, 1.0f);
            }
        conv_pass_reference_double(p, pb.h_x, pb.h_w, pb.h_y, ref, mag);
        conv_test_run_row(&pb, row, row->name); /* poisoned output, canary checked */
        const conv_auto_choice *ch = conv_auto_row_choice(row);
        cr_assert(ch != NULL);
        conv_verify_opts within = conv_verify_exact();
        if (!ints || ch->kernel == CONV_AUTO_10D_7B)
            CONV_ASSERT_OK(row->tolerance(row->ctx, &pb, &within, &msg), msg);
        conv_verify_report rep = conv_pass_verify_precomputed(p, host[out], ref, mag, within);
        if (row->teardown != NULL)
            row->teardown(row->ctx); /* what the tolerance needed */
        snprintf(label, sizeof label, "%s %s chose %s (%s), %s", row->name, conv_pass_name(p->pass),
                 ch->key, ch->reason, ints ? "small integers" : "uniform floats");
        CONV_ASSERT_REPORT(rep, label, p);
    }
    free(ref), free(mag);
    conv_gpu_problem_destroy(&pb);
}

static void check_backward_shapes(int which)
{
    CONV_TEST_REQUIRE_GPU();
    conv_params t[2 * (CONV_USUAL_SHAPES + CONV_STRIDED_SHAPES + 8)];
    const size_t n = in_both_layouts(t, awkward_and_strided_shapes(t));
    for (size_t i = 0; i < n; ++i)
        for (int pass = CONV_PASS_DGRAD; pass <= CONV_PASS_WGRAD; ++pass) {
            t[i].pass = (conv_pass)pass;
            check_auto_backward_on(&t[i], which);
        }
}

Test(gpu_conv_auto, fp32_backward_matches_the_reference_on_awkward_shapes)
{
    check_backward_shapes(0);
}

Test(gpu_conv_auto, tf32_backward_matches_the_reference_on_awkward_shapes)
{
    check_backward_shapes(1);
}
