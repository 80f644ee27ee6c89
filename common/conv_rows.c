#include "conv_rows.h"

#include <stdio.h>
#include <string.h>

#include "conv_cli.h"
#include "conv_cudnn_fp16.h"

conv_row conv_row_device(const char *name, const char *key, conv_gpu_conv conv, void *ctx)
{
    conv_row r;
    memset(&r, 0, sizeof r);
    r.name = name;
    r.key = key;
    r.kind = CONV_ROW_DEVICE;
    r.conv = conv;
    r.ctx = ctx;
    r.ref = -1;
    return r;
}

conv_row conv_row_host(const char *name, const char *key, conv_host_conv host)
{
    conv_row r = conv_row_device(name, key, NULL, NULL);
    r.kind = CONV_ROW_HOST;
    r.host = host;
    return r;
}

conv_row conv_row_grad(const char *name, const char *key, conv_pass pass, conv_gpu_grad grad,
                       void *ctx)
{
    conv_row r = conv_row_device(name, key, NULL, ctx);
    r.pass = pass;
    r.grad = grad;
    return r;
}

/* A row that is none of our kernels but a library's or a measurement's:
 * no key, measured by its kind. */
static conv_row other_row(const char *name, conv_row_kind kind, conv_class cls, void *ctx)
{
    conv_row r = conv_row_device(name, NULL, NULL, ctx);
    r.kind = kind;
    r.cls = cls;
    return r;
}

conv_row conv_row_cudnn(void)
{
    return other_row("cuDNN", CONV_ROW_CUDNN, CONV_CLASS_FP32, NULL);
}

conv_row conv_row_cudnn_tf32(void)
{
    static const conv_cudnn_math tf32 = CONV_CUDNN_TF32;
    return other_row("cuDNN TF32", CONV_ROW_CUDNN, CONV_CLASS_TF32, (void *)&tf32);
}

/* The FP16 reference computes the forward pass only: other passes are
 * skipped before anything runs. */
static conv_status cudnn_fp16_check(void *ctx, const conv_params *p, conv_msg *msg)
{
    (void)ctx;
    return conv_cudnn_fp16_check(p, msg);
}

conv_row conv_row_cudnn_fp16(void)
{
    conv_row r = other_row("cuDNN FP16", CONV_ROW_CUDNN, CONV_CLASS_FP16, NULL);
    r.check = cudnn_fp16_check;
    return r;
}

conv_row conv_row_cudnn_graph(conv_class cls)
{
    conv_row r = other_row(cls == CONV_CLASS_TF32   ? "cuDNN graph TF32"
                           : cls == CONV_CLASS_FP16 ? "cuDNN graph FP16"
                                                    : "cuDNN graph",
                           CONV_ROW_CUDNN_GRAPH, cls, NULL);
    if (cls == CONV_CLASS_FP16)
        r.check = cudnn_fp16_check;
    return r;
}

conv_row conv_row_copy(void)
{
    return other_row("device-to-device copy", CONV_ROW_COPY, CONV_CLASS_FP32, NULL);
}

int conv_rows_add_cudnn(conv_row *rows, int ref)
{
    rows[0] = conv_row_cudnn();
    rows[0].ref = ref;
    rows[1] = conv_row_cudnn_graph(CONV_CLASS_FP32);
    return 2;
}

int conv_row_is_cudnn(const conv_row *row)
{
    return row->kind == CONV_ROW_CUDNN || row->kind == CONV_ROW_CUDNN_GRAPH;
}

static int is_reference(const conv_row *row)
{
    return row->ref >= 0 && row->ref < CONV_MAX_REFS;
}

int conv_rows_reference(const conv_row *rows, int n_rows, int ref, const conv_row *row)
{
    int own = -1, own_class = -1, per_class = 0;
    for (int i = 0; i < n_rows; ++i)
        if (rows[i].ref == ref) {
            per_class |= conv_row_is_cudnn(&rows[i]);
            if (rows[i].state != CONV_ROW_OK)
                continue;
            if (own < 0)
                own = i;
            if (own_class < 0 && conv_class_allows(row->cls, rows[i].cls))
                own_class = i;
        }
    if (!per_class)
        return own_class >= 0 ? own_class : own;
    int best = -1;
    for (int i = 0; i < n_rows; ++i)
        if (conv_row_is_cudnn(&rows[i]) && rows[i].state == CONV_ROW_OK &&
            conv_class_allows(row->cls, rows[i].cls) &&
            (best < 0 || rows[i].res.timing.median_ms < rows[best].res.timing.median_ms))
            best = i;
    return best;
}

int conv_rows_table(const conv_row *like, const char *const *names, const char *const *keys,
                    const void *contexts, size_t ctx_size, int count, conv_row *rows, int max_rows)
{
    int n = 0;
    for (; n < count && n < max_rows; ++n) {
        rows[n] = *like;
        rows[n].name = names[n];
        rows[n].key = keys[n];
        /* a row's context is void *: a table the rows only read is const here */
        rows[n].ctx =
            contexts != NULL ? (void *)((const char *)contexts + (size_t)n * ctx_size) : NULL;
    }
    return n;
}

int conv_rows_select(conv_row *rows, int n_rows, const char *select)
{
    int kept = 0;
    for (int i = 0; i < n_rows; ++i)
        if (select == NULL || rows[i].key == NULL || is_reference(&rows[i]) ||
            conv_cli_selects(select, rows[i].key))
            rows[kept++] = rows[i];
    return kept;
}

void conv_row_skip(conv_row *row, const char *reason)
{
    row->state = CONV_ROW_SKIPPED;
    snprintf(row->why, sizeof row->why, "skipped: %s", reason);
}

void conv_rows_mark_ref(conv_row *rows, int n_rows, const char *key, int ref)
{
    for (int i = 0; i < n_rows; ++i)
        if (rows[i].key != NULL && strcmp(rows[i].key, key) == 0)
            rows[i].ref = ref;
}

int conv_rows_keep_ref(conv_row *rows, int n_rows, const char *key, int ref)
{
    for (int i = 0; i < n_rows; ++i)
        if (rows[i].key != NULL && strcmp(rows[i].key, key) == 0) {
            rows[0] = rows[i];
            rows[0].ref = ref;
            return 1;
        }
    return 0;
}

int conv_rows_check(conv_row *rows, int n_rows, const conv_params *p, char *first_why,
                    size_t why_len)
{
    int runnable = 0;
    if (first_why != NULL && why_len > 0)
        first_why[0] = '\0';
    for (int i = 0; i < n_rows; ++i) {
        conv_row *row = &rows[i];
        snprintf(row->label, sizeof row->label, "%s", row->name);
        conv_msg msg = {{0}};
        int ours = row->kind == CONV_ROW_DEVICE || row->kind == CONV_ROW_HOST;
        if (row->state == CONV_ROW_PENDING && ours && row->pass != p->pass) {
            snprintf(msg.text, sizeof msg.text, "computes the %s pass, not %s",
                     conv_pass_name(row->pass), conv_pass_name(p->pass));
            conv_row_skip(row, msg.text);
        }
        if (row->state == CONV_ROW_PENDING && row->check != NULL &&
            row->check(row->ctx, p, &msg) != CONV_OK)
            conv_row_skip(row, msg.text);
        if (is_reference(row) || conv_row_is_cudnn(row))
            continue; /* the program's own rows decide whether it runs the problem */
        if (row->state == CONV_ROW_PENDING)
            ++runnable;
        else if (first_why != NULL && why_len > 0 && first_why[0] == '\0')
            snprintf(first_why, why_len, "%s", row->why + strlen("skipped: "));
    }
    return runnable;
}

int conv_rows_host_only(conv_row *rows, int n_rows)
{
    int kept = 0;
    for (int i = 0; i < n_rows; ++i)
        if (rows[i].kind == CONV_ROW_HOST)
            rows[kept++] = rows[i];
    return kept;
}

static int is_skip_status(conv_status st)
{
    return st == CONV_ERR_UNSUPPORTED || st == CONV_ERR_INVALID || st == CONV_ERR_UNAVAILABLE;
}

static conv_status measure_copy(conv_gpu_problem *pb, const conv_run_opts *o, conv_row *row,
                                conv_msg *msg)
{
    if (o->d2d_gbps <= 0.0)
        return conv_fail(msg, CONV_ERR_UNAVAILABLE, "the copy bandwidth was not measured");
    double ms = conv_min_bytes(&pb->p) / (o->d2d_gbps * 1e6);
    row->res.timing.median_ms = row->res.timing.min_ms = row->res.timing.max_ms = ms;
    row->res.timing.repeats = 1;
    row->res.passed = 1;
    snprintf(row->res.verdict, sizeof row->res.verdict,
             "reference: the minimum bytes at the copy bandwidth, %.0f GB/s", o->d2d_gbps);
    return CONV_OK;
}

/* Measures one pending row and sets its state. Returns 1 on a failure. */
static int measure_row(conv_gpu_problem *pb, conv_row *row, const conv_run_opts *o)
{
    conv_msg msg = {{0}};
    char algo[96] = "";
    memset(&row->res, 0, sizeof row->res);
    conv_status st = row->setup != NULL ? row->setup(row->ctx, pb, &msg) : CONV_OK;
    if (st == CONV_OK) {
        switch (row->kind) {
        case CONV_ROW_HOST:
            st = conv_gpu_problem_measure_host(pb, row->host, o->host_warmup, o->host_repeat,
                                               &row->res, &msg);
            break;
        case CONV_ROW_CUDNN:
            if (row->cls == CONV_CLASS_FP16)
                st = conv_gpu_problem_measure_cudnn_fp16(pb, NULL, o->warmup, o->repeat, &row->res,
                                                         algo, sizeof algo, &msg);
            else
                st = conv_gpu_problem_measure_cudnn_math(
                    pb, row->ctx != NULL ? *(const conv_cudnn_math *)row->ctx : CONV_CUDNN_FP32,
                    o->warmup, o->repeat, &row->res, algo, sizeof algo, &msg);
            if (algo[0] != '\0')
                snprintf(row->label, sizeof row->label, "%s (%s)", row->name, algo);
            break;
        case CONV_ROW_CUDNN_GRAPH: {
            conv_cudnn_graph_opts search =
                o->graph.budget_s > 0.0 ? o->graph : conv_cudnn_graph_opts_default();
            if (row->cls == CONV_CLASS_FP16)
                st = conv_gpu_problem_measure_cudnn_fp16(pb, &search, o->warmup, o->repeat,
                                                         &row->res, algo, sizeof algo, &msg);
            else
                st = conv_gpu_problem_measure_cudnn_graph(pb, row->cls, &search, o->warmup,
                                                          o->repeat, &row->res, algo, sizeof algo,
                                                          &msg);
            if (algo[0] != '\0')
                snprintf(row->label, sizeof row->label, "%s (%s)", row->name, algo);
            break;
        }
        case CONV_ROW_COPY: st = measure_copy(pb, o, row, &msg); break;
        default: {
            conv_verify_opts within = conv_verify_bound(1.0);
            if (row->tolerance != NULL)
                st = row->tolerance(row->ctx, pb, &within, &msg);
            if (st == CONV_OK && row->grad != NULL)
                st = conv_gpu_problem_measure_grad(pb, row->grad, row->ctx, &within, o->warmup,
                                                   o->repeat, &row->res, &msg);
            else if (st == CONV_OK)
                st = conv_gpu_problem_measure(pb, row->conv, row->ctx, &within, o->warmup,
                                              o->repeat, &row->res, &msg);
            break;
        }
        }
    }
    if (st == CONV_OK && row->res.passed && row->annotate != NULL) {
        size_t len = strlen(row->res.verdict);
        st = row->annotate(row->ctx, pb, o, row->res.verdict + len, sizeof row->res.verdict - len,
                           &msg);
    }
    if (row->teardown != NULL)
        row->teardown(row->ctx);
    if (st == CONV_OK) {
        row->state = row->res.passed ? CONV_ROW_OK : CONV_ROW_FAILED;
        return !row->res.passed;
    }
    cudaGetLastError(); /* a failed launch may leave an error behind; later rows start clean */
    if (is_skip_status(st)) {
        conv_row_skip(row, msg.text);
        return 0;
    }
    row->state = CONV_ROW_ERROR;
    snprintf(row->why, sizeof row->why, "error: %s", msg.text);
    return 1;
}

int conv_rows_run(conv_gpu_problem *pb, conv_row *rows, int n_rows, const conv_run_opts *o,
                  double ref_ms[CONV_MAX_REFS])
{
    int failed = 0;
    for (int i = 0; i < CONV_MAX_REFS; ++i)
        ref_ms[i] = 0.0;
    for (int pass = 0; pass < 2; ++pass) /* references first */
        for (int i = 0; i < n_rows; ++i) {
            conv_row *row = &rows[i];
            if (is_reference(row) != (pass == 0) || row->state != CONV_ROW_PENDING)
                continue;
            if (row->label[0] == '\0')
                snprintf(row->label, sizeof row->label, "%s", row->name);
            failed += measure_row(pb, row, o);
            if (pass == 0 && row->state == CONV_ROW_OK)
                ref_ms[row->ref] = row->res.timing.median_ms;
        }
    return failed;
}

int conv_rows_fastest(const conv_row *rows, int n_rows)
{
    int best = -1;
    for (int i = 0; i < n_rows; ++i)
        if (!is_reference(&rows[i]) && !conv_row_is_cudnn(&rows[i]) &&
            rows[i].state == CONV_ROW_OK &&
            (best < 0 || rows[i].res.timing.median_ms < rows[best].res.timing.median_ms))
            best = i;
    return best;
}
