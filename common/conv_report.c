#include "conv_report.h"

#include <string.h>

#include "conv_cudnn.h"
#include "conv_harness.h"

static const char *const state_names[] = {"pending", "ok", "failed", "skipped", "error"};

int conv_report_by_class(const char *ref_name)
{
    return ref_name != NULL && strcmp(ref_name, CONV_REPORT_CUDNN) == 0;
}

void conv_report_ref_key(const char *ref_name, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "vs_%s", ref_name);
    for (size_t i = 3; i < n && i < len; ++i)
        if (buf[i] == ' ' || buf[i] == ',')
            buf[i] = '_';
}

conv_status conv_report_open(conv_report *r, const char *csv_path, const char *json_path,
                             conv_msg *msg)
{
    r->csv = r->json = NULL;
    r->csv_path = csv_path;
    r->json_path = json_path;
    r->json_problems = 0;
    r->json_list_closed = 0;
    if (csv_path != NULL && (r->csv = fopen(csv_path, "w")) == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "cannot write --csv file '%s'", csv_path);
    if (json_path != NULL && (r->json = fopen(json_path, "w")) == NULL) {
        if (r->csv != NULL) {
            fclose(r->csv);
            remove(csv_path);
        }
        r->csv = NULL;
        return conv_fail(msg, CONV_ERR_INVALID, "cannot write --json file '%s'", json_path);
    }
    return CONV_OK;
}

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

static void host_cpu(char *cpu, size_t len)
{
    snprintf(cpu, len, "unknown CPU");
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    if (cpuinfo == NULL)
        return;
    char line[256];
    while (fgets(line, sizeof line, cpuinfo) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            snprintf(cpu, len, "%s", colon + 2);
            cpu[strcspn(cpu, "\n")] = '\0';
            break;
        }
    }
    fclose(cpuinfo);
}

/* The program's name without its build folder, then the arguments. */
static const char *command_word(char **argv, int i)
{
    const char *slash = i == 0 ? strrchr(argv[0], '/') : NULL;
    return slash ? slash + 1 : argv[i];
}

void conv_report_begin(conv_report *r, const conv_device_info *info, double d2d_gbps, int argc,
                       char **argv)
{
    char date[64], versions[160] = "", cpu[128];
    conv_format_utc_now(date, sizeof date);
    host_cpu(cpu, sizeof cpu);
    if (info != NULL)
        conv_format_versions(info, conv_cudnn_version(), versions, sizeof versions);
    if (r->csv != NULL) {
        if (info != NULL)
            fprintf(r->csv, "# gpu: %s, %d SMs, %.0f MHz, FP32 peak %.1f TFLOP/s, %s\n", info->name,
                    info->sm_count, info->sm_clock_khz / 1e3, info->peak_fp32_gflops / 1e3,
                    versions);
        fprintf(r->csv, "# host: %s\n# date: %s\n# command:", cpu, date);
        for (int i = 0; i < argc; ++i)
            fprintf(r->csv, " %s", command_word(argv, i));
        fprintf(r->csv, "\n");
        if (r->model != NULL)
            fprintf(r->csv, "# model: %s\n", r->model);
        if (d2d_gbps > 0.0)
            fprintf(r->csv, "# d2d_gbps: %.1f\n", d2d_gbps);
        fprintf(r->csv, "%s%s%sversion,class,median_ms,min_ms,max_ms,gflops,pct_peak%s",
                r->problem_column ? "problem," : "", r->model != NULL ? "count," : "",
                r->pass_column ? "pass," : "", r->bandwidth_column ? ",gbps" : "");
        for (int i = 0; i < r->n_refs; ++i) {
            char key[64];
            conv_report_ref_key(r->ref_names[i], key, sizeof key);
            fprintf(r->csv, ",%s", key);
        }
        for (int i = 0; i < r->n_refs; ++i)
            if (conv_report_by_class(r->ref_names[i]))
                fprintf(r->csv, ",ref_%s", r->ref_names[i]);
        fprintf(r->csv, ",status,verdict\n");
    }
    if (r->json != NULL) {
        FILE *f = r->json;
        fprintf(f, "{\n  \"gpu\": ");
        if (info != NULL)
            json_string(f, info->name);
        else
            fprintf(f, "null");
        fprintf(f, ",\n  \"versions\": ");
        if (info != NULL)
            json_string(f, versions);
        else
            fprintf(f, "null");
        fprintf(f, ",\n  \"peak_fp32_gflops\": ");
        json_number(f, info != NULL ? info->peak_fp32_gflops : 0.0);
        fprintf(f, ",\n  \"d2d_gbps\": ");
        json_number(f, d2d_gbps);
        fprintf(f, ",\n  \"host\": ");
        json_string(f, cpu);
        fprintf(f, ",\n  \"date\": ");
        json_string(f, date);
        fprintf(f, ",\n  \"command\": [");
        for (int i = 0; i < argc; ++i) {
            fprintf(f, i ? ", " : "");
            json_string(f, command_word(argv, i));
        }
        fprintf(f, "],\n");
        if (r->model != NULL) {
            fprintf(f, "  \"model\": ");
            json_string(f, r->model);
            fprintf(f, ",\n");
        }
        fprintf(f, "  \"problems\": [");
    }
}

/* The numbers of one row, from its measurement (0 where it did not run). */
typedef struct {
    double ms, min_ms, max_ms, gflops, gbps, pct_peak;
    double vs[CONV_MAX_REFS];
    const char *by[CONV_MAX_REFS]; /* the row each ratio was taken against */
    const char *verdict;
} row_numbers;

/* The label a row is printed with. */
static const char *label_of(const conv_row *row)
{
    return row->label[0] ? row->label : row->name;
}

static row_numbers numbers(const conv_report *r, const conv_params *p, const conv_row *rows,
                           int n_rows, int which, double peak_gflops)
{
    const conv_row *row = &rows[which];
    row_numbers n;
    memset(&n, 0, sizeof n);
    int ran = row->state == CONV_ROW_OK || row->state == CONV_ROW_FAILED;
    n.ms = ran ? row->res.timing.median_ms : 0.0;
    if (n.ms > 0.0) {
        n.min_ms = row->res.timing.min_ms;
        n.max_ms = row->res.timing.max_ms;
        n.gflops = conv_flops(p) / (n.ms * 1e6);
        n.gbps = conv_min_bytes(p) / (n.ms * 1e6);
        n.pct_peak = peak_gflops > 0.0 ? 100.0 * n.gflops / peak_gflops : 0.0;
        for (int i = 0; i < r->n_refs; ++i) {
            int ref = conv_rows_reference(rows, n_rows, i, row);
            if (ref >= 0) {
                n.vs[i] = rows[ref].res.timing.median_ms / n.ms;
                n.by[i] = label_of(&rows[ref]);
            }
        }
    }
    n.verdict = ran ? row->res.verdict : row->why;
    return n;
}

static void print_header(const conv_report *r, FILE *out)
{
    fprintf(out, "%-28s %11s %10s %7s", "version", "median ms", "GFLOP/s", "% peak");
    if (r->bandwidth_column)
        fprintf(out, " %8s", "GB/s");
    for (int i = 0; i < r->n_refs; ++i) {
        char head[48];
        snprintf(head, sizeof head, "vs %s", r->ref_names[i]);
        fprintf(out, " %11s", head);
    }
    fprintf(out, "  verdict\n");
}

static void print_row(const conv_report *r, FILE *out, const conv_row *row, const row_numbers *n)
{
    fprintf(out, "%-28s ", label_of(row));
    if (n->ms > 0.0) {
        char peak[16] = "-";
        if (n->pct_peak > 0.0)
            snprintf(peak, sizeof peak, "%.1f", n->pct_peak);
        fprintf(out, "%11.4f %10.1f %7s", n->ms, n->gflops, peak);
        if (r->bandwidth_column)
            fprintf(out, " %8.1f", n->gbps);
    } else {
        fprintf(out, "%11s %10s %7s", "-", "-", "-");
        if (r->bandwidth_column)
            fprintf(out, " %8s", "-");
    }
    for (int i = 0; i < r->n_refs; ++i) {
        char v[32] = "-";
        if (n->vs[i] > 0.0)
            snprintf(v, sizeof v, "%.2fx", n->vs[i]);
        fprintf(out, " %11s", v);
    }
    fprintf(out, "  %s\n", n->verdict);
}

static void csv_row(const conv_report *r, const char *name, int count, const conv_params *p,
                    const conv_row *row, const row_numbers *n)
{
    FILE *f = r->csv;
    if (r->problem_column)
        fprintf(f, "\"%s\",", name);
    if (r->model != NULL)
        fprintf(f, "%d,", count);
    if (r->pass_column)
        fprintf(f, "%s,", conv_pass_name(p->pass));
    fprintf(f, "\"%s\",%s,", label_of(row), conv_class_name(row->cls));
    if (n->ms > 0.0) {
        fprintf(f, "%.6f,%.6f,%.6f,%.3f,", n->ms, n->min_ms, n->max_ms, n->gflops);
        if (n->pct_peak > 0.0)
            fprintf(f, "%.1f", n->pct_peak);
    } else {
        fprintf(f, ",,,,");
    }
    if (r->bandwidth_column) {
        if (n->ms > 0.0)
            fprintf(f, ",%.2f", n->gbps);
        else
            fprintf(f, ",");
    }
    for (int i = 0; i < r->n_refs; ++i) {
        if (n->vs[i] > 0.0)
            fprintf(f, ",%.4f", n->vs[i]);
        else
            fprintf(f, ",");
    }
    for (int i = 0; i < r->n_refs; ++i)
        if (conv_report_by_class(r->ref_names[i]))
            fprintf(f, n->by[i] != NULL ? ",\"%s\"" : ",", n->by[i]);
    fprintf(f, ",%s,\"", state_names[row->state]);
    for (const char *c = n->verdict; *c; ++c) /* verdicts contain commas, never quotes */
        fputc(*c == '"' ? '\'' : *c, f);
    fprintf(f, "\"\n");
}

static void json_problem(conv_report *r, const char *name, int count, const conv_params *p,
                         const conv_row *rows, int n_rows, const row_numbers *nums)
{
    FILE *f = r->json;
    char desc[256];
    conv_params_describe(p, desc, sizeof desc);
    fprintf(f, "%s\n    {\"name\": ", r->json_problems++ ? "," : "");
    json_string(f, name);
    if (r->model != NULL)
        fprintf(f, ", \"count\": %d", count);
    if (r->pass_column)
        fprintf(f, ", \"pass\": \"%s\"", conv_pass_name(p->pass));
    fprintf(f, ", \"shape\": ");
    json_string(f, desc);
    fprintf(f, ", \"gflop\": %.6g, \"min_bytes\": %.6g,\n     \"rows\": [", conv_flops(p) / 1e9,
            conv_min_bytes(p));
    for (int i = 0; i < n_rows; ++i) {
        const row_numbers *n = &nums[i];
        fprintf(f, "%s\n       {\"version\": ", i ? "," : "");
        json_string(f, label_of(&rows[i]));
        fprintf(f, ", \"class\": \"%s\", \"median_ms\": ", conv_class_name(rows[i].cls));
        json_number(f, n->ms);
        fprintf(f, ", \"min_ms\": ");
        json_number(f, n->min_ms);
        fprintf(f, ", \"max_ms\": ");
        json_number(f, n->max_ms);
        fprintf(f, ", \"gflops\": ");
        json_number(f, n->gflops);
        fprintf(f, ", \"gbps\": ");
        json_number(f, n->gbps);
        for (int k = 0; k < r->n_refs; ++k) {
            char key[64];
            conv_report_ref_key(r->ref_names[k], key, sizeof key);
            fprintf(f, ", \"%s\": ", key);
            json_number(f, n->vs[k]);
        }
        for (int k = 0; k < r->n_refs; ++k)
            if (conv_report_by_class(r->ref_names[k])) {
                fprintf(f, ", \"ref_%s\": ", r->ref_names[k]);
                if (n->by[k] != NULL)
                    json_string(f, n->by[k]);
                else
                    fprintf(f, "null");
            }
        fprintf(f, ", \"status\": \"%s\", \"verdict\": ", state_names[rows[i].state]);
        json_string(f, n->verdict);
        fprintf(f, "}");
    }
    fprintf(f, "]}");
}

#define MAX_ROWS 128

/* Under a table with a by-class column: "cuDNN best: FP32 3.0423 ms (label);
 * TF32 ...", the reference of each class that ran. */
static void print_best(const conv_report *r, FILE *out, const conv_row *rows, int n_rows)
{
    int column = -1;
    for (int i = 0; i < r->n_refs && column < 0; ++i)
        if (conv_report_by_class(r->ref_names[i]))
            column = i;
    if (column < 0)
        return;
    int printed = 0;
    for (int c = 0; c < CONV_CLASS_COUNT; ++c) {
        conv_row probe;
        memset(&probe, 0, sizeof probe);
        probe.cls = (conv_class)c;
        int ref = conv_rows_reference(rows, n_rows, column, &probe);
        if (ref < 0 || !conv_row_is_cudnn(&rows[ref]))
            continue;
        fprintf(out, "%s%s %.4f ms (%s)", printed++ ? "; " : "cuDNN best: ", conv_class_name(c),
                rows[ref].res.timing.median_ms, label_of(&rows[ref]));
    }
    if (printed)
        fprintf(out, "\n");
}

void conv_report_problem(conv_report *r, FILE *out, const char *name, const conv_params *p,
                         const conv_row *rows, int n_rows, const double ref_ms[CONV_MAX_REFS],
                         double peak_gflops)
{
    conv_report_layer(r, out, name, 1, p, rows, n_rows, ref_ms, peak_gflops);
}

void conv_report_layer(conv_report *r, FILE *out, const char *name, int count, const conv_params *p,
                       const conv_row *rows, int n_rows, const double ref_ms[CONV_MAX_REFS],
                       double peak_gflops)
{
    row_numbers nums[MAX_ROWS];
    if (n_rows > MAX_ROWS)
        n_rows = MAX_ROWS;
    (void)ref_ms; /* the ratios come from the rows themselves (conv_rows_reference) */
    for (int i = 0; i < n_rows; ++i)
        nums[i] = numbers(r, p, rows, n_rows, i, peak_gflops);
    print_header(r, out);
    for (int i = 0; i < n_rows; ++i) {
        print_row(r, out, &rows[i], &nums[i]);
        if (r->csv != NULL)
            csv_row(r, name, count, p, &rows[i], &nums[i]);
    }
    print_best(r, out, rows, n_rows);
    if (r->csv != NULL)
        fflush(r->csv);
    if (r->json != NULL)
        json_problem(r, name, count, p, rows, n_rows, nums);
}

static conv_status close_file(FILE **f, const char *flag, const char *path, conv_msg *msg)
{
    if (*f == NULL)
        return CONV_OK;
    int bad = ferror(*f) != 0;
    bad |= fclose(*f) != 0;
    *f = NULL;
    return bad ? conv_fail(msg, CONV_ERR_INVALID, "writing --%s file '%s' failed", flag, path)
               : CONV_OK;
}

FILE *conv_report_json_members(conv_report *r)
{
    if (r->json != NULL && !r->json_list_closed) {
        fprintf(r->json, "\n  ]");
        r->json_list_closed = 1;
    }
    return r->json;
}

conv_status conv_report_close(conv_report *r, conv_msg *msg)
{
    if (conv_report_json_members(r) != NULL)
        fprintf(r->json, "\n}\n");
    conv_status st = close_file(&r->csv, "csv", r->csv_path, msg);
    conv_status st2 = close_file(&r->json, "json", r->json_path, msg);
    return st != CONV_OK ? st : st2;
}
