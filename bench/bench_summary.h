/* The summary of a model run (conv_bench --model): per layer and per
 * precision class, the fastest verified row of ours beside cuDNN's best of
 * that class and conv2d_auto's row of the class (library/), and the model's
 * totals, each layer weighed by how many times it occurs. A class takes the
 * rows that may stand for it (conv_class_allows: FP32 rows count in TF32 too);
 * conv2d_auto's column takes its own row of the class only (see
 * bench_summary_add). Plain C with no CUDA: the tests fill it with rows
 * written by hand. */
#ifndef BENCH_SUMMARY_H
#define BENCH_SUMMARY_H

#include <stdio.h>

#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 for a row of ours: a kernel of steps 02-08 that is not a reference of
 * the table. Not ours: step 01 on the CPU, cuDNN (either API), and the rows
 * whose work is cuBLAS's GEMM (step 06's im2col + cuBLAS SGEMM, step 08's
 * GEMM alone), and conv2d_auto's rows (keys "auto..."), which run one of ours. */
int bench_row_is_ours(const conv_row *row);

/* 1 for a row of conv2d_auto (key "auto...", e.g. "auto-tf32"). */
int bench_row_is_auto(const conv_row *row);

/* The fastest verified row of a kind on one layer (ms 0: none). For
 * conv2d_auto, its one row of the class, the label being the key of the
 * kernel it chose ("8b"). */
typedef struct {
    double ms;
    char label[96];
} bench_best;

typedef struct {
    const char *name; /* the layer's name, kept by the caller */
    int count;        /* how many times it occurs in the model */
    bench_best ours[CONV_CLASS_COUNT], cudnn[CONV_CLASS_COUNT];
    bench_best auto_row[CONV_CLASS_COUNT]; /* conv2d_auto's row of the class */
} bench_layer_best;

#define BENCH_SUMMARY_MAX_LAYERS 64

typedef struct {
    int n_layers;
    bench_layer_best layers[BENCH_SUMMARY_MAX_LAYERS];
} bench_summary;

/* One class's model total: the sum over layers of count x time, for ours,
 * for cuDNN's best and for conv2d_auto, with the number of layers each
 * covers. Each ratio is the other's time over the second named's, as every
 * "vs" column (above 1: the second named is faster), and 0 unless both cover
 * the same layers, at least one:
 *   ratio          cuDNN ms / ours ms
 *   auto_vs_ours   ours ms / auto ms (1: conv2d_auto picks the fastest of
 *                  ours on every layer; 1 / 1.05 = 0.952: it takes 5% longer)
 *   auto_vs_cudnn  cuDNN ms / auto ms */
typedef struct {
    double ours_ms, cudnn_ms, auto_ms;
    double ratio, auto_vs_ours, auto_vs_cudnn;
    int ours_layers, cudnn_layers, auto_layers;
    int convolutions; /* the sum of the layers' counts */
} bench_total;

/* Adds a layer from its rows as they ended (verified rows count, others not);
 * a layer past BENCH_SUMMARY_MAX_LAYERS is left out. */
void bench_summary_add(bench_summary *s, const char *name, int count, const conv_row *rows,
                       int n_rows);

bench_total bench_summary_total(const bench_summary *s, conv_class cls);

/* Prints the summary: a heading naming the run (e.g. "resnet50, n=32,
 * nhwc"), then per class a line per layer and the total; "-" where a layer
 * has no verified row of ours, of cuDNN or of conv2d_auto in that class. */
void bench_summary_print(const bench_summary *s, const char *run, FILE *out);

/* The totals as one JSON object for a script to read:
 *   {"pass": "forward", "layers": 23, "convolutions": 53, "classes": [
 *     {"class": "FP32", "ours_ms", "ours_layers", "cudnn_ms", "cudnn_layers",
 *      "auto_ms", "auto_layers", "ratio", "auto_vs_ours", "auto_vs_cudnn"},
 *     ...]}
 * with the fields of bench_total (a time or a ratio of 0 is null), each line
 * after the first indented by `indent` spaces, no newline after the last. */
void bench_summary_json(const bench_summary *s, conv_pass pass, int indent, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_SUMMARY_H */
