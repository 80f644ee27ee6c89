/* common/conv_cli: the values of the command line every program shares. The
 * defaults, every problem flag read, every number in its range, the output
 * files, and the small helpers (the selection flag, whole numbers, the
 * problem lines). The rules (every flag once, flags that set the same thing
 * rejected whatever their order, no abbreviations), the programs' own flags
 * and the help: test_cli_rules.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cli.h"
#include "conv_test_support.h"

/* A program with the 2D problem flags and no flags of its own. */
static const conv_cli_spec plain = {.program = "test", .summary = "summary"};

Test(cli, defaults_to_the_lecture_problem)
{
    const char *argv[] = {"prog"};
    conv_cli_options o = conv_test_cli_ok(&plain, 1, argv);
    cr_assert_eq(o.params.h, 768);
    cr_assert_eq(o.repeat, 10);
    cr_assert_eq(o.warmup, 2);
    cr_assert_eq(o.seed, 2024);
    cr_assert(o.csv_path == NULL && o.json_path == NULL);
    conv_params d = conv_params_default();
    cr_assert(memcmp(&o.params, &d, sizeof d) == 0, "%s", conv_shape_name(&o.params));
}

Test(cli, reads_every_problem_flag)
{
    const char *argv[] = {"prog", "--n",      "2",    "--c",        "3", "--h",
                          "29",   "--w",      "31",   "--k",        "5", "--filter",
                          "3",    "--stride", "2",    "--dilation", "2", "--padding",
                          "same", "--layout", "nhwc", "--repeat",   "4", "--warmup",
                          "0",    "--seed",   "9"};
    conv_cli_options o = conv_test_cli_ok(&plain, CONV_ARGC(argv), argv);
    conv_params p = o.params;
    cr_assert(p.n == 2 && p.c == 3 && p.h == 29 && p.w == 31 && p.k == 5 && p.r == 3 && p.s == 3);
    cr_assert(p.stride_h == 2 && p.stride_w == 2 && p.dil_h == 2 && p.dil_w == 2);
    cr_assert(p.pad_h == 2 && p.pad_w == 2, "same padding with dilation 2: pad %d", p.pad_h);
    cr_assert(p.layout == CONV_LAYOUT_NHWC && o.repeat == 4 && o.warmup == 0 && o.seed == 9);
}

Test(cli, reads_the_per_axis_flags)
{
    const char *argv[] = {"prog", "--h",     "40", "--w",     "50", "--r",        "3", "--s",
                          "5",    "--pad-h", "1",  "--pad-w", "2",  "--stride-h", "2", "--stride-w",
                          "3",    "--dil-h", "1",  "--dil-w", "2"};
    conv_params p = conv_test_cli_ok(&plain, CONV_ARGC(argv), argv).params;
    cr_assert(p.r == 3 && p.s == 5 && p.pad_h == 1 && p.pad_w == 2, "%s", conv_shape_name(&p));
    cr_assert(p.stride_h == 2 && p.stride_w == 3 && p.dil_h == 1 && p.dil_w == 2, "%s",
              conv_shape_name(&p));
    const char *eq[] = {"prog", "--h=40", "--seed=7"}; /* --flag=value works too */
    conv_cli_options o = conv_test_cli_ok(&plain, CONV_ARGC(eq), eq);
    cr_assert(o.params.h == 40 && o.seed == 7);
}

Test(cli, rejects_bad_flags_with_one_line_naming_them)
{
    struct {
        const char *args[6];
        int argc;
        const char *expect;
    } cases[] = {
        {{"prog", "--h", "0"}, 3, "--h"},
        {{"prog", "--n", "-1"}, 3, "--n"},
        {{"prog", "--w", "abc"}, 3, "--w"},
        {{"prog", "--w", "99999999999"}, 3, "out of range"},
        {{"prog", "--bogus", "1"}, 3, "unknown option '--bogus'"},
        {{"prog", "--h"}, 2, "option '--h' needs a value"},
        {{"prog", "--filter", "900", "--h", "9"}, 5, "larger than the padded image"},
        {{"prog", "--layout", "chwn"}, 3, "--layout"},
        {{"prog", "--padding", "full"}, 3, "--padding"},
        {{"prog", "--repeat", "0"}, 3, "--repeat"},
        {{"prog", "stray"}, 2, "unexpected argument"},
        {{"prog", "--n", "100000", "--c", "100000"}, 5, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        conv_cli_options o;
        conv_msg msg = {{0}};
        conv_status st = conv_test_cli_parse(&plain, &o, &msg, cases[i].argc, cases[i].args);
        if (cases[i].expect == NULL) /* 10^10 x 768 x 512 floats still fit size_t */
            continue;
        cr_assert_eq(st, CONV_ERR_INVALID, "case %zu accepted", i);
        cr_assert(strstr(msg.text, cases[i].expect) != NULL, "case %zu: '%s' lacks '%s'", i,
                  msg.text, cases[i].expect);
        cr_assert(strchr(msg.text, '\n') == NULL);
    }
    const char *overflow[] = {"prog",       "--n", "2000000000", "--c",
                              "2000000000", "--h", "2000000000"};
    conv_test_cli_fails(&plain, 7, overflow, "overflows size_t");
}

Test(cli, every_numeric_flag_is_checked_against_its_range)
{
    static const char *const sizes[] = {
        "--n",      "--c",      "--h",        "--w",        "--k",        "--r",     "--s",
        "--filter", "--stride", "--stride-h", "--stride-w", "--dilation", "--dil-h", "--dil-w"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        char want[64];
        snprintf(want, sizeof want, "invalid value for %s: ", sizes[i]);
        conv_test_cli_rejects(&plain, sizes[i], "0", want);
        conv_test_cli_rejects(&plain, sizes[i], "0", "out of range [1, 2147483647]");
        conv_test_cli_rejects(&plain, sizes[i], "2147483648", "out of range [1, 2147483647]");
        conv_test_cli_rejects(&plain, sizes[i], "1.5", "is not an integer");
        conv_test_cli_rejects(&plain, sizes[i], "", "is not an integer");
    }
    static const char *const pads[] = {"--pad", "--pad-h", "--pad-w"};
    for (size_t i = 0; i < sizeof pads / sizeof pads[0]; ++i) {
        conv_test_cli_rejects(&plain, pads[i], "-1", "out of range [0, 2147483647]");
        conv_test_cli_rejects(&plain, pads[i], "2147483648", "out of range [0, 2147483647]");
        const char *zero[] = {"prog", pads[i], "0"};
        conv_test_cli_ok(&plain, 3, zero);
    }
    static const conv_test_cli_case measurement[] = {
        {"--warmup", "-1", "invalid value for --warmup: -1 is out of range [0, 1000]"},
        {"--warmup", "1001", "out of range [0, 1000]"},
        {"--warmup", "2147483647", "out of range [0, 1000]"},
        {"--warmup", "99999999999999999999", "out of range [0, 1000]"},
        {"--repeat", "0", "invalid value for --repeat: 0 is out of range [1, 1000]"},
        {"--repeat", "1001", "out of range [1, 1000]"},
        {"--repeat", "100001", "out of range [1, 1000]"},
        {"--seed", "-1", "invalid value for --seed"},
        {"--seed", "18446744073709551616", "invalid value for --seed"},
        {"--seed", "12ab", "invalid value for --seed"},
    };
    conv_test_cli_rejects_each(&plain, measurement, CONV_COUNT(measurement));
    /* the ends of each range are accepted */
    const char *low[] = {"prog", "--warmup", "0", "--repeat", "1", "--seed", "0"};
    conv_test_cli_ok(&plain, CONV_ARGC(low), low);
    const char *ends[] = {
        "prog", "--warmup", "1000", "--repeat", "1000", "--seed", "18446744073709551615"};
    conv_cli_options o = conv_test_cli_ok(&plain, CONV_ARGC(ends), ends);
    cr_assert(o.warmup == 1000 && o.repeat == 1000 && o.seed == 18446744073709551615ull);
}

Test(cli, rejects_csv_and_json_naming_the_same_file)
{
    const char *same[] = {"prog", "--csv", "out.txt", "--json", "out.txt"};
    conv_test_cli_fails(&plain, 5, same, "--csv and --json name the same file 'out.txt'");
    const char *apart[] = {"prog", "--json", "out.json", "--csv", "out.csv"};
    conv_cli_options o = conv_test_cli_ok(&plain, 5, apart);
    cr_assert_str_eq(o.csv_path, "out.csv");
    cr_assert_str_eq(o.json_path, "out.json");
    conv_test_cli_rejects(&plain, "--csv", "", "invalid value for --csv: empty file name");
    conv_test_cli_rejects(&plain, "--json", "", "invalid value for --json: empty file name");
}

/* conv_bench refuses a shape flag beside --problem, naming the first one. */
Test(cli, records_the_first_shape_flag_and_whether_the_layout_was_given)
{
    const char *none[] = {"prog", "--repeat", "3", "--seed", "1"};
    conv_cli_options o = conv_test_cli_ok(&plain, 5, none);
    cr_assert_null(o.shape_flag, "measurement flags are not shape flags");
    cr_assert_eq(o.layout_given, 0);
    const char *layout[] = {"prog", "--layout", "nhwc"};
    o = conv_test_cli_ok(&plain, 3, layout);
    cr_assert_null(o.shape_flag, "the layout is not a shape flag");
    cr_assert_eq(o.layout_given, 1);
    const char *both[] = {"prog", "--layout", "nchw", "--w", "9", "--h", "9"};
    o = conv_test_cli_ok(&plain, CONV_ARGC(both), both);
    cr_assert_str_eq(o.shape_flag, "w", "the flag's name, without its dashes");
    cr_assert_eq(o.layout_given, 1);
    const char *padding[] = {"prog", "--padding", "valid"};
    o = conv_test_cli_ok(&plain, 3, padding);
    cr_assert_str_eq(o.shape_flag, "padding");
}

Test(cli, selects_a_word_or_every_word_for_all)
{
    cr_assert(conv_cli_selects("gridstride", "gridstride"));
    cr_assert_not(conv_cli_selects("gridstride", "2d"));
    cr_assert(conv_cli_selects("all", "gridstride"));
    cr_assert(conv_cli_selects("all", "2d"));
    cr_assert(conv_cli_selects("all", "all"), "the word itself");
    cr_assert_not(conv_cli_selects("grid", "gridstride"), "no prefixes");
    cr_assert_not(conv_cli_selects(NULL, "2d"));
    cr_assert_not(conv_cli_selects("2d", NULL));
}

Test(cli, parse_ll_takes_whole_numbers_in_range_only)
{
    long long v = -7;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_cli_parse_ll("x", "42", 0, 100, &v, &msg), msg);
    cr_assert_eq(v, 42);
    CONV_ASSERT_OK(conv_cli_parse_ll("x", "-5", -5, 5, &v, &msg), msg);
    cr_assert_eq(v, -5);
    v = 9;
    cr_assert_eq(conv_cli_parse_ll("x", "101", 0, 100, &v, &msg), CONV_ERR_INVALID);
    cr_assert_str_eq(msg.text, "invalid value for --x: 101 is out of range [0, 100]");
    cr_assert_eq(v, 9, "unchanged on error");
    cr_assert_eq(conv_cli_parse_ll("x", "4e3", 0, 10000, &v, &msg), CONV_ERR_INVALID);
    cr_assert_str_eq(msg.text, "invalid value for --x: '4e3' is not an integer");
    cr_assert_eq(conv_cli_parse_ll("x", "9223372036854775808", 0, 100, &v, &msg), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "out of range");
}

Test(cli, prints_the_problem_and_its_work)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    conv_params p = conv_params_default();
    conv_cli_print_problem(out, &p);
    fclose(out);
    cr_assert(strstr(text, "problem: N=1 C=6 H=768 W=512 K=6 R=6 S=6") == text, "%s", text);
    cr_assert(strstr(text, "\nwork:    1.003 GFLOP, at least ") != NULL, "%s", text);
    free(text);
}
