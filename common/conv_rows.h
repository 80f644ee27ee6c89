/* Rows: what a program measures, one row per kernel or reference.
 *
 * Each step exports its kernels once, as rows (e.g. conv_naive_rows() in
 * 02_naive_gpu/naive_rows.h); the step's program, conv_bench and the tests
 * all use that one list. A row says how to run the kernel (a device or a host
 * convolution with its context), which problems it supports (check, no CUDA
 * call) and what it needs around a measurement (setup and teardown, e.g. a
 * workspace; annotate, e.g. stage times). References (step 01 on the CPU,
 * cuDNN, cuBLAS, an earlier step, the copy bandwidth) are rows too: their
 * times fill the "vs" columns of the table.
 *
 * One policy for every row, references included:
 *   a row that does not support the problem (its check, or its launcher,
 *     returns CONV_ERR_UNSUPPORTED or CONV_ERR_INVALID; a library that was not
 *     built, CONV_ERR_UNAVAILABLE) is skipped, with that line as the reason;
 *   any other error while it runs (CUDA, cuDNN, cuBLAS, out of memory) is an
 *     error, and a result that fails verification is a failure: both fail
 *     the run (exit status 1). */
#ifndef CONV_ROWS_H
#define CONV_ROWS_H

#include "conv_harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reference columns a table may have. */
#define CONV_MAX_REFS 4

typedef enum {
    CONV_ROW_DEVICE,      /* conv(ctx, ...) through conv_gpu_problem_measure */
    CONV_ROW_HOST,        /* host(...) through conv_gpu_problem_measure_host */
    CONV_ROW_CUDNN,       /* conv_gpu_problem_measure_cudnn (class FP16:
                             conv_gpu_problem_measure_cudnn_fp16); the algorithm joins the name */
    CONV_ROW_CUDNN_GRAPH, /* cuDNN's graph API, autotuned (conv_cudnn_graph.h); the
                             engine joins the name */
    CONV_ROW_COPY         /* a reference: the device-to-device copy of the problem's minimum
                             bytes at the measured copy bandwidth */
} conv_row_kind;

typedef enum {
    CONV_ROW_PENDING = 0,
    CONV_ROW_OK,      /* measured and verified */
    CONV_ROW_FAILED,  /* measured, wrong result */
    CONV_ROW_SKIPPED, /* does not support the problem (the reason in why) */
    CONV_ROW_ERROR    /* a runtime error (the message in why) */
} conv_row_state;

typedef struct {
    int warmup, repeat;           /* device rows */
    int host_warmup, host_repeat; /* host rows */
    double d2d_gbps;              /* the copy bandwidth, for CONV_ROW_COPY rows */
    conv_cudnn_graph_opts graph;  /* the search of CONV_ROW_CUDNN_GRAPH rows (zero: defaults) */
} conv_run_opts;

typedef struct conv_row conv_row;
struct conv_row {
    /* ---- set by the step's rows function ---- */
    const char *name; /* as printed, e.g. "naive grid-stride (1D)" */
    const char *key;  /* the value of the program's --variant that picks it (NULL: any) */
    conv_row_kind kind;
    conv_class cls; /* its precision class (conv_verify.h; zero: FP32) */
    conv_gpu_conv conv;
    conv_host_conv host;
    conv_pass pass;     /* what a device or host row computes (zero: the forward pass) */
    conv_gpu_grad grad; /* a backward row's function (pass DGRAD or WGRAD), instead of conv */
    void *ctx;
    /* Does the row support p? No CUDA call. NULL: every valid problem. */
    conv_status (*check)(void *ctx, const conv_params *p, conv_msg *msg);
    /* Before its measurement (a workspace, a library handle) and after it. */
    conv_status (*setup)(void *ctx, conv_gpu_problem *pb, conv_msg *msg);
    void (*teardown)(void *ctx);
    /* How its result is verified when it is not a dot product's (Winograd,
     * whose transforms scale the rounding errors): fills opts for the
     * problem's host tensors as they are now; called after setup. NULL:
     * within the dot product's bound, and exact on small integers. */
    conv_status (*tolerance)(void *ctx, const conv_gpu_problem *pb, conv_verify_opts *opts,
                             conv_msg *msg);
    /* After a verified measurement: extra measurements appended to the
     * verdict (e.g. "; im2col 0.2 + GEMM 1.3 ms"). */
    conv_status (*annotate)(void *ctx, conv_gpu_problem *pb, const conv_run_opts *o, char *note,
                            size_t len, conv_msg *msg);
    /* ---- set by the program ---- */
    int ref; /* >= 0: this row's time fills the table's reference column `ref`; else -1 */
    /* ---- filled by conv_rows_check and conv_rows_run ---- */
    conv_row_state state;
    conv_gpu_result res;
    char label[96];              /* name as printed (cuDNN: with its algorithm) */
    char why[CONV_MSG_LEN + 16]; /* "skipped: ..." or "error: ..." */
};

/* A row with every field zero but these (ref -1). */
conv_row conv_row_device(const char *name, const char *key, conv_gpu_conv conv, void *ctx);
conv_row conv_row_host(const char *name, const char *key, conv_host_conv host);
/* A device row of a backward pass (step 10). */
conv_row conv_row_grad(const char *name, const char *key, conv_pass pass, conv_gpu_grad grad,
                       void *ctx);
conv_row conv_row_cudnn(void);
/* cuDNN with TF32 tensor cores allowed: a labelled extra row ("cuDNN TF32"),
 * skipped with the reason where cuDNN has no tensor-core algorithm. */
conv_row conv_row_cudnn_tf32(void);
/* cuDNN in half precision with float compute (conv_cudnn_fp16.h): "cuDNN
 * FP16", class FP16, the reference of the FP16 rows (8a-fp16); forward
 * problems only (its check), skipped with the reason where the values do not
 * fit in half or cuDNN runs no algorithm. */
conv_row conv_row_cudnn_fp16(void);
/* cuDNN's graph API autotuned (conv_cudnn_graph.h) in class cls: "cuDNN
 * graph", "cuDNN graph TF32" and, on half data like conv_row_cudnn_fp16's,
 * "cuDNN graph FP16"; the engine joins the name. */
conv_row conv_row_cudnn_graph(conv_class cls);
conv_row conv_row_copy(void);

/* Writes cuDNN's two FP32 rows, the reference most programs compare with:
 * the legacy API's, as reference column `ref`, then the graph API's best
 * engine; the column takes the faster of the two ("cuDNN best"). Returns 2
 * (rows must have room for both). */
int conv_rows_add_cudnn(conv_row *rows, int ref);

/* 1 for a cuDNN row (the legacy API's or the graph API's, any class). */
int conv_row_is_cudnn(const conv_row *row);

/* Marks a row skipped before it runs (e.g. "estimated 40 s per run"). */
void conv_row_skip(conv_row *row, const char *reason);

/* Makes the rows whose key is `key` the reference of column `ref`. */
void conv_rows_mark_ref(conv_row *rows, int n_rows, const char *key, int ref);

/* Keeps one row of an earlier step's list as reference column `ref`: moves
 * the first row whose key is `key` to rows[0] and returns 1 (0 when no row
 * has that key), so that a program appends a step's rows and keeps the one
 * it compares with:
 *     n += conv_rows_keep_ref(r + n, conv_naive_rows(p, NULL, r + n, max - n), "2b", REF);
 */
int conv_rows_keep_ref(conv_row *rows, int n_rows, const char *key, int ref);

/* The rows of a step's table of versions: row i (i < count, and < max_rows)
 * is `like` (its kind, its function, its class and its hooks) named names[i],
 * keyed keys[i], with the context at contexts + i * ctx_size (contexts NULL:
 * none). Returns how many:
 *     conv_row like = conv_row_device(NULL, NULL, conv1d_tiled_conv, NULL);
 *     like.check = check;
 *     return conv_rows_table(&like, names, keys, strategies, sizeof strategies[0],
 *                            CONV1D_N_STRATEGIES, rows, max_rows);
 */
int conv_rows_table(const conv_row *like, const char *const *names, const char *const *keys,
                    const void *contexts, size_t ctx_size, int count, conv_row *rows, int max_rows);

/* Copies the rows a selection keeps (rows without a key, references, and
 * rows whose key conv_cli_selects(select, key)) to the front; returns how
 * many. select NULL keeps every row. */
int conv_rows_select(conv_row *rows, int n_rows, const char *select);

/* Runs every row's check on p: rows that do not support it (a row of another
 * pass than p->pass among them) become CONV_ROW_SKIPPED with the reason. Returns how many rows that
 * are neither references nor cuDNN's can still run, and the reason of the first that cannot in
 * first_why (may be NULL). No CUDA call. */
int conv_rows_check(conv_row *rows, int n_rows, const conv_params *p, char *first_why,
                    size_t why_len);

/* Drops device, cuDNN and copy rows (a machine without a GPU); returns how
 * many rows are left. */
int conv_rows_host_only(conv_row *rows, int n_rows);

/* Measures the rows still pending on the problem: references first (their
 * times go to ref_ms[row.ref], 0 when a reference did not run), then the
 * others. Returns the number of failed and erroneous rows. */
int conv_rows_run(conv_gpu_problem *pb, conv_row *rows, int n_rows, const conv_run_opts *o,
                  double ref_ms[CONV_MAX_REFS]);

/* The row that row's ratio in reference column `ref` is taken against, or -1
 * when none ran. Where the column's own reference is a cuDNN row, that is
 * "cuDNN best" of row's class: the fastest verified cuDNN row (legacy or
 * graph API) whose class row's class allows (conv_class_allows: an FP32 row
 * against strict FP32 cuDNN only, a TF32 row against TF32 and FP32 cuDNN).
 * Otherwise it is the column's own reference row, if it ran: the first one
 * of row's class where the column has several (step 09's "vs step 08": 8b
 * for its TF32 rows, 8b-fp16 for its FP16 one), else the first. */
int conv_rows_reference(const conv_row *rows, int n_rows, int ref, const conv_row *row);

/* The fastest verified row that is not a reference nor cuDNN's (the rows of
 * other classes than the reference column's, such as "cuDNN TF32", are not
 * references of the table but are no kernel of ours either); -1 if none. */
int conv_rows_fastest(const conv_row *rows, int n_rows);

#ifdef __cplusplus
}
#endif

#endif /* CONV_ROWS_H */
