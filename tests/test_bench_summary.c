/* bench/bench_summary: the summary of a model run, on rows written here with
 * the states and times a run would leave (no GPU needed): which rows are
 * ours, the fastest of each class per layer, conv2d_auto's row beside them,
 * the totals weighed by the layers' counts and their ratios, the totals as
 * JSON, and "-" where a class has nothing verified. */
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

/* conv2d_auto's row of a class, as library/auto_rows.c makes it, verified,
 * its verdict naming the kernel it chose. */
static conv_row auto_ran(conv_class cls, double ms, const char *chose)
{
    conv_row row = conv_row_device(cls == CONV_CLASS_TF32 ? "auto TF32" : "auto FP32",
                                   cls == CONV_CLASS_TF32 ? "auto-tf32" : "auto",
                                   conv_test_device_zeros, NULL);
    row = ran(row, cls, ms, 1);
    snprintf(row.res.verdict, sizeof row.res.verdict, "ok; chose %s: the rule's reason", chose);
    return row;
}

/* The summary printed to a string (free it). */
/* A layer measured in FP32 and added to s `count` times: one row of ours
 * (`name`, ours_ms), cuDNN (cudnn_ms) and, unless `chose` is NULL (it did not
 * run there), conv2d_auto (auto_ms, choosing `chose`). */
static void add_fp32_layer(bench_summary *s, const char *layer, int count, const char *name,
                           double ours_ms, double cudnn_ms, double auto_ms, const char *chose)
{
    conv_row rows[3] = {ran(device(name), CONV_CLASS_FP32, ours_ms, 1),
                        ran(conv_row_cudnn(), CONV_CLASS_FP32, cudnn_ms, 1)};
    if (chose != NULL)
        rows[2] = auto_ran(CONV_CLASS_FP32, auto_ms, chose);
    bench_summary_add(s, layer, count, rows, chose != NULL ? 3 : 2);
}

static char *printed(const bench_summary *s)
{
    char path[256];
    conv_test_temp_path(path, sizeof path, ".txt");
    FILE *out = fopen(path, "w");
    cr_assert_not_null(out);
    bench_summary_print(s, "resnet50, n=2, nhwc", out);
    fclose(out);
    char *text = conv_test_read_file(path);
    remove(path);
    cr_assert_not_null(text);
    return text;
}

/* The line of `layer` in the table of class `cls` (up to its end). */
static const char *line_of(const char *text, const char *cls, const char *layer)
{
    char head[32], name[64];
    snprintf(head, sizeof head, "\n%s ", cls);
    snprintf(name, sizeof name, "\n%s ", layer);
    const char *table = strstr(text, head);
    cr_assert_not_null(table, "no %s table:\n%s", cls, text);
    const char *line = strstr(table + 1, name);
    cr_assert_not_null(line, "no line %s in %s:\n%s", layer, cls, text);
    return line + 1;
}

/* 1 when `what` starts between from and to. */
static int between(const char *from, const char *to, const char *what)
{
    const char *at = strstr(from, what);
    return at != NULL && at < to;
}

/* 1 when the line (up to its newline) holds `what`. */
static int line_has(const char *line, const char *what)
{
    const char *end = strchr(line, '\n');
    const char *at = strstr(line, what);
    return at != NULL && (end == NULL || at < end);
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
        {auto_ran(CONV_CLASS_FP32, 1.0, "6f"), 0},
        {auto_ran(CONV_CLASS_TF32, 1.0, "8b"), 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i) {
        cr_assert_eq(bench_row_is_ours(&t[i].row), t[i].ours, "%s", t[i].row.name);
        cr_assert_eq(bench_row_is_auto(&t[i].row), strncmp(t[i].row.name, "auto", 4) == 0, "%s",
                     t[i].row.name);
    }
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

Test(bench_summary, auto_row_of_a_class_stands_in_that_class_alone_labelled_with_its_choice)
{
    conv_row rows[] = {
        ran(device("6f implicit GEMM"), CONV_CLASS_FP32, 1.5, 1),
        ran(device("8b mma.sync TF32"), CONV_CLASS_TF32, 0.5, 1),
        auto_ran(CONV_CLASS_FP32, 1.6, "6f"),
        auto_ran(CONV_CLASS_TF32, 0.55, "8b"),
        ran(conv_row_cudnn(), CONV_CLASS_FP32, 1.2, 1),
    };
    bench_summary s;
    memset(&s, 0, sizeof s);
    bench_summary_add(&s, "layer1.0.conv2", 3, rows, (int)(sizeof rows / sizeof rows[0]));
    const bench_layer_best *l = &s.layers[0];
    cr_assert_float_eq(l->auto_row[CONV_CLASS_FP32].ms, 1.6, 1e-12);
    cr_assert_str_eq(l->auto_row[CONV_CLASS_FP32].label, "6f");
    cr_assert_float_eq(l->auto_row[CONV_CLASS_TF32].ms, 0.55, 1e-12);
    cr_assert_str_eq(l->auto_row[CONV_CLASS_TF32].label, "8b");
    cr_assert_eq(l->auto_row[CONV_CLASS_FP16].ms, 0.0);
    cr_assert_float_eq(l->ours[CONV_CLASS_FP32].ms, 1.5, 1e-12, "auto is not one of ours");
    cr_assert_float_eq(l->ours[CONV_CLASS_TF32].ms, 0.5, 1e-12);

    /* Only the FP32 auto row: TF32's column stays empty, though FP32's rows of
     * ours count in TF32 (conv2d_auto asked for TF32 is another call). */
    conv_row fp32_only[] = {ran(device("6f implicit GEMM"), CONV_CLASS_FP32, 1.5, 1),
                            auto_ran(CONV_CLASS_FP32, 1.0, "6f")};
    bench_summary_add(&s, "b", 1, fp32_only, 2);
    cr_assert_float_eq(s.layers[1].auto_row[CONV_CLASS_FP32].ms, 1.0, 1e-12);
    cr_assert_eq(s.layers[1].auto_row[CONV_CLASS_TF32].ms, 0.0);
    cr_assert_float_eq(s.layers[1].ours[CONV_CLASS_TF32].ms, 1.5, 1e-12);

    /* A failed auto row is not a result; without a verdict naming a kernel,
     * the row's name is the label. */
    conv_row failed = auto_ran(CONV_CLASS_TF32, 0.1, "8b");
    failed.state = CONV_ROW_FAILED;
    conv_row unnamed = auto_ran(CONV_CLASS_FP32, 2.0, "6f");
    snprintf(unnamed.res.verdict, sizeof unnamed.res.verdict, "ok");
    conv_row c[] = {failed, unnamed};
    bench_summary_add(&s, "c", 1, c, 2);
    cr_assert_eq(s.layers[2].auto_row[CONV_CLASS_TF32].ms, 0.0);
    cr_assert_str_eq(s.layers[2].auto_row[CONV_CLASS_FP32].label, "auto FP32");
}

Test(bench_summary, auto_totals_and_ratios_against_ours_and_cudnn_over_the_same_layers)
{
    /* a: 4x, auto picks the fastest of ours; b: 1x, auto 10% slower. */
    bench_summary s;
    memset(&s, 0, sizeof s);
    add_fp32_layer(&s, "a", 4, "6f implicit GEMM", 2.0, 3.0, 2.0, "6f");
    add_fp32_layer(&s, "b", 1, "7b F(4x4,3x3)", 1.0, 0.5, 1.1, "6f");
    bench_total t = bench_summary_total(&s, CONV_CLASS_FP32);
    const double ours = 4 * 2.0 + 1.0, cudnn = 4 * 3.0 + 0.5, aut = 4 * 2.0 + 1.1;
    cr_assert_float_eq(t.auto_ms, aut, 1e-12);
    cr_assert(t.auto_layers == 2 && t.ours_layers == 2 && t.cudnn_layers == 2);
    cr_assert_float_eq(t.auto_vs_ours, ours / aut, 1e-12);
    cr_assert_float_eq(t.auto_vs_cudnn, cudnn / aut, 1e-12);
    cr_assert_float_eq(t.ratio, cudnn / ours, 1e-12);
    cr_assert(t.auto_vs_ours >= 1.0 / 1.05, "within 5%% of the fastest of ours: %f",
              t.auto_vs_ours);
    bench_total tf32 = bench_summary_total(&s, CONV_CLASS_TF32);
    cr_assert(tf32.ours_layers == 2 && tf32.auto_layers == 0 && tf32.auto_ms == 0.0 &&
                  tf32.auto_vs_ours == 0.0 && tf32.auto_vs_cudnn == 0.0,
              "no TF32 auto row: no TF32 auto total, though ours has one");

    /* A layer where conv2d_auto did not run: its total covers fewer layers,
     * and no ratio compares it with totals over more. */
    add_fp32_layer(&s, "c", 2, "6f implicit GEMM", 5.0, 5.0, 0.0, NULL);
    t = bench_summary_total(&s, CONV_CLASS_FP32);
    cr_assert_float_eq(t.auto_ms, aut, 1e-12, "the layer without auto adds nothing");
    cr_assert(t.auto_layers == 2 && t.ours_layers == 3 && t.convolutions == 7);
    cr_assert(t.auto_vs_ours == 0.0 && t.auto_vs_cudnn == 0.0, "no ratio of unequal work");
    cr_assert_float_eq(t.ratio, (cudnn + 10.0) / (ours + 10.0), 1e-12);
}

Test(bench_summary, prints_the_auto_column_its_totals_and_dashes_where_auto_did_not_run)
{
    bench_summary s;
    memset(&s, 0, sizeof s);
    add_fp32_layer(&s, "layer1.0.conv1", 2, "6f implicit GEMM", 2.0, 1.0, 2.5, "7b");
    add_fp32_layer(&s, "layer1.0.conv2", 3, "6f implicit GEMM", 3.0, 6.0, 0.0, NULL);
    char *text = printed(&s);
    cr_assert(strstr(text, "auto (chose)") != NULL && strstr(text, "vs ours") != NULL &&
                  strstr(text, "vs cuDNN") != NULL,
              "the auto columns' heads:\n%s", text);
    const char *line = line_of(text, "FP32", "layer1.0.conv1");
    /* ours 2.0, cuDNN 1.0 (0.50x), auto 7b 2.5: vs ours 2.0 / 2.5, vs cuDNN 1.0 / 2.5 */
    cr_assert(line_has(line, " 7b ") && line_has(line, "2.5000") && line_has(line, "0.80x") &&
                  line_has(line, "0.40x") && line_has(line, "0.50x"),
              "%s", text);
    line = line_of(text, "FP32", "layer1.0.conv2");
    cr_assert(line_has(line, "2.00x"), "ours vs cuDNN still shown:\n%s", text);
    /* after cuDNN's ratio: auto's choice, ms, vs ours and vs cuDNN, each "-" */
    const char *auto_cells = strstr(line, "2.00x") + strlen("2.00x");
    int dashes = 0;
    for (const char *c = auto_cells; *c != '\n' && *c != '\0'; ++c) {
        cr_assert(*c == ' ' || *c == '-', "no auto row: dashes only:\n%s", text);
        dashes += *c == '-';
    }
    cr_assert_eq(dashes, 4, "no auto row: four dashes:\n%s", text);
    line = line_of(text, "FP32", "total (count x ms)");
    cr_assert(line_has(line, "2 of 2 layers") && line_has(line, "1 of 2 layers") &&
                  line_has(line, "5.0000"),
              "auto's total names the layers it covers (1 of 2), its ms 2 x 2.5:\n%s", text);
    cr_assert(strstr(text, "auto: ") == NULL, "no auto line over unequal layers:\n%s", text);
    /* TF32: ours (FP32 rows) and cuDNN, no auto row of TF32. */
    line = line_of(text, "TF32", "total (count x ms)");
    cr_assert(line_has(line, "0 of 2 layers"), "%s", text);
    free(text);

    /* auto on both layers: the line that measures it against the target */
    s.n_layers = 1;
    add_fp32_layer(&s, "layer1.0.conv2", 3, "6f implicit GEMM", 3.0, 6.0, 3.0, "6f");
    text = printed(&s);
    /* ours 2 x 2.0 + 3 x 3.0 = 13, auto 2 x 2.5 + 3 x 3.0 = 14: 1.077x, +7.7% */
    line = line_of(text, "FP32", "total (count x ms)");
    cr_assert(line_has(line, "2 of 2 layers") && line_has(line, "14.0000") &&
                  line_has(line, "0.93x"),
              "ours 13 over auto 14:\n%s", text);
    cr_assert(strstr(text, "auto: 1.077x the time of the fastest of ours per layer (+7.7%)") !=
                  NULL,
              "%s", text);
    free(text);
}

Test(bench_summary, writes_the_totals_as_json_with_null_where_nothing_ran)
{
    bench_summary s;
    memset(&s, 0, sizeof s);
    add_fp32_layer(&s, "layer1.0.conv1", 2, "6f implicit GEMM", 2.0, 1.0, 2.5, "7b");
    char path[256];
    conv_test_temp_path(path, sizeof path, ".json");
    FILE *out = fopen(path, "w");
    cr_assert_not_null(out);
    bench_summary_json(&s, CONV_PASS_FORWARD, 4, out);
    fclose(out);
    char *text = conv_test_read_file(path);
    remove(path);
    const char *head = "{\"pass\": \"forward\", \"layers\": 1, \"convolutions\": 2, ";
    cr_assert(strncmp(text, head, strlen(head)) == 0, "%s", text);
    const char *fp32 = strstr(text, "{\"class\": \"FP32\"");
    const char *tf32 = strstr(text, "{\"class\": \"TF32\"");
    const char *fp16 = strstr(text, "{\"class\": \"FP16\"");
    cr_assert(fp32 != NULL && tf32 != NULL && fp16 != NULL && fp32 < tf32 && tf32 < fp16, "%s",
              text);
    cr_assert(between(fp32, tf32,
                      "\"ours_ms\": 4, \"ours_layers\": 1, \"cudnn_ms\": 2, \"cudnn_layers\": 1, "
                      "\"auto_ms\": 5, \"auto_layers\": 1"),
              "%s", text);
    cr_assert(between(fp32, tf32, "\"ratio\": 0.5, \"auto_vs_ours\": 0.8, \"auto_vs_cudnn\": 0.4}"),
              "%s", text);
    cr_assert(between(tf32, fp16, "\"auto_ms\": null, \"auto_layers\": 0") &&
                  between(tf32, fp16, "\"auto_vs_ours\": null, \"auto_vs_cudnn\": null}"),
              "%s", text);
    cr_assert(strstr(fp16, "\"ours_ms\": null") != NULL, "%s", text);
    size_t len = strlen(text);
    cr_assert(len > 2 && strcmp(text + len - 2, "]}") == 0, "ends with the object: %s", text);
    free(text);
}
