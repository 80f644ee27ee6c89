/* conv_bench: every step's kernels on named problems (or a custom shape), in
 * one run beside step 01 on the CPU and cuDNN, each verified before it is
 * timed. One table per problem; --csv and --json write every row of every
 * problem. Without a GPU it runs the CPU rows and says why the GPU rows are
 * skipped (exit status 0).
 *
 * One rule for the shape: --problem NAME fixes the shape, so the problem
 * flags (--n ... --dil-w, --padding) are rejected with it; --layout is the
 * exception: it picks the layout of the named problems whose name does not
 * already say it (hpc101 --layout nhwc is hpc101-nhwc). Without --problem,
 * the problem flags describe one custom problem. The program body, the
 * common flags and the exit status are those of every program
 * (common/conv_program.h). */
#include <string.h>

#include "bench_problems.h"
#include "bench_rows.h"
#include "conv_program.h"

enum { FLAG_PROBLEM, FLAG_STEPS }; /* the order of flags[] */

static int problems(const conv_cli_options *opt, conv_named_problem *out, int max, conv_msg *msg)
{
    unsigned steps;
    if (bench_parse_steps(opt->value[FLAG_STEPS], &steps, msg) != CONV_OK)
        return -1;
    if (!opt->given[FLAG_PROBLEM]) {
        out[0] = (conv_named_problem){"custom", "the shape given on the command line", opt->params};
        return 1;
    }
    if (opt->shape_flag != NULL) {
        conv_fail(msg, CONV_ERR_INVALID,
                  "--%s cannot be combined with --problem: a named problem fixes the shape (only "
                  "--layout applies to it); leave out --problem for a custom shape",
                  opt->shape_flag);
        return -1;
    }
    const bench_problem *first;
    int count;
    if (bench_problem_select(opt->value[FLAG_PROBLEM], &first, &count, msg) != CONV_OK)
        return -1;
    for (int i = 0; i < count && i < max; ++i) {
        out[i] = (conv_named_problem){first[i].name, first[i].about, first[i].params};
        if (!first[i].fixed_layout)
            out[i].params.layout = opt->params.layout;
    }
    return count < max ? count : max;
}

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)select;
    unsigned steps = BENCH_STEP_ALL;
    bench_parse_steps(opt->value[FLAG_STEPS], &steps, NULL); /* checked by problems() */
    return bench_rows(p, steps, r, max);
}

int main(int argc, char **argv)
{
    static const conv_flag flags[] = {
        {"problem", CONV_FLAG_CHOICE,
         "lecture|hpc101|cutlass|ece408-l1|ece408-l2|hpc101-image|conv1d|hpc101-nhwc|cutlass-nhwc|"
         "all",
         "a named problem (without it: the shape given by the problem flags)", NULL, 0, 0},
        {"steps", CONV_FLAG_TEXT, "LIST",
         "rows to run: comma-separated 01,02,03,04,05,06,07,08,cudnn, or all", "all", 0, 0},
    };
    static const conv_program prog = {
        .cli = {.program = "conv_bench",
                .summary = "Every step's kernels on named problems, beside step 01 on the CPU and "
                           "cuDNN, each verified before it is timed.",
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
    };
    return conv_program_main(&prog, argc, argv);
}
