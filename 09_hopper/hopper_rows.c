#include "hopper_rows.h"

#include <string.h>

#include "tc_check.h"
#include "tc_host.h"
#include "tc_rows.h"

/* What a row runs: the wgmma kernel fed by cp.async (9a) or by TMA (9b). */
typedef enum { HOPPER_WGMMA, HOPPER_TMA } hopper_kernel;

static hopper_kernel kernels[HOPPER_ROW_COUNT] = {HOPPER_WGMMA, HOPPER_TMA};
static const char *const names[HOPPER_ROW_COUNT] = {"9a wgmma TF32", "9b wgmma TF32, TMA"};
static const char *const keys[HOPPER_ROW_COUNT] = {"9a", "9b"};

conv_status conv2d_hopper_conv(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                               float *d_y, cudaStream_t stream, conv_msg *msg)
{
    const hopper_kernel *k = ctx;
    if (*k == HOPPER_TMA)
        return conv2d_tc_tma(p, d_x, d_w, d_y, stream, msg);
    return conv2d_tc_wgmma(p, d_x, d_w, d_y, stream, msg);
}

/* The problem, with no CUDA call (the program asks before it opens the
 * device): step 08's checks. Where the GPU or the build has no wgmma, the
 * launcher refuses before any launch and the row is skipped with its
 * reason. */
static conv_status check(void *ctx, const conv_params *p, conv_msg *msg)
{
    (void)ctx;
    return tc_check(p, msg);
}

/* Within the bound of x truncated to TF32 and w rounded: a factor of the
 * dot product's. */
static conv_status tolerance(void *ctx, const conv_gpu_problem *pb, conv_verify_opts *opts,
                             conv_msg *msg)
{
    (void)ctx;
    (void)msg;
    const size_t depth = (size_t)pb->p.c * pb->p.r * pb->p.s;
    *opts = conv_verify_bound(tc_bound_factor(TC_TF32_XTRUNC, depth));
    return CONV_OK;
}

int conv_hopper_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)p;
    (void)select;
    int n = 0;
    for (; n < HOPPER_ROW_COUNT && n < max_rows; ++n) {
        rows[n] = conv_row_device(names[n], keys[n], conv2d_hopper_conv, &kernels[n]);
        rows[n].check = check;
        rows[n].tolerance = tolerance;
        rows[n].cls = CONV_CLASS_TF32;
    }
    return n;
}

int conv_hopper_gemm_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    /* step 08's GEMM rows, of which cuBLAS TF32 and 8b stay */
    int n = 0;
    const int listed = conv_tc_gemm_rows(p, NULL, rows, max_rows);
    for (int i = 0; i < listed; ++i)
        if (strcmp(rows[i].key, "cublas-tf32") == 0 || strcmp(rows[i].key, "8b") == 0)
            rows[n++] = rows[i];
    return n + conv_hopper_rows(p, select, rows + n, max_rows - n);
}
