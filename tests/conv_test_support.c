#include "conv_test_support.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_tensor.h"

#include "conv_cuda.h"

int conv_test_gpu_available(char *reason, size_t len)
{
    conv_msg msg = {{0}};
    if (conv_cuda_require_device(&msg) != CONV_OK) {
        snprintf(reason, len, "%s", msg.text);
        return 0;
    }
    return 1;
}

conv_params conv_shape(int n, int c, int h, int w, int k, int r, int s, int pad, int stride,
                       int dil)
{
    conv_params p = conv_params_default(); /* NCHW */
    p.n = n, p.c = c, p.h = h, p.w = w, p.k = k, p.r = r, p.s = s;
    p.pad_h = p.pad_w = pad;
    p.stride_h = p.stride_w = stride;
    p.dil_h = p.dil_w = dil;
    return p;
}

conv_params conv_shape_nhwc(int n, int c, int h, int w, int k, int r, int s, int pad, int stride,
                            int dil)
{
    conv_params p = conv_shape(n, c, h, w, k, r, s, pad, stride, dil);
    p.layout = CONV_LAYOUT_NHWC;
    return p;
}

size_t conv_test_both_layouts(conv_params *t, size_t count)
{
    for (size_t i = count; i-- > 0;) { /* from the back: 2i and 2i + 1 lie at or after i */
        t[2 * i] = t[2 * i + 1] = t[i];
        t[2 * i].layout = CONV_LAYOUT_NCHW;
        t[2 * i + 1].layout = CONV_LAYOUT_NHWC;
    }
    return 2 * count;
}

size_t conv_usual_shapes(conv_params *t)
{
    size_t n = 0;
    t[n++] = conv_shape(1, 1, 1, 1, 1, 1, 1, 0, 1, 1);   /* 1x1 image, 1x1 filter */
    t[n++] = conv_shape(1, 3, 1, 1, 2, 3, 3, 1, 1, 1);   /* 1x1 image, padded 3x3 */
    t[n++] = conv_shape(1, 2, 29, 31, 3, 3, 3, 0, 1, 1); /* primes */
    t[n++] = conv_shape(2, 3, 31, 29, 4, 3, 3, 1, 1, 1); /* batch 2, padded */
    t[n++] = conv_shape(1, 1, 97, 97, 1, 7, 7, 3, 1, 1);
    t[n++] = conv_shape(1, 6, 40, 33, 6, 6, 6, 0, 1, 1); /* the lecture's 6x6, small */
    t[n++] = conv_shape(3, 2, 17, 19, 5, 6, 6, 2, 1, 1); /* even filter, padded */
    t[n++] = conv_shape(1, 2, 7, 7, 3, 7, 7, 0, 1, 1);   /* filter = image */
    t[n++] = conv_shape(1, 1, 5, 8, 2, 5, 8, 0, 1, 1);   /* filter = image, not square */
    t[n++] = conv_shape(2, 3, 29, 31, 2, 3, 3, 1, 2, 1); /* stride 2 */
    t[n++] = conv_shape(1, 2, 31, 29, 3, 3, 3, 2, 1, 2); /* dilation 2 */
    t[n++] = conv_shape(2, 2, 23, 29, 2, 5, 4, 3, 3, 2); /* all of them at once */
    t[n++] = conv_shape(4, 1, 9, 13, 1, 2, 2, 0, 1, 1);
    conv_params asym = conv_shape(1, 2, 13, 11, 2, 3, 5, 0, 1, 1); /* per-axis settings */
    asym.pad_h = 2;
    asym.stride_w = 2;
    asym.dil_h = 3;
    t[n++] = asym;
    return n;
}

size_t conv_strided_shapes(conv_params *t)
{
    size_t n = conv_usual_shapes(t);
    t[n++] = conv_shape(2, 3, 11, 13, 2, 3, 3, 1, 2, 1); /* stride 2 over an odd image */
    t[n++] = conv_shape(1, 2, 16, 16, 3, 4, 4, 1, 2, 1); /* even filter, even stride */
    t[n++] = conv_shape(1, 2, 17, 14, 2, 3, 3, 0, 3, 1); /* stride 3: rows no tap reaches */
    t[n++] = conv_shape(2, 1, 15, 15, 2, 2, 2, 0, 4, 1); /* stride > filter: gaps */
    t[n++] = conv_shape(1, 2, 19, 17, 2, 3, 3, 2, 2, 2); /* stride and dilation 2 */
    return n;
}

const char *conv_shape_name(const conv_params *p)
{
    static char buf[256]; /* each Criterion test runs in its own process */
    conv_params_describe(p, buf, sizeof buf);
    return buf;
}

void conv_test_hide_gpus(void)
{
    cr_assert_eq(setenv("CUDA_VISIBLE_DEVICES", "", 1), 0);
}

conv_status conv_test_host_reference(const conv_params *p, const float *h_x, const float *h_w,
                                     float *h_y, conv_msg *msg)
{
    size_t ny = conv_output_elems(p);
    double *y = malloc(ny * sizeof *y);
    if (y == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the reference");
    conv_reference_double(p, h_x, h_w, y, NULL);
    for (size_t i = 0; i < ny; ++i)
        h_y[i] = (float)y[i];
    free(y);
    return CONV_OK;
}

conv_status conv_test_conv1d_reference(const float *h_x, size_t width, const float *h_mask,
                                       int mask_width, float *h_y, conv_msg *msg)
{
    double *y = malloc(width * sizeof *y);
    if (y == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the reference");
    conv1d_reference_double(h_x, width, h_mask, mask_width, y, NULL);
    for (size_t i = 0; i < width; ++i)
        h_y[i] = (float)y[i];
    free(y);
    return CONV_OK;
}

conv_status conv_test_device_through_host(void *ctx, const conv_params *p, const float *d_x,
                                          const float *d_w, float *d_y, cudaStream_t stream,
                                          conv_msg *msg)
{
    (void)ctx;
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *x = conv_host_alloc(nx), *w = conv_host_alloc(nw), *y = conv_host_alloc(ny);
    conv_status st = CONV_OK;
    if (x == NULL || w == NULL || y == NULL)
        st = conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory");
    cudaError_t e = cudaStreamSynchronize(stream);
    if (st == CONV_OK && e != cudaSuccess)
        st = conv_cuda_fail(msg, e, "cudaStreamSynchronize", __FILE__, __LINE__);
    if (st == CONV_OK)
        st = conv_device_download(x, d_x, nx, msg);
    if (st == CONV_OK)
        st = conv_device_download(w, d_w, nw, msg);
    if (st == CONV_OK)
        st = conv_test_host_reference(p, x, w, y, msg);
    if (st == CONV_OK)
        st = conv_device_upload(d_y, y, ny, msg);
    conv_host_free(x);
    conv_host_free(w);
    conv_host_free(y);
    return st;
}

conv_status conv_test_device_zeros(void *ctx, const conv_params *p, const float *d_x,
                                   const float *d_w, float *d_y, cudaStream_t stream, conv_msg *msg)
{
    (void)ctx;
    (void)d_x;
    (void)d_w;
    CONV_CUDA_CHECK(cudaMemsetAsync(d_y, 0, conv_output_elems(p) * sizeof(float), stream), msg);
    return CONV_OK;
}

int conv_test_under_sanitizer(void)
{
    const char *v = getenv("CONV_UNDER_SANITIZER");
    return v != NULL && v[0] != '\0';
}

int conv_test_under_racecheck(void)
{
    const char *v = getenv("CONV_UNDER_SANITIZER");
    return v != NULL && strcmp(v, "racecheck") == 0;
}

void conv_test_run_row(conv_gpu_problem *pb, conv_row *row, const char *what)
{
    const conv_params *p = &pb->p;
    conv_msg msg = {{0}};
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    size_t nout = p->pass == CONV_PASS_DGRAD ? nx : p->pass == CONV_PASS_WGRAD ? nw : ny;
    float *d_out = conv_gpu_problem_out_device(pb);
    if (p->pass != CONV_PASS_DGRAD) /* the pass's inputs; its output is poisoned */
        CONV_ASSERT_OK(conv_device_upload(pb->d_x, pb->h_x, nx, &msg), msg);
    if (p->pass != CONV_PASS_WGRAD)
        CONV_ASSERT_OK(conv_device_upload(pb->d_w, pb->h_w, nw, &msg), msg);
    if (p->pass != CONV_PASS_FORWARD)
        CONV_ASSERT_OK(conv_device_upload(pb->d_y, pb->h_y, ny, &msg), msg);
    if (row->setup != NULL)
        CONV_ASSERT_OK(row->setup(row->ctx, pb, &msg), msg);
    CONV_ASSERT_OK(conv_device_poison(d_out, nout, &msg), msg);
    conv_status st = row->grad != NULL
                         ? row->grad(row->ctx, p, pb->d_x, pb->d_w, pb->d_y, pb->stream, &msg)
                         : row->conv(row->ctx, p, pb->d_x, pb->d_w, pb->d_y, pb->stream, &msg);
    cr_assert_eq(st, CONV_OK, "%s on %s: %s", what, conv_shape_name(p), msg.text);
    cudaError_t e = cudaStreamSynchronize(pb->stream);
    cr_assert_eq(e, cudaSuccess, "%s on %s: %s", what, conv_shape_name(p), cudaGetErrorString(e));
    CONV_ASSERT_OK(conv_device_download(conv_gpu_problem_out_host(pb), d_out, nout, &msg), msg);
    conv_test_assert_canary(d_out, nout, "%s on %s", what, conv_shape_name(p));
    if (row->teardown != NULL)
        row->teardown(row->ctx);
}

float *conv_test_device_copy(const float *h, size_t count, const char *what)
{
    float *d = NULL;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_device_alloc(&d, count, what, &msg), msg);
    CONV_ASSERT_OK(conv_device_upload(d, h, count, &msg), msg);
    return d;
}

float *conv_test_device_output(size_t count, const char *what)
{
    float *d = NULL;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_device_alloc(&d, count, what, &msg), msg);
    CONV_ASSERT_OK(conv_device_poison(d, count, &msg), msg);
    return d;
}

size_t conv_test_assert_tf32_rounded(const float *h, size_t count, const char *what)
{
    const float rounded = 1.0f + 0x1p-10f, truncated = 1.0f;
    size_t n_rounded = 0, n_exact = 0;
    for (size_t i = 0; i < count; ++i) {
        cr_assert_neq(h[i], truncated,
                      "%s: output %zu is 1, the probe truncated to TF32: the TF32 bound of the "
                      "reference rows (inputs rounded to nearest) does not hold for it",
                      what, i);
        cr_assert(h[i] == rounded || h[i] == CONV_TEST_TF32_PROBE,
                  "%s: output %zu is %.9g, neither the probe rounded to TF32 (%.9g) nor the "
                  "probe itself",
                  what, i, h[i], rounded);
        n_rounded += h[i] == rounded;
        n_exact += h[i] == CONV_TEST_TF32_PROBE;
    }
    cr_log_info("%s: %zu outputs rounded to TF32, %zu in FP32", what, n_rounded, n_exact);
    return n_rounded;
}

void conv_test_assert_untouched(const float *d, size_t count)
{
    float *h = malloc(count * sizeof(float));
    cr_assert(h);
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_device_download(h, d, count, &msg), msg);
    for (size_t i = 0; i < count; ++i)
        cr_assert(isnan(h[i]), "y[%zu] was written", i);
    free(h);
}

void conv_test_assert_canary(const float *d, size_t count, const char *fmt, ...)
{
    char what[CONV_MSG_LEN];
    va_list args;
    va_start(args, fmt);
    vsnprintf(what, sizeof what, fmt, args);
    va_end(args);
    size_t bad = 1;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_device_canary_check(d, count, &bad, &msg), msg);
    cr_assert_eq(bad, 0, "%s: wrote %zu floats past the end of its %zu", what, bad, count);
}

void conv_test_gemm_reference(int m, int n, int k, const float *a, const float *b, double *ref,
                              double *ref_abs)
{
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0.0, sa = 0.0;
            for (int l = 0; l < k; ++l) {
                double t = (double)a[(size_t)i * k + l] * b[(size_t)l * n + j];
                s += t;
                sa += fabs(t);
            }
            ref[(size_t)i * n + j] = s;
            ref_abs[(size_t)i * n + j] = sa;
        }
}

conv_test_grad conv_test_grad_make(const conv_params *p, uint64_t first, int int_max)
{
    const size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    conv_test_grad t = {malloc(nx * sizeof(float)), malloc(nw * sizeof(float)),
                        malloc(ny * sizeof(float)), malloc(nx * sizeof(float)),
                        malloc(nw * sizeof(float))};
    cr_assert(t.x && t.w && t.dy && t.dx && t.dw, "out of host memory");
    float *in[3] = {t.x, t.w, t.dy};
    const size_t count[3] = {nx, nw, ny};
    for (int i = 0; i < 3; ++i) {
        if (int_max > 0)
            conv_fill_small_int(in[i], count[i], first + i, -int_max, int_max);
        else
            conv_fill_uniform(in[i], count[i], first + i, -1.0f, 1.0f);
    }
    conv_fill_nan(t.dx, nx);
    conv_fill_nan(t.dw, nw);
    return t;
}

void conv_test_grad_free(conv_test_grad *t)
{
    free(t->x), free(t->w), free(t->dy), free(t->dx), free(t->dw);
}

conv_gpu_problem conv_test_host_problem(conv_params p, uint64_t seed)
{
    conv_gpu_problem pb;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_gpu_problem_create_host(&pb, &p, seed, &msg), msg);
    return pb;
}

conv_gpu_problem conv_test_device_problem(conv_params p, uint64_t seed)
{
    conv_gpu_problem pb;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_gpu_problem_create(&pb, &p, seed, &msg), msg);
    return pb;
}

conv_verify_report conv_test_verify_row(conv_row *row, conv_gpu_problem *pb)
{
    const conv_params *p = &pb->p;
    if (row->tolerance == NULL)
        return conv_verify_full(p, pb->h_x, pb->h_w, pb->h_y, conv_verify_bound(1.0));
    conv_msg msg = {{0}};
    conv_verify_opts within;
    CONV_ASSERT_OK(row->tolerance(row->ctx, pb, &within, &msg), msg);
    conv_verify_report rep = conv_verify_full(p, pb->h_x, pb->h_w, pb->h_y, within);
    if (row->teardown != NULL)
        row->teardown(row->ctx); /* what the tolerance needed */
    return rep;
}

/* conv_test_check_row for a row with its own tolerance (not exact on small
 * integers): both inputs within it. */
static void check_row_within_its_tolerance(conv_gpu_problem *pb, conv_row *row, uint64_t seed)
{
    const conv_params *p = &pb->p;
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p);
    char label[CONV_MSG_LEN];
    for (int ints = 1; ints >= (conv_test_under_racecheck() ? 1 : 0); --ints) {
        if (ints) {
            conv_fill_small_int(pb->h_x, nx, seed, -3, 3);
            conv_fill_small_int(pb->h_w, nw, seed + 1, -3, 3);
        } else {
            conv_fill_uniform(pb->h_x, nx, seed + 2, -1.0f, 1.0f);
            conv_fill_uniform(pb->h_w, nw, seed + 3, -1.0f, 1.0f);
        }
        conv_test_run_row(pb, row, row->name);
        conv_verify_report rep = conv_test_verify_row(row, pb);
        snprintf(label, sizeof label, "%s (%s, within its own error bound)", row->name,
                 ints ? "small integers" : "uniform floats");
        CONV_ASSERT_REPORT(rep, label, p);
    }
}

int conv_test_check_row(const conv_params *p, conv_row *row, conv_host_conv reference)
{
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_params_validate(p, &msg), msg);
    if (row->check != NULL && row->check(row->ctx, p, &msg) != CONV_OK)
        return 0;
    conv_gpu_problem pb = conv_test_device_problem(*p, 1);
    size_t nx = conv_input_elems(p), nw = conv_filter_elems(p), ny = conv_output_elems(p);
    float *want = conv_host_alloc(ny);
    cr_assert(want != NULL, "out of host memory for %s", conv_shape_name(p));
    uint64_t seed = conv_rng_hash(0x5eed, nx * 31 + nw * 7 + ny);
    char label[CONV_MSG_LEN];
    if (row->tolerance != NULL) {
        check_row_within_its_tolerance(&pb, row, seed);
        conv_host_free(want);
        conv_gpu_problem_destroy(&pb);
        return 1;
    }

    /* excerpt: exact then bound */
    /* 1. small integers: exact against the host reference */
    conv_fill_small_int(pb.h_x, nx, seed, -3, 3);
    conv_fill_small_int(pb.h_w, nw, seed + 1, -3, 3);
    CONV_ASSERT_OK(reference(p, pb.h_x, pb.h_w, want, &msg), msg);
    conv_test_run_row(&pb, row, row->name);
    conv_verify_report rep = conv_compare_exact(p, pb.h_y, want, ny);
    snprintf(label, sizeof label, "%s (small integers, exact vs the reference)", row->name);
    CONV_ASSERT_REPORT(rep, label, p);

    /* 2. uniform floats: within the dot-product error bound */
    if (!conv_test_under_racecheck()) { /* values do not change which threads touch what */
        conv_fill_uniform(pb.h_x, nx, seed + 2, -1.0f, 1.0f);
        conv_fill_uniform(pb.h_w, nw, seed + 3, -1.0f, 1.0f);
        conv_test_run_row(&pb, row, row->name);
        rep = conv_verify_full(p, pb.h_x, pb.h_w, pb.h_y, conv_verify_bound(1.0));
        snprintf(label, sizeof label, "%s (uniform floats, within gamma_n bound)", row->name);
        CONV_ASSERT_REPORT(rep, label, p);
    }
    /* excerpt end: exact then bound */

    conv_host_free(want);
    conv_gpu_problem_destroy(&pb);
    return 1;
}

/* 1 when key is one of the space-separated words of list ("*": any key,
 * NULL: none). */
static int key_listed(const char *list, const char *key)
{
    if (list == NULL)
        return 0;
    if (strcmp(list, "*") == 0)
        return 1;
    if (key == NULL)
        return 0;
    const size_t len = strlen(key);
    for (const char *at = list; (at = strstr(at, key)) != NULL; at += len)
        if ((at == list || at[-1] == ' ') && (at[len] == ' ' || at[len] == '\0'))
            return 1;
    return 0;
}

void conv_test_check_rows_on(const conv_params *shapes, size_t n, conv_test_rows_fn rows,
                             conv_host_conv reference, conv_layout layout, int count,
                             const char *may_skip)
{
    for (size_t i = 0; i < n; ++i) {
        conv_params p = shapes[i];
        p.layout = layout;
        conv_row r[32];
        int listed = rows(&p, NULL, r, 32);
        if (count >= 0)
            cr_assert_eq(listed, count, "%d rows on %s", listed, conv_shape_name(&p));
        for (int k = 0; k < listed; ++k)
            if (!conv_test_check_row(&p, &r[k], reference))
                cr_assert(key_listed(may_skip, r[k].key), "%s skipped %s", r[k].name,
                          conv_shape_name(&p));
    }
}

void conv_test_check_rows(conv_test_rows_fn rows, conv_host_conv reference, conv_layout layout,
                          int count, const char *may_skip)
{
    conv_params table[CONV_USUAL_SHAPES];
    size_t n = conv_usual_shapes(table);
    conv_test_check_rows_on(table, n, rows, reference, layout, count, may_skip);
}

conv_status conv_test_needs_stride_1(void *ctx, const conv_params *p, conv_msg *msg)
{
    (void)ctx;
    if (p->stride_h != 1 || p->stride_w != 1)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "the test rows need stride 1, got %dx%d",
                         p->stride_h, p->stride_w);
    return CONV_OK;
}

conv_device_info conv_test_gpu_info(void)
{
    conv_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.name, sizeof info.name, "Test GPU");
    info.cc_major = 9;
    info.sm_count = 132;
    info.sm_clock_khz = 1980000;
    info.peak_fp32_gflops = 66900.0;
    info.peak_dram_gbps = 3350.0;
    info.binary_version = 90;
    return info;
}

conv_status conv_test_cli_parse(const conv_cli_spec *spec, conv_cli_options *o, conv_msg *msg,
                                int argc, const char **argv)
{
    FILE *sink = fopen("/dev/null", "w");
    cr_assert_not_null(sink);
    conv_status st = conv_cli_parse(argc, (char **)argv, spec, o, sink, msg);
    fclose(sink);
    return st;
}

conv_cli_options conv_test_cli_ok(const conv_cli_spec *spec, int argc, const char **argv)
{
    conv_cli_options o;
    conv_msg msg = {{0}};
    conv_status st = conv_test_cli_parse(spec, &o, &msg, argc, argv);
    cr_assert_eq(st, CONV_OK, "%s %s %s rejected: %s", argc > 1 ? argv[1] : "",
                 argc > 2 ? argv[2] : "", argc > 3 ? argv[3] : "", msg.text);
    return o;
}

void conv_test_cli_fails(const conv_cli_spec *spec, int argc, const char **argv, const char *want)
{
    conv_cli_options o;
    conv_msg msg = {{0}};
    conv_status st = conv_test_cli_parse(spec, &o, &msg, argc, argv);
    cr_assert_eq(st, CONV_ERR_INVALID, "%s %s %s accepted", argc > 1 ? argv[1] : "",
                 argc > 2 ? argv[2] : "", argc > 3 ? argv[3] : "");
    CONV_ASSERT_ONE_LINE(msg.text, want);
}

void conv_test_cli_rejects(const conv_cli_spec *spec, const char *flag, const char *value,
                           const char *want)
{
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog", flag, value};
    conv_status st = conv_test_cli_parse(spec, &o, &msg, value != NULL ? 3 : 2, argv);
    cr_assert_eq(st, CONV_ERR_INVALID, "%s %s accepted", flag, value ? value : "");
    cr_assert(strstr(msg.text, want) != NULL, "%s %s: '%s' lacks '%s'", flag, value ? value : "",
              msg.text, want);
    cr_assert(strchr(msg.text, '\n') == NULL, "%s: more than one line", flag);
}

void conv_test_cli_rejects_each(const conv_cli_spec *spec, const conv_test_cli_case *cases,
                                size_t count)
{
    for (size_t i = 0; i < count; ++i)
        conv_test_cli_rejects(spec, cases[i].flag, cases[i].value, cases[i].want);
}

void conv_test_cli_help(const conv_cli_spec *spec, char *text, size_t len)
{
    memset(text, 0, len);
    FILE *out = fmemopen(text, len - 1, "w");
    cr_assert_not_null(out);
    conv_cli_options o;
    conv_msg msg = {{0}};
    const char *argv[] = {"prog", "--help"};
    cr_assert_eq(conv_cli_parse(2, (char **)argv, spec, &o, out, &msg), CONV_HELP_SHOWN);
    fclose(out);
    cr_assert_lt(strlen(text), len - 2, "usage truncated");
}

void conv_test_check_gpu_conv(const conv_params *p, conv_gpu_conv conv, void *ctx,
                              conv_host_conv reference, const char *what)
{
    conv_row row = conv_row_device(what, NULL, conv, ctx);
    conv_test_check_row(p, &row, reference);
}

void conv_test_assert_rows(conv_test_rows_fn rows, const conv_params *p,
                           const char *const named[][2], int count)
{
    conv_row r[32];
    cr_assert_eq(rows(p, NULL, r, 32), count, "%s", conv_shape_name(p));
    for (int i = 0; i < count; ++i) {
        const char *key = named[i][0], *name = named[i][1];
        size_t len = strlen(name);
        int prefix = len > 0 && name[len - 1] == '(';
        cr_assert_str_eq(r[i].key, key);
        cr_assert(prefix ? strncmp(r[i].name, name, len) == 0 : strcmp(r[i].name, name) == 0,
                  "row %s is named '%s', not '%s'", key, r[i].name, name);
    }
}

double conv_test_tol_of_point(const void *ctx, int a, int b, int c, int d)
{
    conv_test_point_tol *probe = (conv_test_point_tol *)ctx;
    int here = a == probe->at[0] && b == probe->at[1] && c == probe->at[2] && d == probe->at[3];
    probe->calls++;
    probe->at_the_point += here;
    return here ? 0.75 : 0.25;
}
