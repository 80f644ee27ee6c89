/* The results of a run, written three ways from the same rows: the text table
 * every program prints, and on request a CSV file and a JSON file.
 *
 * Table (one row per conv_row):
 *   version   median ms   GFLOP/s   % peak   [GB/s]   vs <ref1> ...   verdict
 * "vs <ref>" is the reference's time over the row's (above 1: the row is
 * faster); "-" where either did not run. "vs cuDNN" is against cuDNN best of
 * the row's own class (see CONV_REPORT_CUDNN below).
 *
 * CSV: comment lines "# gpu: ...", "# host: ...", "# date: ...",
 * "# command: ..." (and "# d2d_gbps: ..." where the copy bandwidth was
 * measured), then
 *   [problem,]version,class,median_ms,min_ms,max_ms,gflops,pct_peak,[gbps,]vs_<ref1>,...,[ref_cuDNN,]
 *   status,verdict
 * (class: the row's precision class, FP32, TF32 or FP16 (conv_verify.h);
 * min_ms and max_ms: the fastest and the slowest of the timed runs)
 * with status one of ok, failed, skipped, error. scripts/doc_tables.py turns
 * such a file into the results table of a lecture note. A model run adds a
 * line "# model: resnet50, n=32, nhwc" after the command and a column count
 * after problem.
 *
 * JSON: {"gpu", "versions", "peak_fp32_gflops", "date", "command",
 * "problems": [{"name", "shape", "gflop", "min_bytes", "rows": [{"version",
 * "class", "median_ms", "min_ms", "max_ms", "gflops", "gbps", "vs_<ref>"..., ["ref_cuDNN",]
 * "status", "verdict"}]}]}, with the same key names as the CSV columns; a model run adds "model"
 * after "command" and "count" after each problem's "name".
 *
 * The files are opened by conv_report_open before any work, so that a path
 * that cannot be written is a command-line error, not a lost run. */
#ifndef CONV_REPORT_H
#define CONV_REPORT_H

#include <stdio.h>

#include "conv_device.h"
#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    /* set by the program before conv_report_begin */
    int n_refs;
    const char *ref_names[CONV_MAX_REFS]; /* e.g. "cuDNN", "serial", "step 02" */
    int bandwidth_column;                 /* a GB/s column (the problem's minimum bytes) */
    int problem_column;                   /* the CSV starts with the problem's name */
    int pass_column; /* a column pass (forward, dgrad, wgrad) after problem and count,
                        and "pass" in each JSON problem: a run with a backward pass */
    /* A model run, whose problems are a model's layers: "resnet50, n=32, nhwc",
     * written as a "# model: ..." line of the CSV and as "model" in the JSON.
     * The CSV then has a column count after problem, the JSON a "count" per
     * problem: how often the layer occurs in the model. NULL: no model. */
    const char *model;
    /* internal */
    FILE *csv, *json;
    const char *csv_path, *json_path;
    int json_problems;
    int json_list_closed; /* the problems' list is closed: members follow */
} conv_report;

/* Opens the CSV and JSON files (either path may be NULL). CONV_ERR_INVALID
 * with one line naming the file when one cannot be written. */
conv_status conv_report_open(conv_report *r, const char *csv_path, const char *json_path,
                             conv_msg *msg);

/* Writes the files' headers: the device (NULL: none), the host CPU, the date,
 * the command line, the copy bandwidth (0: not measured). */
void conv_report_begin(conv_report *r, const conv_device_info *info, double d2d_gbps, int argc,
                       char **argv);

/* One problem's rows: the text table to `out`, and the same rows to the files.
 * name is the problem's name (written in the CSV's problem column and the
 * JSON; "" for a single problem), ref_ms the references' times (0: none),
 * peak_gflops the device's FP32 peak (0: no "% peak"). */
void conv_report_problem(conv_report *r, FILE *out, const char *name, const conv_params *p,
                         const conv_row *rows, int n_rows, const double ref_ms[CONV_MAX_REFS],
                         double peak_gflops);

/* conv_report_problem for a layer of a model run (r->model set), with the
 * number of times the layer occurs in the model. */
void conv_report_layer(conv_report *r, FILE *out, const char *name, int count, const conv_params *p,
                       const conv_row *rows, int n_rows, const double ref_ms[CONV_MAX_REFS],
                       double peak_gflops);

/* Closes the JSON file's list of problems and returns the file, for the
 * program's own members of the top-level object, each written as
 * `,\n  "key": value`; NULL without a --json file. */
FILE *conv_report_json_members(conv_report *r);

/* Finishes and closes the files; CONV_ERR_INVALID naming the file when a
 * write failed (a full disk). */
conv_status conv_report_close(conv_report *r, conv_msg *msg);

/* The reference column named CONV_REPORT_CUDNN compares each row with cuDNN
 * best of the row's own precision class (conv_rows_reference): the fastest
 * cuDNN row, legacy or graph API, of that class. The CSV and the JSON then
 * name that row in "ref_cuDNN", and the table is followed by a line
 * "cuDNN best: FP32 ... ms (row); TF32 ...". */
#define CONV_REPORT_CUDNN "cuDNN"
/* 1 for the name of such a column. */
int conv_report_by_class(const char *ref_name);

/* The CSV and JSON name of a reference column: "vs_" + the name with spaces
 * and commas as '_' ("naive GPU" -> "vs_naive_GPU"). */
void conv_report_ref_key(const char *ref_name, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* CONV_REPORT_H */
