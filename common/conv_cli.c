#include "conv_cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "conv_problems.h"

enum {
    OPT_PROBLEM, /* a named problem, instead of the shape flags after it */
    OPT_N,
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
    OPT_WARMUP, /* the measurement flags: every program has them */
    OPT_REPEAT,
    OPT_SEED,
    OPT_CSV,
    OPT_JSON,
    OPT_HELP,
    N_COMMON,
    OPT_PROGRAM = 100 /* + index in the program's table */
};
#define FIRST_RUN_FLAG OPT_WARMUP
_Static_assert(FIRST_RUN_FLAG <= CONV_CLI_MAX_SHAPE_FLAGS, "room for every problem flag given");

typedef struct {
    const char *name, *metavar, *help;
    long long lo, hi; /* integer flags; lo > hi: not an integer */
} common_flag;

#define SIZE    1, INT_MAX
#define NONNEG  0, INT_MAX
#define NOT_INT 1, 0
static const common_flag common_flags[N_COMMON] = {
    [OPT_PROBLEM] = {"problem", NULL /* the catalogue's names */,
                     "a problem of the course by name instead of a shape (all: each in turn)",
                     NOT_INT},
    [OPT_N] = {"n", "N", "batch size", SIZE},
    [OPT_C] = {"c", "C", "input channels", SIZE},
    [OPT_H] = {"h", "H", "image height", SIZE},
    [OPT_W] = {"w", "W", "image width", SIZE},
    [OPT_K] = {"k", "K", "output channels (filters)", SIZE},
    [OPT_R] = {"r", "R", "filter height", SIZE},
    [OPT_S] = {"s", "S", "filter width", SIZE},
    [OPT_FILTER] = {"filter", "F", "square filter: R = S = F", SIZE},
    [OPT_PAD] = {"pad", "P", "zero padding on both axes", NONNEG},
    [OPT_PAD_H] = {"pad-h", "P", "vertical zero padding", NONNEG},
    [OPT_PAD_W] = {"pad-w", "P", "horizontal zero padding", NONNEG},
    [OPT_PADDING] = {"padding", "valid|same", "valid: no padding; same: dil*(R-1)/2 per axis",
                     NOT_INT},
    [OPT_STRIDE] = {"stride", "S", "stride on both axes", SIZE},
    [OPT_STRIDE_H] = {"stride-h", "S", "vertical stride", SIZE},
    [OPT_STRIDE_W] = {"stride-w", "S", "horizontal stride", SIZE},
    [OPT_DIL] = {"dilation", "D", "dilation on both axes", SIZE},
    [OPT_DIL_H] = {"dil-h", "D", "vertical dilation", SIZE},
    [OPT_DIL_W] = {"dil-w", "D", "horizontal dilation", SIZE},
    [OPT_LAYOUT] = {"layout", "nchw|nhwc", "tensor layout", NOT_INT},
    [OPT_WARMUP] = {"warmup", "N", "untimed runs before timing", 0, 1000},
    [OPT_REPEAT] = {"repeat", "N", "timed runs (the median is reported)", 1, 1000},
    [OPT_SEED] = {"seed", "N", "seed of the random inputs", NOT_INT},
    [OPT_CSV] = {"csv", "FILE", "also write the results to FILE as CSV", NOT_INT},
    [OPT_JSON] = {"json", "FILE", "also write the results to FILE as JSON", NOT_INT},
    [OPT_HELP] = {"help", NULL, "print this help and exit", NOT_INT},
};

/* Flags that set the same thing: given together they are rejected, so that
 * the order of the flags cannot matter. */
static const int conflicts[][2] = {
    {OPT_FILTER, OPT_R},      {OPT_FILTER, OPT_S},        {OPT_PAD, OPT_PAD_H},
    {OPT_PAD, OPT_PAD_W},     {OPT_PADDING, OPT_PAD},     {OPT_PADDING, OPT_PAD_H},
    {OPT_PADDING, OPT_PAD_W}, {OPT_STRIDE, OPT_STRIDE_H}, {OPT_STRIDE, OPT_STRIDE_W},
    {OPT_DIL, OPT_DIL_H},     {OPT_DIL, OPT_DIL_W},
};

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

int conv_cli_selects(const char *value, const char *word)
{
    if (value == NULL || word == NULL)
        return 0;
    return strcmp(value, word) == 0 || (strcmp(value, "all") == 0 && strcmp(word, "all") != 0);
}

/* 1 when `text` is one of the '|'-separated words of `choices`. */
int conv_cli_is_choice(const char *choices, const char *text)
{
    size_t len = strlen(text);
    for (const char *at = choices; *at != '\0';) {
        size_t n = strcspn(at, "|");
        if (n == len && strncmp(at, text, len) == 0)
            return 1;
        at += n;
        at += *at == '|';
    }
    return 0;
}

/* The new name of `old` in a program's renamed list ("old=new|old=new"; flags
 * with their dashes, e.g. "--strategy=--variant|1=4a"), copied to `out`;
 * NULL when `old` was not renamed. */
static const char *renamed_to(const char *renamed, const char *old, size_t old_len, char *out,
                              size_t size)
{
    for (const char *at = renamed; at != NULL && *at != '\0';) {
        size_t n = strcspn(at, "|");
        const char *eq = memchr(at, '=', n);
        if (eq != NULL && (size_t)(eq - at) == old_len && strncmp(at, old, old_len) == 0) {
            snprintf(out, size, "%.*s", (int)(n - (size_t)(eq + 1 - at)), eq + 1);
            return out;
        }
        at += n;
        at += *at == '|';
    }
    return NULL;
}

/* 1 when the program takes --problem: it has the 2D problem flags, or flags
 * of its own that describe a convolution. */
static int takes_problem(const conv_cli_spec *spec)
{
    return spec->shape == CONV_CLI_SHAPE_2D || spec->own_shape_flags != NULL;
}

static const char *common_metavar(int id)
{
    return id == OPT_PROBLEM ? conv_problem_names() : common_flags[id].metavar;
}

static const char *shape_default(int id, const conv_params *d, char *buf, size_t len)
{
    int v;
    switch (id) {
    case OPT_N: v = d->n; break;
    case OPT_C: v = d->c; break;
    case OPT_H: v = d->h; break;
    case OPT_W: v = d->w; break;
    case OPT_K: v = d->k; break;
    case OPT_R:
    case OPT_FILTER: v = d->r; break;
    case OPT_S: v = d->s; break;
    case OPT_PAD:
    case OPT_PAD_H:
    case OPT_PAD_W: v = d->pad_h; break;
    case OPT_PADDING: {
        conv_params same = *d;
        conv_params_set_same_padding(&same);
        return d->pad_h == 0 && d->pad_w == 0                     ? "valid"
               : d->pad_h == same.pad_h && d->pad_w == same.pad_w ? "same"
                                                                  : NULL;
    }
    case OPT_STRIDE:
    case OPT_STRIDE_H:
    case OPT_STRIDE_W: v = d->stride_h; break;
    case OPT_DIL:
    case OPT_DIL_H:
    case OPT_DIL_W: v = d->dil_h; break;
    case OPT_LAYOUT: return "nchw";
    default: return NULL;
    }
    snprintf(buf, len, "%d", v);
    return buf;
}

/* The name of the program's default problem in the catalogue. */
static const char *default_name(const conv_cli_spec *spec)
{
    return spec->default_problem != NULL ? spec->default_problem : "lecture";
}

/* The help's first column is as wide as the longest "--flag METAVAR" up to
 * this; a longer one (a flag with many choices) stands on its own line. */
#define HELP_COLUMN 28

static void print_flag(FILE *out, int width, const char *name, const char *metavar,
                       const char *help, long long lo, long long hi, const char *def)
{
    char head[512], range[64] = "";
    int len =
        snprintf(head, sizeof head, "--%s%s%s", name, metavar ? " " : "", metavar ? metavar : "");
    if (lo <= hi)
        snprintf(range, sizeof range, hi == INT_MAX ? ", >= %lld" : ", %lld to %lld", lo, hi);
    if (len > width)
        fprintf(out, "  %s\n  %-*s  %s%s", head, width, "", help, range);
    else
        fprintf(out, "  %-*s  %s%s", width, head, help, range);
    if (def != NULL)
        fprintf(out, " (default %s)", def);
    fprintf(out, "\n");
}

static void print_usage(FILE *out, const conv_cli_spec *spec, const conv_cli_options *defaults)
{
    int width = 0;
    char head[512];
    for (int i = 0; i < N_COMMON + spec->n_flags; ++i) {
        const char *name = i < N_COMMON ? common_flags[i].name : spec->flags[i - N_COMMON].name;
        const char *meta = i < N_COMMON ? common_metavar(i) : spec->flags[i - N_COMMON].metavar;
        int len = snprintf(head, sizeof head, "--%s%s%s", name, meta ? " " : "", meta ? meta : "");
        width = len > width && len <= HELP_COLUMN ? len : width;
    }
    fprintf(out, "usage: %s [options]\n%s\n", spec->program, spec->summary ? spec->summary : "");
    if (spec->n_flags > 0)
        fprintf(out, "\noptions of %s:\n", spec->program);
    for (int i = 0; i < spec->n_flags; ++i) {
        const conv_flag *f = &spec->flags[i];
        print_flag(out, width, f->name, f->metavar, f->help, f->kind == CONV_FLAG_INT ? f->lo : 1,
                   f->kind == CONV_FLAG_INT ? f->hi : 0, f->def);
    }
    if (spec->shape == CONV_CLI_SHAPE_2D) {
        const conv_problem *d = conv_problem_find(default_name(spec));
        fprintf(out, "\nthe problem (default: %s, %s):\n", d->name, d->about);
        for (int i = 0; i < FIRST_RUN_FLAG; ++i) {
            char buf[32];
            const common_flag *f = &common_flags[i];
            print_flag(out, width, f->name, common_metavar(i), f->help, f->lo, f->hi,
                       shape_default(i, &d->params, buf, sizeof buf));
        }
        fprintf(out, "  (--filter, --pad, --stride, --dilation set both axes: give either them "
                     "or the per-axis flags)\n"
                     "  (--problem fixes the shape: give it or the flags after it; --layout "
                     "applies to a problem whose name does not say its layout)\n");
    } else if (takes_problem(spec)) {
        fprintf(out, "\nthe problem, by name instead of ");
        for (const char *at = spec->own_shape_flags; *at != '\0';) {
            int n = (int)strcspn(at, "|");
            fprintf(out, "%s--%.*s", at == spec->own_shape_flags ? "" : ", ", n, at);
            at += n + (at[n] == '|');
        }
        fprintf(out, ":\n");
        const common_flag *f = &common_flags[OPT_PROBLEM];
        print_flag(out, width, f->name, common_metavar(OPT_PROBLEM), f->help, f->lo, f->hi, NULL);
    }
    fprintf(out, "\nmeasurement and output:\n");
    for (int i = FIRST_RUN_FLAG; i < N_COMMON; ++i) {
        char buf[32] = "";
        const char *def = NULL;
        if (i == OPT_WARMUP || i == OPT_REPEAT)
            snprintf(buf, sizeof buf, "%d", i == OPT_WARMUP ? defaults->warmup : defaults->repeat);
        if (i == OPT_SEED)
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)defaults->seed);
        if (buf[0] != '\0')
            def = buf;
        const common_flag *f = &common_flags[i];
        print_flag(out, width, f->name, f->metavar, f->help, f->lo, f->hi, def);
    }
    fprintf(out, "\nExit status: 0 every result verified, 1 a wrong result or a runtime error, "
                 "2 a bad command line or a problem the program rejects.\n");
}

/* Stores the value of common flag id (already range-checked if an integer). */
static conv_status apply_common(conv_cli_options *o, int id, const char *arg, long long v,
                                int *same_padding, conv_msg *msg)
{
    conv_params *p = &o->params;
    switch (id) {
    case OPT_N: p->n = (int)v; break;
    case OPT_C: p->c = (int)v; break;
    case OPT_H: p->h = (int)v; break;
    case OPT_W: p->w = (int)v; break;
    case OPT_K: p->k = (int)v; break;
    case OPT_R: p->r = (int)v; break;
    case OPT_S: p->s = (int)v; break;
    case OPT_FILTER: p->r = p->s = (int)v; break;
    case OPT_PAD: p->pad_h = p->pad_w = (int)v; break;
    case OPT_PAD_H: p->pad_h = (int)v; break;
    case OPT_PAD_W: p->pad_w = (int)v; break;
    case OPT_STRIDE: p->stride_h = p->stride_w = (int)v; break;
    case OPT_STRIDE_H: p->stride_h = (int)v; break;
    case OPT_STRIDE_W: p->stride_w = (int)v; break;
    case OPT_DIL: p->dil_h = p->dil_w = (int)v; break;
    case OPT_DIL_H: p->dil_h = (int)v; break;
    case OPT_DIL_W: p->dil_w = (int)v; break;
    case OPT_PROBLEM: {
        const conv_problem *first;
        int count;
        conv_status st = conv_problem_select(arg, &first, &count, msg);
        if (st != CONV_OK)
            return st;
        o->problem = arg;
        break;
    }
    case OPT_WARMUP: o->warmup = (int)v; break;
    case OPT_REPEAT: o->repeat = (int)v; break;
    case OPT_PADDING:
        if (strcmp(arg, "same") != 0 && strcmp(arg, "valid") != 0)
            return conv_fail(msg, CONV_ERR_INVALID,
                             "invalid value for --padding: '%s' (expected valid or same)", arg);
        *same_padding = strcmp(arg, "same") == 0;
        break;
    case OPT_LAYOUT:
        if (strcmp(arg, "nchw") == 0)
            p->layout = CONV_LAYOUT_NCHW;
        else if (strcmp(arg, "nhwc") == 0)
            p->layout = CONV_LAYOUT_NHWC;
        else
            return conv_fail(msg, CONV_ERR_INVALID,
                             "invalid value for --layout: '%s' (expected nchw or nhwc)", arg);
        o->layout_given = 1;
        break;
    case OPT_SEED: {
        char *end = NULL;
        errno = 0;
        unsigned long long s = strtoull(arg, &end, 10);
        if (end == arg || *end != '\0' || errno == ERANGE || arg[0] == '-')
            return conv_fail(msg, CONV_ERR_INVALID,
                             "invalid value for --seed: '%s' is not an integer in [0, 2^64 - 1]",
                             arg);
        o->seed = s;
        break;
    }
    case OPT_CSV:
    case OPT_JSON:
        if (arg[0] == '\0')
            return conv_fail(msg, CONV_ERR_INVALID, "invalid value for --%s: empty file name",
                             common_flags[id].name);
        if (id == OPT_CSV)
            o->csv_path = arg;
        else
            o->json_path = arg;
        break;
    default:
        return conv_fail(msg, CONV_ERR_INVALID, "internal error: unhandled flag --%s",
                         common_flags[id].name);
    }
    return CONV_OK;
}

static conv_status apply_program(conv_cli_options *o, const conv_flag *f, int i, const char *arg,
                                 const char *renamed, conv_msg *msg)
{
    char now[64];
    if (f->kind == CONV_FLAG_INT) {
        conv_status st = conv_cli_parse_ll(f->name, arg, f->lo, f->hi, &o->number[i], msg);
        if (st != CONV_OK)
            return st;
    } else if (f->kind == CONV_FLAG_CHOICE && !conv_cli_is_choice(f->metavar, arg) &&
               renamed_to(renamed, arg, strlen(arg), now, sizeof now) != NULL) {
        return conv_fail(msg, CONV_ERR_INVALID, "--%s %s is now --%s %s (see --help)", f->name, arg,
                         f->name, now);
    } else if (f->kind == CONV_FLAG_CHOICE && !conv_cli_is_choice(f->metavar, arg)) {
        char expected[160];
        snprintf(expected, sizeof expected, "%s", f->metavar);
        for (char *c = expected; *c; ++c)
            if (*c == '|')
                *c = ',';
        return conv_fail(msg, CONV_ERR_INVALID, "invalid value for --%s: '%s' (expected one of %s)",
                         f->name, arg, expected);
    } else if (f->kind == CONV_FLAG_SWITCH) {
        arg = "on";
    } else if (arg[0] == '\0') {
        return conv_fail(msg, CONV_ERR_INVALID, "invalid value for --%s: empty", f->name);
    }
    o->value[i] = arg;
    o->given[i] = 1;
    return CONV_OK;
}

/* getopt_long accepts any unique prefix of a flag ("--h" for "--help" in a
 * program without --h); this program's flags must be spelled out. Returns
 * CONV_OK or the "unknown option" error for the first flag that is not. */
static conv_status check_spelling(int argc, char **argv, const struct option *longopts,
                                  const char *renamed, conv_msg *msg)
{
    char flag[64], value[64];
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0)
            return CONV_OK;
        if (strncmp(arg, "--", 2) != 0)
            continue;
        size_t len = strcspn(arg + 2, "=");
        const struct option *o = longopts;
        while (o->name != NULL && (strlen(o->name) != len || strncmp(o->name, arg + 2, len) != 0))
            ++o;
        if (o->name == NULL && renamed_to(renamed, arg, len + 2, flag, sizeof flag) == NULL)
            return conv_fail(msg, CONV_ERR_INVALID, "unknown option '%.*s' (see --help)",
                             (int)len + 2, arg);
        if (o->name == NULL) { /* an old name: the new one, and the old value's new name */
            const char *old = arg[2 + len] == '=' ? arg + 3 + len : i + 1 < argc ? argv[i + 1] : "";
            if (renamed_to(renamed, old, strlen(old), value, sizeof value) != NULL)
                return conv_fail(msg, CONV_ERR_INVALID, "%.*s %s is now %s %s (see --help)",
                                 (int)len + 2, arg, old, flag, value);
            return conv_fail(msg, CONV_ERR_INVALID, "%.*s is now %s (see --help)", (int)len + 2,
                             arg, flag);
        }
        if (o->has_arg == no_argument && arg[2 + len] == '=')
            return conv_fail(msg, CONV_ERR_INVALID, "--%s takes no value (given '%s')", o->name,
                             arg);
        if (o->has_arg == required_argument && arg[2 + len] != '=')
            ++i; /* its value, which may itself start with "--" */
    }
    return CONV_OK;
}

/* 1 when a program flag that fixes the problem was given. */
static int shape_fixed(const conv_cli_spec *spec, const conv_cli_options *opt)
{
    for (int i = 0; i < spec->n_flags; ++i)
        if (opt->given[i] && spec->shape_fixed_by != NULL &&
            conv_cli_is_choice(spec->shape_fixed_by, spec->flags[i].name))
            return 1;
    return 0;
}

static const char *flag_name(const conv_cli_spec *spec, int id)
{
    return id >= OPT_PROGRAM ? spec->flags[id - OPT_PROGRAM].name : common_flags[id].name;
}

/* Notes flag `id` among the problem flags given, if it is one (--problem
 * and --layout are not: they name a problem and its layout, not a shape). */
static void note_shape_flag(const conv_cli_spec *spec, conv_cli_options *opt, int id)
{
    const char *name = flag_name(spec, id);
    int shape = id >= OPT_PROGRAM ? spec->own_shape_flags != NULL &&
                                        conv_cli_is_choice(spec->own_shape_flags, name)
                                  : id < FIRST_RUN_FLAG && id != OPT_PROBLEM && id != OPT_LAYOUT;
    if (!shape)
        return;
    if (opt->shape_flag == NULL)
        opt->shape_flag = name;
    if (opt->n_shape_flags < CONV_CLI_MAX_SHAPE_FLAGS)
        opt->shape_flags[opt->n_shape_flags++] = name;
}

conv_status conv_cli_parse(int argc, char **argv, const conv_cli_spec *spec, conv_cli_options *opt,
                           FILE *out, conv_msg *msg)
{
    if (spec->n_flags < 0 || spec->n_flags > CONV_CLI_MAX_FLAGS)
        return conv_fail(msg, CONV_ERR_INVALID, "internal error: %d program flags (max %d)",
                         spec->n_flags, CONV_CLI_MAX_FLAGS);
    const conv_problem *default_problem = conv_problem_find(default_name(spec));
    if (default_problem == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "internal error: no problem '%s' in the catalogue",
                         default_name(spec));
    memset(opt, 0, sizeof *opt);
    opt->params = default_problem->params;
    opt->warmup = spec->default_warmup || spec->default_repeat ? spec->default_warmup : 2;
    opt->repeat = spec->default_repeat ? spec->default_repeat : 10;
    opt->seed = 2024;
    for (int i = 0; i < spec->n_flags; ++i) {
        const conv_flag *f = &spec->flags[i];
        opt->value[i] = f->def;
        if (f->kind == CONV_FLAG_INT && f->def != NULL &&
            conv_cli_parse_ll(f->name, f->def, f->lo, f->hi, &opt->number[i], msg) != CONV_OK)
            return conv_fail(msg, CONV_ERR_INVALID, "internal error: default of --%s", f->name);
    }

    struct option longopts[N_COMMON + CONV_CLI_MAX_FLAGS + 1];
    int n = 0;
    for (int i = 0; i < N_COMMON; ++i) {
        if (spec->shape == CONV_CLI_SHAPE_NONE && i < FIRST_RUN_FLAG &&
            !(i == OPT_PROBLEM && takes_problem(spec)))
            continue;
        longopts[n++] = (struct option){common_flags[i].name,
                                        i == OPT_HELP ? no_argument : required_argument, NULL, i};
    }
    for (int i = 0; i < spec->n_flags; ++i)
        longopts[n++] = (struct option){spec->flags[i].name,
                                        spec->flags[i].kind == CONV_FLAG_SWITCH ? no_argument
                                                                                : required_argument,
                                        NULL, OPT_PROGRAM + i};
    memset(&longopts[n], 0, sizeof longopts[n]);
    conv_status spelled = check_spelling(argc, argv, longopts, spec->renamed, msg);
    if (spelled != CONV_OK)
        return spelled;

    int seen[N_COMMON + CONV_CLI_MAX_FLAGS] = {0};
    int same_padding = 0;
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
            print_usage(out, spec, opt);
            return CONV_HELP_SHOWN;
        }
        int slot = id >= OPT_PROGRAM ? N_COMMON + id - OPT_PROGRAM : id;
        if (seen[slot]++)
            return conv_fail(msg, CONV_ERR_INVALID, "--%s is given twice: give each flag once",
                             flag_name(spec, id));
        conv_status st;
        if (id >= OPT_PROGRAM) {
            st = apply_program(opt, &spec->flags[id - OPT_PROGRAM], id - OPT_PROGRAM, optarg,
                               spec->renamed, msg);
        } else {
            long long v = 0;
            const common_flag *f = &common_flags[id];
            st = f->lo <= f->hi ? conv_cli_parse_ll(f->name, optarg, f->lo, f->hi, &v, msg)
                                : CONV_OK;
            if (st == CONV_OK)
                st = apply_common(opt, id, optarg, v, &same_padding, msg);
        }
        if (st != CONV_OK)
            return st;
        note_shape_flag(spec, opt, id);
    }
    if (optind < argc)
        return conv_fail(msg, CONV_ERR_INVALID, "unexpected argument '%s' (see --help)",
                         argv[optind]);
    for (size_t i = 0; i < sizeof conflicts / sizeof conflicts[0]; ++i)
        if (seen[conflicts[i][0]] && seen[conflicts[i][1]])
            return conv_fail(
                msg, CONV_ERR_INVALID, "--%s and --%s set the same thing: give one of them",
                common_flags[conflicts[i][0]].name, common_flags[conflicts[i][1]].name);
    if (opt->csv_path != NULL && opt->json_path != NULL &&
        strcmp(opt->csv_path, opt->json_path) == 0)
        return conv_fail(msg, CONV_ERR_INVALID, "--csv and --json name the same file '%s'",
                         opt->csv_path);
    if (opt->problem != NULL && opt->shape_flag != NULL)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "--%s cannot be combined with --problem: a named problem fixes the "
                         "shape%s; leave out --problem for a custom shape",
                         opt->shape_flag,
                         spec->shape == CONV_CLI_SHAPE_2D ? " (only --layout applies to it)" : "");
    if (same_padding)
        conv_params_set_same_padding(&opt->params);
    if (spec->shape != CONV_CLI_SHAPE_2D || shape_fixed(spec, opt) || opt->problem != NULL)
        return CONV_OK;
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
