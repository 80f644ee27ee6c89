/* common/conv_program: the body every program shares, run on a tiny program
 * whose rows are host convolutions written here. Exit status 0 with
 * "verdict: OK", 1 for a wrong row or a missing device, 2 for a command line
 * or a problem the program rejects (before any work, nothing on stdout). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conv_problems.h"
#include "conv_program.h"
#include "conv_test_support.h"

/* How many times a row that is not the reference ran: "before any work"
 * means 0. */
static int row_runs;

/* A direct float convolution, independent of the double reference; with
 * drop_last it forgets the last filter column (the usual loop-bound bug). */
static void direct(const conv_params *p, const float *x, const float *w, float *y, int drop_last)
{
    ++row_runs;
    for (int n = 0; n < p->n; ++n)
        for (int k = 0; k < p->k; ++k)
            for (int oh = 0; oh < conv_out_h(p); ++oh)
                for (int ow = 0; ow < conv_out_w(p); ++ow) {
                    float acc = 0.0f;
                    for (int c = 0; c < p->c; ++c)
                        for (int r = 0; r < p->r; ++r)
                            for (int s = 0; s < p->s - drop_last; ++s) {
                                int ih = oh * p->stride_h - p->pad_h + r * p->dil_h;
                                int iw = ow * p->stride_w - p->pad_w + s * p->dil_w;
                                if (ih >= 0 && ih < p->h && iw >= 0 && iw < p->w)
                                    acc += x[conv_input_offset(p, n, c, ih, iw)] *
                                           w[conv_filter_offset(p, k, c, r, s)];
                            }
                    y[conv_output_offset(p, n, k, oh, ow)] = acc;
                }
}

static conv_status host_right(const conv_params *p, const float *x, const float *w, float *y,
                              conv_msg *msg)
{
    (void)msg;
    direct(p, x, w, y, 0);
    return CONV_OK;
}

static conv_status host_wrong(const conv_params *p, const float *x, const float *w, float *y,
                              conv_msg *msg)
{
    (void)msg;
    direct(p, x, w, y, 1);
    return CONV_OK;
}

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt, (void)p, (void)select;
    cr_assert_geq(max, 3);
    r[0] = conv_row_host("double reference", NULL, conv_test_host_reference);
    r[0].ref = 0;
    r[1] = conv_row_host("direct", "right", host_right);
    r[2] = conv_row_host("direct, last column dropped", "wrong", host_wrong);
    r[1].check = r[2].check = conv_test_needs_stride_1;
    return 3;
}

static void describe(FILE *out, const conv_cli_options *opt, const conv_params *p)
{
    (void)opt;
    fprintf(out, "plan:    %d x %d outputs\n", conv_out_h(p), conv_out_w(p));
}

static void footer(FILE *out, const conv_params *p, const conv_row *r, int n)
{
    (void)p, (void)r;
    fprintf(out, "footer:  %d rows\n", n);
}

static const conv_flag flags[] = {
    {"variant", CONV_FLAG_CHOICE, "all|right|wrong", "which row(s) to run", "right", 0, 0},
};

/* A program of host rows only (like step 01): no device needed. */
static const conv_program cpu_prog = {
    .cli = {.program = "test_prog",
            .summary = "The program body on host rows.",
            .flags = flags,
            .n_flags = 1},
    .title = "host rows",
    .ref_names = {"double"},
    .cpu_only = 1,
    .rows = rows,
    .describe = describe,
    .footer = footer,
};

/* One run of a program, its exit status and what it printed. */
typedef struct {
    int status;
    char *out, *err;
} run_result;

static char *read_back(FILE *f)
{
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    cr_assert_geq(size, 0);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    cr_assert_not_null(text);
    cr_assert_eq(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    return text;
}

/* Runs conv_program_main with stdout and stderr sent to temporary files
 * (each Criterion test runs in its own process). */
static run_result run(const conv_program *prog, int argc, const char **argv)
{
    FILE *out = tmpfile(), *err = tmpfile();
    cr_assert(out != NULL && err != NULL);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
    cr_assert(saved_out >= 0 && saved_err >= 0);
    dup2(fileno(out), STDOUT_FILENO);
    dup2(fileno(err), STDERR_FILENO);
    run_result r = {conv_program_main(prog, argc, (char **)argv), NULL, NULL};
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, STDOUT_FILENO);
    dup2(saved_err, STDERR_FILENO);
    close(saved_out);
    close(saved_err);
    r.out = read_back(out);
    r.err = read_back(err);
    fclose(out);
    fclose(err);
    return r;
}

static void free_result(run_result *r)
{
    free(r->out);
    free(r->err);
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text; ++text)
        n += *text == '\n';
    return n;
}

/* A small problem, quick to run; then the test's own flags. */
#define SMALL      "prog", "--h", "20", "--w", "24", "--c", "2", "--k", "3", "--filter", "3"
#define ARGC(argv) ((int)(sizeof(argv) / sizeof(argv)[0]))

Test(program, a_correct_row_exits_0_with_verdict_ok)
{
    const char *argv[] = {SMALL, "--warmup", "0", "--repeat", "2"};
    run_result r = run(&cpu_prog, ARGC(argv), argv);
    cr_assert_eq(r.status, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert(strstr(r.out, "test_prog: host rows\n") == r.out, "the title first:\n%s", r.out);
    cr_assert(strstr(r.out, "\nplan:    18 x 22 outputs\n") != NULL, "describe:\n%s", r.out);
    cr_assert(strstr(r.out, "timing:  median of 2 runs after 0 warm-up\n") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "verify:  every output against a double reference") != NULL, "%s",
              r.out);
    cr_assert(strstr(r.out, "\nversion ") != NULL && strstr(r.out, "vs double") != NULL,
              "the table:\n%s", r.out);
    cr_assert(strstr(r.out, "\ndouble reference ") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "\ndirect ") != NULL, "%s", r.out);
    cr_assert_null(strstr(r.out, "last column dropped"), "not selected:\n%s", r.out);
    cr_assert(strstr(r.out, "\nfastest: direct, ") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "\nfooter:  2 rows\n") != NULL, "%s", r.out);
    const char *last = "\nverdict: OK\n";
    size_t len = strlen(r.out);
    cr_assert(len > strlen(last) && strcmp(r.out + len - strlen(last), last) == 0,
              "the last line:\n%s", r.out);
    cr_assert_str_empty(r.err);
    cr_assert_eq(row_runs, 2, "timed twice (the last run's output is verified)");
    free_result(&r);
}

Test(program, a_wrong_row_exits_1_with_verdict_failed)
{
    const char *argv[] = {SMALL, "--warmup", "0", "--repeat", "1", "--variant", "all"};
    run_result r = run(&cpu_prog, ARGC(argv), argv);
    cr_assert_eq(r.status, 1, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert(strstr(r.out, "\ndirect, last column dropped ") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "FAILED: ") != NULL, "the row's verdict:\n%s", r.out);
    cr_assert(strstr(r.out, "\nverdict: FAILED\n") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "\nfastest: direct, ") != NULL, "only a verified row:\n%s", r.out);
    free_result(&r);
}

Test(program, a_bad_flag_exits_2_with_one_line_and_nothing_on_stdout)
{
    const char *cases[][3] = {{"prog", "--bogus", "1"},
                              {"prog", "--h", "0"},
                              {"prog", "--variant", "maybe"},
                              {"prog", "--he", "1"}};
    const char *want[] = {"test_prog: unknown option '--bogus' (see --help)\n",
                          "test_prog: invalid value for --h: 0 is out of range",
                          "test_prog: invalid value for --variant: 'maybe' (expected one of "
                          "all,right,wrong)\n",
                          "test_prog: unknown option '--he'"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        run_result r = run(&cpu_prog, 3, cases[i]);
        cr_assert_eq(r.status, 2, "%s %s: status %d", cases[i][1], cases[i][2], r.status);
        cr_assert_str_empty(r.out, "%s: stdout:\n%s", cases[i][1], r.out);
        cr_assert(strstr(r.err, want[i]) == r.err, "stderr: '%s'", r.err);
        cr_assert_eq(count_lines(r.err), 1, "stderr: '%s'", r.err);
        free_result(&r);
    }
    cr_assert_eq(row_runs, 0);
}

Test(program, a_problem_no_row_supports_exits_2_before_any_work)
{
    const char *argv[] = {SMALL, "--stride", "2", "--variant", "all"};
    run_result r = run(&cpu_prog, ARGC(argv), argv);
    cr_assert_eq(r.status, 2, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert_str_empty(r.out);
    cr_assert_str_eq(r.err, "test_prog: the test rows need stride 1, got 2x2\n",
                     "the first row's reason");
    cr_assert_eq(row_runs, 0);
    free_result(&r);
}

Test(program, a_problem_larger_than_the_machine_exits_2_before_any_work)
{
    const char *argv[] = {"prog", "--n",  "2048",     "--c", "2048", "--h", "2048",
                          "--w",  "2048", "--filter", "1",   "--k",  "1"};
    run_result r = run(&cpu_prog, ARGC(argv), argv);
    cr_assert_eq(r.status, 2, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert_str_empty(r.out);
    cr_assert(strstr(r.err, "test_prog: out of host memory: the problem needs ") == r.err, "%s",
              r.err);
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
    free_result(&r);
}

Test(program, an_unwritable_csv_exits_2_before_any_work_and_writes_nothing)
{
    char json[256];
    conv_test_temp_path(json, sizeof json, ".json");
    const char *argv[] = {SMALL, "--csv", "/nonexistent-dir/out.csv", "--json", json};
    run_result r = run(&cpu_prog, ARGC(argv), argv);
    cr_assert_eq(r.status, 2, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert_str_empty(r.out);
    cr_assert_str_eq(r.err, "test_prog: cannot write --csv file '/nonexistent-dir/out.csv'\n");
    cr_assert_eq(row_runs, 0);
    cr_assert_neq(access(json, F_OK), 0, "the JSON file was created");
    free_result(&r);
}

Test(program, help_exits_0_and_prints_the_usage)
{
    const char *argv[] = {"prog", "--help"};
    run_result r = run(&cpu_prog, 2, argv);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "usage: test_prog [options]\nThe program body on host rows.\n") ==
                  r.out,
              "%s", r.out);
    cr_assert(strstr(r.out, "--variant all|right|wrong") != NULL, "%s", r.out);
    cr_assert_str_empty(r.err);
    cr_assert_eq(row_runs, 0);
    free_result(&r);
}

Test(program, csv_and_json_hold_the_rows_of_the_table)
{
    char csv[256], json[256];
    conv_test_temp_path(csv, sizeof csv, ".csv");
    conv_test_temp_path(json, sizeof json, ".json");
    const char *argv[] = {SMALL, "--warmup", "0", "--repeat", "1", "--variant",
                          "all", "--csv",    csv, "--json",   json};
    run_result r = run(&cpu_prog, ARGC(argv), argv);
    cr_assert_eq(r.status, 1, "the wrong row:\n%s", r.out);
    char *csv_text = conv_test_read_file(csv), *json_text = conv_test_read_file(json);
    cr_assert(csv_text != NULL && json_text != NULL);
    remove(csv);
    remove(json);
    cr_assert(strstr(csv_text,
                     "\nversion,class,median_ms,min_ms,max_ms,gflops,pct_peak,vs_double,status,"
                     "verdict\n") != NULL,
              "%s", csv_text);
    cr_assert(strstr(csv_text, "\n\"double reference\",FP32,") != NULL, "%s", csv_text);
    cr_assert(strstr(csv_text, "\n\"direct\",FP32,") != NULL, "%s", csv_text);
    cr_assert(strstr(csv_text, ",failed,\"FAILED: ") != NULL, "%s", csv_text);
    cr_assert(strstr(csv_text, "# command: prog --h 20 ") != NULL, "%s", csv_text);
    size_t where = 0;
    cr_assert(conv_test_json_valid(json_text, &where), "invalid JSON at %zu:\n%s", where,
              json_text);
    cr_assert(strstr(json_text, "\"version\": \"direct, last column dropped\"") != NULL, "%s",
              json_text);
    cr_assert(strstr(json_text, "\"status\": \"failed\"") != NULL, "%s", json_text);
    free(csv_text);
    free(json_text);
    free_result(&r);
}

/* A program with a device row (like steps 02-06), and the same that runs its
 * CPU rows without a device (like conv_bench). */
static conv_status device_never(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                                float *d_y, cudaStream_t stream, conv_msg *msg)
{
    (void)ctx, (void)p, (void)d_x, (void)d_w, (void)d_y, (void)stream;
    cr_assert_fail("a device row ran without a device");
    return conv_fail(msg, CONV_ERR_CUDA, "unreachable");
}

static int gpu_rows(const conv_cli_options *opt, const conv_params *p, const char *select,
                    conv_row *r, int max)
{
    int n = rows(opt, p, select, r, max);
    r[n++] = conv_row_device("device kernel", NULL, device_never, NULL);
    return n;
}

static conv_program gpu_program(int without_device)
{
    conv_program prog = cpu_prog;
    prog.cpu_only = 0;
    prog.without_device = without_device;
    prog.rows = gpu_rows;
    return prog;
}

Test(program, a_gpu_program_without_a_device_exits_1_with_one_line_and_no_table)
{
    conv_test_hide_gpus();
    conv_program prog = gpu_program(0);
    char csv[256];
    conv_test_temp_path(csv, sizeof csv, ".csv");
    const char *argv[] = {SMALL, "--csv", csv};
    run_result r = run(&prog, ARGC(argv), argv);
    cr_assert_eq(r.status, 1, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert(strstr(r.err, "test_prog: no CUDA device: ") == r.err, "%s", r.err);
    cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
    cr_assert_null(strstr(r.out, "median ms"), "a table without a device:\n%s", r.out);
    cr_assert_neq(access(csv, F_OK), 0, "an empty CSV was left behind");
    cr_assert_eq(row_runs, 0);
    free_result(&r);
}

Test(program, a_program_that_may_run_without_a_device_runs_its_cpu_rows)
{
    conv_test_hide_gpus();
    conv_program prog = gpu_program(1);
    const char *argv[] = {SMALL, "--warmup", "0", "--repeat", "1"};
    run_result r = run(&prog, ARGC(argv), argv);
    cr_assert_eq(r.status, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert(strstr(r.out, "\ndevice:  no CUDA device: ") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "; GPU rows skipped\n") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "\ndirect ") != NULL, "the CPU row ran:\n%s", r.out);
    cr_assert_null(strstr(r.out, "device kernel"), "the device row is dropped:\n%s", r.out);
    cr_assert(strstr(r.out, "\nverdict: OK\n") != NULL, "%s", r.out);
    cr_assert_str_empty(r.err);
    free_result(&r);
}

Test(program, the_value_of_a_program_flag_is_found_by_name)
{
    conv_cli_options opt;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog", "--variant", "wrong"};
    FILE *sink = fopen("/dev/null", "w");
    CONV_ASSERT_OK(conv_cli_parse(3, (char **)argv, &cpu_prog.cli, &opt, sink, &msg), msg);
    fclose(sink);
    cr_assert_str_eq(conv_program_flag(&cpu_prog, &opt, "variant"), "wrong");
    cr_assert_null(conv_program_flag(&cpu_prog, &opt, "strategy"));
    cr_assert_null(conv_program_flag(&cpu_prog, &opt, NULL));
}

/* The flags a program states by their values alone take their places
 * around its own: --pass first, then its own flags, --variant, and the cuDNN
 * search flags last; the parser sees them all, and they are found by name. */
Test(program, the_shared_flags_stand_around_the_programs_own)
{
    static const conv_flag own[] = {{"width", CONV_FLAG_INT, "W", "a width", "8", 1, 100}};
    conv_program prog = {.cli = {.program = "prog", CONV_FLAGS(own)},
                         .passes = "dgrad|wgrad|all",
                         .variant = {"9a|9b|all", "which versions"},
                         .cudnn_search = 1};
    static const char *const order[] = {"pass",         "width",           "variant",
                                        "cudnn-budget", "cudnn-workspace", "cudnn-log"};
    conv_flag flags[CONV_CLI_MAX_FLAGS];
    cr_assert_eq(conv_program_flags(&prog, flags, CONV_CLI_MAX_FLAGS), 6);
    for (int i = 0; i < 6; ++i)
        cr_assert_str_eq(flags[i].name, order[i]);
    cr_assert_str_eq(flags[0].def, "all");
    cr_assert_str_eq(flags[2].metavar, "9a|9b|all");
    conv_cli_spec cli = prog.cli;
    cli.flags = flags;
    cli.n_flags = 6;
    conv_cli_options opt;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog", "--variant", "9b", "--width", "5", "--pass", "wgrad"};
    FILE *sink = fopen("/dev/null", "w");
    CONV_ASSERT_OK(conv_cli_parse(ARGC(argv), (char **)argv, &cli, &opt, sink, &msg), msg);
    fclose(sink);
    cr_assert_str_eq(conv_program_flag(&prog, &opt, "variant"), "9b");
    cr_assert_str_eq(conv_program_flag(&prog, &opt, "width"), "5");
    cr_assert_str_eq(conv_program_flag(&prog, &opt, "pass"), "wgrad");
    cr_assert_str_eq(conv_program_flag(&prog, &opt, "cudnn-budget"), "5000");
    /* none of them: the program's own flags alone */
    conv_program plain = {.cli = {.program = "prog", CONV_FLAGS(own)}};
    cr_assert_eq(conv_program_flags(&plain, flags, CONV_CLI_MAX_FLAGS), 1);
}

/* ---- --problem: the catalogue's problems as the run's problems ---- */

/* Rows that take small inputs only: every problem of the catalogue is too
 * large for them, so each is refused (one problem) or not run (several). */
static conv_status small_only(void *ctx, const conv_params *p, conv_msg *msg)
{
    (void)ctx;
    if (conv_input_elems(p) > 4096)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "the test rows need at most 4096 input values, got %zu",
                         conv_input_elems(p));
    return CONV_OK;
}

static int small_rows(const conv_cli_options *opt, const conv_params *p, const char *select,
                      conv_row *r, int max)
{
    int n = rows(opt, p, select, r, max);
    r[1].check = r[2].check = small_only;
    return n;
}

static conv_program small_program(void)
{
    conv_program prog = cpu_prog;
    prog.rows = small_rows;
    return prog;
}

Test(program, a_named_problem_no_row_runs_exits_2_before_any_work)
{
    conv_program prog = small_program();
    const char *argv[] = {"prog", "--problem", "hpc101-image", "--variant", "all"};
    run_result r = run(&prog, ARGC(argv), argv);
    cr_assert_eq(r.status, 2, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    cr_assert_str_empty(r.out);
    cr_assert_str_eq(r.err,
                     "test_prog: the test rows need at most 4096 input values, got 4000000\n");
    cr_assert_eq(row_runs, 0);
    free_result(&r);
}

Test(program, a_bad_problem_exits_2_with_one_line_and_nothing_on_stdout)
{
    const char *cases[][5] = {{"prog", "--problem", "nope", "--repeat", "1"},
                              {"prog", "--problem", "lecture", "--h", "5"},
                              {"prog", "--h", "5", "--problem", "lecture"}};
    const char *want[] = {"test_prog: invalid value for --problem: 'nope' (expected one of "
                          "lecture,",
                          "test_prog: --h cannot be combined with --problem: ",
                          "test_prog: --h cannot be combined with --problem: "};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        run_result r = run(&cpu_prog, 5, cases[i]);
        cr_assert_eq(r.status, 2, "%s %s: status %d", cases[i][1], cases[i][2], r.status);
        cr_assert_str_empty(r.out, "stdout:\n%s", r.out);
        cr_assert(strstr(r.err, want[i]) == r.err, "stderr: '%s'", r.err);
        cr_assert_eq(count_lines(r.err), 1, "stderr: '%s'", r.err);
        free_result(&r);
    }
    cr_assert_eq(row_runs, 0);
}

Test(program, problem_all_reports_each_problem_the_rows_cannot_run_and_goes_on)
{
    conv_program prog = small_program();
    char csv[256];
    conv_test_temp_path(csv, sizeof csv, ".csv");
    const char *argv[] = {"prog", "--problem", "all", "--csv", csv};
    run_result r = run(&prog, ARGC(argv), argv);
    cr_assert_eq(r.status, 0, "stdout:\n%s\nstderr:\n%s", r.out, r.err);
    int n = 0;
    const conv_problem *all = conv_problems(&n);
    char *csv_text = conv_test_read_file(csv);
    cr_assert_not_null(csv_text);
    remove(csv);
    cr_assert(strstr(csv_text, "\nproblem,version,class,") != NULL, "a problem column:\n%s",
              csv_text);
    for (int i = 0; i < n; ++i) {
        char heading[160], row[160];
        snprintf(heading, sizeof heading, "\n== %s: %s\n", all[i].name, all[i].about);
        cr_assert_not_null(strstr(r.out, heading), "no heading '%s':\n%s", heading, r.out);
        cr_assert_not_null(strstr(strstr(r.out, heading), "\nnot run: the test rows need at most "
                                                          "4096 input values"),
                           "%s", r.out);
        snprintf(row, sizeof row, "\n\"%s\",\"direct\",FP32,", all[i].name);
        cr_assert_not_null(strstr(csv_text, row), "no row '%s':\n%s", row, csv_text);
    }
    cr_assert(strstr(r.out, "\nverdict: OK\n") != NULL, "%s", r.out);
    cr_assert_eq(row_runs, 0);
    free(csv_text);
    free_result(&r);
}

/* The layout of a named problem: its own, unless --layout gives another and
 * its name does not say the layout. */
Test(program, named_problems_take_layout_unless_their_name_says_it)
{
    const char *cases[][5] = {{"prog", "--problem", "all"},
                              {"prog", "--problem", "all", "--layout", "nhwc"},
                              {"prog", "--problem", "cutlass-nhwc", "--layout", "nchw"}};
    const int argc[] = {3, 5, 5};
    const conv_layout want_free[] = {CONV_LAYOUT_NCHW, CONV_LAYOUT_NHWC, CONV_LAYOUT_NCHW};
    for (int c = 0; c < 3; ++c) {
        conv_cli_options opt = conv_test_cli_ok(&cpu_prog.cli, argc[c], cases[c]);
        conv_named_problem got[CONV_PROGRAM_MAX_PROBLEMS];
        int n = conv_program_named_problems(&opt, got, CONV_PROGRAM_MAX_PROBLEMS);
        cr_assert_eq(n, c == 2 ? 1 : 9);
        for (int i = 0; i < n; ++i) {
            const conv_problem *p = conv_problem_find(got[i].name);
            cr_assert_not_null(p);
            conv_params want = p->params;
            if (!p->fixed_layout)
                want.layout = want_free[c];
            cr_assert(memcmp(&got[i].params, &want, sizeof want) == 0, "case %d: %s is %s", c,
                      got[i].name, conv_shape_name(&got[i].params));
            cr_assert_str_eq(got[i].about, p->about);
        }
    }
    const char *none[] = {"prog", "--h", "9"};
    conv_cli_options opt = conv_test_cli_ok(&cpu_prog.cli, 3, none);
    conv_named_problem got[1];
    cr_assert_eq(conv_program_named_problems(&opt, got, 1), 0, "no --problem, no named problem");
}
