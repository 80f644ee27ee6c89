#include "bench_steps.h"

#include <string.h>

conv_status bench_parse_steps(const char *list, unsigned *mask, conv_msg *msg)
{
    static const struct {
        const char *name;
        unsigned bit;
    } steps[] = {{"01", BENCH_STEP_01},  {"02", BENCH_STEP_02},       {"03", BENCH_STEP_03},
                 {"04", BENCH_STEP_04},  {"05", BENCH_STEP_05},       {"06", BENCH_STEP_06},
                 {"07", BENCH_STEP_07},  {"08", BENCH_STEP_08},       {"09", BENCH_STEP_09},
                 {"10", BENCH_STEP_10},  {"cudnn", BENCH_STEP_CUDNN}, {"auto", BENCH_STEP_AUTO},
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
                "list of 01 02 03 04 05 06 07 08 09 10 cudnn auto, or all)",
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
