/* libconvsteps (library/convsteps.h), linked as a user links it: the
 * version, every argument error refused with CONVSTEPS_ERR_INVALID and one
 * line before any CUDA call, the workspace query; on the GPU (suite
 * gpu_convsteps) the forward pass, dgrad and wgrad on awkward shapes, both
 * layouts and both classes, on a stream of its own, compared exactly on
 * small integers with the double references (common/conv_verify_backward.h):
 * every kernel the rule picks on these shapes sums small integers exactly
 * (none is 3x3 at stride 1, Winograd's problem). */
#include <string.h>

#include <cuda_runtime_api.h>

#include "convsteps.h"
#include "conv_tensor.h"
#include "conv_test_support.h"
#include "conv_verify_backward.h"

static convsteps_problem small(void)
{
    const convsteps_problem p = {2, 3, 9, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, CONVSTEPS_NCHW};
    return p;
}

Test(convsteps, says_its_version)
{
    cr_assert_eq(convsteps_api_version(), CONVSTEPS_API_VERSION);
    cr_assert_eq(CONVSTEPS_API_VERSION, 1);
}

/* A call that reached CUDA would say "no CUDA device" (the GPUs are hidden):
 * each of these must stop before, with CONVSTEPS_ERR_INVALID and one line
 * naming the argument. */
#define EXPECT_INVALID(call, want)                                                                 \
    do {                                                                                           \
        char msg_[256] = "";                                                                       \
        char *msg = msg_;                                                                          \
        const size_t msg_len = sizeof msg_;                                                        \
        cr_assert_eq((call), CONVSTEPS_ERR_INVALID, "%s: %s", #call, msg_);                        \
        CONV_ASSERT_ONE_LINE(msg_, (want));                                                        \
    } while (0)

Test(convsteps, refuses_every_bad_argument_in_one_line_before_any_cuda_call)
{
    conv_test_hide_gpus();
    float fake[4];
    float *f = fake;
    char key[16];
    size_t bytes = 0;
    const convsteps_problem p = small();
    convsteps_problem q;
    EXPECT_INVALID(convsteps_forward(NULL, 0, f, f, f, NULL, 0, NULL, key, 16, msg, msg_len),
                   "p (the problem) is NULL");
    EXPECT_INVALID(convsteps_forward(&p, 0, NULL, f, f, NULL, 0, NULL, key, 16, msg, msg_len),
                   "x is NULL");
    EXPECT_INVALID(convsteps_forward(&p, 0, f, NULL, f, NULL, 0, NULL, key, 16, msg, msg_len),
                   "w is NULL");
    EXPECT_INVALID(convsteps_forward(&p, 0, f, f, NULL, NULL, 0, NULL, key, 16, msg, msg_len),
                   "y is NULL");
    EXPECT_INVALID(convsteps_backward_data(&p, 0, NULL, f, f, NULL, 0, NULL, NULL, 0, msg, msg_len),
                   "dy is NULL");
    EXPECT_INVALID(convsteps_backward_data(&p, 0, f, f, NULL, NULL, 0, NULL, NULL, 0, msg, msg_len),
                   "dx is NULL");
    EXPECT_INVALID(
        convsteps_backward_filter(&p, 0, f, f, NULL, NULL, 0, NULL, NULL, 0, msg, msg_len),
        "dw is NULL");
    EXPECT_INVALID(
        convsteps_backward_filter(&p, 0, f, NULL, f, NULL, 0, NULL, NULL, 0, msg, msg_len),
        "dy is NULL");
    EXPECT_INVALID(convsteps_forward(&p, 0, f, f, f, NULL, 64, NULL, key, 16, msg, msg_len),
                   "workspace is NULL");
    EXPECT_INVALID(
        convsteps_forward(&p, 0, f, f, f, (char *)f + 4, 64, NULL, key, 16, msg, msg_len),
        "multiple of 16");
    EXPECT_INVALID(convsteps_forward(&p, 2, f, f, f, NULL, 0, NULL, key, 16, msg, msg_len),
                   "invalid precision: 2");
    EXPECT_INVALID(convsteps_backward_data(&p, -1, f, f, f, NULL, 0, NULL, key, 16, msg, msg_len),
                   "invalid precision");
    q = p, q.layout = 2;
    EXPECT_INVALID(convsteps_forward(&q, 0, f, f, f, NULL, 0, NULL, key, 16, msg, msg_len),
                   "invalid layout: 2");
    /* bad sizes: each field of the problem */
    int *field = &q.n;
    for (int i = 0; i < 13; ++i) {
        q = p;
        field = &q.n + i;
        *field = i >= 7 && i <= 8 ? -1 : 0; /* a negative padding, or a zero elsewhere */
        char msg[256] = "";
        cr_assert_eq(convsteps_forward(&q, 0, f, f, f, NULL, 0, NULL, key, 16, msg, sizeof msg),
                     CONVSTEPS_ERR_INVALID, "field %d: %s", i, msg);
        cr_assert(msg[0] != '\0' && strchr(msg, '\n') == NULL, "field %d: '%s'", i, msg);
    }
    q = p, q.r = 20; /* a filter larger than the padded image */
    EXPECT_INVALID(convsteps_backward_filter(&q, 1, f, f, f, NULL, 0, NULL, key, 16, msg, msg_len),
                   "");
    /* the workspace query */
    EXPECT_INVALID(convsteps_workspace_size(&p, 0, 0, NULL, msg, msg_len), "bytes is NULL");
    EXPECT_INVALID(convsteps_workspace_size(NULL, 0, 0, &bytes, msg, msg_len), "NULL");
    EXPECT_INVALID(convsteps_workspace_size(&p, 3, 0, &bytes, msg, msg_len), "invalid pass: 3");
    EXPECT_INVALID(convsteps_workspace_size(&p, 1, 5, &bytes, msg, msg_len), "invalid precision");
    q = p, q.c = 0;
    EXPECT_INVALID(convsteps_workspace_size(&q, 2, 1, &bytes, msg, msg_len), "");
}

Test(convsteps, writes_at_most_msg_len_bytes_and_takes_a_null_msg)
{
    conv_test_hide_gpus();
    float fake[4];
    char msg[8];
    memset(msg, 'z', sizeof msg);
    cr_assert_eq(convsteps_forward(NULL, 0, fake, fake, fake, NULL, 0, NULL, NULL, 0, msg, 5),
                 CONVSTEPS_ERR_INVALID);
    cr_assert_eq(strlen(msg), 4);
    cr_assert_eq(msg[5], 'z');
    cr_assert_eq(convsteps_forward(NULL, 0, fake, fake, fake, NULL, 0, NULL, NULL, 0, NULL, 0),
                 CONVSTEPS_ERR_INVALID);
}

Test(convsteps, says_no_device_in_one_line)
{
    conv_test_hide_gpus();
    float fake[4];
    char msg[256] = "", key[16] = "x";
    size_t bytes = 7;
    const convsteps_problem p = small();
    cr_assert_eq(convsteps_workspace_size(&p, 1, 0, &bytes, msg, sizeof msg),
                 CONVSTEPS_ERR_NO_DEVICE, "%s", msg);
    cr_assert(strchr(msg, '\n') == NULL);
    cr_assert_eq(bytes, 7, "untouched on failure");
    cr_assert_eq(
        convsteps_forward(&p, 0, fake, fake, fake, NULL, 0, NULL, key, sizeof key, msg, sizeof msg),
        CONVSTEPS_ERR_NO_DEVICE, "%s", msg);
    cr_assert_eq(key[0], '\0');
}

/* ---- on the GPU ---- */

/* The calls below run on a non-blocking stream, which does not wait for the
 * legacy default stream's copies: conv_device_upload and conv_device_poison
 * return once the data is on the device. */
static float *to_device(const float *h, size_t n)
{
    float *d = NULL;
    conv_msg msg = {{0}};
    cr_assert_eq(cudaMalloc((void **)&d, n * sizeof *d + 16), cudaSuccess);
    if (h != NULL)
        CONV_ASSERT_OK(conv_device_upload(d, h, n, &msg), msg);
    else
        CONV_ASSERT_OK(conv_device_poison(d, n, &msg), msg); /* NaN */
    return d;
}

/* p's pass (0, 1, 2) in class `precision` through the library, with the
 * workspace it asks for, on `stream`; small integers, exact. */
static void check_pass(const convsteps_problem *cp, int pass, int precision, cudaStream_t stream)
{
    conv_params p = conv_params_default();
    p.n = cp->n, p.c = cp->c, p.h = cp->h, p.w = cp->w, p.k = cp->k, p.r = cp->r, p.s = cp->s;
    p.pad_h = cp->pad_h, p.pad_w = cp->pad_w, p.stride_h = cp->stride_h, p.stride_w = cp->stride_w;
    p.dil_h = cp->dil_h, p.dil_w = cp->dil_w;
    p.layout = cp->layout == CONVSTEPS_NHWC ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
    p.pass = (conv_pass)pass;
    const size_t sizes[3] = {conv_input_elems(&p), conv_filter_elems(&p), conv_output_elems(&p)};
    const int out = pass == 0 ? 2 : pass == 1 ? 0 : 1; /* y, dx or dw */
    float *h[3];
    float *d[3];
    for (int t = 0; t < 3; ++t) {
        h[t] = conv_host_alloc(sizes[t]);
        cr_assert(h[t] != NULL);
        if (t != out)
            conv_fill_small_int(h[t], sizes[t], 51 + (uint64_t)t, -3, 3);
        d[t] = to_device(t == out ? NULL : h[t], sizes[t]);
    }
    double *ref = malloc(sizes[out] * sizeof *ref), *mag = malloc(sizes[out] * sizeof *mag);
    cr_assert(ref != NULL && mag != NULL);
    conv_pass_reference_double(&p, h[0], h[1], h[2], ref, mag);
    char msg[256] = "", key[16] = "";
    size_t bytes = 0;
    cr_assert_eq(convsteps_workspace_size(cp, pass, precision, &bytes, msg, sizeof msg),
                 CONVSTEPS_OK, "%s", msg);
    void *work = NULL;
    if (bytes > 0)
        cr_assert_eq(cudaMalloc(&work, bytes), cudaSuccess);
    int st;
    if (pass == 0)
        st = convsteps_forward(cp, precision, d[0], d[1], d[2], work, bytes, stream, key,
                               sizeof key, msg, sizeof msg);
    else if (pass == 1)
        st = convsteps_backward_data(cp, precision, d[2], d[1], d[0], work, bytes, stream, key,
                                     sizeof key, msg, sizeof msg);
    else
        st = convsteps_backward_filter(cp, precision, d[0], d[2], d[1], work, bytes, stream, key,
                                       sizeof key, msg, sizeof msg);
    cr_assert_eq(st, CONVSTEPS_OK, "%s %s: %s", conv_shape_name(&p), conv_pass_name(p.pass), msg);
    cr_assert(key[0] != '\0');
    cr_assert_eq(cudaStreamSynchronize(stream), cudaSuccess);
    cr_assert_eq(cudaMemcpy(h[out], d[out], sizes[out] * sizeof(float), cudaMemcpyDeviceToHost),
                 cudaSuccess);
    conv_verify_report rep =
        conv_pass_verify_precomputed(&p, h[out], ref, mag, conv_verify_exact());
    char what[128];
    snprintf(what, sizeof what, "convsteps %s, %s, chose %s", conv_pass_name(p.pass),
             precision ? "TF32" : "FP32", key);
    CONV_ASSERT_REPORT(rep, what, &p);
    cudaFree(work);
    for (int t = 0; t < 3; ++t) {
        cudaFree(d[t]);
        conv_host_free(h[t]);
    }
    free(ref);
    free(mag);
}

Test(gpu_convsteps, every_pass_matches_the_reference_on_awkward_shapes)
{
    CONV_TEST_REQUIRE_GPU();
    /* n c h w k r s pad_h pad_w stride_h stride_w dil_h dil_w layout */
    const convsteps_problem shapes[] = {
        {1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0},     /* 1x1 image and filter */
        {2, 3, 13, 11, 5, 5, 3, 2, 1, 1, 1, 1, 1, 0},   /* odd, uneven filter, batch */
        {1, 7, 17, 19, 9, 3, 3, 1, 1, 2, 2, 1, 1, 0},   /* stride 2 */
        {3, 4, 10, 9, 8, 2, 2, 0, 1, 3, 2, 1, 1, 0},    /* even filter, strides 3 and 2 */
        {1, 5, 15, 14, 6, 3, 3, 2, 2, 1, 1, 2, 2, 0},   /* dilation 2 */
        {2, 8, 6, 6, 16, 6, 6, 0, 0, 1, 1, 1, 1, 0},    /* filter = image */
        {1, 16, 30, 29, 33, 1, 1, 0, 0, 1, 1, 1, 1, 0}, /* 1x1, K not a multiple of 4 */
    };
    cudaStream_t stream;
    cr_assert_eq(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        for (int layout = 0; layout < 2; ++layout)
            for (int pass = 0; pass < 3; ++pass)
                for (int precision = 0; precision < 2; ++precision) {
                    convsteps_problem p = shapes[i];
                    p.layout = layout;
                    check_pass(&p, pass, precision, stream);
                }
    cudaStreamDestroy(stream);
}
