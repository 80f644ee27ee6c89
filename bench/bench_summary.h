/* The summary of a model run (conv_bench --model): per layer and per
 * precision class, the fastest verified row of ours beside cuDNN's best of
 * that class, and the model's totals, each layer weighed by how many times it
 * occurs. A class takes the rows that may stand for it (conv_class_allows:
 * FP32 rows count in TF32 too). Plain C with no CUDA: the tests fill it with
 * rows written by hand. */
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

/* The fastest verified row of a kind on one layer (ms 0: none). */
typedef struct {
    double ms;
    char label[96];
} bench_best;

typedef struct {
    const char *name; /* the layer's name, kept by the caller */
    int count;        /* how many times it occurs in the model */
    bench_best ours[CONV_CLASS_COUNT], cudnn[CONV_CLASS_COUNT];
} bench_layer_best;

#define BENCH_SUMMARY_MAX_LAYERS 64

typedef struct {
    int n_layers;
    bench_layer_best layers[BENCH_SUMMARY_MAX_LAYERS];
} bench_summary;

/* One class's model total: the sum over layers of count x time, for ours and
 * for cuDNN's best, with the number of layers each covers. The ratio (cuDNN
 * over ours; above 1, ours is faster) is 0 unless both cover the same
 * layers, at least one. */
typedef struct {
    double ours_ms, cudnn_ms, ratio;
    int ours_layers, cudnn_layers;
    int convolutions; /* the sum of the layers' counts */
} bench_total;

/* Adds a layer from its rows as they ended (verified rows count, others not);
 * a layer past BENCH_SUMMARY_MAX_LAYERS is left out. */
void bench_summary_add(bench_summary *s, const char *name, int count, const conv_row *rows,
                       int n_rows);

bench_total bench_summary_total(const bench_summary *s, conv_class cls);

/* Prints the summary: a heading naming the run (e.g. "resnet50, n=32,
 * nhwc"), then per class a line per layer and the total; "-" where a layer
 * has no verified row of ours or of cuDNN in that class. */
void bench_summary_print(const bench_summary *s, const char *run, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_SUMMARY_H */
