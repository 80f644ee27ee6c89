/* common/conv_cli: --problem NAME|all, a problem of the course's catalogue
 * (conv_problems.h) on the command line of every program that runs a
 * convolution. The name is checked while parsing; it fixes the shape, so a
 * shape flag beside it is refused whatever the order; --layout still
 * applies; a program's default problem is a name of the catalogue; and the
 * help shows the names. (The problems a run gets from it: test_program.c.) */
#include <stdio.h>
#include <string.h>

#include "conv_cli.h"
#include "conv_problems.h"
#include "conv_test_support.h"

/* A program with the 2D problem flags; one whose own flags describe a
 * convolution (step 03's); one without any (the GEMM's). */
static const conv_cli_spec plain = {.program = "test", .summary = "summary"};
static const conv_flag width_mask[] = {
    {"width", CONV_FLAG_INT, "W", "number of floats", "1024", 1, 1 << 30},
    {"mask", CONV_FLAG_INT, "M", "mask width", "7", 1, 99},
};
static const conv_cli_spec one_d = {.program = "one_d",
                                    .summary = "s",
                                    CONV_FLAGS(width_mask),
                                    .shape = CONV_CLI_SHAPE_NONE,
                                    .own_shape_flags = "width|mask"};
static const conv_cli_spec gemm = {.program = "gemm", .summary = "s", .shape = CONV_CLI_SHAPE_NONE};

Test(cli, problem_takes_a_name_of_the_catalogue_or_all)
{
    const char *named[] = {"prog", "--problem", "hpc101"};
    conv_cli_options o = conv_test_cli_ok(&plain, 3, named);
    cr_assert_str_eq(o.problem, "hpc101");
    cr_assert_null(o.shape_flag, "--problem is no shape flag");
    const char *all[] = {"prog", "--problem=all"};
    cr_assert_str_eq(conv_test_cli_ok(&plain, 2, all).problem, "all");
    const char *none[] = {"prog"};
    cr_assert_null(conv_test_cli_ok(&plain, 1, none).problem);
    cr_assert_str_eq(conv_test_cli_ok(&one_d, 3, named).problem, "hpc101");
}

Test(cli, an_unknown_problem_is_refused_in_one_line_listing_the_names)
{
    const conv_cli_spec *specs[] = {&plain, &one_d};
    for (int i = 0; i < 2; ++i) {
        conv_test_cli_rejects(specs[i], "--problem", "nope",
                              "invalid value for --problem: 'nope' (expected one of lecture,"
                              "hpc101,cutlass,ece408-l1,ece408-l2,hpc101-image,conv1d,hpc101-nhwc,"
                              "cutlass-nhwc,all)");
        conv_test_cli_rejects(specs[i], "--problem", "", "invalid value for --problem: ''");
        conv_test_cli_rejects(specs[i], "--problem", NULL, "option '--problem' needs a value");
        conv_test_cli_rejects(specs[i], "--prob", "lecture", "unknown option '--prob'");
    }
    const char *twice[] = {"prog", "--problem", "lecture", "--problem", "lecture"};
    conv_test_cli_fails(&plain, 5, twice, "--problem is given twice");
}

/* Each shape flag beside --problem, before and after it: the same line. */
Test(cli, a_shape_flag_beside_problem_is_refused_whatever_the_order)
{
    const char *flags[][2] = {{"--h", "16"},         {"--n", "2"},        {"--filter", "3"},
                              {"--padding", "same"}, {"--stride-w", "2"}, {"--pad", "0"},
                              {"--dilation", "1"},   {"--k", "6"}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; ++i)
        for (int order = 0; order < 2; ++order) {
            const char *argv[5] = {"prog"};
            const char **at = argv + 1 + 2 * order, **other = argv + 3 - 2 * order;
            at[0] = "--problem", at[1] = "lecture";
            other[0] = flags[i][0], other[1] = flags[i][1];
            char want[256];
            snprintf(want, sizeof want,
                     "%s cannot be combined with --problem: a named problem fixes the shape (only "
                     "--layout applies to it); leave out --problem for a custom shape",
                     flags[i][0]);
            conv_test_cli_fails(&plain, 5, argv, want);
        }
    const char *layout[] = {"prog", "--layout", "nhwc", "--problem", "all"};
    conv_cli_options o = conv_test_cli_ok(&plain, 5, layout);
    cr_assert(o.layout_given && o.params.layout == CONV_LAYOUT_NHWC, "--layout applies");
}

Test(cli, a_program_whose_own_flags_describe_the_problem_refuses_them_beside_problem)
{
    const char *argv[] = {"prog", "--problem", "conv1d", "--mask", "5"};
    conv_test_cli_fails(&one_d, 5, argv,
                        "--mask cannot be combined with --problem: a named problem fixes the "
                        "shape; leave out --problem for a custom shape");
    const char *own[] = {"prog", "--mask", "5", "--width", "9"};
    conv_cli_options o = conv_test_cli_ok(&one_d, 5, own);
    cr_assert_str_eq(o.shape_flag, "mask", "its own shape flags are shape flags");
    cr_assert_eq(o.n_shape_flags, 2);
    conv_test_cli_rejects(&one_d, "--h", "5", "unknown option '--h'");
    conv_test_cli_rejects(&one_d, "--layout", "nhwc", "unknown option '--layout'");
}

Test(cli, a_program_without_a_convolution_problem_has_no_problem_flag)
{
    conv_test_cli_rejects(&gemm, "--problem", "lecture", "unknown option '--problem'");
    char text[8192];
    conv_test_cli_help(&gemm, text, sizeof text);
    cr_assert_null(strstr(text, "--problem"), "%s", text);
}

Test(cli, the_default_problem_is_a_name_of_the_catalogue)
{
    const conv_cli_spec spec = {.program = "prog", .default_problem = "cutlass-nhwc"};
    const char *none[] = {"prog"};
    conv_cli_options o = conv_test_cli_ok(&spec, 1, none);
    const conv_params *want = &conv_problem_find("cutlass-nhwc")->params;
    cr_assert(memcmp(&o.params, want, sizeof *want) == 0, "%s", conv_shape_name(&o.params));
    const char *h[] = {"prog", "--h", "32"};
    o = conv_test_cli_ok(&spec, 3, h);
    cr_assert(o.params.h == 32 && o.params.n == 8 && o.params.layout == CONV_LAYOUT_NHWC,
              "a flag changes the default problem's value: %s", conv_shape_name(&o.params));
    const conv_cli_spec typo = {.program = "prog", .default_problem = "cutlas"};
    conv_test_cli_fails(&typo, 1, none, "internal error: no problem 'cutlas' in the catalogue");
}

Test(cli, help_names_the_problems_and_the_default_one)
{
    char text[8192];
    conv_test_cli_help(&plain, text, sizeof text);
    char want[512];
    snprintf(want, sizeof want, "\nthe problem (default: lecture, %s):\n  --problem %s\n",
             conv_problem_find("lecture")->about, conv_problem_names());
    cr_assert_not_null(strstr(text, want), "--problem first in the problem's flags:\n%s", text);
    cr_assert_not_null(strstr(text, "a problem of the course by name instead of a shape (all: "
                                    "each in turn)"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "\n  (--problem fixes the shape: give it or the flags after "
                                    "it; --layout applies to a problem whose name does not say "
                                    "its layout)\n"),
                       "%s", text);
    const conv_cli_spec seven = {.program = "prog", .default_problem = "cutlass"};
    conv_test_cli_help(&seven, text, sizeof text);
    cr_assert_not_null(strstr(text, "the problem (default: cutlass, CUTLASS's reference problem, "
                                    "3x3 same):\n"),
                       "%s", text);
    cr_assert_not_null(strstr(text, "\n  --n N "), "%s", text);
    cr_assert_not_null(strstr(strstr(text, "\n  --n N "), "(default 8)\n"), "its values:\n%s",
                       text);
    conv_test_cli_help(&one_d, text, sizeof text);
    snprintf(want, sizeof want,
             "\nthe problem, by name instead of --width, --mask:\n  --problem %s\n",
             conv_problem_names());
    cr_assert_not_null(strstr(text, want), "%s", text);
    cr_assert_null(strstr(text, "--layout"), "%s", text);
}

/* A program whose flag and keys were renamed: the old names are refused in
 * one line that gives the new ones, and the new ones work. */
static const conv_flag variant[] = {
    {"variant", CONV_FLAG_CHOICE, "4a|4b|all", "which versions", "all", 0, 0},
};
static const conv_cli_spec renamed = {.program = "renamed",
                                      .summary = "s",
                                      CONV_FLAGS(variant),
                                      .renamed = "--strategy=--variant|1=4a|2=4b"};

Test(cli, an_old_flag_or_key_is_refused_with_its_new_name)
{
    static const conv_test_cli_case old[] = {
        {"--strategy", "1", "--strategy 1 is now --variant 4a (see --help)"},
        {"--strategy=2", NULL, "--strategy 2 is now --variant 4b (see --help)"},
        {"--strategy", "mc", "--strategy is now --variant (see --help)"},
        {"--variant", "2", "--variant 2 is now --variant 4b (see --help)"},
        {"--variant", "3", "invalid value for --variant: '3'"},
        {"--strat", "1", "unknown option '--strat'"},
    };
    conv_test_cli_rejects_each(&renamed, old, CONV_COUNT(old));
    conv_test_cli_rejects(&plain, "--strategy", "1", "unknown option '--strategy'");
    const char *now[] = {"prog", "--variant", "4b"};
    cr_assert_str_eq(conv_test_cli_ok(&renamed, 3, now).value[0], "4b");
}
