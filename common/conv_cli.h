/* Command-line parsing shared by every step program (getopt_long).
 *
 * Common flags: the problem (--n --c --h --w --k --r --s --filter --pad --pad-h
 * --pad-w --padding valid|same --stride --stride-h --stride-w --dilation --dil-h
 * --dil-w --layout nchw|nhwc), the measurement (--warmup --repeat --seed) and
 * --help. A program adds its own string-valued flags (--strategy, --variant ...)
 * as conv_cli_extra entries and interprets their values itself.
 *
 * Every error is one line naming the flag; nothing exits. */
#ifndef CONV_CLI_H
#define CONV_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "conv_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *name;    /* long flag without the dashes, e.g. "strategy" */
    const char *metavar; /* e.g. "naive|1|2|3|all" */
    const char *help;
    const char *value; /* default on input, the given value on output */
} conv_cli_extra;

typedef struct {
    conv_params params;
    int warmup;
    int repeat;
    uint64_t seed;
    int same_padding;     /* --padding same: padding derived after all flags are read */
    const char *csv_path; /* --csv FILE: the result table also as CSV (NULL: none) */
} conv_cli_options;

/* The defaults: the lecture problem, 2 warm-up runs, 10 timed repeats, seed 2024. */
conv_cli_options conv_cli_defaults(void);

/* Parses argv into opt (start from conv_cli_defaults(), changed as the program
 * likes). Returns CONV_OK, CONV_HELP_SHOWN after printing the usage to `out`,
 * or CONV_ERR_INVALID with one line in msg. The parameters are validated. */
conv_status conv_cli_parse(int argc, char **argv, const char *program, const char *summary,
                           conv_cli_extra *extras, int n_extras, conv_cli_options *opt, FILE *out,
                           conv_msg *msg);

/* Parses a whole decimal integer in [lo, hi] given to `flag`. */
conv_status conv_cli_parse_ll(const char *flag, const char *text, long long lo, long long hi,
                              long long *value, conv_msg *msg);

/* Prints a standard run header: the problem, its FLOPs and bytes. */
void conv_cli_print_problem(FILE *out, const conv_params *p);

/* The result table every step program prints: one row per kernel.
 *   version            median ms    GFLOP/s   vs <baseline>   verdict          */
void conv_cli_print_table_header(FILE *out, const char *baseline_name);
/* baseline_ms <= 0 prints "-" in the speedup column. */
void conv_cli_print_row(FILE *out, const char *version, double median_ms, double flops,
                        double baseline_ms, const char *verdict);

#ifdef __cplusplus
}
#endif

#endif /* CONV_CLI_H */
