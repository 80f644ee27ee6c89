/* Step 04, the host side of the kernels (plain C, no CUDA): the compile-time
 * tile configurations of each strategy, their names and limits, and the
 * checks every launcher runs on a problem before any CUDA call. The kernels
 * and their launchers, which instantiate these configurations in the same
 * order, are in conv_tiled_2d.cu. Versions: 4a, 4b, 4c, 4d; a configuration's
 * name starts with its strategy (s1, s2, s3, mc), which the program's row
 * replaces with the key: "s1 32x32, 4 outputs/thread" is the row
 * "4a 32x32, 4 outputs/thread". */
#include "conv_tiled_2d.h"

#include <stddef.h>

typedef struct {
    const char *name;
    int tile_w, tile_h; /* output tile */
    int rows;           /* outputs per thread along a column (strategy 1) */
    int kb;             /* output channels per block (multi-channel) */
} tile_config;

/* The instantiated configurations (the launchers' tables in conv_tiled_2d.cu
 * list the same, in the same order). Strategy 1's first is the lecture's
 * kernel; the coarsened ones are this step's fast path. */
static const tile_config s1_configs[] = {
    {"s1 16x16, 1 output/thread", 16, 16, 1, 1},
    {"s1 32x32, 4 outputs/thread", 32, 32, 4, 1},
    {"s1 32x64, 8 outputs/thread", 32, 64, 8, 1},
    {"s1 32x64, 16 outputs/thread", 32, 64, 16, 1},
};
static const tile_config s2_configs[] = {
    {"s2 8x8 (block 8+R-1)", 8, 8, 1, 1},
    {"s2 16x16 (block 16+R-1)", 16, 16, 1, 1},
};
static const tile_config s3_configs[] = {
    {"s3 16x16", 16, 16, 1, 1},
    {"s3 32x8", 32, 8, 1, 1},
};
static const tile_config mc_configs[] = {
    {"mc 32x8 x 4 ch", 32, 8, 1, 4},
    {"mc 32x8 x 8 ch", 32, 8, 1, 8},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const tile_config *configs_of(conv_tiled_strategy strategy, int *count)
{
    switch (strategy) {
    case CONV_TILED_S1: *count = COUNT(s1_configs); return s1_configs;
    case CONV_TILED_S2: *count = COUNT(s2_configs); return s2_configs;
    case CONV_TILED_S3: *count = COUNT(s3_configs); return s3_configs;
    case CONV_TILED_MC: *count = COUNT(mc_configs); return mc_configs;
    }
    *count = 0;
    return NULL;
}

static const tile_config *config_of(conv_tiled_strategy strategy, int config)
{
    int count;
    const tile_config *t = configs_of(strategy, &count);
    return (t != NULL && config >= 0 && config < count) ? &t[config] : NULL;
}

int conv2d_tiled_num_configs(conv_tiled_strategy strategy)
{
    int count;
    configs_of(strategy, &count);
    return count;
}

const char *conv2d_tiled_config_name(conv_tiled_strategy strategy, int config)
{
    const tile_config *t = config_of(strategy, config);
    return t ? t->name : "?";
}

void conv2d_tiled_config_tile(conv_tiled_strategy strategy, int config, int *tile_w, int *tile_h)
{
    const tile_config *t = config_of(strategy, config);
    *tile_w = t ? t->tile_w : 0;
    *tile_h = t ? t->tile_h : 0;
}

int conv2d_tiled_max_filter(conv_tiled_strategy strategy, int config)
{
    const tile_config *t = config_of(strategy, config);
    if (t == NULL)
        return 0;
    if (strategy == CONV_TILED_S2)
        return CONV_TILED_S2_MAX_SIDE + 1 - t->tile_w;
    return CONV_TILED_MAX_FILTER;
}

static const char *strategy_name(conv_tiled_strategy strategy)
{
    switch (strategy) {
    case CONV_TILED_S1: return "strategy 1";
    case CONV_TILED_S2: return "strategy 2";
    case CONV_TILED_S3: return "strategy 3";
    case CONV_TILED_MC: return "the multi-channel kernel";
    }
    return "?";
}

/* excerpt: mc-weights-rule */
int conv2d_tiled_mc_weights_in_constant(const conv_params *p, conv_tiled_weights weights)
{
    if (weights == CONV_TILED_WEIGHTS_GLOBAL)
        return 0;
    return (double)p->k * p->c * p->r * p->s <= CONV_TILED_CONST_FLOATS;
}
/* excerpt end: mc-weights-rule */

conv_status conv2d_tiled_check(const conv_tiled_choice *choice, const conv_params *p, conv_msg *msg)
{
    if (choice == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "choice is NULL");
    if (p == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "params is NULL");
    const conv_tiled_strategy st = choice->strategy;
    int count;
    if (configs_of(st, &count) == NULL)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "strategy %d: unknown (1, 2, 3, or 4 = multi-channel)", (int)st);
    const tile_config *cfg = config_of(st, choice->config);
    if (cfg == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "config %d: %s has configurations 0..%d",
                         choice->config, strategy_name(st), count - 1);
    conv_status status = conv_params_validate(p, msg);
    if (status != CONV_OK)
        return status;
    if (p->layout != CONV_LAYOUT_NCHW)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "layout NHWC (--layout): %s supports NCHW only",
                         strategy_name(st));
    if (p->stride_h != 1 || p->stride_w != 1)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "stride %dx%d (--stride): %s supports stride 1 only", p->stride_h,
                         p->stride_w, strategy_name(st));
    if (p->dil_h != 1 || p->dil_w != 1)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "dilation %dx%d (--dilation): %s supports dilation 1 only", p->dil_h,
                         p->dil_w, strategy_name(st));
    const int single = st == CONV_TILED_S1 || st == CONV_TILED_S2 || st == CONV_TILED_S3;
    if (single && (p->c != 1 || p->k != 1))
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "channels C=%d K=%d (--c, --k): %s is single-channel (C = K = 1); use the "
                         "multi-channel kernel",
                         p->c, p->k, strategy_name(st));
    const int max_filter = conv2d_tiled_max_filter(st, choice->config);
    if (p->r > max_filter || p->s > max_filter)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "filter %dx%d (--r, --s): %s (%s) takes filters up to %dx%d", p->r, p->s,
                         strategy_name(st), cfg->name, max_filter, max_filter);
    if (st == CONV_TILED_MC) {
        long long floats = (long long)p->k * p->c * p->r * p->s;
        if (choice->weights == CONV_TILED_WEIGHTS_CONSTANT && floats > CONV_TILED_CONST_FLOATS)
            return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                             "weights K*C*R*S = %lld floats: more than the %d floats (64 KiB) of "
                             "constant memory; use global-memory weights",
                             floats, CONV_TILED_CONST_FLOATS);
        if (choice->weights != CONV_TILED_WEIGHTS_AUTO &&
            choice->weights != CONV_TILED_WEIGHTS_CONSTANT &&
            choice->weights != CONV_TILED_WEIGHTS_GLOBAL)
            return conv_fail(msg, CONV_ERR_INVALID, "weights %d: unknown placement",
                             (int)choice->weights);
    }
    if ((long long)p->n * p->k > 2147483647LL)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "N*K = %lld (--n, --k): more than 2^31 - 1 output planes (int indexing)",
                         (long long)p->n * p->k);
    const long long tiles_h = ((long long)conv_out_h(p) + cfg->tile_h - 1) / cfg->tile_h;
    if (tiles_h > 65535)
        return conv_fail(
            msg, CONV_ERR_UNSUPPORTED,
            "output height P=%d (--h): more than 65535 tiles of %d rows (grid y limit)",
            conv_out_h(p), cfg->tile_h);
    return CONV_OK;
}
