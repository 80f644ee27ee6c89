#include "conv_program.h"

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "conv_bandwidth.h"
#include "conv_cudnn.h"
#include "conv_problems.h"

/* CPU rows of programs that also time GPU rows: no warm-up (one serial run
 * can take seconds), this many timed runs unless --host-repeat says more. */
#define HOST_REPEAT 3

/* Puts flag f at out[*n] if it fits, and counts it. */
static void add_flag(conv_flag *out, int max, int *n, conv_flag f)
{
    if (*n < max)
        out[*n] = f;
    ++*n;
}

int conv_program_flags(const conv_program *prog, conv_flag *out, int max)
{
    static const conv_flag cudnn[] = {CONV_CUDNN_SEARCH_FLAGS};
    int n = 0;
    if (prog->passes != NULL)
        add_flag(out, max, &n, (conv_flag)CONV_PASS_FLAG(prog->passes, "all"));
    for (int i = 0; i < prog->cli.n_flags; ++i)
        add_flag(out, max, &n, prog->cli.flags[i]);
    if (prog->variant.choices != NULL)
        add_flag(out, max, &n,
                 (conv_flag)CONV_VARIANT_FLAG(prog->variant.choices, prog->variant.help));
    for (int i = 0; prog->cudnn_search && i < (int)(sizeof cudnn / sizeof cudnn[0]); ++i)
        add_flag(out, max, &n, cudnn[i]);
    return n;
}

const char *conv_program_flag(const conv_program *prog, const conv_cli_options *opt,
                              const char *name)
{
    conv_flag flags[CONV_CLI_MAX_FLAGS];
    int n = conv_program_flags(prog, flags, CONV_CLI_MAX_FLAGS);
    if (name == NULL)
        return NULL;
    for (int i = 0; i < n && i < CONV_CLI_MAX_FLAGS; ++i)
        if (strcmp(flags[i].name, name) == 0)
            return opt->value[i];
    return NULL;
}

int conv_program_named_problems(const conv_cli_options *opt, conv_named_problem *out, int max)
{
    const conv_problem *first;
    int count = 0;
    conv_msg msg = {{0}};
    if (opt->problem == NULL || conv_problem_select(opt->problem, &first, &count, &msg) != CONV_OK)
        return 0; /* the parser has checked the name */
    for (int i = 0; i < count && i < max; ++i) {
        out[i] = (conv_named_problem){first[i].name, first[i].about, first[i].params};
        if (opt->layout_given && !first[i].fixed_layout)
            out[i].params.layout = opt->params.layout;
    }
    return count < max ? count : max;
}

static conv_run_opts run_opts(const conv_program *prog, const conv_cli_options *opt)
{
    conv_run_opts o = {opt->warmup, opt->repeat, 0,
                       HOST_REPEAT, 0.0,         conv_cudnn_graph_opts_default()};
    const char *host = conv_program_flag(prog, opt, "host-repeat");
    if (host != NULL)
        o.host_repeat = atoi(host); /* range-checked by the parser */
    /* The search of the cuDNN graph rows, where the program has its flags. */
    const char *budget = conv_program_flag(prog, opt, "cudnn-budget");
    const char *workspace = conv_program_flag(prog, opt, "cudnn-workspace");
    if (budget != NULL)
        o.graph.budget_s = atoll(budget) / 1000.0;
    if (workspace != NULL)
        o.graph.workspace_cap = (size_t)atoll(workspace) << 20;
    if (prog->cpu_only) {
        o.host_warmup = opt->warmup;
        o.host_repeat = opt->repeat;
    }
    return o;
}

/* Everything about one run, so that the steps below stay short. */
typedef struct {
    const conv_program *prog;
    conv_flag flags[CONV_CLI_MAX_FLAGS]; /* all of its flags (conv_program_flags) */
    conv_cli_spec cli;                   /* prog->cli with them */
    conv_cli_options opt;
    conv_named_problem problems[CONV_PROGRAM_MAX_PROBLEMS];
    int n_problems;
    const char *select;
    conv_report report;
    int counts[CONV_PROGRAM_MAX_PROBLEMS]; /* how often each problem occurs (1 but in a model) */
    const char *model;                     /* a model run: "resnet50, n=32, nhwc"; NULL otherwise */
    conv_device_info info;
    int have_device;
    char no_device[CONV_MSG_LEN];
    conv_run_opts o;
} run_state;

static conv_row rows[CONV_PROGRAM_MAX_ROWS]; /* one problem's rows at a time */

/* The rows of problem p, selected, for this machine, checked. Returns how
 * many; *runnable counts the rows that are not references and can run. */
static int make_rows(run_state *s, const conv_params *p, int *runnable, char *why, size_t len)
{
    int n = s->prog->rows(&s->opt, p, s->select, rows, CONV_PROGRAM_MAX_ROWS);
    n = conv_rows_select(rows, n, s->select);
    if (!s->have_device && !s->prog->cpu_only && s->prog->without_device)
        n = conv_rows_host_only(rows, n);
    *runnable = conv_rows_check(rows, n, p, why, len);
    return n;
}

/* 1 when the first problem has rows that will run on the CPU (their timing
 * differs; rows skipped before the run, as step 01's in a model run, do not
 * count). */
static int has_host_rows(run_state *s)
{
    char why[CONV_MSG_LEN + 16];
    int runnable = 0, host = 0;
    int n = make_rows(s, &s->problems[0].params, &runnable, why, sizeof why);
    for (int i = 0; i < n; ++i)
        host |= rows[i].kind == CONV_ROW_HOST && rows[i].state == CONV_ROW_PENDING;
    return host;
}

/* Step 2: what can run, decided before any device or memory is touched.
 * Returns 0, or the exit status. */
static int check_before_work(run_state *s)
{
    if (s->n_problems != 1 || s->prog->report_unsupported)
        return 0; /* each problem is checked, and skipped if need be, at its turn */
    const conv_params *p = &s->problems[0].params;
    char why[CONV_MSG_LEN + 16];
    int runnable = 0;
    conv_msg msg = {{0}};
    s->have_device = !s->prog->cpu_only; /* assume the rows a GPU would run */
    make_rows(s, p, &runnable, why, sizeof why);
    s->have_device = 0;
    if (runnable == 0) {
        fprintf(stderr, "%s: %s\n", s->prog->cli.program,
                why[0] ? why : "no row of the program runs this problem");
        return 2;
    }
    if (conv_problem_check_memory(p, 0, &msg) != CONV_OK) {
        fprintf(stderr, "%s: %s\n", s->prog->cli.program, msg.text);
        return 2;
    }
    return 0;
}

/* Step 4: the device (or, where allowed, the reason there is none). */
static int open_device(run_state *s)
{
    if (s->prog->cpu_only)
        return 0;
    conv_msg msg = {{0}};
    if (conv_cuda_device_info(conv_current_device(), &s->info, &msg) == CONV_OK) {
        s->have_device = 1;
        return 0;
    }
    snprintf(s->no_device, sizeof s->no_device, "%s", msg.text);
    if (s->prog->without_device)
        return 0;
    fprintf(stderr, "%s: %s\n", s->prog->cli.program, msg.text);
    return 1;
}

static double measure_copy(run_state *s)
{
    double bytes = 0.0;
    for (int i = 0; i < s->n_problems; ++i)
        if (conv_min_bytes(&s->problems[i].params) > bytes)
            bytes = conv_min_bytes(&s->problems[i].params);
    conv_bandwidth bw;
    conv_msg msg = {{0}};
    if (conv_bandwidth_d2d((size_t)(bytes / 2), s->opt.warmup, s->opt.repeat, NULL, &bw, &msg) !=
        CONV_OK) {
        printf("memory:  the copy bandwidth could not be measured: %s\n", msg.text);
        return 0.0;
    }
    printf("memory:  device-to-device copy %.0f GB/s (read + write, %zu MB buffers)\n", bw.gbps,
           bw.bytes >> 20);
    return bw.gbps;
}

static void print_fastest(const run_state *s, const conv_row *r, int n, const double *ref_ms)
{
    int best = conv_rows_fastest(r, n);
    if (best < 0 || s->report.n_refs == 0)
        return;
    double ms = r[best].res.timing.median_ms;
    (void)ref_ms;
    printf("fastest: %s, %.4f ms", r[best].label, ms);
    for (int i = 0; i < s->report.n_refs; ++i) {
        int ref = conv_rows_reference(r, n, i, &r[best]);
        if (ref < 0)
            continue;
        printf("; %.2fx %s", r[ref].res.timing.median_ms / ms, s->prog->ref_names[i]);
        if (conv_report_by_class(s->prog->ref_names[i]))
            printf(" best %s", conv_class_name(r[best].cls));
    }
    printf("\n");
}

/* The end of one problem, run or not: its rows to the report and to the
 * program's summary. */
static void finish_problem(run_state *s, const conv_named_problem *np, int n, const double *ref_ms,
                           double peak_gflops)
{
    int count = s->counts[np - s->problems]; /* np is one of s->problems */
    conv_report_layer(&s->report, stdout, np->name, count, &np->params, rows, n, ref_ms,
                      peak_gflops);
    if (s->prog->problem_done != NULL)
        s->prog->problem_done(np, count, rows, n);
}

/* Step 5 for one problem. Returns 1 when something failed. */
static int run_problem(run_state *s, const conv_named_problem *np)
{
    const conv_params *p = &np->params;
    int multi = s->n_problems > 1 || np->name[0] != '\0';
    if (multi) { /* "== hpc101: ...", "== hpc101 dgrad: ..." */
        int backward = p->pass != CONV_PASS_FORWARD;
        printf("\n== %s%s%s: %s\n", np->name, backward && np->name[0] ? " " : "",
               backward ? conv_pass_name(p->pass) : "", np->about);
    }
    if (s->prog->describe != NULL)
        s->prog->describe(stdout, &s->opt, p);
    else
        conv_cli_print_problem(stdout, p);

    char why[CONV_MSG_LEN + 16];
    int runnable = 0;
    int n = make_rows(s, p, &runnable, why, sizeof why);
    double ref_ms[CONV_MAX_REFS] = {0};
    conv_msg msg = {{0}};
    size_t free_b = 0, total_b = 0;
    if (s->have_device && cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        cudaGetLastError();
        free_b = 0;
    }
    int pending = 0; /* rows that can run, references included */
    for (int i = 0; i < n; ++i)
        pending += rows[i].state == CONV_ROW_PENDING;
    if (runnable == 0 && !s->prog->report_unsupported)
        pending = 0; /* the program runs its own rows, not the references alone */
    conv_status st = CONV_OK;
    if (pending == 0)
        st = conv_fail(&msg, CONV_ERR_UNSUPPORTED, "%s",
                       runnable == 0 && why[0] ? why : "no row can run this problem");
    else
        st = conv_problem_check_memory(p, free_b, &msg);
    conv_gpu_problem pb;
    if (st == CONV_OK)
        st = s->have_device ? conv_gpu_problem_create(&pb, p, s->opt.seed, &msg)
                            : conv_gpu_problem_create_host(&pb, p, s->opt.seed, &msg);
    if (st != CONV_OK) {
        int fatal = st != CONV_ERR_UNSUPPORTED;
        printf("not run: %s\n", msg.text);
        for (int i = 0; i < n; ++i)
            if (rows[i].state == CONV_ROW_PENDING) {
                rows[i].state = CONV_ROW_SKIPPED;
                snprintf(rows[i].why, sizeof rows[i].why, "skipped: %s", msg.text);
            }
        finish_problem(s, np, n, ref_ms, 0.0);
        return fatal;
    }
    printf("verify:  %s\n\n", pb.full_verify ? "every output against a double reference"
                                             : "sampled outputs against a double reference");
    s->o.graph.label = np->name; /* for the cuDNN search's log */
    int failed = conv_rows_run(&pb, rows, n, &s->o, ref_ms) != 0;
    finish_problem(s, np, n, ref_ms, s->have_device ? s->info.peak_fp32_gflops : 0.0);
    print_fastest(s, rows, n, ref_ms);
    if (s->prog->footer != NULL)
        s->prog->footer(stdout, p, rows, n);
    conv_gpu_problem_destroy(&pb);
    return failed;
}

/* Every problem counts once, unless the program says that the run is a
 * model's layers and how often each occurs. */
static void count_problems(run_state *s)
{
    for (int i = 0; i < s->n_problems; ++i)
        s->counts[i] = 1;
    s->model = s->prog->model != NULL ? s->prog->model(&s->opt, s->counts, s->n_problems) : NULL;
}

/* With a --pass flag: each problem once per pass the flag picks (its
 * counts with it). Returns 0, or -1 with one line in msg. */
static int expand_passes(run_state *s, conv_msg *msg)
{
    const conv_program *prog = s->prog;
    const char *pick = conv_program_flag(prog, &s->opt, "pass");
    if (pick == NULL)
        return 0;
    const char *choices = "";
    for (int i = 0; i < s->cli.n_flags; ++i)
        if (strcmp(s->cli.flags[i].name, "pass") == 0)
            choices = s->cli.flags[i].metavar;
    conv_pass passes[CONV_PASS_COUNT];
    int n_passes = 0;
    for (int pass = 0; pass < CONV_PASS_COUNT; ++pass) {
        const char *name = conv_pass_name((conv_pass)pass);
        if (conv_cli_is_choice(choices, name) && conv_cli_selects(pick, name))
            passes[n_passes++] = (conv_pass)pass;
    }
    if (s->n_problems * n_passes > CONV_PROGRAM_MAX_PROBLEMS) {
        conv_fail(msg, CONV_ERR_INVALID,
                  "--pass %s: %d problems in %d passes are more than the %d a run may have", pick,
                  s->n_problems, n_passes, CONV_PROGRAM_MAX_PROBLEMS);
        return -1;
    }
    for (int i = s->n_problems - 1; i >= 0; --i) /* from the last: in place */
        for (int j = n_passes - 1; j >= 0; --j) {
            s->problems[i * n_passes + j] = s->problems[i];
            s->problems[i * n_passes + j].params.pass = passes[j];
            s->counts[i * n_passes + j] = s->counts[i];
        }
    s->n_problems *= n_passes;
    for (int i = 0; i < s->n_problems; ++i)
        s->report.pass_column |= s->problems[i].params.pass != CONV_PASS_FORWARD;
    return 0;
}

static void print_model(const run_state *s)
{
    int all = 0;
    for (int i = 0; i < s->n_problems; ++i)
        all += s->counts[i];
    printf("model:   %s: %d distinct convolutions (%d in all), each a problem below\n", s->model,
           s->n_problems, all);
}

/* A verdict with a large "max rel err" needs a word: the relative error of an
 * output near zero is large, and the bound is on the absolute error. */
static int any_relative_error(void)
{
    for (int i = 0; i < CONV_PROGRAM_MAX_ROWS; ++i)
        if (rows[i].state == CONV_ROW_OK && rows[i].res.report.max_rel_err > 1e-2)
            return 1;
    return 0;
}

int conv_program_main(const conv_program *prog, int argc, char **argv)
{
    static run_state s; /* static: its rows and results are large for the stack */
    const char *name = prog->cli.program;
    conv_msg msg = {{0}};
    memset(&s, 0, sizeof s);
    s.prog = prog;
    s.cli = prog->cli;
    s.cli.flags = s.flags;
    s.cli.n_flags = conv_program_flags(prog, s.flags, CONV_CLI_MAX_FLAGS);
    conv_status st = conv_cli_parse(argc, argv, &s.cli, &s.opt, stdout, &msg);
    if (st == CONV_HELP_SHOWN)
        return 0;
    if (st == CONV_OK && prog->problems != NULL) {
        s.n_problems = prog->problems(&s.opt, s.problems, CONV_PROGRAM_MAX_PROBLEMS, &msg);
        st = s.n_problems < 0 ? CONV_ERR_INVALID : CONV_OK;
    } else if (st == CONV_OK) {
        s.n_problems = conv_program_named_problems(&s.opt, s.problems, CONV_PROGRAM_MAX_PROBLEMS);
        if (s.n_problems == 0) {
            s.problems[0] = (conv_named_problem){"", "", s.opt.params};
            s.n_problems = 1;
        }
    }
    if (st != CONV_OK) {
        fprintf(stderr, "%s: %s\n", name, msg.text);
        return 2;
    }
    count_problems(&s);
    if (expand_passes(&s, &msg) != 0) {
        fprintf(stderr, "%s: %s\n", name, msg.text);
        return 2;
    }
    if (prog->before_run != NULL) {
        int status = prog->before_run(&s.opt, s.problems, s.counts, s.n_problems);
        if (status >= 0)
            return status;
    }
    s.select = conv_program_flag(prog, &s.opt, "variant"); /* NULL: every row */
    s.o = run_opts(prog, &s.opt);
    int status = check_before_work(&s);
    if (status != 0)
        return status;
    while (s.report.n_refs < CONV_MAX_REFS && prog->ref_names[s.report.n_refs] != NULL) {
        s.report.ref_names[s.report.n_refs] = prog->ref_names[s.report.n_refs];
        ++s.report.n_refs;
    }
    s.report.bandwidth_column = prog->bandwidth_column;
    s.report.problem_column = prog->problem_column || s.opt.problem != NULL;
    s.report.model = s.model;
    const char *log_path = conv_program_flag(prog, &s.opt, "cudnn-log");
    if (log_path != NULL && (s.o.graph.log = fopen(log_path, "w")) == NULL) {
        fprintf(stderr, "%s: --cudnn-log: cannot write %s\n", name, log_path);
        return 2;
    }
    conv_cudnn_graph_log_header(s.o.graph.log);
    if (conv_report_open(&s.report, s.opt.csv_path, s.opt.json_path, &msg) != CONV_OK) {
        fprintf(stderr, "%s: %s\n", name, msg.text);
        if (s.o.graph.log != NULL) {
            fclose(s.o.graph.log);
            remove(log_path);
        }
        return 2;
    }

    if ((status = open_device(&s)) != 0) {
        conv_report_close(&s.report, &msg);
        if (s.o.graph.log != NULL) {
            fclose(s.o.graph.log);
            remove(log_path);
        }
        if (s.opt.csv_path != NULL)
            remove(s.opt.csv_path);
        if (s.opt.json_path != NULL)
            remove(s.opt.json_path);
        return status;
    }

    printf("%s: %s\n", name, prog->title);
    if (s.have_device)
        conv_print_device(stdout, &s.info, conv_cudnn_version());
    else if (!prog->cpu_only)
        printf("device:  %s; GPU rows skipped\n", s.no_device);
    if (s.have_device && prog->measure_copy)
        s.o.d2d_gbps = measure_copy(&s);
    printf("timing:  median of %d runs after %d warm-up", s.o.repeat, s.o.warmup);
    if (!prog->cpu_only && has_host_rows(&s))
        printf("; CPU rows: median of %d runs", s.o.host_repeat);
    printf("\n");
    if (s.report.model != NULL)
        print_model(&s);
    conv_report_begin(&s.report, s.have_device ? &s.info : NULL, s.o.d2d_gbps, argc, argv);

    int failed = 0, relative = 0;
    for (int i = 0; i < s.n_problems; ++i) {
        if (s.n_problems > 1)
            fprintf(stderr, "%s: [%d/%d] %s\n", name, i + 1, s.n_problems, s.problems[i].name);
        failed |= run_problem(&s, &s.problems[i]);
        relative |= any_relative_error();
    }
    if (prog->run_summary != NULL)
        prog->run_summary(stdout);
    FILE *json = conv_report_json_members(&s.report);
    if (prog->run_summary_json != NULL && json != NULL)
        prog->run_summary_json(json);
    if (s.o.graph.log != NULL && fclose(s.o.graph.log) != 0) {
        fprintf(stderr, "%s: --cudnn-log: writing %s failed\n", name, log_path);
        failed = 1;
    }
    if (conv_report_close(&s.report, &msg) != CONV_OK) {
        fprintf(stderr, "%s: %s\n", name, msg.text);
        failed = 1;
    }
    if (relative)
        printf("\nnote: \"max rel err\" divides by |y|, so it is large where an output is near 0; "
               "a row passes when every |error| <= gamma_n * sum|x*w| (docs/01_cpu_serial.md)\n");
    if (!s.have_device && !prog->cpu_only)
        printf("\n%s: GPU rows skipped\n", s.no_device);
    printf("\nverdict: %s\n", failed ? "FAILED" : "OK");
    return failed ? 1 : 0;
}
