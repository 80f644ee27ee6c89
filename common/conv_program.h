/* The body every program shares: each main.c declares its flags and its rows
 * in a conv_program and calls conv_program_main(), which does the rest the
 * same way everywhere:
 *
 *   1. parse the command line (conv_cli.h); a bad flag: one line, exit 2;
 *   2. build the problem(s) (the shape flags' problem, or those --problem
 *      names) and the rows, keep the rows the selection flag picks, and
 *      check them: when no kernel of the program supports the problem, or
 *      the problem does not fit the machine's memory, one line and exit 2
 *      (before any device is touched); in a run of several problems
 *      (--problem all) and in conv_bench, such a problem is reported as not
 *      run, with the reason, and the run goes on;
 *   3. open the --csv and --json files (not writable: one line, exit 2);
 *   4. find the GPU (none: one line that says why, exit 1; conv_bench runs
 *      its CPU rows instead);
 *   5. per problem: set it up, measure the rows (references first), print
 *      the table, write the files, name the fastest row; after the last, the
 *      program's summary if it has one (a model's totals);
 *   6. print "verdict: OK" (exit 0) or "verdict: FAILED" (exit 1).
 * A model run is a run whose problems are the distinct layers of a model
 * (conv_models.h): the same steps, with each layer's count in the files.
 *
 * A program states only what is its own: its texts, its rows and their
 * references, and of the flags every step shares (--pass, --variant, the
 * cuDNN search) just their values; every field it leaves out is a default
 * (0 or NULL: not taken, not printed, the standard behaviour). */
#ifndef CONV_PROGRAM_H
#define CONV_PROGRAM_H

#include <stdio.h>

#include "conv_cli.h"
#include "conv_report.h"
#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most rows one problem may have. */
#define CONV_PROGRAM_MAX_ROWS 64

/* The flags of the cuDNN graph rows' search (conv_cudnn_graph.h), in the
 * flags[] of every program that has such rows; read by name when the rows
 * run. */
#define CONV_CUDNN_SEARCH_FLAGS                                                                    \
    {"cudnn-budget",                                                                               \
     CONV_FLAG_INT,                                                                                \
     "MS",                                                                                         \
     "time the cuDNN graph rows may spend searching engines per problem, in milliseconds",         \
     CONV_CUDNN_GRAPH_TEXT(CONV_CUDNN_GRAPH_BUDGET_MS),                                            \
     1,                                                                                            \
     3600000},                                                                                     \
        {"cudnn-workspace",                                                                        \
         CONV_FLAG_INT,                                                                            \
         "MB",                                                                                     \
         "the largest workspace a cuDNN graph engine may take, in MB",                             \
         CONV_CUDNN_GRAPH_TEXT(CONV_CUDNN_GRAPH_WORKSPACE_MB),                                     \
         0,                                                                                        \
         1048576},                                                                                 \
    {                                                                                              \
        "cudnn-log", CONV_FLAG_TEXT, "FILE",                                                       \
            "write every engine configuration the cuDNN graph rows tried, with its time or why "   \
            "it "                                                                                  \
            "was left out, to FILE as CSV",                                                        \
            NULL, 0, 0                                                                             \
    }

/* The flag that picks the versions a step's program runs: --variant, one
 * of `choices` (words separated by '|', "all" among them), "all" by
 * default. Its value picks the rows by their key. */
#define CONV_VARIANT_FLAG(choices, help)                                                           \
    {                                                                                              \
        "variant", CONV_FLAG_CHOICE, choices, help, "all", 0, 0                                    \
    }

/* The flag that picks the passes a program runs (conv_params.h): --pass, one
 * of `choices` ("forward|dgrad|wgrad|all", or fewer), `def` by default. Each
 * problem of the run is then run once per pass it picks ("all": each of the
 * others, in their order), and the files get a column pass. */
#define CONV_PASS_FLAG(choices, def)                                                               \
    {                                                                                              \
        "pass", CONV_FLAG_CHOICE, choices,                                                         \
            "which computation: forward (the convolution), dgrad (the gradient of its input), "    \
            "wgrad (of its filter), or all that are offered",                                      \
            def, 0, 0                                                                              \
    }

/* The reference columns of a program measured against cuDNN, in a
 * conv_program initializer: "cuDNN" first (its rows' .ref is 0), then the
 * program's others, in the order of its rows' .ref; with the cuDNN graph
 * rows' search flags (cudnn_search).
 *   .ref_names = {"cuDNN", "step 06"}, .cudnn_search = 1
 * is CONV_VS_CUDNN("step 06"). */
#define CONV_VS_CUDNN(...) .ref_names = {"cuDNN", __VA_ARGS__}, .cudnn_search = 1

/* A program and its main(): CONV_PROGRAM_MAIN(fields...) defines the
 * program, a conv_program with these fields (an initializer's designators:
 * the step's texts, conv_step_texts.h, then its flags, references and
 * hooks), and a main() that runs it on its command line (conv_program_main)
 * and returns the exit status. */
#define CONV_PROGRAM_MAIN(...)                                                                     \
    static const conv_program program = {__VA_ARGS__};                                             \
    int main(int argc, char **argv)                                                                \
    {                                                                                              \
        return conv_program_main(&program, argc, argv);                                            \
    }

/* A program's own flags (an array of conv_flag), in a conv_program
 * initializer: CONV_FLAGS of its cli. */
#define CONV_PROGRAM_FLAGS(array)                                                                  \
    .cli.flags = (array), .cli.n_flags = (int)(sizeof(array) / sizeof((array)[0]))

/* The most problems one run may have (a model's distinct layers, each in
 * every pass, included). */
#define CONV_PROGRAM_MAX_PROBLEMS 144

/* A problem with a name (the catalogue's, conv_problems.h, or a model's layers). */
typedef struct {
    const char *name;  /* "" for the problem of the command line */
    const char *about; /* where it comes from ("" for none) */
    conv_params params;
} conv_named_problem;

typedef struct {
    conv_cli_spec cli; /* the program's name, summary and own flags */
    const char *title; /* the first line of its output, after its name */
    /* The flags most programs share, by their values alone (NULL, 0: the
     * program does not take them): --pass with these choices, "all" by
     * default (CONV_PASS_FLAG), before the program's own flags (cli.flags);
     * --variant with these choices and this help (CONV_VARIANT_FLAG), after
     * them; and the cuDNN graph rows' search flags (CONV_CUDNN_SEARCH_FLAGS),
     * last. */
    const char *passes;
    struct {
        const char *choices, *help;
    } variant;
    int cudnn_search;
    /* The reference columns of the table, in the order of the rows' .ref;
     * the first NULL ends them. */
    const char *ref_names[CONV_MAX_REFS];
    int bandwidth_column;   /* print GB/s (bandwidth-bound steps) */
    int cpu_only;           /* step 01: no device needed */
    int without_device;     /* conv_bench: without a GPU, run the CPU rows */
    int measure_copy;       /* measure the device-to-device copy bandwidth first */
    int problem_column;     /* the CSV names each row's problem (as it does with --problem) */
    int report_unsupported; /* a problem no row can run is reported as such, not rejected */
    /* The problems of the run. NULL: those --problem names, else the one the
     * 2D problem flags describe. Returns how many (at most max), or -1 with
     * one line in msg. */
    int (*problems)(const conv_cli_options *opt, conv_named_problem *out, int max, conv_msg *msg);
    /* The rows for one problem (references with .ref set). `select` is the
     * value of --variant (NULL: none). Returns how many (at most max). */
    int (*rows)(const conv_cli_options *opt, const conv_params *p, const char *select,
                conv_row *rows, int max);
    /* Optional: prints the problem (instead of the standard lines) and what
     * the program adds, e.g. its launch plan. */
    void (*describe)(FILE *out, const conv_cli_options *opt, const conv_params *p);
    /* Optional: prints something after a problem's table (e.g. stage times). */
    void (*footer)(FILE *out, const conv_params *p, const conv_row *rows, int n_rows);
    /* Optional, after problems(): is this a model run, whose problems are
     * the distinct layers of a model? NULL: no, a run of problems (each
     * counts once). Else the line that names the run, e.g. "resnet50, n=32,
     * nhwc", after filling counts[i] with how many of the model's
     * convolutions have the shape of problem i; both go to the files. */
    const char *(*model)(const conv_cli_options *opt, int *counts, int n_problems);
    /* Optional: called once the problems are known and before anything else
     * (the rows, the files, the device); returns -1 to go on with the run, or
     * the exit status to end it there (conv_bench's --list prints the
     * problems instead of running them). */
    int (*before_run)(const conv_cli_options *opt, const conv_named_problem *problems,
                      const int *counts, int n_problems);
    /* Optional: given each problem's rows as they ended, run or not... */
    void (*problem_done)(const conv_named_problem *np, int count, const conv_row *rows, int n_rows);
    /* ... and asked, after the last problem, to print what sums the run up
     * (conv_bench: a model's totals). */
    void (*run_summary)(FILE *out);
    /* Optional: the same summary into the --json file (conv_report_json_members;
     * called only with one). */
    void (*run_summary_json)(FILE *json);
} conv_program;

/* Runs the program (the steps above) and returns its exit status. */
int conv_program_main(const conv_program *prog, int argc, char **argv);

/* The problems --problem names (conv_problems.h), at most max, each in the
 * layout --layout gives unless its name says the layout; 0 when --problem
 * was not given. For a program's problems() that takes --problem and
 * problems of its own. */
int conv_program_named_problems(const conv_cli_options *opt, conv_named_problem *out, int max);

/* The program's flags as the parser sees them (--pass, cli.flags, --variant,
 * the cuDNN search flags, as the program asks for them), at most max;
 * returns how many the program has (more than max: the parser rejects the
 * program). opt->value[i] is the value of out[i]. */
int conv_program_flags(const conv_program *prog, conv_flag *out, int max);

/* The value of the program's flag `name` after parsing (NULL if it has none). */
const char *conv_program_flag(const conv_program *prog, const conv_cli_options *opt,
                              const char *name);

#ifdef __cplusplus
}
#endif

#endif /* CONV_PROGRAM_H */
