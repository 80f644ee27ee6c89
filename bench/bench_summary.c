#include "bench_summary.h"

#include <string.h>

int bench_row_is_auto(const conv_row *row)
{
    return row->key != NULL && strncmp(row->key, "auto", 4) == 0;
}

int bench_row_is_ours(const conv_row *row)
{
    if (row->ref >= 0 || conv_row_is_cudnn(row) || row->kind == CONV_ROW_HOST ||
        row->kind == CONV_ROW_COPY)
        return 0;
    /* conv2d_auto runs one of our kernels: counted, it would stand for one of them twice */
    if (bench_row_is_auto(row))
        return 0;
    /* A row whose GEMM is cuBLAS's measures the library more than our code. */
    return strstr(row->name, "cuBLAS") == NULL;
}

/* Keeps the faster of best and row, labelled `label`. */
static void keep_faster_as(bench_best *best, const conv_row *row, const char *label)
{
    double ms = row->res.timing.median_ms;
    if (ms <= 0.0 || (best->ms > 0.0 && best->ms <= ms))
        return;
    best->ms = ms;
    snprintf(best->label, sizeof best->label, "%s", label);
}

/* Keeps the faster of best and row, labelled as the row's table. */
static void keep_faster(bench_best *best, const conv_row *row)
{
    keep_faster_as(best, row, row->label[0] ? row->label : row->name);
}

/* conv2d_auto's row: labelled with the key of the kernel it chose, which its
 * verdict names ("...; chose 8b: NHWC, ..."), else with the row's name. */
static void keep_auto(bench_best *best, const conv_row *row)
{
    char key[16] = "";
    const char *chose = strstr(row->res.verdict, "chose ");
    if (chose != NULL) {
        chose += strlen("chose ");
        size_t n = strcspn(chose, ": ;");
        if (n > 0 && n < sizeof key) {
            memcpy(key, chose, n);
            key[n] = '\0';
        }
    }
    keep_faster_as(best, row, key[0] ? key : row->label[0] ? row->label : row->name);
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
        /* conv2d_auto's row of class c stands in class c alone. Ours and it
         * cover the same kernels there, those the class allows: ours by
         * taking the fastest of every row c allows (the FP32 rows in TF32
         * too), conv2d_auto by choosing among those kernels itself (asked
         * for TF32, it may run an FP32 kernel). Its FP32 row in TF32's
         * column would credit it with a choice its TF32 call did not make. */
        if (bench_row_is_auto(row)) {
            keep_auto(&l->auto_row[row->cls], row);
            continue;
        }
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

/* a over b where both cover the same layers, at least one; else 0: totals
 * over different layers would compare different work. */
static double same_layers_ratio(double a_ms, double b_ms, int both, int a_layers, int b_layers)
{
    return both > 0 && both == a_layers && both == b_layers && b_ms > 0.0 ? a_ms / b_ms : 0.0;
}

bench_total bench_summary_total(const bench_summary *s, conv_class cls)
{
    bench_total t;
    memset(&t, 0, sizeof t);
    int ours_cudnn = 0, ours_auto = 0, cudnn_auto = 0;
    for (int i = 0; i < s->n_layers; ++i) {
        const bench_layer_best *l = &s->layers[i];
        const double ours = l->ours[cls].ms, cudnn = l->cudnn[cls].ms, aut = l->auto_row[cls].ms;
        t.convolutions += l->count;
        if (ours > 0.0) {
            t.ours_ms += l->count * ours;
            ++t.ours_layers;
        }
        if (cudnn > 0.0) {
            t.cudnn_ms += l->count * cudnn;
            ++t.cudnn_layers;
        }
        if (aut > 0.0) {
            t.auto_ms += l->count * aut;
            ++t.auto_layers;
        }
        ours_cudnn += ours > 0.0 && cudnn > 0.0;
        ours_auto += ours > 0.0 && aut > 0.0;
        cudnn_auto += cudnn > 0.0 && aut > 0.0;
    }
    t.ratio = same_layers_ratio(t.cudnn_ms, t.ours_ms, ours_cudnn, t.cudnn_layers, t.ours_layers);
    t.auto_vs_ours =
        same_layers_ratio(t.ours_ms, t.auto_ms, ours_auto, t.ours_layers, t.auto_layers);
    t.auto_vs_cudnn =
        same_layers_ratio(t.cudnn_ms, t.auto_ms, cudnn_auto, t.cudnn_layers, t.auto_layers);
    return t;
}

/* The widths of the columns: a layer's name, a kernel of ours or of cuDNN,
 * conv2d_auto's choice (or the layers a total covers: "23 of 23 layers"), a
 * ratio (cuDNN's, then auto's, whose heads are longer). */
enum { NAME_W = 22, LABEL_W = 34, AUTO_W = 15, RATIO_W = 8, AUTO_RATIO_W = 9 };

/* One column: a row's label (or the layers a total covers) and its ms; "-"
 * for what is missing. */
static void print_cell(FILE *out, int width, const char *text, double ms)
{
    fprintf(out, "  %-*s ", width, text[0] ? text : "-");
    if (ms > 0.0)
        fprintf(out, "%10.4f", ms);
    else
        fprintf(out, "%10s", "-");
}

/* A ratio column ("-" for 0). */
static void print_ratio(FILE *out, int width, double ratio)
{
    char text[32] = "-";
    if (ratio > 0.0)
        snprintf(text, sizeof text, "%.2fx", ratio);
    fprintf(out, " %*s", width, text);
}

/* a over b, 0 unless both ran. */
static double over(double a_ms, double b_ms)
{
    return a_ms > 0.0 && b_ms > 0.0 ? a_ms / b_ms : 0.0;
}

static void print_class(const bench_summary *s, conv_class cls, FILE *out)
{
    bench_total t = bench_summary_total(s, cls);
    if (t.ours_layers == 0 && t.cudnn_layers == 0 && t.auto_layers == 0) {
        fprintf(out, "\n%s: no verified row of this class on any layer\n", conv_class_name(cls));
        return;
    }
    fprintf(out, "\n%-*s %5s  %-*s %10s  %-*s %10s %*s  %-*s %10s %*s %*s\n", NAME_W,
            conv_class_name(cls), "count", LABEL_W, "ours (fastest verified)", "ms", LABEL_W,
            "cuDNN best", "ms", RATIO_W, "ratio", AUTO_W, "auto (chose)", "ms", AUTO_RATIO_W,
            "vs ours", AUTO_RATIO_W, "vs cuDNN");
    for (int i = 0; i < s->n_layers; ++i) {
        const bench_layer_best *l = &s->layers[i];
        const bench_best *ours = &l->ours[cls], *cudnn = &l->cudnn[cls], *aut = &l->auto_row[cls];
        fprintf(out, "%-*s %5d", NAME_W, l->name, l->count);
        print_cell(out, LABEL_W, ours->label, ours->ms);
        print_cell(out, LABEL_W, cudnn->label, cudnn->ms);
        print_ratio(out, RATIO_W, over(cudnn->ms, ours->ms));
        print_cell(out, AUTO_W, aut->label, aut->ms);
        print_ratio(out, AUTO_RATIO_W, over(ours->ms, aut->ms));
        print_ratio(out, AUTO_RATIO_W, over(cudnn->ms, aut->ms));
        fputc('\n', out);
    }
    char ours[48], cudnn[48], aut[48];
    snprintf(ours, sizeof ours, "%d of %d layers", t.ours_layers, s->n_layers);
    snprintf(cudnn, sizeof cudnn, "%d of %d layers", t.cudnn_layers, s->n_layers);
    snprintf(aut, sizeof aut, "%d of %d layers", t.auto_layers, s->n_layers);
    fprintf(out, "%-*s %5d", NAME_W, "total (count x ms)", t.convolutions);
    print_cell(out, LABEL_W, ours, t.ours_ms);
    print_cell(out, LABEL_W, cudnn, t.cudnn_ms);
    print_ratio(out, RATIO_W, t.ratio);
    print_cell(out, AUTO_W, aut, t.auto_ms);
    print_ratio(out, AUTO_RATIO_W, t.auto_vs_ours);
    print_ratio(out, AUTO_RATIO_W, t.auto_vs_cudnn);
    fputc('\n', out);
    /* What a user of conv2d_auto loses to its rule, against picking the
     * fastest of ours on each layer by hand. */
    if (t.auto_vs_ours > 0.0)
        fprintf(out, "auto: %.3fx the time of the fastest of ours per layer (%+.1f%%)\n",
                t.auto_ms / t.ours_ms, 100.0 * (t.auto_ms / t.ours_ms - 1.0));
}

void bench_summary_print(const bench_summary *s, const char *run, FILE *out)
{
    fprintf(out, "\n== summary: %s\n", run);
    fprintf(out, "per layer and precision class, the fastest verified row of ours and cuDNN's "
                 "best (a TF32 class takes FP32 rows too: a user who allows TF32 gets the faster); "
                 "ratio = cuDNN ms / ours (above 1: ours is faster); auto = conv2d_auto's own row "
                 "of the class, with the kernel it chose; vs ours = ours ms / auto, vs cuDNN = "
                 "cuDNN ms / auto (above 1: auto is faster); total = the sum of count x ms over "
                 "the layers each covers, a total ratio only where both cover the same layers\n");
    for (int c = 0; c < CONV_CLASS_COUNT; ++c)
        print_class(s, (conv_class)c, out);
}

/* A time or a ratio, null for 0 (nothing measured, or no ratio). */
static void json_number(FILE *f, double v)
{
    if (v > 0.0)
        fprintf(f, "%.6g", v);
    else
        fprintf(f, "null");
}

void bench_summary_json(const bench_summary *s, conv_pass pass, int indent, FILE *f)
{
    int convolutions = 0;
    for (int i = 0; i < s->n_layers; ++i)
        convolutions += s->layers[i].count;
    fprintf(f, "{\"pass\": \"%s\", \"layers\": %d, \"convolutions\": %d, \"classes\": [",
            conv_pass_name(pass), s->n_layers, convolutions);
    for (int c = 0; c < CONV_CLASS_COUNT; ++c) {
        bench_total t = bench_summary_total(s, (conv_class)c);
        fprintf(f, "%s\n%*s  {\"class\": \"%s\", \"ours_ms\": ", c ? "," : "", indent, "",
                conv_class_name((conv_class)c));
        json_number(f, t.ours_ms);
        fprintf(f, ", \"ours_layers\": %d, \"cudnn_ms\": ", t.ours_layers);
        json_number(f, t.cudnn_ms);
        fprintf(f, ", \"cudnn_layers\": %d, \"auto_ms\": ", t.cudnn_layers);
        json_number(f, t.auto_ms);
        fprintf(f, ", \"auto_layers\": %d,\n%*s   \"ratio\": ", t.auto_layers, indent, "");
        json_number(f, t.ratio);
        fprintf(f, ", \"auto_vs_ours\": ");
        json_number(f, t.auto_vs_ours);
        fprintf(f, ", \"auto_vs_cudnn\": ");
        json_number(f, t.auto_vs_cudnn);
        fprintf(f, "}");
    }
    fprintf(f, "\n%*s]}", indent, "");
}
