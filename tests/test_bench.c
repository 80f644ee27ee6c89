/* bench/: the problem table, the --problem and --steps parsing and the skip
 * rules of conv_bench (the program's outputs are checked end to end by
 * tests/test_bench_outputs.py). */
#include <string.h>

#include "bench_problems.h"
#include "conv_test_support.h"

Test(bench_problems, table_holds_the_issue_problems_with_their_shapes)
{
    const bench_problem *p = NULL;
    int count = 0;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(bench_problem_select("lecture", &p, &count, &msg), msg);
    cr_assert_eq(count, 1);
    cr_assert(p->params.n == 1 && p->params.c == 6 && p->params.h == 768 && p->params.w == 512 &&
              p->params.k == 6 && p->params.r == 6 && p->params.s == 6 && p->params.pad_h == 0);
    CONV_ASSERT_OK(bench_problem_select("hpc101", &p, &count, &msg), msg);
    cr_assert_eq(conv_out_h(&p->params), 100, "same padding keeps 100x100");
    cr_assert_eq(p->params.n, 128);
    CONV_ASSERT_OK(bench_problem_select("cutlass", &p, &count, &msg), msg);
    cr_assert(p->params.n == 8 && p->params.h == 224 && conv_out_w(&p->params) == 224);
    CONV_ASSERT_OK(bench_problem_select("ece408-l1", &p, &count, &msg), msg);
    cr_assert(p->params.n == 10000 && p->params.k == 4 && conv_out_h(&p->params) == 80);
    CONV_ASSERT_OK(bench_problem_select("ece408-l2", &p, &count, &msg), msg);
    cr_assert(p->params.c == 4 && p->params.k == 16 && conv_out_h(&p->params) == 34);
    CONV_ASSERT_OK(bench_problem_select("hpc101-image", &p, &count, &msg), msg);
    cr_assert(p->params.h == 2000 && p->params.r == 13 && conv_out_h(&p->params) == 2000);
    CONV_ASSERT_OK(bench_problem_select("conv1d", &p, &count, &msg), msg);
    cr_assert(p->params.w == 1 << 26 && p->params.s == 7 && conv_out_w(&p->params) == 1 << 26);
    cr_assert(p->params.n == 1 && p->params.c == 1 && p->params.k == 1 && p->params.h == 1 &&
                  p->params.r == 1 && p->params.pad_w == 3,
              "a 1D problem as step 03 takes it");
    const bench_problem *nchw = NULL;
    const char *twins[][2] = {{"hpc101-nhwc", "hpc101"}, {"cutlass-nhwc", "cutlass"}};
    for (int i = 0; i < 2; ++i) {
        CONV_ASSERT_OK(bench_problem_select(twins[i][0], &p, &count, &msg), msg);
        CONV_ASSERT_OK(bench_problem_select(twins[i][1], &nchw, &count, &msg), msg);
        cr_assert(p->params.layout == CONV_LAYOUT_NHWC && p->fixed_layout, "%s", twins[i][0]);
        cr_assert(nchw->params.layout == CONV_LAYOUT_NCHW && !nchw->fixed_layout);
        conv_params same_shape = p->params;
        same_shape.layout = CONV_LAYOUT_NCHW;
        cr_assert(memcmp(&same_shape, &nchw->params, sizeof same_shape) == 0, "%s is %s in NHWC",
                  twins[i][0], twins[i][1]);
    }
}

Test(bench_problems, every_problem_is_valid_and_all_selects_them_in_order)
{
    const bench_problem *all = NULL, *table = NULL;
    int count = 0, n = 0;
    conv_msg msg = {{0}};
    table = bench_problems(&n);
    CONV_ASSERT_OK(bench_problem_select("all", &all, &count, &msg), msg);
    cr_assert_eq(all, table);
    cr_assert_eq(count, n);
    cr_assert_eq(n, 9);
    for (int i = 0; i < n; ++i) {
        CONV_ASSERT_OK(conv_params_validate(&all[i].params, &msg), msg);
    }
}

Test(bench_problems, unknown_problem_is_rejected_naming_the_known_ones)
{
    const bench_problem *p = NULL;
    int count = 0;
    conv_msg msg = {{0}};
    cr_assert_eq(bench_problem_select("lectures", &p, &count, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--problem") && strstr(msg.text, "'lectures'") &&
                  strstr(msg.text, "ece408-l2") && strstr(msg.text, "all"),
              "%s", msg.text);
    cr_assert_eq(bench_problem_select("", &p, &count, &msg), CONV_ERR_INVALID);
}

Test(bench_problems, steps_list_parses_and_rejects_unknown_entries)
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

Test(bench_problems, cpu_rows_are_skipped_only_where_estimated_to_take_long)
{
    const bench_problem *p = NULL;
    int count = 0;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(bench_problem_select("lecture", &p, &count, &msg), msg);
    cr_assert_lt(bench_serial_seconds(&p->params), BENCH_CPU_MAX_SECONDS);
    CONV_ASSERT_OK(bench_problem_select("hpc101", &p, &count, &msg), msg);
    double serial = bench_serial_seconds(&p->params);
    cr_assert_gt(serial, BENCH_CPU_MAX_SECONDS);
    cr_assert_float_eq(serial, conv_flops(&p->params) / (BENCH_SERIAL_GFLOPS * 1e9), 1e-6);
    cr_assert_lt(bench_openmp_seconds(&p->params, 16), serial / 10);
    cr_assert_float_eq(bench_openmp_seconds(&p->params, 1), serial / 0.8, 1e-6);
}
