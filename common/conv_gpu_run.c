#include "conv_gpu_run.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conv_cudnn.h"
#include "conv_tensor.h"

conv_status conv_gpu_problem_create_host(conv_gpu_problem *pb, const conv_params *p, uint64_t seed,
                                         conv_msg *msg)
{
    memset(pb, 0, sizeof *pb);
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    pb->p = *p;
    pb->seed = seed;
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    pb->full_verify = conv_flops(p) <= CONV_FULL_VERIFY_MAX_FLOPS;
    pb->h_x = conv_host_alloc(nx);
    pb->h_w = conv_host_alloc(nw);
    pb->h_y = conv_host_alloc(ny);
    if (pb->full_verify) {
        pb->ref = malloc(ny * sizeof *pb->ref);
        pb->ref_abs = malloc(ny * sizeof *pb->ref_abs);
    }
    if (pb->h_x == NULL || pb->h_w == NULL || pb->h_y == NULL ||
        (pb->full_verify && (pb->ref == NULL || pb->ref_abs == NULL))) {
        conv_gpu_problem_destroy(pb);
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the %.1f MB problem",
                         4.0 * ((double)nx + nw + ny) / 1e6);
    }
    conv_fill_uniform(pb->h_x, nx, seed, -1.0f, 1.0f);
    conv_fill_uniform(pb->h_w, nw, seed + 1, -1.0f, 1.0f);
    if (pb->full_verify)
        conv_reference_double(p, pb->h_x, pb->h_w, pb->ref, pb->ref_abs);
    return CONV_OK;
}

conv_status conv_gpu_problem_create(conv_gpu_problem *pb, const conv_params *p, uint64_t seed,
                                    conv_msg *msg)
{
    memset(pb, 0, sizeof *pb);
    conv_status st = conv_params_validate(p, msg);
    if (st == CONV_OK)
        st = conv_cuda_require_device(msg);
    if (st == CONV_OK)
        st = conv_gpu_problem_create_host(pb, p, seed, msg);
    if (st != CONV_OK)
        return st;
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    if ((st = conv_device_alloc(&pb->d_x, nx, "input x", msg)) != CONV_OK ||
        (st = conv_device_alloc(&pb->d_w, nw, "filter w", msg)) != CONV_OK ||
        (st = conv_device_alloc(&pb->d_y, ny, "output y", msg)) != CONV_OK ||
        (st = conv_device_upload(pb->d_x, pb->h_x, nx, msg)) != CONV_OK ||
        (st = conv_device_upload(pb->d_w, pb->h_w, nw, msg)) != CONV_OK) {
        conv_gpu_problem_destroy(pb);
        return st;
    }
    cudaError_t e = cudaStreamCreate(&pb->stream);
    if (e != cudaSuccess) {
        pb->stream = NULL;
        conv_gpu_problem_destroy(pb);
        return conv_cuda_fail(msg, e, "cudaStreamCreate", __FILE__, __LINE__);
    }
    return CONV_OK;
}

void conv_gpu_problem_destroy(conv_gpu_problem *pb)
{
    conv_host_free(pb->h_x);
    conv_host_free(pb->h_w);
    conv_host_free(pb->h_y);
    free(pb->ref);
    free(pb->ref_abs);
    conv_device_free(pb->d_x);
    conv_device_free(pb->d_w);
    conv_device_free(pb->d_y);
    if (pb->stream != NULL)
        cudaStreamDestroy(pb->stream);
    memset(pb, 0, sizeof *pb);
}

/* Verifies h_y (already downloaded or written by a host version) and the
 * canary count, filling res->report, res->passed and res->verdict. The bound
 * factor is 1 for plain dot products (every kernel of this project). */
static void judge(conv_gpu_problem *pb, conv_gpu_result *res, double bound_factor)
{
    conv_verify_opts opts = conv_verify_bound(bound_factor);
    res->report = pb->full_verify
                      ? conv_verify_precomputed(&pb->p, pb->h_y, pb->ref, pb->ref_abs, opts)
                      : conv_verify_sampled(&pb->p, pb->h_x, pb->h_w, pb->h_y, CONV_VERIFY_SAMPLES,
                                            pb->seed, opts);
    conv_report_describe(&res->report, res->verdict, sizeof res->verdict);
    res->passed = res->report.passed && res->canary_bad == 0;
    if (res->canary_bad != 0)
        snprintf(res->verdict, sizeof res->verdict,
                 "FAILED: %zu canary floats after the output overwritten", res->canary_bad);
}

typedef struct {
    conv_gpu_problem *pb;
    conv_gpu_conv conv;
    void *ctx;
} device_run;

static conv_status run_device(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    device_run *run = ctx;
    conv_gpu_problem *pb = run->pb;
    return run->conv(run->ctx, &pb->p, pb->d_x, pb->d_w, pb->d_y, stream, msg);
}

conv_status conv_gpu_problem_measure(conv_gpu_problem *pb, conv_gpu_conv conv, void *ctx,
                                     int warmup, int repeat, conv_gpu_result *res, conv_msg *msg)
{
    memset(res, 0, sizeof *res);
    if (pb->d_y == NULL)
        return conv_fail(msg, CONV_ERR_NO_DEVICE, "no CUDA device: the problem is host-only");
    size_t ny = conv_output_elems(&pb->p);
    device_run run = {pb, conv, ctx};
    conv_status st = conv_device_canary_reset(pb->d_y, ny, msg);
    if (st == CONV_OK)
        st = conv_device_poison(pb->d_y, ny, msg);
    if (st == CONV_OK)
        st = run_device(&run, pb->stream, msg);
    if (st != CONV_OK)
        return st;
    CONV_CUDA_CHECK(cudaStreamSynchronize(pb->stream), msg);
    if ((st = conv_device_download(pb->h_y, pb->d_y, ny, msg)) != CONV_OK ||
        (st = conv_device_canary_check(pb->d_y, ny, &res->canary_bad, msg)) != CONV_OK)
        return st;
    judge(pb, res, 1.0);
    return conv_time_gpu(run_device, &run, pb->stream, warmup, repeat, &res->timing, msg);
}

static conv_status run_cudnn(void *ctx, cudaStream_t stream, conv_msg *msg)
{
    device_run *run = ctx;
    return conv_cudnn_forward(run->ctx, run->pb->d_x, run->pb->d_y, stream, msg);
}

conv_status conv_gpu_problem_measure_cudnn(conv_gpu_problem *pb, int warmup, int repeat,
                                           conv_gpu_result *res, char *algo, size_t algo_len,
                                           conv_msg *msg)
{
    memset(res, 0, sizeof *res);
    if (algo != NULL && algo_len > 0)
        algo[0] = '\0';
    if (pb->d_y == NULL)
        return conv_fail(msg, CONV_ERR_NO_DEVICE, "no CUDA device: the problem is host-only");
    conv_cudnn_plan *plan = NULL;
    conv_status st = conv_cudnn_plan_create(&plan, &pb->p, msg);
    if (st != CONV_OK)
        return st;
    size_t ny = conv_output_elems(&pb->p);
    device_run run = {pb, NULL, plan};
    if ((st = conv_cudnn_set_filter(plan, pb->d_w, msg)) == CONV_OK &&
        (st = conv_device_canary_reset(pb->d_y, ny, msg)) == CONV_OK &&
        (st = conv_device_poison(pb->d_y, ny, msg)) == CONV_OK &&
        (st = run_cudnn(&run, pb->stream, msg)) == CONV_OK) {
        cudaError_t e = cudaStreamSynchronize(pb->stream);
        if (e != cudaSuccess)
            st = conv_cuda_fail(msg, e, "cudaStreamSynchronize (cuDNN)", __FILE__, __LINE__);
    }
    if (st == CONV_OK && (st = conv_device_download(pb->h_y, pb->d_y, ny, msg)) == CONV_OK &&
        (st = conv_device_canary_check(pb->d_y, ny, &res->canary_bad, msg)) == CONV_OK) {
        judge(pb, res, conv_cudnn_bound_factor(conv_cudnn_algo_name(plan)));
        st = conv_time_gpu(run_cudnn, &run, pb->stream, warmup, repeat, &res->timing, msg);
    }
    if (algo != NULL && algo_len > 0)
        snprintf(algo, algo_len, "%s", conv_cudnn_algo_name(plan));
    conv_cudnn_plan_destroy(plan);
    return st;
}

typedef struct {
    conv_gpu_problem *pb;
    conv_host_conv conv;
} host_run;

static conv_status run_host(void *ctx, conv_msg *msg)
{
    host_run *run = ctx;
    return run->conv(&run->pb->p, run->pb->h_x, run->pb->h_w, run->pb->h_y, msg);
}

conv_status conv_gpu_problem_measure_host(conv_gpu_problem *pb, conv_host_conv conv, int warmup,
                                          int repeat, conv_gpu_result *res, conv_msg *msg)
{
    memset(res, 0, sizeof *res);
    size_t ny = conv_output_elems(&pb->p);
    host_run run = {pb, conv};
    conv_fill_nan(pb->h_y, ny);
    conv_status st = conv_time_cpu(run_host, &run, warmup, repeat, &res->timing, msg);
    if (st != CONV_OK)
        return st;
    res->canary_bad = conv_host_canary_check(pb->h_y, ny);
    judge(pb, res, 1.0);
    return CONV_OK;
}

/* ---- the result table ---- */

static void ratio_text(char *buf, size_t len, double ref_ms, double ms)
{
    if (ref_ms > 0.0 && ms > 0.0)
        snprintf(buf, len, "%.2fx", ref_ms / ms);
    else
        snprintf(buf, len, "-");
}

void conv_table_print_header(const conv_table *t)
{
    fprintf(t->out, "%-28s %11s %10s %7s", "version", "median ms", "GFLOP/s", "% peak");
    if (t->bytes > 0.0)
        fprintf(t->out, " %8s", "GB/s");
    for (int i = 0; i < t->n_refs; ++i) {
        char head[48];
        snprintf(head, sizeof head, "vs %s", t->ref_names[i]);
        fprintf(t->out, " %11s", head);
    }
    fprintf(t->out, "  verdict\n");
}

static void print_row(const conv_table *t, const char *version, double ms, const char *verdict,
                      int passed)
{
    double gflops = ms > 0.0 ? t->flops / (ms * 1e6) : 0.0;
    char peak[16] = "-";
    if (t->peak_gflops > 0.0 && ms > 0.0)
        snprintf(peak, sizeof peak, "%.1f", 100.0 * gflops / t->peak_gflops);
    fprintf(t->out, "%-28s ", version);
    double gbps = ms > 0.0 ? t->bytes / (ms * 1e6) : 0.0;
    if (ms > 0.0)
        fprintf(t->out, "%11.4f %10.1f %7s", ms, gflops, peak);
    else
        fprintf(t->out, "%11s %10s %7s", "-", "-", "-");
    if (t->bytes > 0.0) {
        if (ms > 0.0)
            fprintf(t->out, " %8.1f", gbps);
        else
            fprintf(t->out, " %8s", "-");
    }
    for (int i = 0; i < t->n_refs; ++i) {
        char r[32];
        ratio_text(r, sizeof r, t->ref_ms[i], ms);
        fprintf(t->out, " %11s", r);
    }
    fprintf(t->out, "  %s\n", verdict);
    if (t->csv == NULL)
        return;
    /* CSV: quote the free-text fields; verdicts contain commas. */
    if (t->csv_problem_column)
        fprintf(t->csv, "\"%s\",", t->problem ? t->problem : "");
    fprintf(t->csv, "\"%s\",", version);
    if (ms > 0.0)
        fprintf(t->csv, "%.6f,%.3f,%s", ms, gflops, t->peak_gflops > 0.0 ? peak : "");
    else
        fprintf(t->csv, ",,");
    if (t->bytes > 0.0) {
        if (ms > 0.0)
            fprintf(t->csv, ",%.2f", gbps);
        else
            fprintf(t->csv, ",");
    }
    for (int i = 0; i < t->n_refs; ++i) {
        if (t->ref_ms[i] > 0.0 && ms > 0.0)
            fprintf(t->csv, ",%.4f", t->ref_ms[i] / ms);
        else
            fprintf(t->csv, ",");
    }
    fprintf(t->csv, ",%d,\"", passed);
    for (const char *c = verdict; *c; ++c)
        fputc(*c == '"' ? '\'' : *c, t->csv);
    fprintf(t->csv, "\"\n");
    fflush(t->csv);
}

void conv_table_print_row(const conv_table *t, const char *version, const conv_gpu_result *res)
{
    print_row(t, version, res->timing.median_ms, res->verdict, res->passed);
}

void conv_table_print_skip(const conv_table *t, const char *version, const char *why)
{
    print_row(t, version, 0.0, why, 0);
}

conv_status conv_table_open_csv(conv_table *t, const char *path, int argc, char **argv,
                                const conv_device_info *info, conv_msg *msg)
{
    t->csv = fopen(path, "w");
    if (t->csv == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "cannot write --csv file '%s'", path);
    char date[64];
    conv_format_utc_now(date, sizeof date);
    if (info != NULL) {
        char versions[160];
        conv_format_versions(info, versions, sizeof versions);
        fprintf(t->csv, "# gpu: %s, %d SMs, %.0f MHz, FP32 peak %.1f TFLOP/s, %s\n", info->name,
                info->sm_count, info->sm_clock_khz / 1e3, info->peak_fp32_gflops / 1e3, versions);
    }
    char cpu[128] = "unknown CPU";
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    if (cpuinfo != NULL) {
        char line[256];
        while (fgets(line, sizeof line, cpuinfo) != NULL) {
            char *colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
                snprintf(cpu, sizeof cpu, "%s", colon + 2);
                cpu[strcspn(cpu, "\n")] = '\0';
                break;
            }
        }
        fclose(cpuinfo);
    }
    fprintf(t->csv, "# host: %s\n# date: %s\n# command:", cpu, date);
    for (int i = 0; i < argc; ++i) {
        const char *arg = argv[i];
        if (i == 0) { /* the program's name, without the build folder */
            const char *slash = strrchr(arg, '/');
            arg = slash ? slash + 1 : arg;
        }
        fprintf(t->csv, " %s", arg);
    }
    t->csv_problem_column = t->problem != NULL;
    fprintf(t->csv, "\n%sversion,median_ms,gflops,pct_peak%s",
            t->csv_problem_column ? "problem," : "", t->bytes > 0.0 ? ",gbps" : "");
    for (int i = 0; i < t->n_refs; ++i) {
        fprintf(t->csv, ",vs_");
        for (const char *c = t->ref_names[i]; *c; ++c)
            fputc(*c == ' ' || *c == ',' ? '_' : *c, t->csv);
    }
    fprintf(t->csv, ",passed,verdict\n");
    return CONV_OK;
}

void conv_table_close_csv(conv_table *t)
{
    if (t->csv != NULL)
        fclose(t->csv);
    t->csv = NULL;
}

void conv_format_utc_now(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm_utc;
    if (gmtime_r(&now, &tm_utc) == NULL || strftime(buf, size, "%Y-%m-%d %H:%M UTC", &tm_utc) == 0)
        snprintf(buf, size, "unknown");
}

void conv_format_versions(const conv_device_info *info, char *buf, size_t size)
{
    long cudnn = conv_cudnn_version(); /* major * 10000 + minor * 100 + patch since cuDNN 9 */
    char cudnn_text[32] = "not built";
    if (cudnn > 0)
        snprintf(cudnn_text, sizeof cudnn_text, "%ld.%ld.%ld", cudnn / 10000, cudnn / 100 % 100,
                 cudnn % 100);
    snprintf(buf, size, "driver %s (CUDA %d.%d), runtime %d.%d, cuDNN %s",
             info->driver_release[0] ? info->driver_release : "unknown",
             info->driver_version / 1000, info->driver_version % 1000 / 10,
             info->runtime_version / 1000, info->runtime_version % 1000 / 10, cudnn_text);
}

void conv_print_device(FILE *out, const conv_device_info *info)
{
    char versions[160];
    conv_format_versions(info, versions, sizeof versions);
    fprintf(out,
            "device:  %s (sm_%d%d), %d SMs at %.0f MHz, FP32 peak %.1f TFLOP/s, "
            "DRAM peak %.0f GB/s; %s\n",
            info->name, info->cc_major, info->cc_minor, info->sm_count, info->sm_clock_khz / 1e3,
            info->peak_fp32_gflops / 1e3, info->peak_dram_gbps, versions);
}

/* ---- rows ---- */

static int is_reference(const conv_row *row)
{
    return row->ref >= 0 && row->ref < CONV_TABLE_MAX_REFS;
}

/* Measures one row; fills status, res, label and why. Returns 1 on failure. */
static int measure_row(conv_gpu_problem *pb, conv_row *row, const conv_run_opts *o)
{
    conv_msg msg = {{0}};
    char algo[64] = "";
    snprintf(row->label, sizeof row->label, "%s", row->name);
    memset(&row->res, 0, sizeof row->res);
    if (row->skip != NULL) {
        row->status = CONV_ERR_UNSUPPORTED;
        snprintf(row->why, sizeof row->why, "%s", row->skip);
        return 0;
    }
    switch (row->kind) {
    case CONV_ROW_HOST:
        row->status =
            conv_gpu_problem_measure_host(pb, row->host, 0, o->host_repeat, &row->res, &msg);
        break;
    case CONV_ROW_CUDNN:
        row->status = conv_gpu_problem_measure_cudnn(pb, o->warmup, o->repeat, &row->res, algo,
                                                     sizeof algo, &msg);
        if (algo[0] != '\0')
            snprintf(row->label, sizeof row->label, "%s (%s)", row->name, algo);
        break;
    default:
        row->status = conv_gpu_problem_measure(pb, row->conv, row->ctx, o->warmup, o->repeat,
                                               &row->res, &msg);
        break;
    }
    if (row->status == CONV_OK)
        return !row->res.passed;
    int skipped = row->status == CONV_ERR_UNSUPPORTED || row->status == CONV_ERR_INVALID ||
                  row->status == CONV_ERR_UNAVAILABLE;
    snprintf(row->why, sizeof row->why, "%s: %s", skipped ? "skipped" : "error", msg.text);
    /* a failed launch may leave an error behind; later rows start clean */
    cudaGetLastError();
    return !skipped;
}

int conv_rows_run(conv_gpu_problem *pb, conv_row *rows, int n_rows, conv_table *t,
                  const conv_run_opts *o)
{
    int failed = 0;
    for (int pass = 0; pass < 2; ++pass) /* references first */
        for (int i = 0; i < n_rows; ++i) {
            if (is_reference(&rows[i]) != (pass == 0))
                continue;
            failed += measure_row(pb, &rows[i], o);
            if (pass == 0 && rows[i].status == CONV_OK)
                t->ref_ms[rows[i].ref] = rows[i].res.timing.median_ms;
        }
    conv_table_print_header(t);
    for (int i = 0; i < n_rows; ++i) {
        if (rows[i].status == CONV_OK)
            conv_table_print_row(t, rows[i].label, &rows[i].res);
        else
            conv_table_print_skip(t, rows[i].label, rows[i].why);
    }
    return failed;
}

int conv_step_program_run(const char *program, const char *title, int argc, char **argv,
                          const conv_cli_options *opt, int host_repeat, conv_row *rows, int n_rows,
                          const char *const *ref_names, int n_refs)
{
    conv_msg msg = {{0}};
    conv_device_info info;
    if (conv_cuda_require_device(&msg) != CONV_OK ||
        conv_cuda_device_info(0, &info, &msg) != CONV_OK) {
        fprintf(stderr, "%s: %s\n", program, msg.text);
        return 1;
    }
    conv_gpu_problem pb;
    if (conv_gpu_problem_create(&pb, &opt->params, opt->seed, &msg) != CONV_OK) {
        fprintf(stderr, "%s: %s\n", program, msg.text);
        return 1;
    }
    conv_table t = {.out = stdout,
                    .flops = conv_flops(&opt->params),
                    .peak_gflops = info.peak_fp32_gflops,
                    .bytes = conv_min_bytes(&opt->params),
                    .n_refs = n_refs < CONV_TABLE_MAX_REFS ? n_refs : CONV_TABLE_MAX_REFS};
    for (int i = 0; i < t.n_refs; ++i)
        t.ref_names[i] = ref_names[i];
    if (opt->csv_path != NULL &&
        conv_table_open_csv(&t, opt->csv_path, argc, argv, &info, &msg) != CONV_OK) {
        fprintf(stderr, "%s: %s\n", program, msg.text);
        conv_gpu_problem_destroy(&pb);
        return 1;
    }
    printf("%s: %s\n", program, title);
    conv_print_device(stdout, &info);
    conv_cli_print_problem(stdout, &opt->params);
    printf("timing:  median of %d runs after %d warm-up (CPU rows: %d runs); GB/s = the "
           "minimum bytes over the time; verification: %s\n\n",
           opt->repeat, opt->warmup, host_repeat,
           pb.full_verify ? "every output vs a double reference" : "sampled outputs");
    conv_run_opts o = {opt->warmup, opt->repeat, host_repeat};
    int failed = conv_rows_run(&pb, rows, n_rows, &t, &o);
    printf("\nverdict: %s\n", failed ? "FAILED" : "OK");
    conv_table_close_csv(&t);
    conv_gpu_problem_destroy(&pb);
    return failed ? 1 : 0;
}
