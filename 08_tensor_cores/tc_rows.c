#include "tc_rows.h"

#include "tensor_cores.h"

/* What a row runs: the WMMA kernel in either precision, or 8b. */
typedef struct {
    tc_precision precision;
    int mma; /* 8b: mma.sync (TF32) */
} tc_variant;

static const tc_variant variants[TC_ROW_COUNT] = {{TC_TF32, 0}, {TC_TF32, 1}, {TC_3XTF32, 0}};
static const char *const names[TC_ROW_COUNT] = {"08 8a WMMA TF32", "08 8b mma.sync TF32",
                                                "08 8c WMMA 3xTF32"};
static const char *const keys[TC_ROW_COUNT] = {"8a", "8b", "8c"};

conv_status conv2d_tc_conv(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                           float *d_y, cudaStream_t stream, conv_msg *msg)
{
    const tc_variant *v = ctx;
    if (v->mma)
        return conv2d_tc_mma(p, d_x, d_w, d_y, stream, msg);
    return conv2d_tc_wmma(p, v->precision, d_x, d_w, d_y, stream, msg);
}

static conv_status check(void *ctx, const conv_params *p, conv_msg *msg)
{
    (void)ctx;
    return tc_check(p, msg);
}

/* Within the bound of its precision: a factor of the dot product's. */
static conv_status tolerance(void *ctx, const conv_gpu_problem *pb, conv_verify_opts *opts,
                             conv_msg *msg)
{
    (void)msg;
    const conv_params *p = &pb->p;
    const tc_variant *v = ctx;
    *opts = conv_verify_bound(tc_bound_factor(v->precision, (size_t)p->c * p->r * p->s));
    return CONV_OK;
}

int conv_tc_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)p;
    (void)select;
    int n = 0;
    for (; n < TC_ROW_COUNT && n < max_rows; ++n) {
        rows[n] = conv_row_device(names[n], keys[n], conv2d_tc_conv, (void *)&variants[n]);
        rows[n].check = check;
        rows[n].tolerance = tolerance;
    }
    return n;
}
