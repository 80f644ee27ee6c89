/* bench/bench_summary: the summary of a model run, on rows written here with
 * the states and times a run would leave (no GPU needed): which rows are
 * ours, the fastest of each class per layer, the totals weighed by the
 * layers' counts, and "-" where a class has nothing verified. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_summary.h"
#include "conv_test_support.h"

/* A row of that class that ran, verified (ok) or not, in ms. */
static conv_row ran(conv_row row, conv_class cls, double ms, int ok)
{
    row.cls = cls;
    row.state = ok ? CONV_ROW_OK : CONV_ROW_FAILED;
    row.res.timing.median_ms = ms;
    snprintf(row.label, sizeof row.label, "%s", row.name);
    return row;
}

static conv_row device(const char *name)
{
    return conv_row_device(name, NULL, conv_test_device_zeros, NULL);
}

Test(bench_summary, ours_are_kernels_of_steps_02_to_08_not_references_libraries_or_the_cpu)
{
    conv_row naive_ref = device("2a naive grid-stride");
    naive_ref.ref = 2;
    conv_row copy = conv_row_copy();
    const struct {
        conv_row row;
        int ours;
    } t[] = {
        {device("5b"), 1},
        {device("8b mma.sync TF32"), 1},
        {naive_ref, 0},
        {conv_row_cudnn(), 0},
        {conv_row_cudnn_tf32(), 0},
        {conv_row_host("1a serial (CPU)", "1a", conv_test_host_reference), 0},
        {device("im2col + cuBLAS SGEMM"), 0},
        {device("cuBLAS TF32"), 0},
        {copy, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i)
        cr_assert_eq(bench_row_is_ours(&t[i].row), t[i].ours, "%s", t[i].row.name);
}

Test(bench_summary, each_layer_keeps_the_fastest_verified_row_of_ours_and_of_cudnn_per_class)
{
    conv_row rows[] = {
        ran(device("5b"), CONV_CLASS_FP32, 2.0, 1),
        ran(device("6f implicit GEMM"), CONV_CLASS_FP32, 1.5, 1),
        ran(device("4a wrong but fast"), CONV_CLASS_FP32, 0.1, 0), /* failed: not counted */
        ran(device("8b mma.sync TF32"), CONV_CLASS_TF32, 0.5, 1),
        ran(device("im2col + cuBLAS SGEMM"), CONV_CLASS_FP32, 0.2, 1), /* not ours */
        ran(conv_row_cudnn(), CONV_CLASS_FP32, 1.2, 1),
        ran(conv_row_cudnn_tf32(), CONV_CLASS_TF32, 0.4, 1),
    };
    rows[5].ref = 3; /* the cuDNN column of the table: still cuDNN's best */
    conv_row skipped = device("7a F(2x2, 3x3)");
    conv_row_skip(&skipped, "3x3 only");
    bench_summary s;
    memset(&s, 0, sizeof s);
    bench_summary_add(&s, "layer1.0.conv2", 3, rows, (int)(sizeof rows / sizeof rows[0]));
    bench_summary_add(&s, "layer1.0.conv1", 1, &skipped, 1);
    cr_assert_eq(s.n_layers, 2);
    const bench_layer_best *l = &s.layers[0];
    cr_assert_str_eq(l->name, "layer1.0.conv2");
    cr_assert_eq(l->count, 3);
    cr_assert_float_eq(l->ours[CONV_CLASS_FP32].ms, 1.5, 1e-12);
    cr_assert_str_eq(l->ours[CONV_CLASS_FP32].label, "6f implicit GEMM");
    cr_assert_float_eq(l->cudnn[CONV_CLASS_FP32].ms, 1.2, 1e-12);
    cr_assert_str_eq(l->ours[CONV_CLASS_TF32].label, "8b mma.sync TF32");
    cr_assert_float_eq(l->cudnn[CONV_CLASS_TF32].ms, 0.4, 1e-12);
    cr_assert_eq(l->ours[CONV_CLASS_FP16].ms, 0.0);
    cr_assert_eq(s.layers[1].ours[CONV_CLASS_FP32].ms, 0.0, "a skipped row is not a result");
}

Test(bench_summary, totals_weigh_layers_by_count_and_compare_only_the_same_layers)
{
    conv_row a[] = {ran(device("5b"), CONV_CLASS_FP32, 2.0, 1),
                    ran(conv_row_cudnn(), CONV_CLASS_FP32, 1.0, 1)};
    conv_row b[] = {ran(device("5b"), CONV_CLASS_FP32, 3.0, 1)};
    bench_summary s;
    memset(&s, 0, sizeof s);
    bench_summary_add(&s, "a", 4, a, 2);
    bench_summary_add(&s, "b", 1, b, 1);
    bench_total t = bench_summary_total(&s, CONV_CLASS_FP32);
    cr_assert_float_eq(t.ours_ms, 4 * 2.0 + 3.0, 1e-12);
    cr_assert_float_eq(t.cudnn_ms, 4 * 1.0, 1e-12);
    cr_assert(t.ours_layers == 2 && t.cudnn_layers == 1 && t.convolutions == 5);
    cr_assert_eq(t.ratio, 0.0, "cuDNN covers fewer layers: no ratio of unequal work");

    conv_row b_cudnn = ran(conv_row_cudnn(), CONV_CLASS_FP32, 6.0, 1);
    s.n_layers = 1;
    conv_row b2[] = {b[0], b_cudnn};
    bench_summary_add(&s, "b", 1, b2, 2);
    t = bench_summary_total(&s, CONV_CLASS_FP32);
    cr_assert_float_eq(t.ratio, (4 * 1.0 + 6.0) / (4 * 2.0 + 3.0), 1e-12);
    bench_total tf32 = bench_summary_total(&s, CONV_CLASS_TF32);
    cr_assert(tf32.ours_layers == 2 && tf32.cudnn_layers == 2 && tf32.ratio == t.ratio,
              "where TF32 is allowed, the FP32 rows stand for it");
    bench_total none = bench_summary_total(&s, CONV_CLASS_FP16);
    cr_assert(none.ours_layers == 0 && none.cudnn_layers == 0 && none.ratio == 0.0);
}

Test(bench_summary, prints_each_class_with_dashes_where_nothing_was_verified)
{
    conv_row a[] = {ran(device("5b"), CONV_CLASS_FP32, 2.0, 1),
                    ran(conv_row_cudnn(), CONV_CLASS_FP32, 1.0, 1)};
    conv_row nothing = conv_row_cudnn_tf32();
    bench_summary s;
    memset(&s, 0, sizeof s);
    bench_summary_add(&s, "layer1.0.conv1", 2, a, 2);
    bench_summary_add(&s, "layer1.0.conv2", 3, &nothing, 1);
    char path[256];
    conv_test_temp_path(path, sizeof path, ".txt");
    FILE *out = fopen(path, "w");
    cr_assert_not_null(out);
    bench_summary_print(&s, "resnet50, n=2, nchw", out);
    fclose(out);
    char *text = conv_test_read_file(path);
    remove(path);
    cr_assert(strstr(text, "== summary: resnet50, n=2, nchw") != NULL, "%s", text);
    for (int c = 0; c < CONV_CLASS_FP16; ++c) {
        char head[32];
        snprintf(head, sizeof head, "\n%s ", conv_class_name((conv_class)c));
        cr_assert(strstr(text, head) != NULL, "no %s table:\n%s", head + 1, text);
    }
    cr_assert(strstr(text, "\nFP16: no verified row of this class") != NULL,
              "a class without rows in one line:\n%s", text);
    const char *fp32 = strstr(text, "\nFP32 ");
    const char *line = strstr(fp32, "\nlayer1.0.conv1 ");
    cr_assert(line != NULL && strstr(line, "5b") != NULL && strstr(line, "0.50x") != NULL, "%s",
              text);
    line = strstr(fp32, "\nlayer1.0.conv2 ");
    cr_assert(line != NULL && strncmp(strstr(line + 1, "\n") - 1, "-", 1) == 0,
              "no ratio without rows: %s", text);
    cr_assert(strstr(fp32, "1 of 2 layers") != NULL, "%s", text);
    free(text);
}
