#include "prefetch_rows.h"

#include "conv_device.h"
#include "conv_prefetch.h"

static const conv_prefetch_variant variants[] = {CONV_PREFETCH_5A_OC_OUTER, CONV_PREFETCH_5A,
                                                 CONV_PREFETCH_5B};
/* Each name begins with its key, the --variant value that runs the row. */
static const char *const names[] = {"5a oc-outer", "5a", "5b"};
static const char *const keys[] = {"5a", "5a", "5b"};
#define N_VARIANTS ((int)(sizeof variants / sizeof variants[0]))

conv_status conv2d_prefetch_conv(void *ctx, const conv_params *p, const float *d_x,
                                 const float *d_w, float *d_y, cudaStream_t stream, conv_msg *msg)
{
    switch (*(const conv_prefetch_variant *)ctx) {
    case CONV_PREFETCH_5A: return conv2d_prefetch_5a(p, d_x, d_w, d_y, stream, msg);
    case CONV_PREFETCH_5A_OC_OUTER:
        return conv2d_prefetch_5a_lecture_order(p, d_x, d_w, d_y, stream, msg);
    case CONV_PREFETCH_5B: return conv2d_prefetch_5b(p, d_x, d_w, d_y, stream, msg);
    }
    return conv_fail(msg, CONV_ERR_INVALID, "unknown step 05 variant");
}

/* The plan on the smallest shared memory every GPU gives a block (48 KB);
 * a launcher plans again with its device's limit. */
static conv_status check(void *ctx, const conv_params *p, conv_msg *msg)
{
    conv_prefetch_plan plan;
    return conv2d_prefetch_plan(*(const conv_prefetch_variant *)ctx, p, CONV_SMEM_DEFAULT_BYTES,
                                &plan, msg);
}

int conv_prefetch_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)p;
    (void)select;
    conv_row like = conv_row_device(NULL, NULL, conv2d_prefetch_conv, NULL);
    like.check = check;
    return conv_rows_table(&like, names, keys, variants, sizeof variants[0], N_VARIANTS, rows,
                           max_rows);
}
