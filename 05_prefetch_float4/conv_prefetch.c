/* Step 05, host side: validation and the launch geometry of each variant. No
 * CUDA call here, so the CPU tests can check every rejection and every
 * geometry without a GPU. */
#include "conv_prefetch.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

/* Kernels can take any CUDA block count up to 2^31 - 1 in grid.x. */
#define MAX_BLOCKS ((long long)INT_MAX)

static int round4(int v)
{
    return (v + 3) / 4 * 4;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

const char *conv_prefetch_variant_name(conv_prefetch_variant v)
{
    switch (v) {
    case CONV_PREFETCH_5A: return "5a";
    case CONV_PREFETCH_5A_OC_OUTER: return "5a oc-outer";
    case CONV_PREFETCH_5B: return "5b";
    }
    return "?";
}

static conv_status check_pointer(const float *ptr, const char *name, conv_msg *msg)
{
    if (ptr == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "conv2d_prefetch: %s is NULL", name);
    if ((uintptr_t)ptr % sizeof(float) != 0)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "conv2d_prefetch: %s is not aligned to a float (4 bytes)", name);
    return CONV_OK;
}

/* The parameter checks shared by the plan and the launchers. */
static conv_status check_params(const conv_params *p, conv_msg *msg)
{
    if (p == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "conv2d_prefetch: parameters are NULL");
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    if (p->layout != CONV_LAYOUT_NCHW)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "--layout nhwc: step 05 supports the NCHW layout only");
    if (p->stride_h != 1 || p->stride_w != 1)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "--stride %dx%d: step 05 supports stride 1 only", p->stride_h,
                         p->stride_w);
    if (p->dil_h != 1 || p->dil_w != 1)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "--dilation %dx%d: step 05 supports dilation 1 only", p->dil_h, p->dil_w);
    if (p->r > CONV_PREFETCH_MAX_FILTER)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "--r %d: step 05 supports filters up to %dx%d",
                         p->r, CONV_PREFETCH_MAX_FILTER, CONV_PREFETCH_MAX_FILTER);
    if (p->s > CONV_PREFETCH_MAX_FILTER)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "--s %d: step 05 supports filters up to %dx%d",
                         p->s, CONV_PREFETCH_MAX_FILTER, CONV_PREFETCH_MAX_FILTER);
    return CONV_OK;
}

/* The filter sides with a compiled-in version; 0 selects the generic path. */
static int specialised_filter(const conv_params *p)
{
    if (p->r != p->s)
        return 0;
    switch (p->r) {
    case 3:
    case 5:
    case 6:
    case 7: return p->r;
    default: return 0;
    }
}

static size_t smem_bytes(int tile_rows, int tile_stride, int rs, int kcp)
{
    return 2 * ((size_t)tile_rows * tile_stride + (size_t)rs * kcp) * sizeof(float);
}

/* 5a: 8x4 threads; the last block of a row or column takes the remainder too,
 * so it covers between 8 and 15 columns (4 and 7 rows), or the whole output
 * when it is smaller than one block. */
static void plan_5a(const conv_params *p, int kc, conv_prefetch_plan *pl)
{
    const int P = conv_out_h(p), Q = conv_out_w(p);
    pl->kc = kc;
    pl->ow = 1;
    pl->filter = specialised_filter(p);
    pl->tx = CONV_PREFETCH_5A_BW;
    pl->ty = CONV_PREFETCH_5A_BH;
    pl->bw = CONV_PREFETCH_5A_BW;
    pl->bh = CONV_PREFETCH_5A_BH;
    pl->col_blocks = max_int(1, Q / CONV_PREFETCH_5A_BW);
    pl->row_blocks = max_int(1, P / CONV_PREFETCH_5A_BH);
    pl->k_chunks = (p->k + kc - 1) / kc;
    pl->blocks = (long long)p->n * pl->row_blocks * pl->col_blocks;
    const int max_cols = Q - (pl->col_blocks - 1) * CONV_PREFETCH_5A_BW; /* the last block */
    const int max_rows = P - (pl->row_blocks - 1) * CONV_PREFETCH_5A_BH;
    const int cols = max_int(max_cols, min_int(Q, CONV_PREFETCH_5A_BW));
    const int rows = max_int(max_rows, min_int(P, CONV_PREFETCH_5A_BH));
    pl->tile_rows = rows + p->r - 1;
    pl->tile_stride = round4(cols + p->s - 1) + 8; /* 4 floats of margin each side */
    const int kcp = kc == 1 ? 1 : round4(kc);
    pl->smem_bytes = smem_bytes(pl->tile_rows, pl->tile_stride, p->r * p->s, kcp);
}

/* 5b: the channel chunk that wastes the fewest accumulators (ties: the larger
 * chunk), 8 outputs per thread along a row (4 with 16 channels, to keep 64
 * accumulators), up to 16 threads across; then, within the device's
 * shared-memory limit, the block height that issues the fewest warps to cover
 * P (rows past the output and idle lanes both count), preferring blocks of at
 * least 128 threads and then ones near 128 threads. The limit binds only for
 * large filters with many channels (16x16 with 16 channels per block: 32 KB
 * of weights), where a GPU with more shared memory per block gets taller
 * blocks. */
static void plan_5b(const conv_params *p, size_t smem_limit, conv_prefetch_plan *pl)
{
    static const int chunks[] = {16, 8, 6, 4};
    const int P = conv_out_h(p), Q = conv_out_w(p);
    int kc = 16;
    long long best = LLONG_MAX;
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; ++i) {
        long long padded = (long long)(p->k + chunks[i] - 1) / chunks[i] * chunks[i];
        if (padded < best) {
            best = padded;
            kc = chunks[i];
        }
    }
    pl->kc = kc;
    pl->ow = kc == 16 ? 4 : 8;
    pl->filter = specialised_filter(p);
    pl->tx = min_int(16, (Q + pl->ow - 1) / pl->ow);
    pl->bw = pl->tx * pl->ow;
    pl->tile_stride = round4(pl->bw + p->s - 1) + 8;
    const int kcp = round4(kc), rs = p->r * p->s;

    /* excerpt: 5b-block-height */
    int best_t = 1;
    long long best_score = LLONG_MAX;
    for (int t = 1; t * pl->tx <= 256; ++t) {
        if (smem_bytes(t + p->r - 1, pl->tile_stride, rs, kcp) > smem_limit)
            break;
        const int threads = t * pl->tx;
        /* warps issued per column of blocks: rows past P and the idle lanes of
         * a block's last warp both cost issue slots */
        const long long warps = (long long)(P + t - 1) / t * ((threads + 31) / 32);
        const int small = threads < 128 && t < P; /* a small block that is not the whole height */
        const int off128 = threads > 128 ? threads - 128 : 128 - threads;
        const long long score = ((long long)small << 50) + (warps << 16) + off128;
        if (score < best_score) {
            best_score = score;
            best_t = t;
        }
    }
    /* excerpt end: 5b-block-height */
    pl->ty = best_t;
    pl->bh = best_t;
    pl->col_blocks = (Q + pl->bw - 1) / pl->bw;
    pl->row_blocks = (P + pl->bh - 1) / pl->bh;
    pl->k_chunks = (p->k + kc - 1) / kc;
    pl->blocks = (long long)p->n * pl->row_blocks * pl->col_blocks * pl->k_chunks;
    pl->tile_rows = pl->bh + p->r - 1;
    pl->smem_bytes = smem_bytes(pl->tile_rows, pl->tile_stride, rs, kcp);
}

conv_status conv2d_prefetch_plan(conv_prefetch_variant v, const conv_params *p, size_t smem_limit,
                                 conv_prefetch_plan *plan, conv_msg *msg)
{
    conv_status st = check_params(p, msg);
    if (st != CONV_OK)
        return st;
    if (plan == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "conv2d_prefetch_plan: plan is NULL");
    switch (v) {
    case CONV_PREFETCH_5A: plan_5a(p, CONV_PREFETCH_5A_KC, plan); break;
    case CONV_PREFETCH_5A_OC_OUTER: plan_5a(p, 1, plan); break;
    case CONV_PREFETCH_5B: plan_5b(p, smem_limit, plan); break;
    default:
        return conv_fail(msg, CONV_ERR_INVALID, "--variant: unknown step 05 variant %d", (int)v);
    }
    if (plan->blocks > MAX_BLOCKS)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "--n %d: %s would need %lld blocks, more than a grid holds", p->n,
                         conv_prefetch_variant_name(v), plan->blocks);
    if (plan->smem_bytes > smem_limit)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "--r %d --s %d: %s needs %.1f KB of shared memory per block; the limit is "
                         "%.1f KB",
                         p->r, p->s, conv_prefetch_variant_name(v), plan->smem_bytes / 1024.0,
                         smem_limit / 1024.0);
    return CONV_OK;
}

conv_status conv2d_prefetch_check_pointers(const float *d_x, const float *d_w, const float *d_y,
                                           conv_msg *msg)
{
    conv_status st = check_pointer(d_x, "d_x", msg);
    if (st == CONV_OK)
        st = check_pointer(d_w, "d_w", msg);
    if (st == CONV_OK)
        st = check_pointer(d_y, "d_y", msg);
    return st;
}

void conv_prefetch_plan_describe(conv_prefetch_variant v, const conv_prefetch_plan *pl, char *buf,
                                 size_t len)
{
    char filter[32];
    if (pl->filter)
        snprintf(filter, sizeof filter, "%dx%d kernel", pl->filter, pl->filter);
    else
        snprintf(filter, sizeof filter, "generic kernel");
    snprintf(buf, len,
             "%s: %s, %d output%s x %d channel%s per thread, %dx%d threads, %dx%d outputs per "
             "block%s, %lld blocks, %.1f KB shared",
             conv_prefetch_variant_name(v), filter, pl->ow, pl->ow == 1 ? "" : "s", pl->kc,
             pl->kc == 1 ? "" : "s", pl->tx, pl->ty, pl->bw, pl->bh,
             v == CONV_PREFETCH_5B ? "" : " (edge blocks grow)", pl->blocks,
             pl->smem_bytes / 1024.0);
}
