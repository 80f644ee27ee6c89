/* bench/: what is conv_bench's own, the --steps parsing and the skip rules
 * of the CPU rows (the named problems: tests/test_problems.c; the program's
 * outputs are checked end to end by tests/test_bench_outputs.py). */
#include <string.h>

#include "bench_steps.h"
#include "conv_problems.h"
#include "conv_test_support.h"

Test(bench_steps, steps_list_parses_and_rejects_unknown_entries)
{
    unsigned mask = 0;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(bench_parse_steps("01,05,07,cudnn", &mask, &msg), msg);
    cr_assert_eq(mask, BENCH_STEP_01 | BENCH_STEP_05 | BENCH_STEP_07 | BENCH_STEP_CUDNN);
    CONV_ASSERT_OK(bench_parse_steps("all", &mask, &msg), msg);
    cr_assert_eq(mask, BENCH_STEP_ALL);
    const char *bad[] = {"09", "01,,02", "", "01,", "cuDNN"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        cr_assert_eq(bench_parse_steps(bad[i], &mask, &msg), CONV_ERR_INVALID, "'%s' accepted",
                     bad[i]);
        cr_assert(strstr(msg.text, "--steps") != NULL, "%s", msg.text);
    }
}

Test(bench_steps, cpu_rows_are_skipped_only_where_estimated_to_take_long)
{
    const conv_problem *p = conv_problem_find("lecture");
    cr_assert_lt(bench_serial_seconds(&p->params), BENCH_CPU_MAX_SECONDS);
    p = conv_problem_find("hpc101");
    double serial = bench_serial_seconds(&p->params);
    cr_assert_gt(serial, BENCH_CPU_MAX_SECONDS);
    cr_assert_float_eq(serial, conv_flops(&p->params) / (BENCH_SERIAL_GFLOPS * 1e9), 1e-6);
    cr_assert_lt(bench_openmp_seconds(&p->params, 16), serial / 10);
    cr_assert_float_eq(bench_openmp_seconds(&p->params, 1), serial / 0.8, 1e-6);
}
