/* common/conv_cli: the rules of the command line every program shares. A
 * flag may be given once; flags that set the same thing are rejected whatever
 * their order; no abbreviations; a program's own flags (defaults, values,
 * names that reuse the problem flags'); and the help. The values and ranges:
 * test_cli.c. */
#include <stdio.h>
#include <string.h>

#include "conv_cli.h"
#include "conv_test_support.h"

/* A program with the 2D problem flags and no flags of its own. */
static const conv_cli_spec plain = {.program = "test", .summary = "summary"};
/* A program without them (the GEMM's). */
static const conv_cli_spec no_problem = {
    .program = "gemm", .summary = "s", .shape = CONV_CLI_SHAPE_NONE};

Test(cli, rejects_a_flag_given_twice)
{
    const char *cases[][5] = {
        {"prog", "--h", "5", "--h", "5"},
        {"prog", "--repeat", "3", "--repeat", "4"},
        {"prog", "--csv", "a.csv", "--csv", "b.csv"},
        {"prog", "--layout", "nchw", "--layout", "nhwc"},
        {"prog", "--padding", "same", "--padding", "same"},
    };
    const char *names[] = {"--h", "--repeat", "--csv", "--layout", "--padding"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char want[64];
        snprintf(want, sizeof want, "%s is given twice", names[i]);
        conv_test_cli_fails(&plain, 5, cases[i], want);
    }
}

/* Each pair in both orders: the same error, never "the last one wins". */
Test(cli, rejects_two_flags_that_set_the_same_thing_whatever_their_order)
{
    const char *pairs[][4] = {
        {"--padding", "same", "--pad-h", "5"}, {"--padding", "valid", "--pad", "1"},
        {"--padding", "same", "--pad-w", "1"}, {"--filter", "3", "--r", "3"},
        {"--filter", "3", "--s", "5"},         {"--stride", "2", "--stride-h", "2"},
        {"--stride", "2", "--stride-w", "1"},  {"--dilation", "2", "--dil-h", "2"},
        {"--dilation", "2", "--dil-w", "3"},   {"--pad", "1", "--pad-h", "1"},
        {"--pad", "1", "--pad-w", "2"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; ++i)
        for (int order = 0; order < 2; ++order) {
            const char *a = pairs[i][order ? 2 : 0], *av = pairs[i][order ? 3 : 1];
            const char *b = pairs[i][order ? 0 : 2], *bv = pairs[i][order ? 1 : 3];
            const char *argv[] = {"prog", a, av, b, bv};
            conv_cli_options o;
            conv_msg msg = {{0}};
            cr_assert_eq(conv_test_cli_parse(&plain, &o, &msg, 5, argv), CONV_ERR_INVALID,
                         "%s %s %s %s accepted", a, av, b, bv);
            CONV_ASSERT_ONE_LINE(msg.text, "set the same thing");
            cr_assert(strstr(msg.text, pairs[i][0]) && strstr(msg.text, pairs[i][2]),
                      "'%s' does not name %s and %s", msg.text, pairs[i][0], pairs[i][2]);
        }
    /* flags for different things combine freely */
    const char *fine[] = {"prog",    "--filter", "3",   "--padding", "same", "--stride-h", "2",
                          "--dil-w", "2",        "--h", "20",        "--w",  "20"};
    conv_test_cli_ok(&plain, CONV_ARGC(fine), fine);
}

/* getopt_long would take "--he" for "--help" and "--rep" for "--repeat". */
Test(cli, accepts_no_abbreviation_of_a_flag)
{
    const char *abbrev[] = {"--he", "--rep", "--fil", "--str", "--dil", "--lay", "--se", "--cs"};
    for (size_t i = 0; i < sizeof abbrev / sizeof abbrev[0]; ++i) {
        char want[64];
        snprintf(want, sizeof want, "unknown option '%s'", abbrev[i]);
        conv_test_cli_rejects(&plain, abbrev[i], "3", want);
    }
    conv_test_cli_rejects(&plain, "--rep=3", NULL, "unknown option '--rep'");
    /* without the problem flags, "--h" is not --help either */
    conv_test_cli_rejects(&no_problem, "--h", NULL, "unknown option '--h'");
    conv_test_cli_rejects(&no_problem, "--h", "5", "unknown option '--h'");
    /* a flag's value may itself start with dashes */
    const char *dashes[] = {"prog", "--csv", "--odd-name.csv"};
    conv_cli_options o = conv_test_cli_ok(&plain, 3, dashes);
    cr_assert_str_eq(o.csv_path, "--odd-name.csv");
}

Test(cli, a_program_without_the_problem_flags_rejects_them)
{
    const char *flags[] = {"--n", "--c", "--filter", "--pad", "--padding", "--layout", "--dil-w"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; ++i) {
        char want[64];
        snprintf(want, sizeof want, "unknown option '%s'", flags[i]);
        conv_test_cli_rejects(&no_problem, flags[i], "1", want);
    }
    /* the measurement flags remain; the problem is not validated */
    const char *argv[] = {"prog", "--repeat", "3", "--seed", "5"};
    conv_cli_options o = conv_test_cli_ok(&no_problem, 5, argv);
    cr_assert(o.repeat == 3 && o.seed == 5);
}

/* The GEMM's --m --n --k: its own flags may reuse the problem flags' names. */
Test(cli, a_program_may_name_its_own_problem_flags)
{
    static const conv_flag flags[] = {
        {"m", CONV_FLAG_INT, "M", "rows of A", "64", 1, 65536},
        {"n", CONV_FLAG_INT, "N", "columns of B", "32", 1, 65536},
        {"k", CONV_FLAG_INT, "K", "inner size", NULL, 1, 65536},
    };
    const conv_cli_spec gemm = {.program = "gemm",
                                .summary = "s",
                                .flags = flags,
                                .n_flags = 3,
                                .shape = CONV_CLI_SHAPE_NONE};
    const char *argv[] = {"prog", "--n", "7", "--k", "9"};
    conv_cli_options o = conv_test_cli_ok(&gemm, 5, argv);
    cr_assert_eq(o.number[0], 64, "default of --m");
    cr_assert_eq(o.number[1], 7);
    cr_assert_eq(o.number[2], 9);
    cr_assert(!o.given[0] && o.given[1] && o.given[2]);
    cr_assert_str_eq(o.value[0], "64");
    cr_assert_str_eq(o.value[1], "7");
    conv_test_cli_rejects(&gemm, "--n", "65537",
                          "invalid value for --n: 65537 is out of range [1, 65536]");
    conv_test_cli_rejects(&gemm, "--m", "0", "out of range [1, 65536]");
}

static const conv_flag program_flags[] = {
    {"variant", CONV_FLAG_CHOICE, "all|gridstride|2d", "which kernel(s) to run", "all", 0, 0},
    {"host-repeat", CONV_FLAG_INT, "N", "timed runs of the CPU versions", "3", 0, 100},
    {"label", CONV_FLAG_TEXT, "TEXT", "a name for the run", NULL, 0, 0},
};
static const conv_cli_spec with_flags = {.program = "prog",
                                         .summary = "a program with flags of its own",
                                         .flags = program_flags,
                                         .n_flags = 3};

Test(cli, a_program_flag_takes_its_default_until_given)
{
    const char *none[] = {"prog"};
    conv_cli_options o = conv_test_cli_ok(&with_flags, 1, none);
    cr_assert_str_eq(o.value[0], "all");
    cr_assert_str_eq(o.value[1], "3");
    cr_assert_eq(o.number[1], 3);
    cr_assert_null(o.value[2], "no default: NULL");
    cr_assert(!o.given[0] && !o.given[1] && !o.given[2]);

    const char *all[] = {"prog", "--variant", "2d", "--host-repeat", "0", "--label", "run one"};
    o = conv_test_cli_ok(&with_flags, CONV_ARGC(all), all);
    cr_assert_str_eq(o.value[0], "2d");
    cr_assert_eq(o.number[1], 0);
    cr_assert_str_eq(o.value[2], "run one");
    cr_assert(o.given[0] && o.given[1] && o.given[2]);
    /* given with its default value is still given */
    const char *same[] = {"prog", "--variant", "all"};
    o = conv_test_cli_ok(&with_flags, 3, same);
    cr_assert(o.given[0]);
}

Test(cli, a_bad_program_flag_value_names_the_flag_and_what_it_takes)
{
    static const conv_test_cli_case bad[] = {
        {"--variant", "3d",
         "invalid value for --variant: '3d' (expected one of all,gridstride,2d)"},
        {"--variant", "grid", "expected one of"}, /* no prefixes */
        {"--variant", "", "expected one of"},
        {"--host-repeat", "101", "invalid value for --host-repeat: 101 is out of range [0, 100]"},
        {"--host-repeat", "-1", "out of range [0, 100]"},
        {"--host-repeat", "two", "is not an integer"},
        {"--label", "", "invalid value for --label: empty"},
        {"--variant", NULL, "option '--variant' needs a value"},
    };
    conv_test_cli_rejects_each(&with_flags, bad, CONV_COUNT(bad));
    const char *twice[] = {"prog", "--variant", "2d", "--variant", "2d"};
    conv_test_cli_fails(&with_flags, 5, twice, "--variant is given twice");
}

Test(cli, a_spec_with_too_many_flags_or_a_bad_default_is_an_internal_error)
{
    conv_flag many[CONV_CLI_MAX_FLAGS + 1];
    for (int i = 0; i <= CONV_CLI_MAX_FLAGS; ++i)
        many[i] = (conv_flag){"x", CONV_FLAG_TEXT, "X", "x", NULL, 0, 0};
    conv_cli_spec spec = {.program = "p", .flags = many, .n_flags = CONV_CLI_MAX_FLAGS + 1};
    const char *argv[] = {"prog"};
    conv_test_cli_fails(&spec, 1, argv, "internal error");
    const conv_flag bad_default[] = {{"count", CONV_FLAG_INT, "N", "n", "500", 0, 100}};
    spec = (conv_cli_spec){.program = "p", .flags = bad_default, .n_flags = 1};
    conv_test_cli_fails(&spec, 1, argv, "internal error: default of --count");
}

/* The line of the usage that describes `flag` ("--h H"), copied into line. */
static int help_line(const char *text, const char *flag, char *line, size_t len)
{
    char head[64];
    snprintf(head, sizeof head, "\n  %s ", flag);
    const char *at = strstr(text, head);
    if (at == NULL)
        return 0;
    ++at;
    size_t n = strcspn(at, "\n");
    snprintf(line, len, "%.*s", (int)n, at);
    return 1;
}

Test(cli, help_is_not_an_error_and_extras_are_returned)
{
    static const conv_flag extras[] = {
        {"strategy", CONV_FLAG_CHOICE, "1|2|3|all", "which kernel", "all", 0, 0}};
    const conv_cli_spec spec = {.program = "prog", .summary = "sum", .flags = extras, .n_flags = 1};
    char text[8192];
    conv_test_cli_help(&spec, text, sizeof text);
    cr_assert(strstr(text, "--strategy") && strstr(text, "--padding"), "usage: %s", text);
    const char *args[] = {"prog", "--strategy", "2"};
    cr_assert_str_eq(conv_test_cli_ok(&spec, 3, args).value[0], "2");
}

Test(cli, help_aligns_every_description_in_one_column)
{
    char text[8192];
    conv_test_cli_help(&with_flags, text, sizeof text);
    int column = -1, lines = 0;
    for (const char *line = text; *line != '\0';) {
        int len = (int)strcspn(line, "\n");
        if (strncmp(line, "  --", 4) == 0) {
            /* the flag and its metavar, then at least two spaces, then the
             * help; a flag too long for the column (--problem's names) is
             * alone on its line, and its help below starts in the column */
            const char *gap = strstr(line + 2, "  ");
            if (gap == NULL || gap > line + len)
                gap = line + len + 1;
            int at = (int)(gap - line + strspn(gap, " "));
            if (gap == line + len + 1)
                at -= len + 1;
            if (column < 0)
                column = at;
            cr_assert_eq(at, column, "'%.*s' starts its help at column %d, the others at %d", len,
                         line, at, column);
            ++lines;
        }
        line += len + (line[len] == '\n');
    }
    cr_assert_eq(lines, 3 + 20 + 6, "every flag has its line:\n%s", text);
}

/* A flag with many choices is shown whole on its own line, its help below in
 * the column of the others; the column does not widen for it. */
Test(cli, help_shows_a_long_choice_list_whole_on_its_own_line)
{
    static const conv_flag long_one[] = {
        {"kernel", CONV_FLAG_CHOICE,
         "alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliett|kilo|lima|mike|all",
         "a kernel by name", NULL, 0, 0}};
    const conv_cli_spec spec = {.program = "prog", .flags = long_one, .n_flags = 1};
    char text[8192];
    conv_test_cli_help(&spec, text, sizeof text);
    const char *head = strstr(text, "\n  --kernel alpha|");
    cr_assert_not_null(head, "%s", text);
    cr_assert(strncmp(strstr(head, "|mike|all"), "|mike|all\n", 10) == 0,
              "the list whole, then a new line:\n%s", text);
    const char *help = strstr(head + 1, "\n") + 1;
    const char *n_line = strstr(text, "\n  --n N ") + 1;
    cr_assert_eq(strspn(help, " "), strspn(n_line + 7, " ") + 7,
                 "the help in the column of --n's:\n%s", text);
    cr_assert(strncmp(help + strspn(help, " "), "a kernel by name", 16) == 0, "%s", text);
}

Test(cli, help_shows_the_defaults_and_the_ranges)
{
    char text[8192], line[256];
    conv_test_cli_help(&with_flags, text, sizeof text);
    const struct {
        const char *flag, *want;
    } expected[] = {
        {"--warmup", "(default 2)"},
        {"--warmup", "0 to 1000"},
        {"--repeat", "(default 10)"},
        {"--repeat", "1 to 1000"},
        {"--seed", "(default 2024)"},
        {"--n", "(default 1)"},
        {"--c", "(default 6)"},
        {"--h", "(default 768)"},
        {"--w", "(default 512)"},
        {"--k", "(default 6)"},
        {"--r", "(default 6)"},
        {"--s", "(default 6)"},
        {"--filter", "(default 6)"},
        {"--pad", "(default 0)"},
        {"--padding", "(default valid)"},
        {"--stride", "(default 1)"},
        {"--dilation", "(default 1)"},
        {"--layout", "(default nchw)"},
        {"--h", ">= 1"},
        {"--pad-h", ">= 0"},
        {"--variant", "(default all)"},
        {"--host-repeat", "(default 3)"},
        {"--host-repeat", "0 to 100"},
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; ++i) {
        cr_assert(help_line(text, expected[i].flag, line, sizeof line), "no line for %s:\n%s",
                  expected[i].flag, text);
        cr_assert(strstr(line, expected[i].want) != NULL, "'%s' lacks '%s'", line,
                  expected[i].want);
    }
    cr_assert(help_line(text, "--label", line, sizeof line));
    cr_assert_null(strstr(line, "(default"), "no default, none shown: '%s'", line);
    cr_assert(strstr(text, "usage: prog [options]\na program with flags of its own\n") == text,
              "%s", text);
    cr_assert(strstr(text, "Exit status: 0") != NULL);

    /* a program's own warm-up and repeat counts are the defaults shown and used */
    conv_cli_spec slow = with_flags;
    slow.default_warmup = 1;
    slow.default_repeat = 5;
    conv_test_cli_help(&slow, text, sizeof text);
    cr_assert(help_line(text, "--warmup", line, sizeof line) && strstr(line, "(default 1)"), "%s",
              line);
    cr_assert(help_line(text, "--repeat", line, sizeof line) && strstr(line, "(default 5)"), "%s",
              line);
    const char *argv[] = {"prog"};
    conv_cli_options o = conv_test_cli_ok(&slow, 1, argv);
    cr_assert(o.warmup == 1 && o.repeat == 5);
    slow.default_warmup = 0; /* warm-up 0 with a repeat count of its own */
    o = conv_test_cli_ok(&slow, 1, argv);
    cr_assert(o.warmup == 0 && o.repeat == 5);
}

Test(cli, help_of_a_program_without_the_problem_flags_lists_none)
{
    char text[8192], line[256];
    conv_test_cli_help(&no_problem, text, sizeof text);
    cr_assert_not(help_line(text, "--h", line, sizeof line), "%s", text);
    cr_assert_not(help_line(text, "--padding", line, sizeof line), "%s", text);
    cr_assert(help_line(text, "--repeat", line, sizeof line), "%s", text);
}
