/* conv_bench: every step's kernels on named problems (or a custom shape), in
 * one run beside step 01 on the CPU and cuDNN, each verified before it is
 * timed. One table per problem; --csv and --json write every row of every
 * problem. Without a GPU it runs the CPU rows and says why the GPU rows are
 * skipped (exit status 0).
 *
 * --problem NAME|all takes the course's named problems (common/conv_problems.h)
 * with the rule of every program (common/conv_cli.h): the name fixes the
 * shape, so the problem flags (--n ... --dil-w, --padding) are rejected with
 * it, and --layout picks the layout of a problem whose name does not already
 * say it (hpc101 --layout nhwc is hpc101-nhwc). Without --problem, the
 * problem flags describe one custom problem. The program body, the common
 * flags and the exit status are those of every program
 * (common/conv_program.h).
 *
 * --model NAME runs a whole network instead (common/conv_models.h): each
 * distinct convolution of the model is a problem, named after its layer, and
 * a summary after the last one weighs each layer by how often it occurs. The
 * model fixes the shapes but for the batch (--n, default 32) and --layout.
 * With --json, the file gets the summary's totals too ("summary", after the
 * layers; bench/bench_summary.h). Step 01's CPU rows would take minutes per
 * layer there: they are skipped unless --cpu-rows asks for them.
 *
 * --list prints the problems the other flags select, as CSV, and exits
 * without looking for a GPU: the shapes for a script that times another
 * library on them. */
#include <stdio.h>
#include <string.h>

#include "bench_rows.h"
#include "bench_steps.h"
#include "bench_summary.h"
#include "conv_models.h"
#include "conv_program.h"

/* the order of flags[] */
enum { FLAG_STEPS, FLAG_MODEL, FLAG_LIST, FLAG_CPU_ROWS, FLAG_BUDGET, FLAG_WORKSPACE };

/* The batch of a model run without --n: large enough that the layers keep a
 * GPU busy, as in training. */
#define MODEL_BATCH 32

/* A model run: its layers (the problems' names point into them), the
 * headings of their tables and the summary filled as they end. */
static conv_model_layer layers[CONV_PROGRAM_MAX_PROBLEMS];
static char abouts[CONV_PROGRAM_MAX_PROBLEMS][96];
static char model_run[128];                    /* "resnet50, n=32, nchw" */
static bench_summary summary[CONV_PASS_COUNT]; /* a model run's, per pass */

/* The first problem flag a model run cannot take (all but --n and --layout). */
static const char *fixed_by_model(const conv_cli_options *opt, int *batch)
{
    *batch = MODEL_BATCH;
    for (int i = 0; i < opt->n_shape_flags; ++i) {
        if (strcmp(opt->shape_flags[i], "n") != 0)
            return opt->shape_flags[i];
        *batch = opt->params.n;
    }
    return NULL;
}

/* The problems of a model run: the model's distinct layers. */
static int model_problems(const conv_cli_options *opt, conv_named_problem *out, int max,
                          conv_msg *msg)
{
    const char *model = opt->value[FLAG_MODEL];
    int batch = 0, n_layers = 0;
    const char *fixed = fixed_by_model(opt, &batch);
    if (opt->problem != NULL) {
        conv_fail(msg, CONV_ERR_INVALID,
                  "--model cannot be combined with --problem: give one of them (a whole network, "
                  "or a named problem)");
        return -1;
    }
    if (fixed != NULL) {
        conv_fail(msg, CONV_ERR_INVALID,
                  "--%s cannot be combined with --model: the model fixes the shapes (only --n "
                  "and --layout apply to it)",
                  fixed);
        return -1;
    }
    if (conv_model_layers(model, batch, opt->params.layout, layers, max, &n_layers, msg) != CONV_OK)
        return -1;
    int all = 0;
    for (int i = 0; i < n_layers; ++i)
        all += layers[i].count;
    for (int i = 0; i < n_layers; ++i) {
        snprintf(abouts[i], sizeof abouts[i], "%d of %s's %d convolutions", layers[i].count, model,
                 all);
        out[i] = (conv_named_problem){layers[i].name, abouts[i], layers[i].params};
    }
    snprintf(model_run, sizeof model_run, "%s, n=%d, %s", model, batch,
             opt->params.layout == CONV_LAYOUT_NHWC ? "nhwc" : "nchw");
    return n_layers;
}

/* Flags that ask for nothing in the run they are given with. */
static int check_combinations(const conv_cli_options *opt, conv_msg *msg)
{
    if (opt->given[FLAG_LIST] && (opt->csv_path != NULL || opt->json_path != NULL)) {
        conv_fail(msg, CONV_ERR_INVALID,
                  "--%s cannot be combined with --list: --list runs nothing and writes its CSV "
                  "to stdout",
                  opt->csv_path != NULL ? "csv" : "json");
        return -1;
    }
    if (opt->given[FLAG_CPU_ROWS] && !opt->given[FLAG_MODEL]) {
        conv_fail(msg, CONV_ERR_INVALID,
                  "--cpu-rows applies to a model run (--model) only: a problem runs step 01's "
                  "rows anyway (--steps picks the rows)");
        return -1;
    }
    return 0;
}

static int problems(const conv_cli_options *opt, conv_named_problem *out, int max, conv_msg *msg)
{
    unsigned steps;
    if (bench_parse_steps(opt->value[FLAG_STEPS], &steps, msg) != CONV_OK)
        return -1;
    if (check_combinations(opt, msg) != 0)
        return -1;
    if (opt->given[FLAG_MODEL])
        return model_problems(opt, out, max, msg);
    int named = conv_program_named_problems(opt, out, max);
    if (named > 0)
        return named;
    out[0] = (conv_named_problem){"custom", "the shape given on the command line", opt->params};
    return 1;
}

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)select;
    unsigned steps = BENCH_STEP_ALL;
    bench_parse_steps(opt->value[FLAG_STEPS], &steps, NULL); /* checked by problems() */
    int n = bench_rows(p, steps, r, max);
    if (opt->given[FLAG_MODEL] && !opt->given[FLAG_CPU_ROWS])
        for (int i = 0; i < n; ++i)
            if (r[i].kind == CONV_ROW_HOST)
                conv_row_skip(&r[i], "step 01 is left out of a model run (--cpu-rows runs it)");
    return n;
}

/* A model run: the layers' counts, and the line that names the run. */
static const char *model_counts(const conv_cli_options *opt, int *counts, int n_problems)
{
    if (!opt->given[FLAG_MODEL])
        return NULL;
    for (int i = 0; i < n_problems; ++i)
        counts[i] = layers[i].count;
    return model_run;
}

/* --list: the problems as CSV on stdout, one line each, and nothing else. */
static int list(const conv_cli_options *opt, const conv_named_problem *pr, const int *counts, int n)
{
    if (!opt->given[FLAG_LIST])
        return -1;
    printf("name,count,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,layout\n");
    for (int i = 0; i < n; ++i) {
        const conv_params *p = &pr[i].params;
        if (p->pass != pr[0].params.pass)
            continue; /* each shape once, whatever the passes (--pass) */
        printf("%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s\n", pr[i].name, counts[i], p->n,
               p->c, p->h, p->w, p->k, p->r, p->s, p->pad_h, p->pad_w, p->stride_h, p->stride_w,
               p->dil_h, p->dil_w, p->layout == CONV_LAYOUT_NHWC ? "nhwc" : "nchw");
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "conv_bench: --list: writing to stdout failed\n");
        return 1;
    }
    return 0;
}

static void layer_done(const conv_named_problem *np, int count, const conv_row *r, int n_rows)
{
    if (model_run[0] != '\0')
        bench_summary_add(&summary[np->params.pass], np->name, count, r, n_rows);
}

static void print_summary(FILE *out)
{
    for (int pass = 0; pass < CONV_PASS_COUNT; ++pass) {
        char run[160];
        snprintf(run, sizeof run, "%s%s%s", model_run, pass != CONV_PASS_FORWARD ? ", " : "",
                 pass != CONV_PASS_FORWARD ? conv_pass_name((conv_pass)pass) : "");
        if (summary[pass].n_layers > 0)
            bench_summary_print(&summary[pass], run, out);
    }
}

/* The totals of a model run into its --json file: "summary", one object
 * per pass that ran (bench_summary_json). */
static void json_summary(FILE *f)
{
    int first = 1;
    for (int pass = 0; pass < CONV_PASS_COUNT; ++pass) {
        if (summary[pass].n_layers == 0)
            continue;
        fprintf(f, "%s\n    ", first ? ",\n  \"summary\": [" : ",");
        bench_summary_json(&summary[pass], (conv_pass)pass, 4, f);
        first = 0;
    }
    if (!first)
        fprintf(f, "\n  ]");
}

int main(int argc, char **argv)
{
    static conv_flag flags[] = {
        {"steps", CONV_FLAG_TEXT, "LIST",
         "rows to run: comma-separated 01,02,03,04,05,06,07,08,09,10,cudnn,auto, or all", "all", 0,
         0},
        {"model", CONV_FLAG_CHOICE, NULL /* the catalogue's names, below */,
         "every distinct convolution of a whole network, then a summary weighed by their counts "
         "(--n: the batch, default 32; --layout applies)",
         NULL, 0, 0},
        {"list", CONV_FLAG_SWITCH, NULL,
         "print the problems these flags select as CSV (name,count,n,c,...,layout) and exit "
         "without running anything",
         NULL, 0, 0},
        {"cpu-rows", CONV_FLAG_SWITCH, NULL,
         "with --model: run step 01's CPU rows too (left out: minutes per layer)", NULL, 0, 0},
        CONV_CUDNN_SEARCH_FLAGS,
        CONV_PASS_FLAG("forward|dgrad|wgrad|all", "forward"),
    };
    flags[FLAG_MODEL].metavar = conv_model_names();
    static const conv_program prog = {
        .cli = {.program = "conv_bench",
                .summary = "Every step's kernels on named problems or on a whole network's "
                           "layers, beside step 01 on the CPU and cuDNN, each verified before it "
                           "is timed.",
                .shape_fixed_by = "model",
                CONV_FLAGS(flags)},
        .title = "every step beside step 01 and cuDNN",
        .ref_names = BENCH_REF_NAMES,
        .bandwidth_column = 1,
        .without_device = 1,
        .measure_copy = 1,
        .problem_column = 1,
        .report_unsupported = 1,
        .problems = problems,
        .rows = rows,
        .model = model_counts,
        .before_run = list,
        .problem_done = layer_done,
        .run_summary = print_summary,
        .run_summary_json = json_summary,
    };
    return conv_program_main(&prog, argc, argv);
}
