/* bench/: what is conv_bench's own, the --steps parsing, the skip rules
 * of the CPU rows and the names of the rows it gathers from the steps (the
 * named problems: tests/test_problems.c; the program's outputs are checked
 * end to end by tests/test_bench_outputs.py). */
#include <string.h>

#include "bench_rows.h"
#include "bench_steps.h"
#include "conv_problems.h"
#include "conv_test_support.h"
#include "hopper_rows.h"
#include "im2col_gemm_rows.h"
#include "tc_rows.h"

Test(bench_steps, steps_list_parses_and_rejects_unknown_entries)
{
    unsigned mask = 0;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(bench_parse_steps("01,05,07,cudnn", &mask, &msg), msg);
    cr_assert_eq(mask, BENCH_STEP_01 | BENCH_STEP_05 | BENCH_STEP_07 | BENCH_STEP_CUDNN);
    CONV_ASSERT_OK(bench_parse_steps("08,09", &mask, &msg), msg);
    cr_assert_eq(mask, BENCH_STEP_08 | BENCH_STEP_09);
    CONV_ASSERT_OK(bench_parse_steps("all", &mask, &msg), msg);
    cr_assert_eq(mask, BENCH_STEP_ALL);
    const char *bad[] = {"11", "9", "01,,02", "", "01,", "cuDNN"};
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

/* A version's row is named by its key first ("5b", "6e im2col + double
 * buffered", "8b-xt mma.sync TF32, x truncated"): the key is the value of the
 * step program's --variant that runs it, and the tables, the CSVs and the
 * notes name the row by it. A reference (cuBLAS, cuDNN) has no key in its
 * name. */
static void assert_named_by_key(const conv_row *rows, int n, const char *where)
{
    for (int i = 0; i < n; ++i) {
        const char *key = rows[i].key, *name = rows[i].name;
        const int version =
            key != NULL && key[0] >= '1' && key[0] <= '9' && key[1] >= 'a' && key[1] <= 'z';
        const size_t len = version ? strlen(key) : 0;
        if (version)
            cr_assert(strncmp(name, key, len) == 0 && (name[len] == '\0' || name[len] == ' '),
                      "%s: row '%s' does not begin with its key %s", where, name, key);
        else
            cr_assert(name[0] < '0' || name[0] > '9', "%s: reference row '%s' (key %s) has a key",
                      where, name, key ? key : "none");
    }
}

/* The name of the row with key `key` among rows[0..n). */
static const char *name_of(const conv_row *rows, int n, const char *key)
{
    for (int i = 0; i < n; ++i)
        if (rows[i].key != NULL && strcmp(rows[i].key, key) == 0)
            return rows[i].name;
    cr_assert_fail("no row with key %s", key);
    return NULL;
}

Test(bench_rows, each_version_of_steps_05_to_09_is_named_by_its_key_first)
{
    conv_row rows[64];
    const unsigned steps =
        BENCH_STEP_05 | BENCH_STEP_06 | BENCH_STEP_07 | BENCH_STEP_08 | BENCH_STEP_09;
    const char *problems[] = {"lecture", "cutlass", "cutlass-nhwc"};
    for (size_t i = 0; i < sizeof problems / sizeof problems[0]; ++i) {
        const conv_problem *p = conv_problem_find(problems[i]);
        const int n = bench_rows(&p->params, steps, rows, 64);
        cr_assert_gt(n, 20, "%s: %d rows", problems[i], n);
        assert_named_by_key(rows, n, problems[i]);
    }
    const conv_problem *p = conv_problem_find("cutlass-nhwc");
    int n = bench_rows(&p->params, steps, rows, 64);
    cr_assert_str_eq(name_of(rows, n, "5b"), "5b");
    cr_assert_str_eq(name_of(rows, n, "6e"), "6e im2col + double buffered");
    cr_assert_str_eq(name_of(rows, n, "cublas"), "im2col + cuBLAS SGEMM");
    cr_assert_str_eq(name_of(rows, n, "6f"), "6f implicit GEMM");
    cr_assert_str_eq(name_of(rows, n, "7b"), "7b F(4x4,3x3)");
    cr_assert_str_eq(name_of(rows, n, "8b-xt"), "8b-xt mma.sync TF32, x truncated");
    cr_assert_str_eq(name_of(rows, n, "9a"), "9a wgmma TF32");
    cr_assert_str_eq(name_of(rows, n, "9b"), "9b wgmma TF32, TMA");
    cr_assert_str_eq(name_of(rows, n, "9c"), "9c wgmma TF32, TMA, split-K");
    cr_assert_str_eq(name_of(rows, n, "9a-fp16"), "9a-fp16 wgmma FP16");
    cr_assert_str_eq(name_of(rows, n, "9b-fp16"), "9b-fp16 wgmma FP16, TMA");

    /* --steps 09 alone: cuDNN's two TF32 rows and its two FP16 rows (both
     * APIs), then 9a, 9b, 9c, 9a-fp16 and 9b-fp16 */
    n = bench_rows(&p->params, BENCH_STEP_09, rows, 64);
    cr_assert_eq(n, 4 + HOPPER_ROW_COUNT, "%d rows", n);
    cr_assert_eq(rows[2].cls, CONV_CLASS_FP16, "the FP16 references of 9b-fp16");
    cr_assert_eq(rows[3].cls, CONV_CLASS_FP16, "the FP16 references of 9b-fp16");
    cr_assert_str_eq(rows[3].name, "cuDNN graph FP16");
    cr_assert_str_eq(rows[n - 5].key, "9a");
    cr_assert_str_eq(rows[n - 4].key, "9b");
    cr_assert_str_eq(rows[n - 3].key, "9c");
    cr_assert_str_eq(rows[n - 2].key, "9a-fp16");
    cr_assert_str_eq(rows[n - 1].key, "9b-fp16");
    assert_named_by_key(rows, n, "--steps 09");

    /* The GEMMs alone (06_gemm, 08_gemm, 09_gemm). */
    const conv_params g = gemm_as_conv_params(64, 48, 32);
    n = conv_gemm_rows(&g, NULL, rows, 64);
    assert_named_by_key(rows, n, "06_gemm");
    cr_assert_str_eq(name_of(rows, n, "6b"), "6b GEMM shared 32x32");
    cr_assert_str_eq(name_of(rows, n, "cublas"), "cuBLAS SGEMM");
    n = conv_tc_gemm_rows(&g, NULL, rows, 64);
    assert_named_by_key(rows, n, "08_gemm");
    cr_assert_str_eq(name_of(rows, n, "cublas-tf32"), "cuBLAS TF32");
    cr_assert_str_eq(name_of(rows, n, "8c"), "8c mma.sync 3xTF32");
    n = conv_hopper_gemm_rows(&g, NULL, rows, 64);
    assert_named_by_key(rows, n, "09_gemm");
    cr_assert_eq(n, 2 + HOPPER_ROW_COUNT, "%d rows", n);
    cr_assert_str_eq(name_of(rows, n, "cublas-tf32"), "cuBLAS TF32");
    cr_assert_str_eq(name_of(rows, n, "8b"), "8b mma.sync TF32");
    cr_assert_str_eq(name_of(rows, n, "9b"), "9b wgmma TF32, TMA");
}
