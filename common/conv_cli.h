/* Command-line parsing shared by every program (getopt_long).
 *
 * Three groups of flags:
 *   the program's own flags, declared by the program in a conv_flag table;
 *   the problem: --problem NAME|all, a problem of the course's catalogue
 *     (conv_problems.h) by name, or its shape (--n --c --h --w --k --r --s
 *     --filter --pad --pad-h --pad-w --padding valid|same --stride --stride-h
 *     --stride-w --dilation --dil-h --dil-w --layout nchw|nhwc), unless the
 *     program describes its problem with flags of its own (step 03's --width
 *     --mask, which take --problem too; the GEMM's --m --n --k, which do not);
 *   the measurement and the output (--warmup --repeat --seed --csv --json
 *     --help).
 *
 * Rules, the same in every program:
 *   - every number is whole and in its documented range (shown by --help);
 *   - a flag may be given once; flags that set the same thing are rejected
 *     together (--filter with --r or --s, --pad with --pad-h or --pad-w,
 *     --padding with any --pad flag, --stride with --stride-h or --stride-w,
 *     --dilation with --dil-h or --dil-w), so the order of the flags never
 *     changes the result;
 *   - --problem fixes the shape: a flag of the shape given with it is
 *     rejected; --layout is the exception, it picks the layout of a named
 *     problem whose name does not say it (hpc101 --layout nhwc is
 *     hpc101-nhwc), and without it each problem keeps its own;
 *   - every error is one line naming the flag; nothing exits. */
#ifndef CONV_CLI_H
#define CONV_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "conv_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most flags a program may add. */
#define CONV_CLI_MAX_FLAGS 8
/* At least the number of problem flags (each may be given once). */
#define CONV_CLI_MAX_SHAPE_FLAGS 24

typedef enum {
    CONV_FLAG_CHOICE, /* one of the words of metavar, separated by '|' */
    CONV_FLAG_INT,    /* a whole number in [lo, hi] */
    CONV_FLAG_TEXT,   /* any non-empty text */
    CONV_FLAG_SWITCH  /* no value: given or not (its value is then "on", else its default) */
} conv_flag_kind;

/* A flag of the program: --name METAVAR, then its help and its default. */
typedef struct {
    const char *name; /* without the dashes, e.g. "variant" */
    conv_flag_kind kind;
    const char *metavar; /* CHOICE: the choices "all|gridstride|2d"; SWITCH: NULL; else e.g. "N" */
    const char *help;
    const char *def; /* the default, as text; NULL: none */
    long long lo, hi;
} conv_flag;

/* Which problem flags a program takes. */
typedef enum {
    CONV_CLI_SHAPE_2D,  /* the 2D problem flags above, and --problem */
    CONV_CLI_SHAPE_NONE /* none: the program's own flags describe its problem (with
                           own_shape_flags, --problem too) */
} conv_cli_shape;

/* The flags and their count from an array of conv_flag, in a conv_cli_spec
 * initializer: {.program = "p", CONV_FLAGS(flags)}. */
#define CONV_FLAGS(array) .flags = (array), .n_flags = (int)(sizeof(array) / sizeof((array)[0]))

/* What a program tells the parser. */
typedef struct {
    const char *program;
    const char *summary;
    const conv_flag *flags;
    int n_flags;
    conv_cli_shape shape;
    int default_warmup, default_repeat; /* both 0: the usual 2 and 10; else both used */
    /* The problem when no problem flag is given: a name of the catalogue
     * (conv_problems.h), e.g. step 07's "cutlass"; NULL: "lecture". --help
     * names it, and its values are the defaults of the problem flags. */
    const char *default_problem;
    /* The program's flags that fix the problem themselves, '|'-separated
     * (conv_bench's "model"; NULL: none). Given one of them, the problem
     * flags are not validated as a shape here: the program says which of
     * them it takes, naming the flag it cannot. */
    const char *shape_fixed_by;
    /* CONV_CLI_SHAPE_NONE: the program's own flags that describe a
     * convolution, '|'-separated (step 03's "width|mask"; NULL: none). With
     * them the program takes --problem too, and they count as problem flags
     * (shape_flags below): --problem rejects them as it rejects --h. */
    const char *own_shape_flags;
    /* Names a program no longer takes, with the names that replaced them,
     * "old=new" pairs separated by '|': flags with their dashes, values
     * without ("--strategy=--variant|1=4a|2=4b"). An old name is rejected in
     * one line that gives the new one ("--strategy 1 is now --variant 4a");
     * NULL: none. */
    const char *renamed;
} conv_cli_spec;

typedef struct {
    conv_params params;
    int warmup;
    int repeat;
    uint64_t seed;
    const char *csv_path;  /* --csv FILE: the results also as CSV (NULL: none) */
    const char *json_path; /* --json FILE: the results also as JSON (NULL: none) */
    /* --problem: a name of the catalogue or "all", checked (NULL: not given) */
    const char *problem;
    /* the first problem flag given other than --problem and --layout, by its
     * name without the dashes, e.g. "h" for --h (NULL: none) */
    const char *shape_flag;
    /* every problem flag given other than --problem and --layout, in that
     * order (shape_flag is the first): a program whose problem fixes some of
     * them finds the first one it cannot take */
    const char *shape_flags[CONV_CLI_MAX_SHAPE_FLAGS];
    int n_shape_flags;
    int layout_given;
    /* the program's flags, in the order of its table */
    const char *value[CONV_CLI_MAX_FLAGS]; /* as given, or the default */
    long long number[CONV_CLI_MAX_FLAGS];  /* CONV_FLAG_INT: the value */
    int given[CONV_CLI_MAX_FLAGS];
} conv_cli_options;

/* Parses argv. Returns CONV_OK, CONV_HELP_SHOWN after printing the usage to
 * `out`, or CONV_ERR_INVALID with one line in msg. With CONV_CLI_SHAPE_2D the
 * parameters are validated too. */
conv_status conv_cli_parse(int argc, char **argv, const conv_cli_spec *spec, conv_cli_options *opt,
                           FILE *out, conv_msg *msg);

/* Parses a whole decimal integer in [lo, hi] given to --flag. */
conv_status conv_cli_parse_ll(const char *flag, const char *text, long long lo, long long hi,
                              long long *value, conv_msg *msg);

/* 1 when the CHOICE value `value` is `word` (or "all" was given and `word`
 * is not "all"): how a program asks "was this variant selected?". */
int conv_cli_selects(const char *value, const char *word);

/* 1 when `text` is one of the '|'-separated words of `choices`. */
int conv_cli_is_choice(const char *choices, const char *text);

/* Prints the standard problem lines: the parameters, the FLOPs and bytes. */
void conv_cli_print_problem(FILE *out, const conv_params *p);

#ifdef __cplusplus
}
#endif

#endif /* CONV_CLI_H */
