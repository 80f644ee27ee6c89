/* libconvsteps (convsteps.h): each entry point checks its arguments, maps
 * the problem to conv_params and the precision to a class, and calls
 * conv2d_auto (conv_auto.h), which picks and runs the kernel. Only the
 * convsteps_* functions leave the shared library (convsteps.map). */
#include "convsteps.h"

#include <stdint.h>
#include <stdio.h>

#include "conv_auto.h"

/* The status codes are conv_status's numbers. */
_Static_assert((int)CONVSTEPS_ERR_INVALID == (int)CONV_ERR_INVALID &&
                   (int)CONVSTEPS_ERR_UNSUPPORTED == (int)CONV_ERR_UNSUPPORTED &&
                   (int)CONVSTEPS_ERR_NO_DEVICE == (int)CONV_ERR_NO_DEVICE &&
                   (int)CONVSTEPS_ERR_OUT_OF_MEMORY == (int)CONV_ERR_OUT_OF_MEMORY &&
                   (int)CONVSTEPS_ERR_CUDA == (int)CONV_ERR_CUDA &&
                   (int)CONVSTEPS_ERR_UNAVAILABLE == (int)CONV_ERR_UNAVAILABLE,
               "convsteps' status codes are conv_status's");

int convsteps_api_version(void)
{
    return CONVSTEPS_API_VERSION;
}

/* The caller's copy of the message (one line), and the status. */
static int give(conv_status st, const conv_msg *m, char *msg, size_t msg_len)
{
    if (st != CONV_OK && msg != NULL && msg_len > 0)
        snprintf(msg, msg_len, "%s", m->text);
    return (int)st;
}

/* p as conv_params of the pass, validated; the class of the precision. */
static conv_status to_params(const convsteps_problem *p, int pass, int precision, conv_params *q,
                             conv_class *cls, conv_msg *m)
{
    if (p == NULL)
        return conv_fail(m, CONV_ERR_INVALID, "invalid pointer: p (the problem) is NULL");
    if (p->layout != CONVSTEPS_NCHW && p->layout != CONVSTEPS_NHWC)
        return conv_fail(m, CONV_ERR_INVALID,
                         "invalid layout: %d (CONVSTEPS_NCHW = 0 or CONVSTEPS_NHWC = 1)",
                         p->layout);
    if (pass != CONVSTEPS_FORWARD && pass != CONVSTEPS_DGRAD && pass != CONVSTEPS_WGRAD)
        return conv_fail(m, CONV_ERR_INVALID,
                         "invalid pass: %d (CONVSTEPS_FORWARD = 0, CONVSTEPS_DGRAD = 1 or "
                         "CONVSTEPS_WGRAD = 2)",
                         pass);
    if (precision != CONVSTEPS_FP32 && precision != CONVSTEPS_TF32)
        return conv_fail(m, CONV_ERR_INVALID,
                         "invalid precision: %d (CONVSTEPS_FP32 = 0 or CONVSTEPS_TF32 = 1)",
                         precision);
    conv_params c = conv_params_default();
    c.n = p->n, c.c = p->c, c.h = p->h, c.w = p->w, c.k = p->k, c.r = p->r, c.s = p->s;
    c.pad_h = p->pad_h, c.pad_w = p->pad_w, c.stride_h = p->stride_h, c.stride_w = p->stride_w;
    c.dil_h = p->dil_h, c.dil_w = p->dil_w;
    c.layout = p->layout == CONVSTEPS_NHWC ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
    c.pass = pass == CONVSTEPS_DGRAD   ? CONV_PASS_DGRAD
             : pass == CONVSTEPS_WGRAD ? CONV_PASS_WGRAD
                                       : CONV_PASS_FORWARD;
    conv_status st = conv_params_validate(&c, m);
    if (st != CONV_OK)
        return st;
    *q = c;
    *cls = precision == CONVSTEPS_TF32 ? CONV_CLASS_TF32 : CONV_CLASS_FP32;
    return CONV_OK;
}

int convsteps_workspace_size(const convsteps_problem *p, int pass, int precision, size_t *bytes,
                             char *msg, size_t msg_len)
{
    conv_msg m;
    conv_msg_clear(&m);
    conv_params q;
    conv_class cls = CONV_CLASS_FP32;
    conv_status st = bytes == NULL
                         ? conv_fail(&m, CONV_ERR_INVALID, "invalid pointer: bytes is NULL")
                         : to_params(p, pass, precision, &q, &cls, &m);
    conv_auto_device d;
    if (st == CONV_OK) /* the first CUDA call: the device's facts as conv2d_auto reads them
                          (queried once per device), and its free memory now */
        st = conv_auto_device_facts(&d, 1, &m);
    if (st == CONV_OK) {
        /* the rule with the device's free memory, the tensors counted in it */
        const size_t tensors =
            (conv_input_elems(&q) + conv_filter_elems(&q) + conv_output_elems(&q)) * sizeof(float);
        d.free_bytes = d.free_bytes > SIZE_MAX - tensors ? SIZE_MAX : d.free_bytes + tensors;
        conv_auto_choice c;
        if ((st = conv_auto_choose(&q, cls, &d, &c, &m)) == CONV_OK)
            *bytes = c.workspace_bytes;
    }
    return give(st, &m, msg, msg_len);
}

/* What the three entry points share: the checks, then conv2d_auto with the
 * harness's buffers (d_x, d_w, d_y: dgrad writes d_x from dy in d_y, wgrad
 * d_w from d_x and dy in d_y). */
static int run(const convsteps_problem *p, int pass, int precision, float *d_x, const char *x_name,
               float *d_w, const char *w_name, float *d_y, const char *y_name, void *workspace,
               size_t workspace_bytes, void *stream, char *chosen, size_t chosen_len, char *msg,
               size_t msg_len)
{
    conv_msg m;
    conv_msg_clear(&m);
    if (chosen != NULL && chosen_len > 0)
        chosen[0] = '\0';
    conv_params q;
    conv_class cls = CONV_CLASS_FP32;
    conv_status st = to_params(p, pass, precision, &q, &cls, &m);
    if (st == CONV_OK)
        st = conv_check_pointers(d_x, x_name, d_w, w_name, d_y, y_name, &m);
    if (st == CONV_OK && workspace == NULL && workspace_bytes > 0)
        st = conv_fail(&m, CONV_ERR_INVALID, "invalid pointer: workspace is NULL with %zu bytes",
                       workspace_bytes);
    if (st == CONV_OK && (uintptr_t)workspace % 16 != 0)
        st = conv_fail(&m, CONV_ERR_INVALID,
                       "invalid workspace: its address is not a multiple of 16 bytes");
    if (st != CONV_OK)
        return give(st, &m, msg, msg_len);
    conv_auto_choice c;
    st = conv2d_auto(&q, cls, d_x, d_w, d_y, workspace, workspace_bytes, (cudaStream_t)stream, &c,
                     &m);
    if (st == CONV_OK && chosen != NULL && chosen_len > 0)
        snprintf(chosen, chosen_len, "%s", c.key);
    return give(st, &m, msg, msg_len);
}

/* The inputs are only read: conv2d_auto takes the three buffers of any pass. */
int convsteps_forward(const convsteps_problem *p, int precision, const float *x, const float *w,
                      float *y, void *workspace, size_t workspace_bytes, void *stream, char *chosen,
                      size_t chosen_len, char *msg, size_t msg_len)
{
    return run(p, CONVSTEPS_FORWARD, precision, (float *)x, "x", (float *)w, "w", y, "y", workspace,
               workspace_bytes, stream, chosen, chosen_len, msg, msg_len);
}

int convsteps_backward_data(const convsteps_problem *p, int precision, const float *dy,
                            const float *w, float *dx, void *workspace, size_t workspace_bytes,
                            void *stream, char *chosen, size_t chosen_len, char *msg,
                            size_t msg_len)
{
    return run(p, CONVSTEPS_DGRAD, precision, dx, "dx", (float *)w, "w", (float *)dy, "dy",
               workspace, workspace_bytes, stream, chosen, chosen_len, msg, msg_len);
}

int convsteps_backward_filter(const convsteps_problem *p, int precision, const float *x,
                              const float *dy, float *dw, void *workspace, size_t workspace_bytes,
                              void *stream, char *chosen, size_t chosen_len, char *msg,
                              size_t msg_len)
{
    return run(p, CONVSTEPS_WGRAD, precision, (float *)x, "x", dw, "dw", (float *)dy, "dy",
               workspace, workspace_bytes, stream, chosen, chosen_len, msg, msg_len);
}
