/* Helpers shared by the Criterion test files.
 *
 * Naming: suites whose name starts with gpu_ are GPU tests. CMake runs them in
 * a separate ctest entry (one test at a time, and under compute-sanitizer for
 * the `sanitize` label); every other suite is a CPU test. */
#ifndef CONV_TEST_SUPPORT_H
#define CONV_TEST_SUPPORT_H

#include <string.h>

#include <criterion/criterion.h>

#include "conv_cli.h"
#include "conv_cuda.h"
#include "conv_rows.h"
#include "conv_params.h"
#include "conv_verify.h"

/* Call first in every GPU test. Without a usable device the test is skipped
 * with the reason ("GPU test skipped: no CUDA device ..."), unless
 * CONV_REQUIRE_GPU=1, which turns the missing device into a failure. */
#define CONV_TEST_REQUIRE_GPU()                                                                    \
    do {                                                                                           \
        char conv_reason_[CONV_MSG_LEN];                                                           \
        if (!conv_test_gpu_available(conv_reason_, sizeof conv_reason_)) {                         \
            if (conv_gpu_required())                                                               \
                cr_assert_fail("CONV_REQUIRE_GPU=1 but the GPU is unusable: %s", conv_reason_);    \
            cr_skip_test("GPU test skipped: %s", conv_reason_);                                    \
        }                                                                                          \
    } while (0)

/* Call first in a GPU test of cuDNN (conv_cudnn.h): CONV_TEST_REQUIRE_GPU(),
 * then a GPU build without cuDNN fails the test (the reference is required). */
#define CONV_TEST_REQUIRE_CUDNN()                                                                  \
    do {                                                                                           \
        CONV_TEST_REQUIRE_GPU();                                                                   \
        cr_assert(conv_cudnn_compiled(),                                                           \
                  "GPU build without cuDNN: the reference is required here");                      \
    } while (0)

int conv_test_gpu_available(char *reason, size_t len);

/* A shape of the test tables, built field by field (layout NCHW), and the
 * same in NHWC. */
conv_params conv_shape(int n, int c, int h, int w, int k, int r, int s, int pad, int stride,
                       int dil);
conv_params conv_shape_nhwc(int n, int c, int h, int w, int k, int r, int s, int pad, int stride,
                            int dil);

/* The usual shape table, shared by the steps' tests: 1x1
 * images, primes, filters from 1x1 to the whole image (even and odd, square
 * or not), padding, stride, dilation, batch > 1, and all of them per axis at
 * once. Writes CONV_USUAL_SHAPES shapes to t and returns that count; a test
 * appends the shapes its own kernels need after them. */
#define CONV_USUAL_SHAPES 14
size_t conv_usual_shapes(conv_params *t);

/* The usual shapes and CONV_STRIDED_SHAPES strided kin after them, for the
 * kernels whose index arithmetic turns on the stride (the backward pass):
 * stride 2 over an odd image, an even filter at an even stride, stride 3
 * (rows no tap reaches), a stride larger than the filter (gaps), stride and
 * dilation 2. Returns how many it wrote. */
#define CONV_STRIDED_SHAPES 5
size_t conv_strided_shapes(conv_params *t);

/* Every shape of the table t[0..count) in both layouts, in place: shape i
 * becomes t[2i] in NCHW and t[2i + 1] in NHWC (t holds 2 * count). Returns
 * 2 * count; problem j is shape j / 2 (a test that takes its start values
 * from j / 2 fills both layouts with the same numbers). */
size_t conv_test_both_layouts(conv_params *t, size_t count);

/* Describes a shape for assertion messages. */
const char *conv_shape_name(const conv_params *p);

/* Asserts that a verification report passed, printing its description and the shape. */
#define CONV_ASSERT_REPORT(rep, what, p)                                                           \
    do {                                                                                           \
        char conv_desc_[CONV_MSG_LEN];                                                             \
        conv_report_describe(&(rep), conv_desc_, sizeof conv_desc_);                               \
        cr_assert((rep).passed, "%s on %s: %s", (what), conv_shape_name(p), conv_desc_);           \
    } while (0)

/* Asserts that a message is one line that contains `want`. */
#define CONV_ASSERT_ONE_LINE(text, want)                                                           \
    do {                                                                                           \
        cr_assert(strstr((text), (want)) != NULL, "'%s' lacks '%s'", (text), (want));              \
        cr_assert(strchr((text), '\n') == NULL, "more than one line: '%s'", (text));               \
    } while (0)

/* Asserts that `call` (which writes msg) refused with `status` in one line
 * that contains `want`: the rule for a bad or unsupported problem. */
#define CONV_ASSERT_REFUSES(call, status, msg, want)                                               \
    do {                                                                                           \
        cr_assert_eq((call), (status), "not %s: '%s'", conv_status_name(status), (msg).text);      \
        CONV_ASSERT_ONE_LINE((msg).text, (want));                                                  \
    } while (0)

/* Asserts a status is CONV_OK, printing its message. */
#define CONV_ASSERT_OK(status, msg)                                                                \
    cr_assert_eq((status), CONV_OK, "unexpected status %s: %s", conv_status_name(status),          \
                 (msg).text)

/* The host tensors of a backward-pass test on p, each asserted to be made
 * (free with conv_test_grad_free): x, w and dy filled from the random
 * streams first, first + 1 and first + 2 (integers in [-int_max, int_max],
 * or uniform floats in [-1, 1) where int_max is 0), dx and dw poisoned with
 * NaN for the results. */
typedef struct {
    float *x, *w, *dy, *dx, *dw;
} conv_test_grad;
conv_test_grad conv_test_grad_make(const conv_params *p, uint64_t first, int int_max);
void conv_test_grad_free(conv_test_grad *t);

/* conv_gpu_problem_create_host, and conv_gpu_problem_create, of p with the
 * seed, asserted to succeed. */
conv_gpu_problem conv_test_host_problem(conv_params p, uint64_t seed);
conv_gpu_problem conv_test_device_problem(conv_params p, uint64_t seed);

/* Device buffers, asserted to be made, each followed by the canary
 * (conv_device_alloc; free with conv_device_free): a copy of count host
 * floats, and an output of count floats poisoned with NaN. */
float *conv_test_device_copy(const float *h, size_t count, const char *what);
float *conv_test_device_output(size_t count, const char *what);

/* Asserts that every one of the count floats at d still holds the NaN poison
 * of conv_test_device_output: a refused call wrote nothing. */
void conv_test_assert_untouched(const float *d, size_t count);

/* Asserts that the canary after d[count] is intact (conv_device_canary_check):
 * nothing wrote past the buffer. The format names what ran, for the message. */
void conv_test_assert_canary(const float *d, size_t count, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* How a library hands FP32 inputs to TF32 tensor cores, seen on one product
 * CONV_TEST_TF32_PROBE * 1: the probe, 1 + 3 * 2^-12, lies three quarters of
 * the way from 1 to 1 + 2^-10, the next TF32 number (10 mantissa bits), so
 * rounding to nearest gives 1 + 2^-10 (either tie rule: it is no tie),
 * truncation 1, and FP32 arithmetic the probe itself. Asserts that none of
 * the count outputs at h (each such a product, plus zeros) is truncated or
 * anything else; the TF32 bound of the reference rows assumes rounded
 * inputs (conv_tf32_bound_factor). Returns the outputs that came out
 * rounded: 0 where the library used FP32 arithmetic instead, which its
 * bound allows too. `what` names the library and operand, for the message. */
#define CONV_TEST_TF32_PROBE 1.000732421875f
size_t conv_test_assert_tf32_rounded(const float *h, size_t count, const char *what);

/* The double reference of the GEMM C = A * B (A m x k, B k x n, row-major)
 * and, per entry, the sum of |a * b| for its error bound. */
void conv_test_gemm_reference(int m, int n, int k, const float *a, const float *b, double *ref,
                              double *ref_abs);

/* The standard GPU check of a device convolution on one shape (the caller has
 * called CONV_TEST_REQUIRE_GPU()):
 *   1. small-integer inputs in [-3, 3]: the output is poisoned with NaN, the
 *      convolution runs, and every output must equal `reference` exactly, no
 *      NaN left (the steps pass conv_test_host_reference, the double
 *      reference rounded to float: an oracle that no exercise of the
 *      exercise mode touches, exercises/manifest.json);
 *   2. uniform floats in [-1, 1): every output within the gamma_n bound of the
 *      double reference (bound_factor 1);
 *   3. after each run, the canary after the device output is intact.
 * Fails the running test with `what`, the shape and the first mismatch. */
void conv_test_check_gpu_conv(const conv_params *p, conv_gpu_conv conv, void *ctx,
                              conv_host_conv reference, const char *what);

/* The same check for one row of a step (common/conv_rows.h), with its setup
 * and teardown around each run; a row with its own tolerance (Winograd) is
 * checked within it on both inputs instead. Returns 0 without running
 * anything when the row's check says it does not support p (the caller
 * decides whether that is expected), 1 after a passed check. */
int conv_test_check_row(const conv_params *p, conv_row *row, conv_host_conv reference);

/* A step's rows function (e.g. conv_naive_rows of 02_naive_gpu/naive_rows.h). */
typedef int (*conv_test_rows_fn)(const conv_params *p, const char *select, conv_row *rows,
                                 int max_rows);

/* conv_test_check_row against `reference` (conv_test_host_reference) for
 * every row that `rows` lists, on every shape of conv_usual_shapes() in
 * `layout`. Each shape must list `count` rows (count < 0: any number). A row
 * whose check refuses a shape fails the test unless its key is one of the
 * words of may_skip (space-separated, e.g. "9a 9b"; "*": any row may be
 * skipped; NULL: none may). */
void conv_test_check_rows(conv_test_rows_fn rows, conv_host_conv reference, conv_layout layout,
                          int count, const char *may_skip);

/* The same on the n shapes of `shapes` (each in `layout`). */
void conv_test_check_rows_on(const conv_params *shapes, size_t n, conv_test_rows_fn rows,
                             conv_host_conv reference, conv_layout layout, int count,
                             const char *may_skip);

/* The result of a row's run (pb->h_y) against the double reference of the
 * problem's current host inputs: within the row's own tolerance where it has
 * one (then its teardown frees what that took), else within the dot
 * product's bound. */
conv_verify_report conv_test_verify_row(conv_row *row, conv_gpu_problem *pb);

/* One run of a row on the problem's current host inputs (pb->h_x, pb->h_w;
 * for a backward pass the two it reads, dy in pb->h_y): upload, the row's
 * setup, NaN poison of the output, run, download into the output's host
 * buffer (pb->h_y, or h_x for dgrad, h_w for wgrad), canary check,
 * teardown. Fails the running test with `what` and the shape. */
void conv_test_run_row(conv_gpu_problem *pb, conv_row *row, const char *what);

/* rows(p) lists `count` rows, the i-th with the key named[i][0] (the value
 * of --variant that picks it) and the name named[i][1]; a wanted name that
 * ends in '(' is the name's beginning (what follows varies, e.g. the OpenMP
 * row's thread count). Nothing runs. */
void conv_test_assert_rows(conv_test_rows_fn rows, const conv_params *p,
                           const char *const named[][2], int count);

/* A pointwise tolerance (conv_verify_pointwise) for the tests of the checks:
 * 0.75 at the element whose four indices are `at` ((n, k, oh, ow) of an
 * output, (n, c, ih, iw) of dx, (k, c, r, s) of dw), 0.25 elsewhere. It
 * counts its calls and those at that element. */
typedef struct {
    int at[4];
    int calls, at_the_point;
} conv_test_point_tol;
double conv_test_tol_of_point(const void *ctx, int a, int b, int c, int d);

/* Hides every GPU from the running test (CUDA_VISIBLE_DEVICES=""), so that a
 * test of the no-device paths runs the same way on a machine with a GPU. Call
 * it before the test's first CUDA call (each Criterion test runs in its own
 * process). */
void conv_test_hide_gpus(void);

/* The oracle of the steps' tests, and fake convolutions for the tests of the
 * harness, the rows and the program body. A host convolution: the double
 * reference rounded to float (exact on small integers). A correct device convolution: the same
 * reference computed on the host from the device inputs (cudaMemcpy) and copied into the device
 * output. A wrong one: zeros (cudaMemsetAsync). */
conv_status conv_test_host_reference(const conv_params *p, const float *h_x, const float *h_w,
                                     float *h_y, conv_msg *msg);
/* The 1D "same" convolution's oracle for step 03: conv1d_reference_double
 * rounded to float (exact on small integers). */
conv_status conv_test_conv1d_reference(const float *h_x, size_t width, const float *h_mask,
                                       int mask_width, float *h_y, conv_msg *msg);
conv_status conv_test_device_through_host(void *ctx, const conv_params *p, const float *d_x,
                                          const float *d_w, float *d_y, cudaStream_t stream,
                                          conv_msg *msg);
conv_status conv_test_device_zeros(void *ctx, const conv_params *p, const float *d_x,
                                   const float *d_w, float *d_y, cudaStream_t stream,
                                   conv_msg *msg);

/* The command line (common/conv_cli.h), parsed with the usage thrown away:
 * conv_test_cli_ok asserts CONV_OK (printing the message) and returns the
 * options; conv_test_cli_fails asserts CONV_ERR_INVALID with one line that
 * contains `want`; conv_test_cli_rejects does the same for
 * "prog <flag> <value>" ("prog <flag>" when value is NULL). */
conv_status conv_test_cli_parse(const conv_cli_spec *spec, conv_cli_options *o, conv_msg *msg,
                                int argc, const char **argv);
conv_cli_options conv_test_cli_ok(const conv_cli_spec *spec, int argc, const char **argv);
void conv_test_cli_fails(const conv_cli_spec *spec, int argc, const char **argv, const char *want);
void conv_test_cli_rejects(const conv_cli_spec *spec, const char *flag, const char *value,
                           const char *want);
/* A refused command line for a table of them: "prog <flag> <value>" ("prog
 * <flag>" when value is NULL) and what its one line must contain. */
typedef struct {
    const char *flag, *value, *want;
} conv_test_cli_case;
/* conv_test_cli_rejects on each of the count cases. */
void conv_test_cli_rejects_each(const conv_cli_spec *spec, const conv_test_cli_case *cases,
                                size_t count);
#define CONV_COUNT(table) (sizeof(table) / sizeof(table)[0])
/* The usage text of `spec` (what --help prints), written into text. */
void conv_test_cli_help(const conv_cli_spec *spec, char *text, size_t len);
#define CONV_ARGC(argv) ((int)(sizeof(argv) / sizeof(argv)[0]))

/* A row's check that takes stride 1 only (CONV_ERR_UNSUPPORTED "the test
 * rows need stride 1, got HxW" otherwise): a row that refuses some problems. */
conv_status conv_test_needs_stride_1(void *ctx, const conv_params *p, conv_msg *msg);

/* The properties of a made-up GPU, for what the programs print about a
 * device: "Test GPU", sm_90 running sm_90 code, 132 SMs at 1980 MHz, FP32
 * peak 66.9 TFLOP/s, DRAM peak 3350 GB/s; every other field 0. */
conv_device_info conv_test_gpu_info(void);

/* A path for a temporary file that does not exist yet (the test removes
 * what it writes there). */
void conv_test_temp_path(char *buf, size_t len, const char *suffix);
/* The whole of a file (malloc'ed; NULL when it cannot be read). */
char *conv_test_read_file(const char *path);
/* 1 when text is exactly one JSON value (RFC 8259 syntax, surrounding white
 * space allowed); else 0 with the offset of the first error in *where. */
int conv_test_json_valid(const char *text, size_t *where);

/* 1 when the test runs under compute-sanitizer (CONV_UNDER_SANITIZER is set by
 * the sanitize ctest entries). Tests may drop their largest shapes then (they
 * run 10-100x slower), never the awkward small ones. */
int conv_test_under_sanitizer(void);

/* 1 under compute-sanitizer's racecheck, the slowest of its tools. A race is
 * two threads touching one shared-memory address without a barrier between
 * them: which threads touch which addresses depends on the shape, the kernel
 * and its launch, never on the values. Under racecheck a test runs each
 * (shape, kernel, launch) once, on one set of values (the small integers);
 * memcheck, initcheck and synccheck still run every set. */
int conv_test_under_racecheck(void);

#endif /* CONV_TEST_SUPPORT_H */
