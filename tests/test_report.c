/* common/conv_report: the text table, the CSV and the JSON written from the
 * same rows, with the same column names and statuses; files that cannot be
 * written are reported before any work, a failed write when they close. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_report.h"
#include "conv_test_support.h"

/* 1 x 1 x 40000 x 25000 with a 1x1 filter: exactly 2 GFLOP, so a row of 2 ms
 * runs at 1000 GFLOP/s; 8e9 + 4 bytes at least. */
static conv_params two_gflop(void)
{
    return conv_shape(1, 1, 40000, 25000, 1, 1, 1, 0, 1, 1);
}

/* A row as conv_rows_run leaves it. */
static conv_row row(const char *name, conv_row_state state, double ms, const char *text)
{
    conv_row r = conv_row_device(name, NULL, conv_test_device_zeros, NULL);
    r.state = state;
    if (state == CONV_ROW_OK || state == CONV_ROW_FAILED) {
        r.res.timing.median_ms = ms;
        r.res.timing.min_ms = 0.75 * ms; /* the spread of the timed runs */
        r.res.timing.max_ms = 1.5 * ms;
        r.res.passed = state == CONV_ROW_OK;
        snprintf(r.res.verdict, sizeof r.res.verdict, "%s", text);
    } else {
        snprintf(r.why, sizeof r.why, "%s", text);
    }
    return r;
}

/* The table every test writes: a reference, a passed row, a skipped one, a
 * failed one and an error. */
enum { N_ROWS = 5 };
static void make_rows(conv_row *r)
{
    r[0] = row("cuDNN", CONV_ROW_OK, 4.0, "OK (10 checked)");
    snprintf(r[0].label, sizeof r[0].label, "cuDNN (GEMM)");
    r[0].ref = 0;
    r[1] = row("kernel a", CONV_ROW_OK, 2.0, "OK (1, 2 \"checked\")");
    r[2] = row("kernel b", CONV_ROW_SKIPPED, 0.0, "skipped: not built");
    r[3] = row("kernel c", CONV_ROW_FAILED, 8.0, "FAILED: 3 of 10 mismatch");
    r[4] = row("kernel d", CONV_ROW_ERROR, 0.0, "error: cudaMalloc failed at x.c:1: out of memory");
}

static const double ref_ms[CONV_MAX_REFS] = {4.0, 0.0};

static conv_report two_refs(void)
{
    conv_report r = {.n_refs = 2, .ref_names = {"cuDNN", "step 02"}};
    return r;
}

/* Writes a whole report (begin, one problem, close) to the files; the text
 * table goes to /dev/null. */
static void write_report(conv_report *r, const char *csv, const char *json,
                         const conv_device_info *info, double d2d_gbps, int argc, char **argv)
{
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_report_open(r, csv, json, &msg), msg);
    conv_report_begin(r, info, d2d_gbps, argc, argv);
    conv_row rows[N_ROWS];
    make_rows(rows);
    conv_params p = two_gflop();
    FILE *sink = fopen("/dev/null", "w");
    conv_report_problem(r, sink, "", &p, rows, N_ROWS, ref_ms, 1000.0);
    fclose(sink);
    CONV_ASSERT_OK(conv_report_close(r, &msg), msg);
}

/* The lines of a file that are not comments, and the comments, each counted. */
static int data_lines(const char *text, char lines[][512], int max, int *comments)
{
    int n = 0;
    *comments = 0;
    for (const char *at = text; *at != '\0';) {
        size_t len = strcspn(at, "\n");
        if (at[0] == '#')
            ++*comments;
        else if (n < max)
            snprintf(lines[n++], 512, "%.*s", (int)len, at);
        at += len + (at[len] == '\n');
    }
    return n;
}

/* The fields of one CSV line (quotes removed), separated in place. */
static int csv_fields(char *line, char **fields, int max)
{
    int n = 0;
    char *out = line;
    for (char *at = line;; ++at) {
        if (n < max)
            fields[n] = out;
        int quoted = *at == '"';
        if (quoted)
            for (++at; *at != '"' && *at != '\0'; ++at)
                *out++ = *at;
        else
            for (; *at != ',' && *at != '\0'; ++at)
                *out++ = *at;
        if (quoted && *at == '"')
            ++at;
        ++n;
        char end = *at;
        *out++ = '\0';
        if (end != ',')
            return n;
    }
}

Test(report, reference_keys_replace_spaces_and_commas)
{
    char key[64];
    conv_report_ref_key("cuDNN", key, sizeof key);
    cr_assert_str_eq(key, "vs_cuDNN");
    conv_report_ref_key("naive GPU", key, sizeof key);
    cr_assert_str_eq(key, "vs_naive_GPU");
    conv_report_ref_key("step 02, tiled", key, sizeof key);
    cr_assert_str_eq(key, "vs_step_02__tiled");
    char small[6];
    conv_report_ref_key("a b c d", small, sizeof small);
    cr_assert_str_eq(small, "vs_a_");
}

Test(report, csv_has_metadata_a_header_and_one_line_per_row)
{
    char path[256];
    conv_test_temp_path(path, sizeof path, ".csv");
    conv_report r = two_refs();
    char *argv[] = {"/some/build/bin/prog", "--h", "7"};
    write_report(&r, path, NULL, NULL, 0.0, 3, argv);
    char *text = conv_test_read_file(path);
    cr_assert_not_null(text);
    remove(path);
    char lines[8][512];
    int comments = 0;
    int n = data_lines(text, lines, 8, &comments);
    cr_assert_eq(comments, 3,
                 "host, date and command lines (no gpu line without device "
                 "info, no d2d line without a bandwidth):\n%s",
                 text);
    cr_assert(strncmp(text, "# host: ", 8) == 0, "%s", text);
    cr_assert(strstr(text, "\n# date: ") != NULL, "%s", text);
    cr_assert(strstr(text, "\n# command: prog --h 7\n") != NULL, "%s", text);
    cr_assert_eq(n, 1 + N_ROWS, "%s", text);
    cr_assert_str_eq(
        lines[0],
        "version,class,median_ms,min_ms,max_ms,gflops,pct_peak,vs_cuDNN,vs_step_02,ref_cuDNN,"
        "status,verdict");
    cr_assert_str_eq(lines[1],
                     "\"cuDNN (GEMM)\",FP32,4.000000,3.000000,6.000000,500.000,50.0,1.0000,,"
                     "\"cuDNN (GEMM)\",ok,\"OK (10 checked)\"");
    cr_assert_str_eq(lines[2],
                     "\"kernel a\",FP32,2.000000,1.500000,3.000000,1000.000,100.0,2.0000,,"
                     "\"cuDNN (GEMM)\",ok,\"OK (1, 2 'checked')\"");
    cr_assert_str_eq(lines[3], "\"kernel b\",FP32,,,,,,,,,skipped,\"skipped: not built\"");
    cr_assert_str_eq(lines[4], "\"kernel c\",FP32,8.000000,6.000000,12.000000,250.000,25.0,0.5000,,"
                               "\"cuDNN (GEMM)\",failed,\"FAILED: 3 of 10 mismatch\"");
    cr_assert_str_eq(lines[5], "\"kernel d\",FP32,,,,,,,,,error,"
                               "\"error: cudaMalloc failed at x.c:1: out of memory\"");
    for (int i = 1; i < n; ++i) {
        char *fields[16];
        cr_assert_eq(csv_fields(lines[i], fields, 16), 12, "line %d: as many fields as the header",
                     i);
    }
    free(text);
}

Test(report, csv_names_the_gpu_and_the_copy_bandwidth_when_there_are_some)
{
    char path[256];
    conv_test_temp_path(path, sizeof path, ".csv");
    conv_device_info info = conv_test_gpu_info();
    conv_report r = two_refs();
    char *argv[] = {"prog"};
    write_report(&r, path, NULL, &info, 2500.0, 1, argv);
    char *text = conv_test_read_file(path);
    cr_assert_not_null(text);
    remove(path);
    cr_assert(strncmp(text, "# gpu: Test GPU, 132 SMs, 1980 MHz, FP32 peak 66.9 TFLOP/s, driver ",
                      66) == 0,
              "%s", text);
    cr_assert(strstr(text, "\n# d2d_gbps: 2500.0\n") != NULL, "%s", text);
    free(text);
}

Test(report, bandwidth_and_problem_columns_appear_when_asked)
{
    char path[256];
    conv_test_temp_path(path, sizeof path, ".csv");
    conv_report r = {.n_refs = 0, .bandwidth_column = 1, .problem_column = 1};
    char *argv[] = {"prog"};
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_report_open(&r, path, NULL, &msg), msg);
    conv_report_begin(&r, NULL, 0.0, 1, argv);
    conv_row rows[N_ROWS];
    make_rows(rows);
    conv_params p = two_gflop();
    FILE *sink = fopen("/dev/null", "w");
    conv_report_problem(&r, sink, "resnet50 conv2", &p, rows + 1, 2, ref_ms, 0.0);
    conv_report_problem(&r, sink, "vgg conv1", &p, rows + 3, 1, ref_ms, 0.0);
    fclose(sink);
    CONV_ASSERT_OK(conv_report_close(&r, &msg), msg);
    char *text = conv_test_read_file(path);
    cr_assert_not_null(text);
    remove(path);
    char lines[8][512];
    int comments;
    int n = data_lines(text, lines, 8, &comments);
    cr_assert_eq(n, 4, "one header for both problems:\n%s", text);
    cr_assert_str_eq(
        lines[0],
        "problem,version,class,median_ms,min_ms,max_ms,gflops,pct_peak,gbps,status,verdict");
    cr_assert_str_eq(
        lines[1],
        "\"resnet50 conv2\",\"kernel a\",FP32,2.000000,1.500000,3.000000,1000.000,,4000.00,ok,"
        "\"OK (1, 2 'checked')\"",
        "no peak: no % of it");
    cr_assert_str_eq(lines[2], "\"resnet50 conv2\",\"kernel b\",FP32,,,,,,,skipped,"
                               "\"skipped: not built\"");
    cr_assert_str_eq(
        lines[3],
        "\"vgg conv1\",\"kernel c\",FP32,8.000000,6.000000,12.000000,250.000,,1000.00,failed,"
        "\"FAILED: 3 of 10 mismatch\"");
    free(text);
}

/* The string values of every "key": "..." in text, in order, space-separated. */
static void json_values(const char *text, const char *key, char *out, size_t len)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": \"", key);
    out[0] = '\0';
    for (const char *at = strstr(text, pattern); at != NULL; at = strstr(at + 1, pattern)) {
        const char *v = at + strlen(pattern);
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%.*s", used ? " " : "", (int)strcspn(v, "\""), v);
    }
}

Test(report, json_is_valid_and_uses_the_csv_keys_and_statuses)
{
    char csv[256], json[256];
    conv_test_temp_path(csv, sizeof csv, ".csv");
    conv_test_temp_path(json, sizeof json, ".json");
    conv_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.name, sizeof info.name, "Test \"GPU\" \\ 1");
    info.peak_fp32_gflops = 1000.0;
    conv_report r = two_refs();
    char *argv[] = {"/bin/prog", "--csv", "a \"quoted\" name.csv"};
    write_report(&r, csv, json, &info, 0.0, 3, argv);
    char *csv_text = conv_test_read_file(csv), *text = conv_test_read_file(json);
    cr_assert(csv_text != NULL && text != NULL);
    remove(csv);
    remove(json);
    size_t where = 0;
    cr_assert(conv_test_json_valid(text, &where), "invalid JSON at offset %zu: ...%.40s\n%s", where,
              text + where, text);
    /* the structure (conv_report.h) */
    const char *keys[] = {"\"gpu\": \"Test \\\"GPU\\\" \\\\ 1\"",
                          "\"versions\": \"driver ",
                          "\"peak_fp32_gflops\": 1000",
                          "\"d2d_gbps\": null",
                          "\"host\": ",
                          "\"date\": ",
                          "\"command\": [\"prog\", \"--csv\", \"a \\\"quoted\\\" name.csv\"]",
                          "\"problems\": [",
                          "{\"name\": \"\", \"shape\": \"N=1 C=1 H=40000 W=25000 ",
                          "\"gflop\": 2, \"min_bytes\": 8e+09",
                          "\"rows\": ["};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
        cr_assert(strstr(text, keys[i]) != NULL, "no %s in\n%s", keys[i], text);
    cr_assert(strstr(text, "{\"version\": \"kernel a\", \"class\": \"FP32\", \"median_ms\": 2, "
                           "\"min_ms\": 1.5, \"max_ms\": "
                           "3, \"gflops\": 1000, "
                           "\"gbps\": 4000, \"vs_cuDNN\": 2, \"vs_step_02\": null, "
                           "\"ref_cuDNN\": \"cuDNN (GEMM)\", \"status\": \"ok\", \"verdict\": \"OK "
                           "(1, 2 \\\"checked\\\")\"}") != NULL,
              "%s", text);
    cr_assert(
        strstr(
            text,
            "{\"version\": \"kernel b\", \"class\": \"FP32\", \"median_ms\": null, \"min_ms\": "
            "null, "
            "\"max_ms\": null, \"gflops\": null, "
            "\"gbps\": null, \"vs_cuDNN\": null, \"vs_step_02\": null, "
            "\"ref_cuDNN\": null, \"status\": \"skipped\", \"verdict\": \"skipped: not built\"}") !=
            NULL,
        "%s", text);

    /* the CSV's vs_ columns are JSON keys of every row */
    char lines[8][512];
    int comments;
    int n = data_lines(csv_text, lines, 8, &comments);
    char *header[16];
    int columns = csv_fields(lines[0], header, 16);
    int refs = 0;
    for (int i = 0; i < columns; ++i)
        if (strncmp(header[i], "vs_", 3) == 0) {
            char key[64];
            snprintf(key, sizeof key, "\"%s\": ", header[i]);
            int count = 0;
            for (const char *at = strstr(text, key); at != NULL; at = strstr(at + 1, key))
                ++count;
            cr_assert_eq(count, N_ROWS, "%s in %d JSON rows", key, count);
            ++refs;
        }
    cr_assert_eq(refs, 2);
    /* and the same status per row, in the same order */
    char csv_status[128] = "", json_status[128];
    for (int i = 1; i < n; ++i) {
        char *fields[16];
        cr_assert_eq(csv_fields(lines[i], fields, 16), columns);
        size_t used = strlen(csv_status);
        snprintf(csv_status + used, sizeof csv_status - used, "%s%s", used ? " " : "",
                 fields[columns - 2]);
    }
    json_values(text, "status", json_status, sizeof json_status);
    cr_assert_str_eq(csv_status, "ok ok skipped failed error");
    cr_assert_str_eq(json_status, csv_status);
    free(csv_text);
    free(text);
}

/* A report with no device and no problems, begun on the JSON file it names
 * in json (a temporary path). */
static void begin_empty_json(conv_report *r, char *json, size_t len)
{
    static char *argv[] = {"prog"};
    conv_msg msg = {{0}};
    conv_test_temp_path(json, len, ".json");
    CONV_ASSERT_OK(conv_report_open(r, NULL, json, &msg), msg);
    conv_report_begin(r, NULL, 0.0, 1, argv);
}

/* Closes r and returns its JSON file's text (the caller frees it), checked
 * to be valid JSON; the file is removed. */
static char *close_and_read_json(conv_report *r, const char *json)
{
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_report_close(r, &msg), msg);
    char *text = conv_test_read_file(json);
    cr_assert_not_null(text);
    remove(json);
    size_t where = 0;
    cr_assert(conv_test_json_valid(text, &where), "invalid JSON at offset %zu:\n%s", where, text);
    return text;
}

Test(report, json_without_a_device_or_problems_is_still_valid)
{
    char json[256];
    conv_report r = {0};
    begin_empty_json(&r, json, sizeof json);
    char *text = close_and_read_json(&r, json);
    cr_assert(strstr(text, "\"gpu\": null") && strstr(text, "\"versions\": null"), "%s", text);
    cr_assert(strstr(text, "\"problems\": [\n  ]") != NULL, "%s", text);
    free(text);
}

Test(report, a_program_adds_its_own_members_after_the_problems)
{
    char json[256];
    conv_report r = {0};
    begin_empty_json(&r, json, sizeof json);
    FILE *f = conv_report_json_members(&r);
    cr_assert_not_null(f);
    fprintf(f, ",\n  \"summary\": [1, 2]");
    cr_assert_eq(conv_report_json_members(&r), f, "asked twice, the list is closed once");
    char *text = close_and_read_json(&r, json);
    cr_assert(strstr(text, "\"problems\": [\n  ],\n  \"summary\": [1, 2]\n}\n") != NULL, "%s",
              text);
    free(text);
    conv_report none = {0};
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_report_open(&none, NULL, NULL, &msg), msg);
    cr_assert_null(conv_report_json_members(&none), "no --json file: nothing to write to");
    CONV_ASSERT_OK(conv_report_close(&none, &msg), msg);
}

Test(report, a_file_that_cannot_be_written_is_an_error_naming_it)
{
    conv_report r = {0};
    conv_msg msg = {{0}};
    cr_assert_eq(conv_report_open(&r, "/nonexistent-dir/x.csv", NULL, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "cannot write --csv file '/nonexistent-dir/x.csv'");
    cr_assert_null(r.csv);
    cr_assert_eq(conv_report_open(&r, NULL, "/nonexistent-dir/x.json", &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "cannot write --json file '/nonexistent-dir/x.json'");
    cr_assert_null(r.json);
    char csv[256];
    conv_test_temp_path(csv, sizeof csv, ".csv");
    cr_assert_eq(conv_report_open(&r, csv, "/nonexistent-dir/x.json", &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "'/nonexistent-dir/x.json'");
    cr_assert(r.csv == NULL && r.json == NULL, "the CSV is closed again");
    remove(csv);
    CONV_ASSERT_OK(conv_report_close(&r, &msg), msg); /* nothing open: nothing to do */
}

Test(report, a_write_that_fails_is_reported_when_the_file_closes)
{
    const char *full = "/dev/full"; /* every write fails: no space left */
    FILE *probe = fopen(full, "w");
    if (probe == NULL)
        cr_skip_test("no %s on this system", full);
    fclose(probe);
    conv_report r = two_refs();
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_report_open(&r, full, NULL, &msg), msg);
    char *argv[] = {"prog"};
    conv_report_begin(&r, NULL, 0.0, 1, argv);
    conv_row rows[N_ROWS];
    make_rows(rows);
    conv_params p = two_gflop();
    FILE *sink = fopen("/dev/null", "w");
    conv_report_problem(&r, sink, "", &p, rows, N_ROWS, ref_ms, 1000.0);
    fclose(sink);
    cr_assert_eq(conv_report_close(&r, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "writing --csv file '/dev/full' failed");
    cr_assert_null(r.csv);
}

/* The column where `word` ends in the header line. */
static int end_of(const char *header, const char *word)
{
    const char *at = strstr(header, word);
    cr_assert_not_null(at, "no '%s' in '%s'", word, header);
    return (int)(at - header + strlen(word));
}

Test(report, the_text_table_right_aligns_numbers_under_their_headings)
{
    conv_report r = two_refs();
    r.bandwidth_column = 1;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    conv_row rows[N_ROWS];
    make_rows(rows);
    conv_params p = two_gflop();
    conv_report_problem(&r, out, "", &p, rows, N_ROWS, ref_ms, 1000.0);
    fclose(out);
    char lines[8][512];
    int comments;
    int n = data_lines(text, lines, 8, &comments);
    cr_assert_eq(n, 1 + N_ROWS, "a header and one line per row, in order:\n%s", text);
    const char *header = lines[0];
    const char *headings[] = {"median ms", "GFLOP/s", "% peak", "GB/s", "vs cuDNN", "vs step 02"};
    int prev = 0;
    for (size_t h = 0; h < sizeof headings / sizeof headings[0]; ++h) {
        int end = end_of(header, headings[h]);
        cr_assert_gt(end, prev, "'%s' in order", headings[h]);
        prev = end;
        for (int i = 1; i < n; ++i)
            cr_assert(lines[i][end - 1] != ' ' && lines[i][end] == ' ',
                      "row %d: column '%s' ends at %d:\n%s\n%s", i, headings[h], end, header,
                      lines[i]);
    }
    cr_assert(strncmp(header, "version", 7) == 0, "%s", header);
    int verdict = (int)(strstr(header, "verdict") - header);
    const char *expect[][3] = {
        {"cuDNN (GEMM)", "   4.0000      500.0    50.0   2000.0       1.00x           -  ",
         "OK (10 checked)"},
        {"kernel a", "   2.0000     1000.0   100.0   4000.0       2.00x           -  ",
         "OK (1, 2 \"checked\")"},
        {"kernel b", "        -          -       -        -           -           -  ",
         "skipped: not built"},
        {"kernel c", "   8.0000      250.0    25.0   1000.0       0.50x           -  ",
         "FAILED: 3 of 10 mismatch"},
        {"kernel d", "        -          -       -        -           -           -  ",
         "error: cudaMalloc failed at x.c:1: out of memory"},
    };
    for (int i = 1; i < n; ++i) {
        cr_assert(strncmp(lines[i], expect[i - 1][0], strlen(expect[i - 1][0])) == 0, "%s",
                  lines[i]);
        cr_assert(strstr(lines[i], expect[i - 1][1]) != NULL, "row %d numbers:\n%s\n%s", i, header,
                  lines[i]);
        cr_assert_str_eq(lines[i] + verdict, expect[i - 1][2], "the verdict under its heading");
    }
    free(text);
}
