/* conv_bench: every step's kernels on named problems (or a custom shape), in
 * one run beside step 01 on the CPU and cuDNN, each verified before it is
 * timed. One table per problem; --csv and --json write every row of every
 * problem. Without a GPU: the CPU rows, then "no CUDA device: GPU rows
 * skipped", exit status 0.
 *
 * Exit status: 0 every measured row verified, 1 a wrong result or a runtime
 * error, 2 a bad command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_problems.h"
#include "bench_rows.h"
#include "conv_bandwidth.h"
#include "conv_cli.h"
#include "conv_cpu.h"
#include "conv_cudnn.h"
#include "conv_gpu_run.h"

#define PROGRAM "conv_bench"

/* Everything measured on one problem, kept for the JSON file. */
typedef struct {
    const char *name;
    conv_params params;
    conv_row rows[BENCH_MAX_ROWS];
    int n_rows;
    double ref_ms[CONV_TABLE_MAX_REFS];
} problem_result;

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double v)
{
    if (v > 0.0)
        fprintf(f, "%.6g", v);
    else
        fprintf(f, "null");
}

static int write_json(const char *path, const problem_result *res, int n_res,
                      const char *const *ref_names, const conv_device_info *info, int argc,
                      char **argv)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, PROGRAM ": cannot write --json file '%s'\n", path);
        return 1;
    }
    char date[64], versions[160];
    conv_format_utc_now(date, sizeof date);
    fprintf(f, "{\n  \"gpu\": ");
    if (info != NULL)
        json_string(f, info->name);
    else
        fprintf(f, "null");
    fprintf(f, ",\n  \"versions\": ");
    if (info != NULL) {
        conv_format_versions(info, versions, sizeof versions);
        json_string(f, versions);
    } else {
        fprintf(f, "null");
    }
    fprintf(f, ",\n  \"peak_fp32_gflops\": ");
    json_number(f, info != NULL ? info->peak_fp32_gflops : 0.0);
    fprintf(f, ",\n  \"date\": ");
    json_string(f, date);
    fprintf(f, ",\n  \"command\": [");
    for (int i = 0; i < argc; ++i) {
        fprintf(f, i ? ", " : "");
        json_string(f, argv[i]);
    }
    fprintf(f, "],\n  \"problems\": [");
    for (int i = 0; i < n_res; ++i) {
        const problem_result *pr = &res[i];
        const conv_params *p = &pr->params;
        char desc[256];
        conv_params_describe(p, desc, sizeof desc);
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        json_string(f, pr->name);
        fprintf(f, ", \"shape\": ");
        json_string(f, desc);
        fprintf(f, ", \"gflop\": %.6g, \"min_bytes\": %.6g,\n     \"rows\": [", conv_flops(p) / 1e9,
                conv_min_bytes(p));
        for (int r = 0; r < pr->n_rows; ++r) {
            const conv_row *row = &pr->rows[r];
            int ran = row->status == CONV_OK;
            double ms = ran ? row->res.timing.median_ms : 0.0;
            fprintf(f, "%s\n       {\"version\": ", r ? "," : "");
            json_string(f, row->label);
            fprintf(f, ", \"median_ms\": ");
            json_number(f, ms);
            fprintf(f, ", \"gflops\": ");
            json_number(f, ms > 0.0 ? conv_flops(p) / (ms * 1e6) : 0.0);
            fprintf(f, ", \"gbps\": ");
            json_number(f, ms > 0.0 ? conv_min_bytes(p) / (ms * 1e6) : 0.0);
            for (int k = 0; k < BENCH_N_REFS; ++k) {
                fprintf(f, ", \"vs_%s\": ", ref_names[k]);
                json_number(f, ms > 0.0 && pr->ref_ms[k] > 0.0 ? pr->ref_ms[k] / ms : 0.0);
            }
            fprintf(f, ", \"measured\": %s, \"passed\": %s, \"verdict\": ", ran ? "true" : "false",
                    ran && row->res.passed ? "true" : "false");
            json_string(f, ran ? row->res.verdict : row->why);
            fprintf(f, "}");
        }
        fprintf(f, "]}");
    }
    fprintf(f, "\n  ]\n}\n");
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    conv_cli_options opt = conv_cli_defaults();
    conv_cli_extra extras[] = {
        {"problem", "NAME",
         "lecture|hpc101|cutlass|ece408-l1|ece408-l2|hpc101-image|conv1d|hpc101-nhwc|cutlass-nhwc|"
         "all"
         "; without it, the shape given by the flags below",
         NULL},
        {"steps", "LIST", "rows to run: comma-separated 01,02,03,04,05,06,cudnn, or all", "all"},
        {"json", "FILE", "also write every row of every problem to FILE as JSON", NULL},
    };
    conv_msg msg = {{0}};
    conv_status st = conv_cli_parse(argc, argv, PROGRAM,
                                    "Every step's kernels on named problems, beside step 01 on the "
                                    "CPU and cuDNN, each verified before it is timed.",
                                    extras, 3, &opt, stdout, &msg);
    if (st == CONV_HELP_SHOWN)
        return 0;
    const bench_problem *problems = NULL;
    int n_problems = 1;
    bench_problem custom = {"custom", "the shape given on the command line", opt.params, 0};
    unsigned steps = 0;
    if (st == CONV_OK) {
        if (extras[0].value != NULL)
            st = bench_problem_select(extras[0].value, &problems, &n_problems, &msg);
        else
            problems = &custom;
    }
    /* Named problems take the layout of --layout (default NCHW), except the
     * NHWC ones: --problem hpc101 --layout nhwc is hpc101-nhwc. */
    bench_problem chosen[16];
    if (st == CONV_OK && extras[0].value != NULL) {
        for (int i = 0; i < n_problems && i < 16; ++i) {
            chosen[i] = problems[i];
            if (!chosen[i].fixed_layout)
                chosen[i].params.layout = opt.params.layout;
        }
        problems = chosen;
    }
    if (st == CONV_OK)
        st = bench_parse_steps(extras[1].value, &steps, &msg);
    if (st != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 2;
    }

    conv_device_info info;
    int have_device = conv_cuda_require_device(&msg) == CONV_OK &&
                      conv_cuda_device_info(0, &info, &msg) == CONV_OK;
    char no_device[CONV_MSG_LEN + 48];
    snprintf(no_device, sizeof no_device, "no CUDA device: GPU rows skipped (%s)", msg.text);
    printf(PROGRAM ": every step beside step 01 and cuDNN\n");
    if (have_device)
        conv_print_device(stdout, &info);
    else
        printf("device:  %s\n", no_device);
    printf("host:    OpenMP with %d threads; cuDNN %s\n", conv2d_cpu_openmp_threads(),
           conv_cudnn_compiled() ? "built in" : "not built");
    printf("timing:  GPU rows: median of %d runs after %d warm-up; CPU rows: median of %d runs, "
           "skipped where estimated above %.0f s per run\n",
           opt.repeat, opt.warmup, BENCH_HOST_REPEAT, BENCH_CPU_MAX_SECONDS);
    double d2d_gbps = 0.0;
    if (have_device) {
        conv_bandwidth bw;
        if (conv_bandwidth_d2d(0, 2, 10, NULL, &bw, &msg) == CONV_OK) {
            d2d_gbps = bw.gbps;
            printf("memory:  device-to-device copy %.0f GB/s (read + write, %zu MB buffers)\n",
                   bw.gbps, bw.bytes >> 20);
        }
    }

    const char *ref_names[BENCH_N_REFS];
    bench_ref_names(ref_names);
    problem_result *results = calloc((size_t)n_problems, sizeof *results);
    if (results == NULL) {
        fprintf(stderr, PROGRAM ": out of host memory\n");
        return 1;
    }
    /* bytes > 0 and problem set before the CSV opens: its GB/s and problem columns */
    conv_table t = {.out = stdout,
                    .n_refs = BENCH_N_REFS,
                    .problem = "",
                    .bytes = conv_min_bytes(&problems[0].params)};
    for (int i = 0; i < BENCH_N_REFS; ++i)
        t.ref_names[i] = ref_names[i];
    if (opt.csv_path != NULL && conv_table_open_csv(&t, opt.csv_path, argc, argv,
                                                    have_device ? &info : NULL, &msg) != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        free(results);
        return 1;
    }
    if (t.csv != NULL && d2d_gbps > 0.0) /* the roofline's bandwidth ceiling */
        fprintf(t.csv, "# d2d_gbps: %.1f\n", d2d_gbps);
    int failed = 0;
    for (int i = 0; i < n_problems; ++i) {
        const bench_problem *bp = &problems[i];
        problem_result *pr = &results[i];
        pr->name = bp->name;
        pr->params = bp->params;
        char desc[256];
        conv_params_describe(&bp->params, desc, sizeof desc);
        printf("\n== %s: %s\n   %s\n   %.3f GFLOP, at least %.1f MB moved\n", bp->name, bp->about,
               desc, conv_flops(&bp->params) / 1e9, conv_min_bytes(&bp->params) / 1e6);
        fprintf(stderr, PROGRAM ": [%d/%d] %s: setting up\n", i + 1, n_problems, bp->name);
        conv_gpu_problem pb;
        st = have_device ? conv_gpu_problem_create(&pb, &bp->params, opt.seed, &msg)
                         : conv_gpu_problem_create_host(&pb, &bp->params, opt.seed, &msg);
        if (st != CONV_OK) {
            printf("   not run: %s\n", msg.text);
            failed = 1;
            continue;
        }
        pr->n_rows = bench_rows_for(&pb, steps, have_device, pr->rows, BENCH_MAX_ROWS);
        t.flops = conv_flops(&bp->params);
        t.bytes = conv_min_bytes(&bp->params);
        t.peak_gflops = have_device ? info.peak_fp32_gflops : 0.0;
        t.problem = bp->name;
        for (int k = 0; k < BENCH_N_REFS; ++k)
            t.ref_ms[k] = 0.0;
        conv_run_opts o = {opt.warmup, opt.repeat, BENCH_HOST_REPEAT};
        fprintf(stderr, PROGRAM ": [%d/%d] %s: %d rows\n", i + 1, n_problems, bp->name, pr->n_rows);
        failed |= conv_rows_run(&pb, pr->rows, pr->n_rows, &t, &o) != 0;
        memcpy(pr->ref_ms, t.ref_ms, sizeof pr->ref_ms);
        bench_rows_release(pr->rows, pr->n_rows);
        conv_gpu_problem_destroy(&pb);
    }
    conv_table_close_csv(&t);
    if (!have_device)
        printf("\n%s\n", no_device);
    if (extras[2].value != NULL)
        failed |= write_json(extras[2].value, results, n_problems, ref_names,
                             have_device ? &info : NULL, argc, argv);
    free(results);
    printf("\nverdict: %s\n", failed ? "FAILED" : "OK");
    return failed ? 1 : 0;
}
