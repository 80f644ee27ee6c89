#include "conv_problems.h"

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

#define N_PROBLEMS 9

static const conv_problem *table(void)
{
    static conv_problem problems[N_PROBLEMS];
    static int filled = 0;
    if (!filled) {
        conv_problem t[N_PROBLEMS] = {
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
    return problems;
}

const conv_problem *conv_problems(int *count)
{
    *count = N_PROBLEMS;
    return table();
}

/* The names joined by `sep`, then "all". */
static void join_names(char *buf, size_t len, char sep)
{
    const conv_problem *all = table();
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < N_PROBLEMS && used < len; ++i)
        used += (size_t)snprintf(buf + used, len - used, "%s%c", all[i].name, sep);
    if (used < len)
        snprintf(buf + used, len - used, "all");
}

const char *conv_problem_names(void)
{
    static char names[256];
    if (names[0] == '\0')
        join_names(names, sizeof names, '|');
    return names;
}

const conv_problem *conv_problem_find(const char *name)
{
    const conv_problem *all = table();
    for (int i = 0; name != NULL && i < N_PROBLEMS; ++i)
        if (strcmp(name, all[i].name) == 0)
            return &all[i];
    return NULL;
}

conv_status conv_problem_select(const char *name, const conv_problem **first, int *count,
                                conv_msg *msg)
{
    if (name != NULL && strcmp(name, "all") == 0) {
        *first = conv_problems(count);
        return CONV_OK;
    }
    const conv_problem *found = conv_problem_find(name);
    if (found != NULL) {
        *first = found;
        *count = 1;
        return CONV_OK;
    }
    char known[256];
    join_names(known, sizeof known, ',');
    return conv_fail(msg, CONV_ERR_INVALID,
                     "invalid value for --problem: '%s' (expected one of %s)",
                     name != NULL ? name : "", known);
}
