#include "bench_summary.h"

#include <string.h>

int bench_row_is_ours(const conv_row *row)
{
    if (row->ref >= 0 || conv_row_is_cudnn(row) || row->kind == CONV_ROW_HOST ||
        row->kind == CONV_ROW_COPY)
        return 0;
    /* conv2d_auto runs one of our kernels: counted, it would stand for one of them twice */
    if (row->key != NULL && strncmp(row->key, "auto", 4) == 0)
        return 0;
    /* A row whose GEMM is cuBLAS's measures the library more than our code. */
    return strstr(row->name, "cuBLAS") == NULL;
}

/* Keeps the faster of best and row. */
static void keep_faster(bench_best *best, const conv_row *row)
{
    double ms = row->res.timing.median_ms;
    if (ms <= 0.0 || (best->ms > 0.0 && best->ms <= ms))
        return;
    best->ms = ms;
    snprintf(best->label, sizeof best->label, "%s", row->label[0] ? row->label : row->name);
}

void bench_summary_add(bench_summary *s, const char *name, int count, const conv_row *rows,
                       int n_rows)
{
    if (s->n_layers >= BENCH_SUMMARY_MAX_LAYERS)
        return;
    bench_layer_best *l = &s->layers[s->n_layers++];
    memset(l, 0, sizeof *l);
    l->name = name;
    l->count = count;
    for (int i = 0; i < n_rows; ++i) {
        const conv_row *row = &rows[i];
        if (row->state != CONV_ROW_OK || (int)row->cls < 0 || row->cls >= CONV_CLASS_COUNT)
            continue;
        /* A row counts in every class it may stand for: FP32 rows in TF32 too. */
        for (int c = 0; c < CONV_CLASS_COUNT; ++c) {
            if (!conv_class_allows((conv_class)c, row->cls))
                continue;
            if (conv_row_is_cudnn(row))
                keep_faster(&l->cudnn[c], row);
            else if (bench_row_is_ours(row))
                keep_faster(&l->ours[c], row);
        }
    }
}

bench_total bench_summary_total(const bench_summary *s, conv_class cls)
{
    bench_total t;
    memset(&t, 0, sizeof t);
    int both = 0;
    for (int i = 0; i < s->n_layers; ++i) {
        const bench_layer_best *l = &s->layers[i];
        t.convolutions += l->count;
        if (l->ours[cls].ms > 0.0) {
            t.ours_ms += l->count * l->ours[cls].ms;
            ++t.ours_layers;
        }
        if (l->cudnn[cls].ms > 0.0) {
            t.cudnn_ms += l->count * l->cudnn[cls].ms;
            ++t.cudnn_layers;
        }
        both += l->ours[cls].ms > 0.0 && l->cudnn[cls].ms > 0.0;
    }
    /* Totals over different layers would compare different work. */
    if (both > 0 && both == t.ours_layers && both == t.cudnn_layers)
        t.ratio = t.cudnn_ms / t.ours_ms;
    return t;
}

/* One column: a row's label (or the layers a total covers) and its ms; "-"
 * for what is missing. */
static void print_cell(FILE *out, const char *text, double ms)
{
    fprintf(out, "  %-34s ", text[0] ? text : "-");
    if (ms > 0.0)
        fprintf(out, "%10.4f", ms);
    else
        fprintf(out, "%10s", "-");
}

/* The ratio column and the end of the line ("-" for 0). */
static void print_ratio(FILE *out, double ratio)
{
    char text[32] = "-";
    if (ratio > 0.0)
        snprintf(text, sizeof text, "%.2fx", ratio);
    fprintf(out, " %8s\n", text);
}

static void print_class(const bench_summary *s, conv_class cls, FILE *out)
{
    bench_total t = bench_summary_total(s, cls);
    if (t.ours_layers == 0 && t.cudnn_layers == 0) {
        fprintf(out, "\n%s: no verified row of this class on any layer\n", conv_class_name(cls));
        return;
    }
    fprintf(out, "\n%-22s %5s  %-34s %10s  %-34s %10s %8s\n", conv_class_name(cls), "count",
            "ours (fastest verified)", "ms", "cuDNN best", "ms", "ratio");
    for (int i = 0; i < s->n_layers; ++i) {
        const bench_best *ours = &s->layers[i].ours[cls], *cudnn = &s->layers[i].cudnn[cls];
        fprintf(out, "%-22s %5d", s->layers[i].name, s->layers[i].count);
        print_cell(out, ours->label, ours->ms);
        print_cell(out, cudnn->label, cudnn->ms);
        print_ratio(out, ours->ms > 0.0 && cudnn->ms > 0.0 ? cudnn->ms / ours->ms : 0.0);
    }
    char ours[48], cudnn[48];
    snprintf(ours, sizeof ours, "%d of %d layers", t.ours_layers, s->n_layers);
    snprintf(cudnn, sizeof cudnn, "%d of %d layers", t.cudnn_layers, s->n_layers);
    fprintf(out, "%-22s %5d", "total (count x ms)", t.convolutions);
    print_cell(out, ours, t.ours_ms);
    print_cell(out, cudnn, t.cudnn_ms);
    print_ratio(out, t.ratio);
}

void bench_summary_print(const bench_summary *s, const char *run, FILE *out)
{
    fprintf(out, "\n== summary: %s\n", run);
    fprintf(out, "per layer and precision class, the fastest verified row of ours and cuDNN's "
                 "best (a TF32 class takes FP32 rows too: a user who allows TF32 gets the faster); "
                 "ratio = cuDNN ms / ours (above 1: ours is faster); total = the sum of count x "
                 "ms over the layers each covers\n");
    for (int c = 0; c < CONV_CLASS_COUNT; ++c)
        print_class(s, (conv_class)c, out);
}
