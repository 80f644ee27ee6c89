/* The randomized shape sweep: shapes drawn from a seeded generator (sizes
 * from 1 to a few hundred, primes, every padding, stride and dilation, both
 * layouts, batches), and on each of them every row of every step that
 * supports the shape, checked against the host reference like the steps' own
 * tests: small integers compared exactly, random floats within the
 * dot-product bound, NaN-poisoned output, the canary after it.
 *
 *   CONV_SWEEP_SEED   the generator's seed (default 1; CI uses the default)
 *   CONV_SWEEP_COUNT  how many shapes (default 200; 12 under compute-sanitizer)
 *
 * The backward pass (step 10) has its own sweep on shapes of the same
 * generator: every version of dgrad and wgrad against the double references
 * of common/conv_verify_backward.h, in the same two ways. Both sweeps run
 * conv2d_auto()'s rows (library/) beside the steps': whatever kernel its
 * rule picks for a shape must pass there too.
 *
 * A failure prints the shape in full and its number, so that
 * CONV_SWEEP_SEED=s CONV_SWEEP_COUNT=i+1 reproduces it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auto_rows.h"
#include "backward_rows.h"
#include "conv_tensor.h"
#include "conv_verify_backward.h"
#include "conv_sweep_shapes.h"
#include "conv_test_support.h"
#include "hopper.h"
#include "hopper_rows.h"
#include "im2col_gemm_rows.h"
#include "naive_rows.h"
#include "prefetch_rows.h"
#include "tiled_1d_rows.h"
#include "tc_rows.h"
#include "tensor_cores.h"
#include "tiled_2d_rows.h"
#include "winograd_rows.h"

static long env_or(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? strtol(v, NULL, 10) : fallback;
}

#define MAX_ROWS 64

/* Every GPU step's rows for p, and conv2d_auto's. */
static int all_rows(const conv_params *p, conv_row *rows)
{
    int n = 0;
    n += conv_naive_rows(p, NULL, rows + n, MAX_ROWS - n);
    if (conv1d_is_1d_problem(p))
        n += conv_tiled_1d_rows(p, NULL, rows + n, MAX_ROWS - n);
    n += conv_tiled_2d_rows(p, NULL, rows + n, MAX_ROWS - n);
    n += conv_prefetch_rows(p, NULL, rows + n, MAX_ROWS - n);
    n += conv_im2col_gemm_rows(p, NULL, rows + n, MAX_ROWS - n);
    n += conv_gemm_rows(p, NULL, rows + n, MAX_ROWS - n);
    n += conv_winograd_rows(p, NULL, rows + n, MAX_ROWS - n);
    n += conv_tc_rows(p, NULL, rows + n, MAX_ROWS - n);
    n += conv_hopper_rows(p, NULL, rows + n, MAX_ROWS - n);
    n += conv_auto_rows(p, NULL, rows + n, MAX_ROWS - n);
    return n;
}

/* Rows this GPU or this build cannot run, skipped with the launcher's own
 * reason: step 08's rows but the FP16 ones (8a-fp16, 8b-fp16) need TF32
 * tensor cores (compute capability 8.0 and up), step 09's wgmma and code
 * built for sm_90a; FP16's rows of step 08 run on every GPU of the course. */
static void skip_rows_this_gpu_lacks(conv_row *rows, int n)
{
    for (int r = 0; r < n; ++r) {
        const char *key = rows[r].key;
        if (key == NULL || rows[r].state != CONV_ROW_PENDING)
            continue;
        conv_msg msg = {{0}};
        conv_status st = CONV_OK;
        if (key[0] == '8' && strstr(key, "-fp16") == NULL)
            st = tc_available(&msg);
        else if (strcmp(key, "9a") == 0)
            st = tc_wgmma_available(&msg);
        else if (strcmp(key, "9b") == 0 || strcmp(key, "9c") == 0)
            st = tc_tma_available(&msg);
        else if (strcmp(key, "9a-fp16") == 0)
            st = tc_wgmma_fp16_available(&msg);
        else if (strcmp(key, "9b-fp16") == 0)
            st = tc_tma_fp16_available(&msg);
        if (st != CONV_OK)
            conv_row_skip(&rows[r], msg.text);
    }
}

Test(gpu_sweep, every_row_of_every_step_matches_the_reference_on_random_shapes)
{
    CONV_TEST_REQUIRE_GPU();
    const uint64_t seed = (uint64_t)env_or("CONV_SWEEP_SEED", 1);
    const long count = env_or("CONV_SWEEP_COUNT", conv_test_under_sanitizer() ? 12 : 200);
    conv_sweep_draw d = {seed, 0};
    long checked = 0;
    for (long shape = 0; shape < count; ++shape) {
        conv_params p = conv_sweep_shape(&d);
        char what[CONV_MSG_LEN + 96];
        snprintf(what, sizeof what, "shape %ld of CONV_SWEEP_SEED=%llu (%s)", shape,
                 (unsigned long long)seed, conv_shape_name(&p));
        conv_row rows[MAX_ROWS];
        int n = all_rows(&p, rows);
        conv_rows_check(rows, n, &p, NULL, 0);
        skip_rows_this_gpu_lacks(rows, n);

        conv_msg msg = {{0}};
        conv_gpu_problem pb;
        CONV_ASSERT_OK(conv_gpu_problem_create(&pb, &p, seed + (uint64_t)shape, &msg), msg);
        size_t nx = conv_input_elems(&p), nw = conv_filter_elems(&p), ny = conv_output_elems(&p);
        float *x = conv_host_alloc(nx), *w = conv_host_alloc(nw), *want = conv_host_alloc(ny);
        cr_assert(x && w && want, "out of host memory: %s", what);
        /* the uniform inputs and their double reference, made by the harness */
        memcpy(x, pb.h_x, nx * sizeof *x);
        memcpy(w, pb.h_w, nw * sizeof *w);
        /* racecheck: the small integers below alone (the same launches) */
        for (int r = 0; r < n && !conv_test_under_racecheck(); ++r) {
            if (rows[r].state != CONV_ROW_PENDING)
                continue; /* the row does not support this shape */
            char label[2 * CONV_MSG_LEN];
            snprintf(label, sizeof label, "%s on %s", rows[r].name, what);
            memcpy(pb.h_x, x, nx * sizeof *x);
            memcpy(pb.h_w, w, nw * sizeof *w);
            conv_test_run_row(&pb, &rows[r], label);
            conv_verify_report rep =
                rows[r].tolerance != NULL ? conv_test_verify_row(&rows[r], &pb)
                : pb.full_verify          ? conv_verify_precomputed(&p, pb.h_y, pb.ref, pb.ref_abs,
                                                                    conv_verify_bound(1.0))
                                 : conv_verify_full(&p, x, w, pb.h_y, conv_verify_bound(1.0));
            CONV_ASSERT_REPORT(rep, label, &p);
            ++checked;
        }
        /* small integers: exact against the host reference */
        conv_fill_small_int(pb.h_x, nx, seed + 7 * (uint64_t)shape, -3, 3);
        conv_fill_small_int(pb.h_w, nw, seed + 7 * (uint64_t)shape + 1, -3, 3);
        memcpy(x, pb.h_x, nx * sizeof *x);
        memcpy(w, pb.h_w, nw * sizeof *w);
        CONV_ASSERT_OK(conv_test_host_reference(&p, x, w, want, &msg), msg);
        for (int r = 0; r < n; ++r) {
            if (rows[r].state != CONV_ROW_PENDING)
                continue;
            char label[2 * CONV_MSG_LEN];
            snprintf(label, sizeof label, "%s (small integers) on %s", rows[r].name, what);
            memcpy(pb.h_x, x, nx * sizeof *x);
            memcpy(pb.h_w, w, nw * sizeof *w);
            conv_test_run_row(&pb, &rows[r], label);
            conv_verify_report rep = rows[r].tolerance != NULL /* not exact: within its bound */
                                         ? conv_test_verify_row(&rows[r], &pb)
                                         : conv_compare_exact(&p, pb.h_y, want, ny);
            CONV_ASSERT_REPORT(rep, label, &p);
        }
        conv_host_free(x);
        conv_host_free(w);
        conv_host_free(want);
        conv_gpu_problem_destroy(&pb);
    }
    cr_log_info("sweep: %ld shapes of CONV_SWEEP_SEED=%llu, %ld row checks passed", count,
                (unsigned long long)seed, checked);
    printf("sweep: %ld shapes of CONV_SWEEP_SEED=%llu, %ld row checks passed\n", count,
           (unsigned long long)seed, checked);
}

/* Checks every pending backward row on pb (the harness's uniform inputs and
 * reference), then on small integers: exactly, or within the row's own
 * bound when it has one (Winograd's transforms round even integers). */
static long check_backward_rows(conv_gpu_problem *pb, conv_row *rows, int n, uint64_t ints,
                                const char *what)
{
    const conv_params *p = &pb->p;
    size_t sizes[3] = {conv_input_elems(p), conv_filter_elems(p), conv_output_elems(p)};
    float *host[3] = {pb->h_x, pb->h_w, pb->h_y};
    int out = p->pass == CONV_PASS_DGRAD ? 0 : 1; /* dx or dw */
    long checked = 0;
    /* racecheck: the small integers alone (the same launches) */
    for (int exact = conv_test_under_racecheck(); exact <= 1; ++exact) {
        double *ref = pb->ref, *mag = pb->ref_abs;
        if (exact) { /* small integers: every sum exact in float and in TF32 */
            for (int t = 0; t < 3; ++t)
                if (t != out)
                    conv_fill_small_int(host[t], sizes[t], ints + (uint64_t)t, -3, 3);
            conv_pass_reference_double(p, pb->h_x, pb->h_w, pb->h_y, ref, mag);
        }
        for (int r = 0; r < n; ++r) {
            if (rows[r].state != CONV_ROW_PENDING)
                continue; /* the row does not support this shape */
            char label[2 * CONV_MSG_LEN];
            snprintf(label, sizeof label, "%s%s on %s", rows[r].name,
                     exact ? " (small integers)" : "", what);
            conv_test_run_row(pb, &rows[r], label);
            conv_verify_opts within = exact ? conv_verify_exact() : conv_verify_bound(1.0);
            conv_msg msg = {{0}};
            if (rows[r].tolerance != NULL)
                CONV_ASSERT_OK(rows[r].tolerance(rows[r].ctx, pb, &within, &msg), msg);
            conv_verify_report rep = conv_pass_verify_precomputed(p, host[out], ref, mag, within);
            CONV_ASSERT_REPORT(rep, label, p);
            ++checked;
        }
    }
    return checked;
}

Test(gpu_sweep, every_backward_row_matches_the_reference_on_random_shapes)
{
    CONV_TEST_REQUIRE_GPU();
    const uint64_t seed = (uint64_t)env_or("CONV_SWEEP_SEED", 1);
    const long count = env_or("CONV_SWEEP_COUNT", conv_test_under_sanitizer() ? 8 : 100);
    conv_sweep_draw d = {seed + 1,
                         0}; /* a stream of its own: shapes other than the forward sweep's */
    long checked = 0;
    for (long shape = 0; shape < count; ++shape) {
        conv_params p = conv_sweep_shape(&d);
        for (int pass = CONV_PASS_DGRAD; pass <= CONV_PASS_WGRAD; ++pass) {
            p.pass = (conv_pass)pass;
            char what[CONV_MSG_LEN + 96];
            snprintf(what, sizeof what, "backward shape %ld of CONV_SWEEP_SEED=%llu (%s)", shape,
                     (unsigned long long)seed, conv_shape_name(&p));
            conv_row rows[MAX_ROWS];
            int n = conv_backward_rows(&p, NULL, rows, MAX_ROWS);
            n += conv_auto_rows(&p, NULL, rows + n, MAX_ROWS - n);
            conv_rows_check(rows, n, &p, NULL, 0);
            for (int r = 0; r < n; ++r) /* TF32 tensor cores: compute capability 8.0 and up */
                if (rows[r].cls == CONV_CLASS_TF32 && tc_available(NULL) != CONV_OK)
                    conv_row_skip(&rows[r], "no TF32 tensor cores");
            conv_msg msg = {{0}};
            conv_gpu_problem pb;
            CONV_ASSERT_OK(conv_gpu_problem_create(&pb, &p, seed + (uint64_t)shape, &msg), msg);
            cr_assert(pb.full_verify, "%s: too large for the sweep's references", what);
            checked += check_backward_rows(&pb, rows, n, seed + 7 * (uint64_t)shape, what);
            conv_gpu_problem_destroy(&pb);
        }
    }
    printf("backward sweep: %ld shapes of CONV_SWEEP_SEED=%llu, %ld row checks passed\n", count,
           (unsigned long long)seed, checked);
    cr_assert_gt(checked, 0, "no backward row ran");
}

/* The generator itself, on any machine: every shape valid and within the
 * budget, every kind of shape drawn, and the same seed giving the same shapes. */
Test(sweep, draws_valid_shapes_of_every_kind_repeatably)
{
    conv_sweep_draw a = {1, 0}, b = {1, 0};
    int one_d = 0, gemm = 0, strided = 0, nhwc = 0, batched = 0, single = 0, wino = 0;
    for (int i = 0; i < 500; ++i) {
        conv_params p = conv_sweep_shape(&a), q = conv_sweep_shape(&b);
        cr_assert(memcmp(&p, &q, sizeof p) == 0, "shape %d differs between two draws", i);
        cr_assert_eq(conv_params_validate(&p, NULL), CONV_OK);
        cr_assert_leq(conv_flops(&p) / 2.0, CONV_SWEEP_MAX_MACS);
        one_d += conv1d_is_1d_problem(&p);
        gemm += p.r == 1 && p.s == 1 && p.layout == CONV_LAYOUT_NHWC && p.w == 1;
        strided += p.stride_h > 1 || p.stride_w > 1 || p.dil_h > 1 || p.dil_w > 1;
        nhwc += p.layout == CONV_LAYOUT_NHWC;
        batched += p.n > 1;
        single += p.c == 1 && p.k == 1;
        wino += p.r == 3 && p.s == 3 && p.stride_h == 1 && p.stride_w == 1 && p.dil_h == 1 &&
                p.dil_w == 1;
    }
    cr_assert(one_d > 10 && gemm > 10 && strided > 50 && nhwc > 100 && batched > 50 &&
                  single > 50 && wino > 30,
              "kinds: 1D %d, GEMM %d, strided %d, NHWC %d, batched %d, one channel %d, 3x3 "
              "stride 1 %d",
              one_d, gemm, strided, nhwc, batched, single, wino);
}
