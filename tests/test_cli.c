/* common/conv_cli: the command line every program shares. Every number in its
 * range, every flag once, flags that set the same thing rejected whatever
 * their order, no abbreviations, the program's own flags, and the help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cli.h"
#include "conv_test_support.h"

/* A program with the 2D problem flags and no flags of its own. */
static const conv_cli_spec plain = {.program = "test", .summary = "summary"};

static conv_status parse_spec(const conv_cli_spec *spec, conv_cli_options *o, conv_msg *msg,
                              int argc, const char **argv)
{
    FILE *sink = fopen("/dev/null", "w");
    cr_assert_not_null(sink);
    conv_status st = conv_cli_parse(argc, (char **)argv, spec, o, sink, msg);
    fclose(sink);
    return st;
}

static conv_status parse(conv_cli_options *o, conv_msg *msg, int argc, const char **argv)
{
    return parse_spec(&plain, o, msg, argc, argv);
}

#define ARGC(argv) ((int)(sizeof(argv) / sizeof(argv)[0]))

/* Parses "prog <flag> <value>" and expects one line that contains `want`. */
static void expect_rejected(const conv_cli_spec *spec, const char *flag, const char *value,
                            const char *want)
{
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog", flag, value};
    conv_status st = parse_spec(spec, &o, &msg, value != NULL ? 3 : 2, argv);
    cr_assert_eq(st, CONV_ERR_INVALID, "%s %s accepted", flag, value ? value : "");
    cr_assert(strstr(msg.text, want) != NULL, "%s %s: '%s' lacks '%s'", flag, value ? value : "",
              msg.text, want);
    cr_assert(strchr(msg.text, '\n') == NULL, "%s: more than one line", flag);
}

static void expect_accepted(const conv_cli_spec *spec, int argc, const char **argv)
{
    conv_cli_options o;
    conv_msg msg = {{0}};
    conv_status st = parse_spec(spec, &o, &msg, argc, argv);
    cr_assert_eq(st, CONV_OK, "%s %s %s rejected: %s", argv[1], argc > 2 ? argv[2] : "",
                 argc > 3 ? argv[3] : "", msg.text);
}

Test(cli, defaults_to_the_lecture_problem)
{
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog"};
    CONV_ASSERT_OK(parse(&o, &msg, 1, argv), msg);
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
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog", "--n",      "2",    "--c",        "3", "--h",
                          "29",   "--w",      "31",   "--k",        "5", "--filter",
                          "3",    "--stride", "2",    "--dilation", "2", "--padding",
                          "same", "--layout", "nhwc", "--repeat",   "4", "--warmup",
                          "0",    "--seed",   "9"};
    CONV_ASSERT_OK(parse(&o, &msg, ARGC(argv), argv), msg);
    conv_params p = o.params;
    cr_assert(p.n == 2 && p.c == 3 && p.h == 29 && p.w == 31 && p.k == 5 && p.r == 3 && p.s == 3);
    cr_assert(p.stride_h == 2 && p.stride_w == 2 && p.dil_h == 2 && p.dil_w == 2);
    cr_assert(p.pad_h == 2 && p.pad_w == 2, "same padding with dilation 2: pad %d", p.pad_h);
    cr_assert(p.layout == CONV_LAYOUT_NHWC && o.repeat == 4 && o.warmup == 0 && o.seed == 9);
}

Test(cli, reads_the_per_axis_flags)
{
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog", "--h",     "40", "--w",     "50", "--r",        "3", "--s",
                          "5",    "--pad-h", "1",  "--pad-w", "2",  "--stride-h", "2", "--stride-w",
                          "3",    "--dil-h", "1",  "--dil-w", "2"};
    CONV_ASSERT_OK(parse(&o, &msg, ARGC(argv), argv), msg);
    conv_params p = o.params;
    cr_assert(p.r == 3 && p.s == 5 && p.pad_h == 1 && p.pad_w == 2, "%s", conv_shape_name(&p));
    cr_assert(p.stride_h == 2 && p.stride_w == 3 && p.dil_h == 1 && p.dil_w == 2, "%s",
              conv_shape_name(&p));
    const char *eq[] = {"prog", "--h=40", "--seed=7"}; /* --flag=value works too */
    CONV_ASSERT_OK(parse(&o, &msg, ARGC(eq), eq), msg);
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
        conv_status st = parse(&o, &msg, cases[i].argc, cases[i].args);
        if (cases[i].expect == NULL) /* 10^10 x 768 x 512 floats still fit size_t */
            continue;
        cr_assert_eq(st, CONV_ERR_INVALID, "case %zu accepted", i);
        cr_assert(strstr(msg.text, cases[i].expect) != NULL, "case %zu: '%s' lacks '%s'", i,
                  msg.text, cases[i].expect);
        cr_assert(strchr(msg.text, '\n') == NULL);
    }
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *overflow[] = {"prog",       "--n", "2000000000", "--c",
                              "2000000000", "--h", "2000000000"};
    cr_assert_eq(parse(&o, &msg, 7, overflow), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "overflows size_t") != NULL, "%s", msg.text);
}

Test(cli, every_numeric_flag_is_checked_against_its_range)
{
    static const char *const sizes[] = {
        "--n",      "--c",      "--h",        "--w",        "--k",        "--r",     "--s",
        "--filter", "--stride", "--stride-h", "--stride-w", "--dilation", "--dil-h", "--dil-w"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        char want[64];
        snprintf(want, sizeof want, "invalid value for %s: ", sizes[i]);
        expect_rejected(&plain, sizes[i], "0", want);
        expect_rejected(&plain, sizes[i], "0", "out of range [1, 2147483647]");
        expect_rejected(&plain, sizes[i], "2147483648", "out of range [1, 2147483647]");
        expect_rejected(&plain, sizes[i], "1.5", "is not an integer");
        expect_rejected(&plain, sizes[i], "", "is not an integer");
    }
    static const char *const pads[] = {"--pad", "--pad-h", "--pad-w"};
    for (size_t i = 0; i < sizeof pads / sizeof pads[0]; ++i) {
        expect_rejected(&plain, pads[i], "-1", "out of range [0, 2147483647]");
        expect_rejected(&plain, pads[i], "2147483648", "out of range [0, 2147483647]");
        const char *zero[] = {"prog", pads[i], "0"};
        expect_accepted(&plain, 3, zero);
    }
    expect_rejected(&plain, "--warmup", "-1",
                    "invalid value for --warmup: -1 is out of range [0, 1000]");
    expect_rejected(&plain, "--warmup", "1001", "out of range [0, 1000]");
    expect_rejected(&plain, "--warmup", "2147483647", "out of range [0, 1000]");
    expect_rejected(&plain, "--warmup", "99999999999999999999", "out of range [0, 1000]");
    expect_rejected(&plain, "--repeat", "0",
                    "invalid value for --repeat: 0 is out of range [1, 1000]");
    expect_rejected(&plain, "--repeat", "1001", "out of range [1, 1000]");
    expect_rejected(&plain, "--repeat", "100001", "out of range [1, 1000]");
    expect_rejected(&plain, "--seed", "-1", "invalid value for --seed");
    expect_rejected(&plain, "--seed", "18446744073709551616", "invalid value for --seed");
    expect_rejected(&plain, "--seed", "12ab", "invalid value for --seed");
    /* the ends of each range are accepted */
    const char *ends[] = {
        "prog", "--warmup", "1000", "--repeat", "1000", "--seed", "18446744073709551615"};
    expect_accepted(&plain, ARGC(ends), ends);
    const char *low[] = {"prog", "--warmup", "0", "--repeat", "1", "--seed", "0"};
    expect_accepted(&plain, ARGC(low), low);
    conv_cli_options o;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(parse(&o, &msg, ARGC(ends), ends), msg);
    cr_assert(o.warmup == 1000 && o.repeat == 1000 && o.seed == 18446744073709551615ull);
}

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
        conv_cli_options o;
        conv_msg msg = {{0}};
        cr_assert_eq(parse(&o, &msg, 5, cases[i]), CONV_ERR_INVALID, "case %zu accepted", i);
        char want[64];
        snprintf(want, sizeof want, "%s is given twice", names[i]);
        CONV_ASSERT_ONE_LINE(msg.text, want);
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
            cr_assert_eq(parse(&o, &msg, 5, argv), CONV_ERR_INVALID, "%s %s %s %s accepted", a, av,
                         b, bv);
            CONV_ASSERT_ONE_LINE(msg.text, "set the same thing");
            cr_assert(strstr(msg.text, pairs[i][0]) && strstr(msg.text, pairs[i][2]),
                      "'%s' does not name %s and %s", msg.text, pairs[i][0], pairs[i][2]);
        }
    /* flags for different things combine freely */
    const char *fine[] = {"prog",    "--filter", "3",   "--padding", "same", "--stride-h", "2",
                          "--dil-w", "2",        "--h", "20",        "--w",  "20"};
    expect_accepted(&plain, ARGC(fine), fine);
}

/* getopt_long would take "--he" for "--help" and "--rep" for "--repeat". */
Test(cli, accepts_no_abbreviation_of_a_flag)
{
    const char *abbrev[] = {"--he", "--rep", "--fil", "--str", "--dil", "--lay", "--se", "--cs"};
    for (size_t i = 0; i < sizeof abbrev / sizeof abbrev[0]; ++i) {
        char want[64];
        snprintf(want, sizeof want, "unknown option '%s'", abbrev[i]);
        expect_rejected(&plain, abbrev[i], "3", want);
    }
    expect_rejected(&plain, "--rep=3", NULL, "unknown option '--rep'");
    /* without the problem flags, "--h" is not --help either */
    const conv_cli_spec none = {.program = "gemm", .summary = "s", .shape = CONV_CLI_SHAPE_NONE};
    expect_rejected(&none, "--h", NULL, "unknown option '--h'");
    expect_rejected(&none, "--h", "5", "unknown option '--h'");
    /* a flag's value may itself start with dashes */
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *dashes[] = {"prog", "--csv", "--odd-name.csv"};
    CONV_ASSERT_OK(parse(&o, &msg, 3, dashes), msg);
    cr_assert_str_eq(o.csv_path, "--odd-name.csv");
}

Test(cli, a_program_without_the_problem_flags_rejects_them)
{
    const conv_cli_spec none = {.program = "gemm", .summary = "s", .shape = CONV_CLI_SHAPE_NONE};
    const char *flags[] = {"--n", "--c", "--filter", "--pad", "--padding", "--layout", "--dil-w"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; ++i) {
        char want[64];
        snprintf(want, sizeof want, "unknown option '%s'", flags[i]);
        expect_rejected(&none, flags[i], "1", want);
    }
    /* the measurement flags remain; the problem is not validated */
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog", "--repeat", "3", "--seed", "5"};
    CONV_ASSERT_OK(parse_spec(&none, &o, &msg, 5, argv), msg);
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
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog", "--n", "7", "--k", "9"};
    CONV_ASSERT_OK(parse_spec(&gemm, &o, &msg, 5, argv), msg);
    cr_assert_eq(o.number[0], 64, "default of --m");
    cr_assert_eq(o.number[1], 7);
    cr_assert_eq(o.number[2], 9);
    cr_assert(!o.given[0] && o.given[1] && o.given[2]);
    cr_assert_str_eq(o.value[0], "64");
    cr_assert_str_eq(o.value[1], "7");
    expect_rejected(&gemm, "--n", "65537",
                    "invalid value for --n: 65537 is out of range [1, 65536]");
    expect_rejected(&gemm, "--m", "0", "out of range [1, 65536]");
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
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *none[] = {"prog"};
    CONV_ASSERT_OK(parse_spec(&with_flags, &o, &msg, 1, none), msg);
    cr_assert_str_eq(o.value[0], "all");
    cr_assert_str_eq(o.value[1], "3");
    cr_assert_eq(o.number[1], 3);
    cr_assert_null(o.value[2], "no default: NULL");
    cr_assert(!o.given[0] && !o.given[1] && !o.given[2]);

    const char *all[] = {"prog", "--variant", "2d", "--host-repeat", "0", "--label", "run one"};
    CONV_ASSERT_OK(parse_spec(&with_flags, &o, &msg, ARGC(all), all), msg);
    cr_assert_str_eq(o.value[0], "2d");
    cr_assert_eq(o.number[1], 0);
    cr_assert_str_eq(o.value[2], "run one");
    cr_assert(o.given[0] && o.given[1] && o.given[2]);
    /* given with its default value is still given */
    const char *same[] = {"prog", "--variant", "all"};
    CONV_ASSERT_OK(parse_spec(&with_flags, &o, &msg, 3, same), msg);
    cr_assert(o.given[0]);
}

Test(cli, a_bad_program_flag_value_names_the_flag_and_what_it_takes)
{
    expect_rejected(&with_flags, "--variant", "3d",
                    "invalid value for --variant: '3d' (expected one of all,gridstride,2d)");
    expect_rejected(&with_flags, "--variant", "grid", "expected one of"); /* no prefixes */
    expect_rejected(&with_flags, "--variant", "", "expected one of");
    expect_rejected(&with_flags, "--host-repeat", "101",
                    "invalid value for --host-repeat: 101 is out of range [0, 100]");
    expect_rejected(&with_flags, "--host-repeat", "-1", "out of range [0, 100]");
    expect_rejected(&with_flags, "--host-repeat", "two", "is not an integer");
    expect_rejected(&with_flags, "--label", "", "invalid value for --label: empty");
    expect_rejected(&with_flags, "--variant", NULL, "option '--variant' needs a value");
    const char *twice[] = {"prog", "--variant", "2d", "--variant", "2d"};
    conv_cli_options o;
    conv_msg msg = {{0}};
    cr_assert_eq(parse_spec(&with_flags, &o, &msg, 5, twice), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "--variant is given twice");
}

Test(cli, a_spec_with_too_many_flags_or_a_bad_default_is_an_internal_error)
{
    conv_flag many[CONV_CLI_MAX_FLAGS + 1];
    for (int i = 0; i <= CONV_CLI_MAX_FLAGS; ++i)
        many[i] = (conv_flag){"x", CONV_FLAG_TEXT, "X", "x", NULL, 0, 0};
    conv_cli_spec spec = {.program = "p", .flags = many, .n_flags = CONV_CLI_MAX_FLAGS + 1};
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog"};
    cr_assert_eq(parse_spec(&spec, &o, &msg, 1, argv), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "internal error");
    const conv_flag bad_default[] = {{"count", CONV_FLAG_INT, "N", "n", "500", 0, 100}};
    spec = (conv_cli_spec){.program = "p", .flags = bad_default, .n_flags = 1};
    cr_assert_eq(parse_spec(&spec, &o, &msg, 1, argv), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "internal error: default of --count");
}

Test(cli, rejects_csv_and_json_naming_the_same_file)
{
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *same[] = {"prog", "--csv", "out.txt", "--json", "out.txt"};
    cr_assert_eq(parse(&o, &msg, 5, same), CONV_ERR_INVALID);
    CONV_ASSERT_ONE_LINE(msg.text, "--csv and --json name the same file 'out.txt'");
    const char *apart[] = {"prog", "--json", "out.json", "--csv", "out.csv"};
    CONV_ASSERT_OK(parse(&o, &msg, 5, apart), msg);
    cr_assert_str_eq(o.csv_path, "out.csv");
    cr_assert_str_eq(o.json_path, "out.json");
    expect_rejected(&plain, "--csv", "", "invalid value for --csv: empty file name");
    expect_rejected(&plain, "--json", "", "invalid value for --json: empty file name");
}

/* conv_bench refuses a shape flag beside --problem, naming the first one. */
Test(cli, records_the_first_shape_flag_and_whether_the_layout_was_given)
{
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *none[] = {"prog", "--repeat", "3", "--seed", "1"};
    CONV_ASSERT_OK(parse(&o, &msg, 5, none), msg);
    cr_assert_null(o.shape_flag, "measurement flags are not shape flags");
    cr_assert_eq(o.layout_given, 0);
    const char *layout[] = {"prog", "--layout", "nhwc"};
    CONV_ASSERT_OK(parse(&o, &msg, 3, layout), msg);
    cr_assert_null(o.shape_flag, "the layout is not a shape flag");
    cr_assert_eq(o.layout_given, 1);
    const char *both[] = {"prog", "--layout", "nchw", "--w", "9", "--h", "9"};
    CONV_ASSERT_OK(parse(&o, &msg, ARGC(both), both), msg);
    cr_assert_str_eq(o.shape_flag, "w", "the flag's name, without its dashes");
    cr_assert_eq(o.layout_given, 1);
    const char *padding[] = {"prog", "--padding", "valid"};
    CONV_ASSERT_OK(parse(&o, &msg, 3, padding), msg);
    cr_assert_str_eq(o.shape_flag, "padding");
}

/* The usage text of `spec`, written into text. */
static void help_text(const conv_cli_spec *spec, char *text, size_t len)
{
    memset(text, 0, len);
    FILE *out = fmemopen(text, len - 1, "w");
    cr_assert_not_null(out);
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog", "--help"};
    cr_assert_eq(conv_cli_parse(2, (char **)argv, spec, &o, out, &msg), CONV_HELP_SHOWN);
    fclose(out);
    cr_assert_lt(strlen(text), len - 2, "usage truncated");
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
    help_text(&spec, text, sizeof text);
    cr_assert(strstr(text, "--strategy") && strstr(text, "--padding"), "usage: %s", text);
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *args[] = {"prog", "--strategy", "2"};
    CONV_ASSERT_OK(conv_cli_parse(3, (char **)args, &spec, &o, stdout, &msg), msg);
    cr_assert_str_eq(o.value[0], "2");
}

Test(cli, help_aligns_every_description_in_one_column)
{
    char text[8192];
    help_text(&with_flags, text, sizeof text);
    int column = -1, lines = 0;
    for (const char *line = text; *line != '\0';) {
        int len = (int)strcspn(line, "\n");
        if (strncmp(line, "  --", 4) == 0) {
            /* the flag and its metavar, then at least two spaces, then the help */
            const char *gap = strstr(line + 2, "  ");
            cr_assert(gap != NULL && gap < line + len, "no gap in '%.*s'", len, line);
            int at = (int)(gap - line + strspn(gap, " "));
            if (column < 0)
                column = at;
            cr_assert_eq(at, column, "'%.*s' starts its help at column %d, the others at %d", len,
                         line, at, column);
            ++lines;
        }
        line += len + (line[len] == '\n');
    }
    cr_assert_eq(lines, 3 + 19 + 6, "every flag has its line:\n%s", text);
}

Test(cli, help_shows_the_defaults_and_the_ranges)
{
    char text[8192], line[256];
    help_text(&with_flags, text, sizeof text);
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
    help_text(&slow, text, sizeof text);
    cr_assert(help_line(text, "--warmup", line, sizeof line) && strstr(line, "(default 1)"), "%s",
              line);
    cr_assert(help_line(text, "--repeat", line, sizeof line) && strstr(line, "(default 5)"), "%s",
              line);
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog"};
    CONV_ASSERT_OK(parse_spec(&slow, &o, &msg, 1, argv), msg);
    cr_assert(o.warmup == 1 && o.repeat == 5);
    slow.default_warmup = 0; /* warm-up 0 with a repeat count of its own */
    CONV_ASSERT_OK(parse_spec(&slow, &o, &msg, 1, argv), msg);
    cr_assert(o.warmup == 0 && o.repeat == 5);
}

Test(cli, help_of_a_program_without_the_problem_flags_lists_none)
{
    const conv_cli_spec none = {.program = "gemm", .summary = "s", .shape = CONV_CLI_SHAPE_NONE};
    char text[8192], line[256];
    help_text(&none, text, sizeof text);
    cr_assert_not(help_line(text, "--h", line, sizeof line), "%s", text);
    cr_assert_not(help_line(text, "--padding", line, sizeof line), "%s", text);
    cr_assert(help_line(text, "--repeat", line, sizeof line), "%s", text);
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
