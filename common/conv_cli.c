#include "conv_cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EXTRAS 16

enum {
    OPT_N = 1000,
    OPT_C,
    OPT_H,
    OPT_W,
    OPT_K,
    OPT_R,
    OPT_S,
    OPT_FILTER,
    OPT_PAD,
    OPT_PAD_H,
    OPT_PAD_W,
    OPT_PADDING,
    OPT_STRIDE,
    OPT_STRIDE_H,
    OPT_STRIDE_W,
    OPT_DIL,
    OPT_DIL_H,
    OPT_DIL_W,
    OPT_LAYOUT,
    OPT_WARMUP,
    OPT_REPEAT,
    OPT_SEED,
    OPT_CSV,
    OPT_HELP,
    OPT_EXTRA
};

static const struct {
    const char *name, *metavar, *help;
    int id;
} common_flags[] = {
    {"n", "N", "batch size (default 1)", OPT_N},
    {"c", "C", "input channels (default 6)", OPT_C},
    {"h", "H", "image height (default 768)", OPT_H},
    {"w", "W", "image width (default 512)", OPT_W},
    {"k", "K", "output channels (default 6)", OPT_K},
    {"r", "R", "filter height (default 6)", OPT_R},
    {"s", "S", "filter width (default 6)", OPT_S},
    {"filter", "F", "square filter: R = S = F", OPT_FILTER},
    {"pad", "P", "zero padding on both axes (default 0)", OPT_PAD},
    {"pad-h", "P", "vertical zero padding", OPT_PAD_H},
    {"pad-w", "P", "horizontal zero padding", OPT_PAD_W},
    {"padding", "valid|same", "valid = no padding; same = dil*(R-1)/2 per axis", OPT_PADDING},
    {"stride", "S", "stride on both axes (default 1)", OPT_STRIDE},
    {"stride-h", "S", "vertical stride", OPT_STRIDE_H},
    {"stride-w", "S", "horizontal stride", OPT_STRIDE_W},
    {"dilation", "D", "dilation on both axes (default 1)", OPT_DIL},
    {"dil-h", "D", "vertical dilation", OPT_DIL_H},
    {"dil-w", "D", "horizontal dilation", OPT_DIL_W},
    {"layout", "nchw|nhwc", "tensor layout (default nchw)", OPT_LAYOUT},
    {"warmup", "N", "untimed runs before timing", OPT_WARMUP},
    {"repeat", "N", "timed runs; the median is reported", OPT_REPEAT},
    {"seed", "N", "seed of the random inputs", OPT_SEED},
    {"csv", "FILE", "also write the result table to FILE as CSV", OPT_CSV},
    {"help", NULL, "print this help and exit", OPT_HELP},
};
#define N_COMMON ((int)(sizeof common_flags / sizeof common_flags[0]))

conv_cli_options conv_cli_defaults(void)
{
    conv_cli_options o;
    o.params = conv_params_default();
    o.warmup = 2;
    o.repeat = 10;
    o.seed = 2024;
    o.same_padding = 0;
    o.csv_path = NULL;
    return o;
}

conv_status conv_cli_parse_ll(const char *flag, const char *text, long long lo, long long hi,
                              long long *value, conv_msg *msg)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0')
        return conv_fail(msg, CONV_ERR_INVALID, "invalid value for --%s: '%s' is not an integer",
                         flag, text);
    if (errno == ERANGE || v < lo || v > hi)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid value for --%s: %s is out of range [%lld, %lld]", flag, text, lo,
                         hi);
    *value = v;
    return CONV_OK;
}

static void print_usage(FILE *out, const char *program, const char *summary,
                        const conv_cli_extra *extras, int n_extras)
{
    fprintf(out, "usage: %s [options]\n%s\n\noptions:\n", program, summary ? summary : "");
    for (int i = 0; i < n_extras; ++i)
        fprintf(out, "  --%-10s %-14s %s (default %s)\n", extras[i].name,
                extras[i].metavar ? extras[i].metavar : "", extras[i].help,
                extras[i].value ? extras[i].value : "none");
    for (int i = 0; i < N_COMMON; ++i)
        fprintf(out, "  --%-10s %-14s %s\n", common_flags[i].name,
                common_flags[i].metavar ? common_flags[i].metavar : "", common_flags[i].help);
}

/* Integer flags stored straight into the parameters (R=S=F etc. handled apart). */
static int *int_target(conv_cli_options *o, int id)
{
    conv_params *p = &o->params;
    switch (id) {
    case OPT_N: return &p->n;
    case OPT_C: return &p->c;
    case OPT_H: return &p->h;
    case OPT_W: return &p->w;
    case OPT_K: return &p->k;
    case OPT_R: return &p->r;
    case OPT_S: return &p->s;
    case OPT_PAD_H: return &p->pad_h;
    case OPT_PAD_W: return &p->pad_w;
    case OPT_STRIDE_H: return &p->stride_h;
    case OPT_STRIDE_W: return &p->stride_w;
    case OPT_DIL_H: return &p->dil_h;
    case OPT_DIL_W: return &p->dil_w;
    case OPT_WARMUP: return &o->warmup;
    case OPT_REPEAT: return &o->repeat;
    default: return NULL;
    }
}

static conv_status apply(conv_cli_options *o, int id, const char *flag, const char *arg,
                         conv_msg *msg)
{
    long long v = 0;
    conv_params *p = &o->params;
    int *target = int_target(o, id);
    if (target != NULL || id == OPT_FILTER || id == OPT_PAD || id == OPT_STRIDE || id == OPT_DIL) {
        conv_status st = conv_cli_parse_ll(flag, arg, INT_MIN, INT_MAX, &v, msg);
        if (st != CONV_OK)
            return st;
    }
    if (target != NULL) {
        *target = (int)v;
        if (id == OPT_PAD_H || id == OPT_PAD_W)
            o->same_padding = 0;
        return CONV_OK;
    }
    switch (id) {
    case OPT_FILTER: p->r = p->s = (int)v; return CONV_OK;
    case OPT_PAD:
        p->pad_h = p->pad_w = (int)v;
        o->same_padding = 0;
        return CONV_OK;
    case OPT_STRIDE: p->stride_h = p->stride_w = (int)v; return CONV_OK;
    case OPT_DIL: p->dil_h = p->dil_w = (int)v; return CONV_OK;
    case OPT_SEED: {
        char *end = NULL;
        errno = 0;
        unsigned long long s = strtoull(arg, &end, 10);
        if (end == arg || *end != '\0' || errno == ERANGE || arg[0] == '-')
            return conv_fail(msg, CONV_ERR_INVALID,
                             "invalid value for --seed: '%s' is not a non-negative integer", arg);
        o->seed = s;
        return CONV_OK;
    }
    case OPT_PADDING:
        if (strcmp(arg, "same") == 0) {
            o->same_padding = 1;
        } else if (strcmp(arg, "valid") == 0) {
            o->same_padding = 0;
            p->pad_h = p->pad_w = 0;
        } else {
            return conv_fail(msg, CONV_ERR_INVALID,
                             "invalid value for --padding: '%s' (expected valid or same)", arg);
        }
        return CONV_OK;
    case OPT_CSV:
        if (arg[0] == '\0')
            return conv_fail(msg, CONV_ERR_INVALID, "invalid value for --csv: empty file name");
        o->csv_path = arg;
        return CONV_OK;
    case OPT_LAYOUT:
        if (strcmp(arg, "nchw") == 0)
            p->layout = CONV_LAYOUT_NCHW;
        else if (strcmp(arg, "nhwc") == 0)
            p->layout = CONV_LAYOUT_NHWC;
        else
            return conv_fail(msg, CONV_ERR_INVALID,
                             "invalid value for --layout: '%s' (expected nchw or nhwc)", arg);
        return CONV_OK;
    default: return conv_fail(msg, CONV_ERR_INVALID, "internal error: unhandled flag --%s", flag);
    }
}

conv_status conv_cli_parse(int argc, char **argv, const char *program, const char *summary,
                           conv_cli_extra *extras, int n_extras, conv_cli_options *opt, FILE *out,
                           conv_msg *msg)
{
    struct option longopts[N_COMMON + MAX_EXTRAS + 1];
    if (n_extras < 0 || n_extras > MAX_EXTRAS)
        return conv_fail(msg, CONV_ERR_INVALID, "internal error: %d extra flags (max %d)", n_extras,
                         MAX_EXTRAS);
    int n = 0;
    for (int i = 0; i < N_COMMON; ++i, ++n) {
        longopts[n].name = common_flags[i].name;
        longopts[n].has_arg = common_flags[i].id == OPT_HELP ? no_argument : required_argument;
        longopts[n].flag = NULL;
        longopts[n].val = common_flags[i].id;
    }
    for (int i = 0; i < n_extras; ++i, ++n) {
        longopts[n].name = extras[i].name;
        longopts[n].has_arg = required_argument;
        longopts[n].flag = NULL;
        longopts[n].val = OPT_EXTRA + i;
    }
    memset(&longopts[n], 0, sizeof longopts[n]);

    opterr = 0; /* our own one-line messages instead of getopt's */
    optind = 0; /* full re-initialisation (GNU), so parsing can run more than once */
    for (;;) {
        int index = -1;
        int id = getopt_long(argc, argv, ":", longopts, &index);
        if (id == -1)
            break;
        const char *bad = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
        if (id == '?')
            return conv_fail(msg, CONV_ERR_INVALID, "unknown option '%s' (see --help)", bad);
        if (id == ':')
            return conv_fail(msg, CONV_ERR_INVALID, "option '%s' needs a value", bad);
        if (id == OPT_HELP) {
            print_usage(out, program, summary, extras, n_extras);
            return CONV_HELP_SHOWN;
        }
        if (id >= OPT_EXTRA) {
            extras[id - OPT_EXTRA].value = optarg;
            continue;
        }
        conv_status st = apply(opt, id, longopts[index].name, optarg, msg);
        if (st != CONV_OK)
            return st;
    }
    if (optind < argc)
        return conv_fail(msg, CONV_ERR_INVALID, "unexpected argument '%s' (see --help)",
                         argv[optind]);
    if (opt->same_padding)
        conv_params_set_same_padding(&opt->params);
    if (opt->warmup < 0)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid value for --warmup: must be >= 0, got %d",
                         opt->warmup);
    if (opt->repeat < 1)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid value for --repeat: must be >= 1, got %d",
                         opt->repeat);
    return conv_params_validate(&opt->params, msg);
}

void conv_cli_print_problem(FILE *out, const conv_params *p)
{
    char desc[256];
    conv_params_describe(p, desc, sizeof desc);
    fprintf(out, "problem: %s\n", desc);
    fprintf(out, "work:    %.3f GFLOP, at least %.2f MB moved\n", conv_flops(p) / 1e9,
            conv_min_bytes(p) / 1e6);
}

void conv_cli_print_table_header(FILE *out, const char *baseline_name)
{
    fprintf(out, "%-24s %12s %10s %12s  %s\n", "version", "median ms", "GFLOP/s",
            baseline_name ? baseline_name : "speedup", "verdict");
}

void conv_cli_print_row(FILE *out, const char *version, double median_ms, double flops,
                        double baseline_ms, const char *verdict)
{
    char speedup[32] = "-";
    if (baseline_ms > 0.0 && median_ms > 0.0)
        snprintf(speedup, sizeof speedup, "%.2fx", baseline_ms / median_ms);
    fprintf(out, "%-24s %12.3f %10.2f %12s  %s\n", version, median_ms,
            median_ms > 0.0 ? flops / (median_ms * 1e6) : 0.0, speedup, verdict);
}
