/* common/conv_rows: the rows of a program (constructors, selection, checks,
 * references) and the one policy that runs them: references first; a row
 * that does not support the problem is skipped with the reason; a runtime
 * error is an error; a wrong result is a failure. Host rows run on a
 * host-only problem here; device rows in the GPU suite. */
#include <stdio.h>
#include <string.h>

#include "conv_report.h"
#include "conv_rows.h"
#include "conv_test_support.h"

/* The order the fake convolutions ran in, e.g. "ref right wrong ". */
static char call_log[512];

static void log_call(const char *name)
{
    size_t used = strlen(call_log);
    snprintf(call_log + used, sizeof call_log - used, "%s ", name);
}

static conv_status host_ref(const conv_params *p, const float *h_x, const float *h_w, float *h_y,
                            conv_msg *msg)
{
    log_call("ref");
    return conv_test_host_reference(p, h_x, h_w, h_y, msg);
}

static conv_status host_right(const conv_params *p, const float *h_x, const float *h_w, float *h_y,
                              conv_msg *msg)
{
    log_call("right");
    return conv_test_host_reference(p, h_x, h_w, h_y, msg);
}

static conv_status host_wrong(const conv_params *p, const float *h_x, const float *h_w, float *h_y,
                              conv_msg *msg)
{
    log_call("wrong");
    conv_status st = conv_test_host_reference(p, h_x, h_w, h_y, msg);
    h_y[conv_output_elems(p) / 2] += 1.0f;
    return st;
}

static conv_status host_unsupported(const conv_params *p, const float *h_x, const float *h_w,
                                    float *h_y, conv_msg *msg)
{
    (void)p, (void)h_x, (void)h_w, (void)h_y;
    log_call("unsupported");
    return conv_fail(msg, CONV_ERR_UNSUPPORTED, "this version needs K <= 2");
}

static conv_status host_out_of_memory(const conv_params *p, const float *h_x, const float *h_w,
                                      float *h_y, conv_msg *msg)
{
    (void)p, (void)h_x, (void)h_w, (void)h_y;
    log_call("oom");
    return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the workspace");
}

/* Counts the calls of a row's setup, teardown and annotate. */
typedef struct {
    int setups, teardowns, annotates;
    conv_status setup_status; /* what setup returns */
} hooks;

static conv_status hook_setup(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    hooks *h = ctx;
    cr_assert_not_null(pb->h_x, "setup gets the problem");
    ++h->setups;
    log_call("setup");
    if (h->setup_status != CONV_OK)
        return conv_fail(msg, h->setup_status, "setup refused");
    return CONV_OK;
}

static void hook_teardown(void *ctx)
{
    ++((hooks *)ctx)->teardowns;
    log_call("teardown");
}

static conv_status hook_annotate(void *ctx, conv_gpu_problem *pb, const conv_run_opts *o,
                                 char *note, size_t len, conv_msg *msg)
{
    (void)pb, (void)o, (void)msg;
    hooks *h = ctx;
    ++h->annotates;
    snprintf(note, len, "; stage 1 took 0.5 ms");
    return CONV_OK;
}

static conv_row with_hooks(conv_row row, hooks *h)
{
    row.ctx = h;
    row.setup = hook_setup;
    row.teardown = hook_teardown;
    row.annotate = hook_annotate;
    return row;
}

static int dummy_ctx;

Test(rows, constructors_set_the_kind_and_nothing_else)
{
    conv_row d = conv_row_device("naive", "gridstride", conv_test_device_zeros, &dummy_ctx);
    cr_assert_str_eq(d.name, "naive");
    cr_assert_str_eq(d.key, "gridstride");
    cr_assert(d.kind == CONV_ROW_DEVICE && d.conv == conv_test_device_zeros && d.ctx == &dummy_ctx);
    cr_assert(d.host == NULL && d.check == NULL && d.setup == NULL && d.teardown == NULL &&
              d.annotate == NULL);
    cr_assert(d.ref == -1 && d.state == CONV_ROW_PENDING && d.label[0] == '\0' && d.why[0] == '\0');
    conv_row h = conv_row_host("serial", "serial", host_right);
    cr_assert(h.kind == CONV_ROW_HOST && h.host == host_right && h.conv == NULL && h.ref == -1);
    conv_row c = conv_row_cudnn();
    cr_assert(c.kind == CONV_ROW_CUDNN && c.key == NULL && c.ref == -1);
    cr_assert_str_eq(c.name, "cuDNN");
    conv_row m = conv_row_copy();
    cr_assert(m.kind == CONV_ROW_COPY && m.key == NULL && m.ref == -1);
    cr_assert_str_eq(m.name, "device-to-device copy");
}

Test(rows, skip_marks_the_row_with_its_reason)
{
    conv_row r = conv_row_host("serial", NULL, host_right);
    conv_row_skip(&r, "estimated 40 s per run");
    cr_assert_eq(r.state, CONV_ROW_SKIPPED);
    cr_assert_str_eq(r.why, "skipped: estimated 40 s per run");
}

Test(rows, mark_ref_makes_the_rows_with_the_key_a_reference)
{
    conv_row r[4] = {conv_row_host("serial", "serial", host_right),
                     conv_row_host("openmp", "openmp", host_right), conv_row_cudnn(),
                     conv_row_host("again", "serial", host_right)};
    conv_rows_mark_ref(r, 4, "serial", 1);
    conv_rows_mark_ref(r, 4, "nothing", 2);
    cr_assert(r[0].ref == 1 && r[3].ref == 1);
    cr_assert(r[1].ref == -1 && r[2].ref == -1, "rows without the key (or none) keep -1");
}

/* A program that compares with one kernel of an earlier step appends that
 * step's rows and keeps the one it names, as its reference column. */
Test(rows, keep_ref_keeps_the_first_row_with_the_key_as_the_reference)
{
    conv_row r[4] = {conv_row_cudnn(), conv_row_host("6e", "6e", host_right),
                     conv_row_host("6f", "6f", host_right),
                     conv_row_host("6f again", "6f", host_ref)};
    cr_assert_eq(conv_rows_keep_ref(r, 4, "6f", 2), 1);
    cr_assert_str_eq(r[0].name, "6f", "the first row with the key, moved to the front");
    cr_assert(r[0].ref == 2 && r[0].host == host_right);
    conv_row none[2] = {conv_row_cudnn(), conv_row_host("6e", "6e", host_right)};
    cr_assert_eq(conv_rows_keep_ref(none, 2, "6f", 1), 0, "no row with the key: none kept");
    cr_assert(none[0].kind == CONV_ROW_CUDNN && none[0].ref == -1, "and nothing changed");
    cr_assert_eq(conv_rows_keep_ref(none, 0, "6e", 1), 0, "an empty list");
}

/* The names of the first n rows, space-separated. */
static const char *names(const conv_row *rows, int n)
{
    static char buf[256];
    buf[0] = '\0';
    for (int i = 0; i < n; ++i) {
        size_t used = strlen(buf);
        snprintf(buf + used, sizeof buf - used, "%s%s", i ? " " : "", rows[i].name);
    }
    return buf;
}

static int make_selection_rows(conv_row *r)
{
    r[0] = conv_row_device("a", "a", conv_test_device_zeros, NULL);
    r[1] = conv_row_device("b", "b", conv_test_device_zeros, NULL);
    r[2] = conv_row_cudnn(); /* no key: always kept */
    r[3] = conv_row_host("ref c", "c", host_ref);
    r[3].ref = 0; /* a reference: kept whatever its key */
    r[4] = conv_row_device("a again", "a", conv_test_device_zeros, NULL);
    return 5;
}

Test(rows, select_keeps_the_chosen_rows_the_keyless_ones_and_the_references)
{
    conv_row r[5];
    int n = make_selection_rows(r);
    n = conv_rows_select(r, n, "a");
    cr_assert_str_eq(names(r, n), "a cuDNN ref c a again");
    n = conv_rows_select(r, make_selection_rows(r), "b");
    cr_assert_str_eq(names(r, n), "b cuDNN ref c");
    n = conv_rows_select(r, make_selection_rows(r), "all");
    cr_assert_str_eq(names(r, n), "a b cuDNN ref c a again");
    n = conv_rows_select(r, make_selection_rows(r), NULL);
    cr_assert_eq(n, 5);
    n = conv_rows_select(r, make_selection_rows(r), "zzz");
    cr_assert_str_eq(names(r, n), "cuDNN ref c");
}

/* A host row that takes stride 1 only. */
static conv_row stride_1_row(const char *name, conv_host_conv host)
{
    conv_row r = conv_row_host(name, NULL, host);
    r.check = conv_test_needs_stride_1;
    return r;
}

Test(rows, check_skips_what_does_not_support_the_problem_and_counts_the_rest)
{
    conv_row r[5];
    r[0] = conv_row_host("any", NULL, host_right);
    r[1] = stride_1_row("stride 1", host_right);
    r[2] = stride_1_row("ref stride 1", host_ref);
    r[2].ref = 0;
    r[3] = conv_row_host("not asked", NULL, host_right);
    conv_row_skip(&r[3], "by request");
    r[4] = conv_row_host("ref", NULL, host_ref);
    r[4].ref = 1;
    conv_params p = conv_shape(1, 2, 17, 19, 3, 3, 3, 0, 2, 1);
    char why[CONV_MSG_LEN + 16];
    int runnable = conv_rows_check(r, 5, &p, why, sizeof why);
    cr_assert_eq(runnable, 1, "only 'any' can run; references do not count");
    cr_assert_eq(r[0].state, CONV_ROW_PENDING);
    cr_assert_eq(r[1].state, CONV_ROW_SKIPPED);
    cr_assert_str_eq(r[1].why, "skipped: the test rows need stride 1, got 2x2");
    cr_assert_eq(r[2].state, CONV_ROW_SKIPPED, "a reference is checked too");
    cr_assert_str_eq(r[3].why, "skipped: by request", "a skipped row stays skipped");
    cr_assert_str_eq(why, "the test rows need stride 1, got 2x2", "the first row's reason");
    cr_assert_str_eq(r[0].label, "any", "labels are set");
    cr_assert_str_eq(r[4].label, "ref");

    /* the first reason is the first row's, a reference's never */
    r[0] = stride_1_row("ref first", host_ref);
    r[0].ref = 0;
    r[1] = conv_row_host("skipped first", NULL, host_right);
    conv_row_skip(&r[1], "by request");
    r[2] = stride_1_row("stride 1", host_right);
    cr_assert_eq(conv_rows_check(r, 3, &p, why, sizeof why), 0);
    cr_assert_str_eq(why, "by request");

    p.stride_h = p.stride_w = 1;
    r[0] = stride_1_row("stride 1", host_right);
    cr_assert_eq(conv_rows_check(r, 1, &p, NULL, 0), 1, "no reason wanted");
    cr_assert_eq(conv_rows_check(r, 1, &p, why, sizeof why), 1);
    cr_assert_str_empty(why, "nothing was skipped");
}

Test(rows, check_skips_a_row_of_another_pass_and_keeps_the_cudnn_rows)
{
    conv_row r[3];
    r[0] = conv_row_host("forward", NULL, host_right);
    r[1] = conv_row_grad("dgrad", "10a", CONV_PASS_DGRAD, NULL, NULL);
    r[2] = conv_row_cudnn();
    cr_assert_eq(r[1].kind, CONV_ROW_DEVICE);
    cr_assert_eq(r[1].pass, CONV_PASS_DGRAD);
    conv_params p = conv_shape(1, 2, 9, 9, 3, 3, 3, 1, 1, 1);
    p.pass = CONV_PASS_WGRAD;
    char why[CONV_MSG_LEN + 16];
    cr_assert_eq(conv_rows_check(r, 3, &p, why, sizeof why), 0);
    cr_assert_str_eq(r[0].why, "skipped: computes the forward pass, not wgrad");
    cr_assert_str_eq(r[1].why, "skipped: computes the dgrad pass, not wgrad");
    cr_assert_eq(r[2].state, CONV_ROW_PENDING, "cuDNN computes any pass");
    p.pass = CONV_PASS_DGRAD;
    r[1] = conv_row_grad("dgrad", "10a", CONV_PASS_DGRAD, NULL, NULL);
    cr_assert_eq(conv_rows_check(&r[1], 1, &p, why, sizeof why), 1);
}

Test(rows, host_only_keeps_the_host_rows_in_order)
{
    conv_row r[5] = {conv_row_device("gpu", NULL, conv_test_device_zeros, NULL),
                     conv_row_host("serial", NULL, host_ref), conv_row_cudnn(), conv_row_copy(),
                     conv_row_host("openmp", NULL, host_right)};
    int n = conv_rows_host_only(r, 5);
    cr_assert_str_eq(names(r, n), "serial openmp");
}

/* A row that ran, with a time and a verdict. */
static conv_row ran(const char *name, conv_row_state state, double ms, int ref)
{
    conv_row r = conv_row_host(name, NULL, host_right);
    r.state = state;
    r.ref = ref;
    r.res.timing.median_ms = ms;
    r.res.passed = state == CONV_ROW_OK;
    return r;
}

Test(rows, fastest_is_the_quickest_verified_row_that_is_not_a_reference)
{
    conv_row r[5] = {ran("slow", CONV_ROW_OK, 3.0, -1), ran("reference", CONV_ROW_OK, 0.5, 0),
                     ran("wrong", CONV_ROW_FAILED, 0.1, -1), ran("fast", CONV_ROW_OK, 1.0, -1),
                     ran("skipped", CONV_ROW_SKIPPED, 0.0, -1)};
    cr_assert_eq(conv_rows_fastest(r, 5), 3);
    cr_assert_eq(conv_rows_fastest(r, 3), 0);
    cr_assert_eq(conv_rows_fastest(r + 1, 2), -1, "only a reference and a failure");
    cr_assert_eq(conv_rows_fastest(r, 0), -1);
    conv_row with_cudnn[2] = {r[0], conv_row_cudnn_graph(CONV_CLASS_TF32)};
    with_cudnn[1].state = CONV_ROW_OK;
    with_cudnn[1].res.timing.median_ms = 0.01;
    cr_assert_eq(conv_rows_fastest(with_cudnn, 2), 0, "cuDNN is never the fastest of ours");
}

/* A cuDNN row of a class that ran in ms. */
static conv_row cudnn_ran(conv_row r, conv_class cls, conv_row_state state, double ms, int ref)
{
    r.cls = cls;
    r.state = state;
    r.ref = ref;
    r.res.timing.median_ms = ms;
    return r;
}

Test(rows, the_cudnn_column_compares_each_row_with_cudnn_best_of_its_class)
{
    conv_row r[8] = {
        cudnn_ran(conv_row_cudnn(), CONV_CLASS_FP32, CONV_ROW_OK, 5.0, 0),
        cudnn_ran(conv_row_cudnn_graph(CONV_CLASS_FP32), CONV_CLASS_FP32, CONV_ROW_OK, 4.0, -1),
        cudnn_ran(conv_row_cudnn(), CONV_CLASS_TF32, CONV_ROW_OK, 1.0, -1),
        cudnn_ran(conv_row_cudnn_graph(CONV_CLASS_TF32), CONV_CLASS_TF32, CONV_ROW_OK, 0.8, -1),
        ran("ours fp32", CONV_ROW_OK, 3.0, -1),
        ran("ours tf32", CONV_ROW_OK, 0.9, -1),
        ran("ours fp16", CONV_ROW_OK, 0.5, -1),
        ran("serial", CONV_ROW_OK, 100.0, 1),
    };
    r[5].cls = CONV_CLASS_TF32;
    r[6].cls = CONV_CLASS_FP16;
    cr_assert_eq(conv_rows_reference(r, 8, 0, &r[4]), 1, "FP32: the faster of the FP32 rows");
    cr_assert_eq(conv_rows_reference(r, 8, 0, &r[0]), 1, "the legacy row too");
    cr_assert_eq(conv_rows_reference(r, 8, 0, &r[5]), 3, "TF32: the graph TF32 row");
    cr_assert_eq(conv_rows_reference(r, 8, 0, &r[6]), -1, "no FP16 cuDNN row ran");
    cr_assert_eq(conv_rows_reference(r, 8, 1, &r[5]), 7, "another column: its own row");
    cr_assert_eq(conv_rows_reference(r, 8, 2, &r[5]), -1, "a column without a row");
    r[3].state = CONV_ROW_FAILED;
    r[1].state = CONV_ROW_ERROR;
    cr_assert_eq(conv_rows_reference(r, 8, 0, &r[5]), 2, "only verified rows count");
    cr_assert_eq(conv_rows_reference(r, 8, 0, &r[4]), 0);
    r[2].res.timing.median_ms = 6.0;
    cr_assert_eq(conv_rows_reference(r, 8, 0, &r[5]), 0,
                 "a TF32 user gets a strict FP32 engine where it is faster");
    r[0].state = CONV_ROW_SKIPPED;
    cr_assert_eq(conv_rows_reference(r, 8, 0, &r[4]), -1, "no FP32 cuDNN row ran");
}

/* A column of our own rows in two classes (step 09's "vs step 08": 8b and
 * 8b-fp16): each row against the first of its class, else the first. */
Test(rows, an_own_column_of_two_classes_compares_each_row_with_its_class)
{
    conv_row r[4] = {ran("8b", CONV_ROW_OK, 1.7, 0), ran("8b-fp16", CONV_ROW_OK, 1.1, 0),
                     ran("9b", CONV_ROW_OK, 1.1, -1), ran("9b-fp16", CONV_ROW_OK, 0.7, -1)};
    r[0].cls = r[2].cls = CONV_CLASS_TF32;
    r[1].cls = r[3].cls = CONV_CLASS_FP16;
    cr_assert_eq(conv_rows_reference(r, 4, 0, &r[2]), 0, "TF32: 8b");
    cr_assert_eq(conv_rows_reference(r, 4, 0, &r[3]), 1, "FP16: 8b-fp16, not the first row");
    r[1].state = CONV_ROW_SKIPPED;
    cr_assert_eq(conv_rows_reference(r, 4, 0, &r[3]), 0, "no FP16 row ran: the first that did");
}

Test(rows, run_measures_references_first_and_applies_one_policy)
{
    conv_gpu_problem pb = conv_test_host_problem(conv_shape(2, 3, 13, 11, 4, 3, 3, 1, 1, 1), 5);
    hooks h = {0};
    conv_row r[8] = {
        conv_row_host("wrong", NULL, host_wrong),
        conv_row_host("unsupported", NULL, host_unsupported),
        conv_row_host("oom", NULL, host_out_of_memory),
        conv_row_host("not asked", NULL, host_right),
        with_hooks(conv_row_host("right", NULL, host_right), &h),
        conv_row_host("ref", NULL, host_ref),
        conv_row_copy(),
        conv_row_device("device on a host problem", NULL, conv_test_device_zeros, NULL),
    };
    conv_row_skip(&r[3], "by request");
    r[5].ref = 0;
    r[6].ref = 2;
    conv_run_opts o = {
        .warmup = 0, .repeat = 1, .host_warmup = 0, .host_repeat = 2, .d2d_gbps = 1000.0};
    double ref_ms[CONV_MAX_REFS] = {-1, -1, -1, -1};
    call_log[0] = '\0';
    int failed = conv_rows_run(&pb, r, 8, &o, ref_ms);

    cr_assert_str_eq(call_log, "ref ref wrong wrong unsupported oom setup right right teardown ",
                     "references first, then the others in order; each timed twice");
    cr_assert_eq(failed, 3, "wrong, oom and the device row; got %d", failed);
    cr_assert_eq(r[5].state, CONV_ROW_OK, "%s", r[5].res.verdict);
    cr_assert_gt(ref_ms[0], 0.0, "the reference filled its column");
    cr_assert_eq(ref_ms[1], 0.0, "no reference: 0");
    cr_assert_float_eq(ref_ms[2], conv_min_bytes(&pb.p) / (1000.0 * 1e6), 1e-15,
                       "the copy: minimum bytes at the copy bandwidth");
    cr_assert_eq(r[6].state, CONV_ROW_OK);
    cr_assert_eq(ref_ms[3], 0.0);

    cr_assert_eq(r[0].state, CONV_ROW_FAILED);
    cr_assert(strncmp(r[0].res.verdict, "FAILED", 6) == 0, "%s", r[0].res.verdict);
    cr_assert_eq(r[0].res.timing.repeats, 2, "a wrong result is still timed");
    cr_assert_eq(r[1].state, CONV_ROW_SKIPPED, "unsupported at run time: skipped");
    cr_assert_str_eq(r[1].why, "skipped: this version needs K <= 2");
    cr_assert_eq(r[2].state, CONV_ROW_ERROR);
    cr_assert_str_eq(r[2].why, "error: out of host memory for the workspace");
    cr_assert_eq(r[3].state, CONV_ROW_SKIPPED);
    cr_assert_str_eq(r[3].why, "skipped: by request", "not run again");
    cr_assert_eq(r[4].state, CONV_ROW_OK, "%s", r[4].res.verdict);
    cr_assert(h.setups == 1 && h.teardowns == 1 && h.annotates == 1, "%d %d %d", h.setups,
              h.teardowns, h.annotates);
    const char *note = "; stage 1 took 0.5 ms";
    size_t len = strlen(r[4].res.verdict);
    cr_assert(len > strlen(note) && strcmp(r[4].res.verdict + len - strlen(note), note) == 0,
              "annotated at the end: %s", r[4].res.verdict);
    cr_assert_eq(r[7].state, CONV_ROW_ERROR, "a device row needs a device");
    cr_assert(strstr(r[7].why, "error: no CUDA device") == r[7].why, "%s", r[7].why);
    cr_assert_str_eq(r[4].label, "right");
    cr_assert_eq(conv_rows_fastest(r, 8), 4);
    conv_gpu_problem_destroy(&pb);
}

Test(rows, a_setup_that_refuses_skips_or_fails_the_row_and_annotate_needs_a_pass)
{
    conv_gpu_problem pb = conv_test_host_problem(conv_shape(1, 2, 9, 9, 2, 3, 3, 1, 1, 1), 5);
    hooks unsupported = {.setup_status = CONV_ERR_UNAVAILABLE};
    hooks broken = {.setup_status = CONV_ERR_CUDA};
    hooks wrong = {0};
    conv_row r[3] = {with_hooks(conv_row_host("no library", NULL, host_right), &unsupported),
                     with_hooks(conv_row_host("broken", NULL, host_right), &broken),
                     with_hooks(conv_row_host("wrong", NULL, host_wrong), &wrong)};
    conv_run_opts o = {.warmup = 0, .repeat = 1, .host_warmup = 0, .host_repeat = 1};
    double ref_ms[CONV_MAX_REFS];
    call_log[0] = '\0';
    cr_assert_eq(conv_rows_run(&pb, r, 3, &o, ref_ms), 2);
    cr_assert_eq(r[0].state, CONV_ROW_SKIPPED);
    cr_assert_str_eq(r[0].why, "skipped: setup refused");
    cr_assert_eq(r[1].state, CONV_ROW_ERROR);
    cr_assert_str_eq(r[1].why, "error: setup refused");
    cr_assert_eq(r[2].state, CONV_ROW_FAILED);
    cr_assert_null(strstr(call_log, "right"), "nothing runs after a refused setup: %s", call_log);
    cr_assert_eq(wrong.annotates, 0, "no annotation of a wrong result");
    cr_assert_eq(wrong.teardowns, 1);
    conv_gpu_problem_destroy(&pb);
}

/* ---------------------------------------------------------------- GPU */

static conv_status dev_right(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                             float *d_y, cudaStream_t stream, conv_msg *msg)
{
    if (ctx != NULL)
        cr_assert_eq(((hooks *)ctx)->setups, 1, "setup ran before the convolution");
    log_call("right");
    return conv_test_device_through_host(ctx, p, d_x, d_w, d_y, stream, msg);
}

static conv_status dev_zeros(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                             float *d_y, cudaStream_t stream, conv_msg *msg)
{
    log_call("zeros");
    return conv_test_device_zeros(ctx, p, d_x, d_w, d_y, stream, msg);
}

/* Fails the way its context says, as a launcher would. */
static conv_status dev_refuses(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                               float *d_y, cudaStream_t stream, conv_msg *msg)
{
    (void)p, (void)d_x, (void)d_w, (void)d_y, (void)stream;
    conv_status st = *(const conv_status *)ctx;
    log_call(conv_status_name(st));
    if (st == CONV_ERR_CUDA)
        return conv_cuda_fail(msg, cudaErrorLaunchFailure, "fake_kernel launch", __FILE__,
                              __LINE__);
    return conv_fail(msg, st, "refused: %s", conv_status_name(st));
}

Test(gpu_rows, rows_run_references_first_skip_unsupported_and_count_failures)
{
    CONV_TEST_REQUIRE_GPU();
    conv_gpu_problem pb = conv_test_device_problem(conv_shape(1, 2, 17, 19, 3, 3, 3, 0, 2, 1), 3);
    static const conv_status unsupported = CONV_ERR_UNSUPPORTED, invalid = CONV_ERR_INVALID,
                             unavailable = CONV_ERR_UNAVAILABLE, cuda = CONV_ERR_CUDA;
    hooks h = {0};
    conv_row rows[] = {
        conv_row_device("zeros", NULL, dev_zeros, NULL),
        conv_row_device("rejects", NULL, dev_refuses, (void *)&unsupported),
        conv_row_device("invalid", NULL, dev_refuses, (void *)&invalid),
        conv_row_device("no library", NULL, dev_refuses, (void *)&unavailable),
        conv_row_device("cuda error", NULL, dev_refuses, (void *)&cuda),
        conv_row_device("not run", NULL, dev_right, NULL),
        conv_row_host("host ref", NULL, host_ref),
        with_hooks(conv_row_device("correct", NULL, dev_right, &h), &h),
    };
    const int n = (int)(sizeof rows / sizeof rows[0]);
    conv_row_skip(&rows[5], "by request");
    rows[6].ref = 0;
    conv_run_opts o = {.warmup = 0, .repeat = 2, .host_repeat = 1};
    double ref_ms[CONV_MAX_REFS];
    call_log[0] = '\0';
    int failed = conv_rows_run(&pb, rows, n, &o, ref_ms);
    cr_assert_eq(failed, 2, "the zeros row fails and the CUDA error is an error; got %d", failed);
    cr_assert(strncmp(call_log, "ref zeros", 9) == 0, "the reference first: %s", call_log);
    cr_assert_eq(rows[0].state, CONV_ROW_FAILED);
    for (int i = 1; i <= 3; ++i) {
        cr_assert_eq(rows[i].state, CONV_ROW_SKIPPED, "%s", rows[i].name);
        cr_assert(strncmp(rows[i].why, "skipped: refused: ", 18) == 0, "%s", rows[i].why);
    }
    cr_assert_eq(rows[4].state, CONV_ROW_ERROR);
    CONV_ASSERT_ONE_LINE(rows[4].why, "error: fake_kernel launch failed at test_rows.c:");
    cr_assert_str_eq(rows[5].why, "skipped: by request");
    cr_assert_gt(ref_ms[0], 0.0, "the reference row filled its column");
    cr_assert(rows[7].res.passed && rows[6].res.passed);
    cr_assert(h.setups == 1 && h.teardowns == 1 && h.annotates == 1);
    cr_assert_eq(cudaGetLastError(), cudaSuccess, "no error left behind");

    /* printed in the order given */
    char *out_text = NULL;
    size_t out_len = 0;
    FILE *out = open_memstream(&out_text, &out_len);
    conv_report report = {.n_refs = 1, .ref_names = {"host"}};
    conv_report_problem(&report, out, "", &pb.p, rows, n, ref_ms, 0.0);
    fclose(out);
    cr_assert(strstr(out_text, "skipped: refused: unsupported") != NULL, "%s", out_text);
    cr_assert(strstr(out_text, "skipped: by request") != NULL, "%s", out_text);
    cr_assert_lt(strstr(out_text, "zeros") - out_text, strstr(out_text, "host ref") - out_text);
    free(out_text);
    conv_gpu_problem_destroy(&pb);
}

Test(gpu_rows, the_standard_row_check_runs_a_supported_row_only)
{
    CONV_TEST_REQUIRE_GPU();
    conv_row row = conv_row_device("reference through the device", NULL, dev_right, NULL);
    row.check = conv_test_needs_stride_1;
    conv_params strided = conv_shape(1, 2, 17, 19, 3, 3, 3, 0, 2, 1);
    call_log[0] = '\0';
    cr_assert_eq(conv_test_check_row(&strided, &row, conv_test_host_reference), 0);
    cr_assert_str_empty(call_log, "an unsupported row does not run");
    conv_params p = conv_shape(2, 3, 17, 19, 3, 3, 3, 1, 1, 1);
    cr_assert_eq(conv_test_check_row(&p, &row, conv_test_host_reference), 1);
    /* under racecheck each launch runs once: the small integers alone */
    cr_assert_str_eq(call_log, conv_test_under_racecheck() ? "right " : "right right ",
                     "small integers, then floats");
}
