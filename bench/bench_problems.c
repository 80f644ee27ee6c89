#include "bench_problems.h"

#include <stdio.h>
#include <string.h>

static conv_params shape(int n, int c, int h, int w, int k, int r, int s, int pad_h, int pad_w)
{
    conv_params p = conv_params_default();
    p.n = n, p.c = c, p.h = h, p.w = w, p.k = k, p.r = r, p.s = s;
    p.pad_h = pad_h, p.pad_w = pad_w;
    return p;
}

static conv_params nhwc(conv_params p)
{
    p.layout = CONV_LAYOUT_NHWC;
    return p;
}

static const bench_problem *table(int *count)
{
    static bench_problem problems[9];
    static int filled = 0;
    if (!filled) {
        bench_problem t[] = {
            {"lecture", "the direct-convolution article's problem, 6x6 valid",
             shape(1, 6, 768, 512, 6, 6, 6, 0, 0), 0},
            {"hpc101", "the HPC101 2022 lab 3 problem, 3x3 same",
             shape(128, 128, 100, 100, 128, 3, 3, 1, 1), 0},
            {"cutlass", "CUTLASS's reference problem, 3x3 same",
             shape(8, 128, 224, 224, 128, 3, 3, 1, 1), 0},
            {"ece408-l1", "ECE408 project layer 1, 7x7 valid",
             shape(10000, 1, 86, 86, 4, 7, 7, 0, 0), 0},
            {"ece408-l2", "ECE408 project layer 2, 7x7 valid",
             shape(10000, 4, 40, 40, 16, 7, 7, 0, 0), 0},
            {"hpc101-image", "the 2021 HPC101 image filter, 13x13 same",
             shape(1, 1, 2000, 2000, 1, 13, 13, 6, 6), 0},
            {"conv1d", "1D, width 2^26, mask 7, same (steps 01 and 03)",
             shape(1, 1, 1, 1 << 26, 1, 1, 7, 0, 3), 0},
            {"hpc101-nhwc", "the HPC101 lab exactly: hpc101 in NHWC",
             nhwc(shape(128, 128, 100, 100, 128, 3, 3, 1, 1)), 1},
            {"cutlass-nhwc", "CUTLASS's reference problem in NHWC",
             nhwc(shape(8, 128, 224, 224, 128, 3, 3, 1, 1)), 1},
        };
        memcpy(problems, t, sizeof t);
        filled = 1;
    }
    *count = (int)(sizeof problems / sizeof problems[0]);
    return problems;
}

const bench_problem *bench_problems(int *count)
{
    return table(count);
}

conv_status bench_problem_select(const char *name, const bench_problem **first, int *count,
                                 conv_msg *msg)
{
    int n = 0;
    const bench_problem *all = table(&n);
    if (strcmp(name, "all") == 0) {
        *first = all;
        *count = n;
        return CONV_OK;
    }
    char known[256] = "";
    for (int i = 0; i < n; ++i) {
        if (strcmp(name, all[i].name) == 0) {
            *first = &all[i];
            *count = 1;
            return CONV_OK;
        }
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, "%s%s", all[i].name, "|");
    }
    return conv_fail(msg, CONV_ERR_INVALID, "invalid value for --problem: '%s' (expected %sall)",
                     name, known);
}

conv_status bench_parse_steps(const char *list, unsigned *mask, conv_msg *msg)
{
    static const struct {
        const char *name;
        unsigned bit;
    } steps[] = {{"01", BENCH_STEP_01},  {"02", BENCH_STEP_02}, {"03", BENCH_STEP_03},
                 {"04", BENCH_STEP_04},  {"05", BENCH_STEP_05}, {"06", BENCH_STEP_06},
                 {"07", BENCH_STEP_07},  {"08", BENCH_STEP_08}, {"cudnn", BENCH_STEP_CUDNN},
                 {"all", BENCH_STEP_ALL}};
    *mask = 0;
    const char *at = list;
    while (1) {
        size_t len = strcspn(at, ",");
        int found = 0;
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; ++i)
            if (len == strlen(steps[i].name) && strncmp(at, steps[i].name, len) == 0) {
                *mask |= steps[i].bit;
                found = 1;
            }
        if (!found)
            return conv_fail(
                msg, CONV_ERR_INVALID,
                "invalid value for --steps: '%.*s' in '%s' (expected a comma-separated "
                "list of 01 02 03 04 05 06 07 08 cudnn, or all)",
                (int)len, at, list);
        if (at[len] == '\0')
            break;
        at += len + 1;
    }
    return CONV_OK;
}

double bench_serial_seconds(const conv_params *p)
{
    return conv_flops(p) / (BENCH_SERIAL_GFLOPS * 1e9);
}

double bench_openmp_seconds(const conv_params *p, int threads)
{
    return bench_serial_seconds(p) / (0.8 * (threads > 1 ? threads : 1));
}
