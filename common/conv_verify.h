/* Verification: a double-precision reference, and comparisons that return a
 * report instead of a yes/no.
 *
 * Tolerance. Every output is a dot product of depth n = C*R*S. Computed in
 * float in any order (with or without FMA), its error is bounded by
 *     |y - y_exact| <= gamma_n * sum |x_i * w_i|,   gamma_n = n*u / (1 - n*u),
 * with u = 2^-24 the unit roundoff of float (Higham, "Accuracy and Stability of
 * Numerical Algorithms", 3.1). That bound is per element and tight enough that
 * a correct kernel always passes while reading one wrong input (an indexing
 * bug) fails. EXACT mode is for small-integer inputs, whose sums are exact. */
#ifndef CONV_VERIFY_H
#define CONV_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "conv_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CONV_VERIFY_EXACT, /* got must equal the reference exactly */
    CONV_VERIFY_BOUND  /* |got - want| <= factor * gamma_n * sum|x*w| */
} conv_verify_mode;

/* The tolerance of one output element (n, k, oh, ow), for an algorithm
 * whose rounding errors are not those of a dot product (Winograd's
 * transforms scale them): ctx carries what it needs (the tensors, a table). */
typedef double (*conv_point_tol)(const void *ctx, int n, int k, int oh, int ow);

typedef struct {
    conv_verify_mode mode;
    double bound_factor;      /* 1 for plain dot products; > 1 only with a reason */
    conv_point_tol point_tol; /* NULL: factor * gamma_n * sum|x*w|; else this, factor unused */
    const void *point_ctx;
    double abs_term; /* added to every tolerance: an error that does not scale with
                        sum|x*w| (FP16's subnormal inputs, conv_fp16.h); 0 for most */
} conv_verify_opts;

typedef struct {
    size_t checked;                         /* elements compared */
    size_t mismatches;                      /* elements outside the tolerance (NaNs included) */
    size_t nan_count;                       /* NaN or infinite results */
    long long first_index;                  /* offset of the first mismatch, -1 if none */
    int first_n, first_k, first_p, first_q; /* its coordinates (-1 for 1D) */
    double first_got, first_want, first_tol;
    double max_abs_err, max_rel_err;
    double rel_l2_err;          /* ||got - want||_2 / ||want||_2 over the checked elements */
    double sum_err2, sum_want2; /* running sums behind rel_l2_err */
    int passed;
} conv_verify_report;

/* The precision class of a computation's arithmetic; a kernel is compared
 * with the references of its own class (the fastest cuDNN of that class).
 *   FP32  float's accuracy: plain FP32 products and sums, and the schemes that
 *         recover it from tensor cores (3xTF32);
 *   TF32  FP32 data, products of inputs rounded to TF32 (tensor cores);
 *   FP16  half-precision inputs, FP32 accumulation. */
typedef enum { CONV_CLASS_FP32 = 0, CONV_CLASS_TF32, CONV_CLASS_FP16, CONV_CLASS_COUNT } conv_class;

/* "FP32", "TF32", "FP16" ("?" for anything else). */
const char *conv_class_name(conv_class cls);
/* 1 when a computation of class cls may stand where class `allowed` is
 * asked for: the same class, or FP32 where TF32 is allowed (a user who allows
 * TF32 gets whichever of the two is faster). */
int conv_class_allows(conv_class allowed, conv_class cls);

/* u = 2^-24 and gamma_n = n*u / (1 - n*u) (infinite when n*u >= 1). */
double conv_gamma(size_t n);

/* The bound of a dot product of depth n computed on TF32 tensor cores (each
 * input rounded to TF32, u_t = 2^-11; the products exact; the additions in
 * float, allowed 2u each since they may truncate) as a factor of gamma_n:
 * [(1 + u_t)^2 - 1 + gamma'_n (1 + u_t)^2] / gamma_n, gamma'_n = n*2u / (1 - n*2u).
 * Step 08 (tc_host.h) derives it. */
double conv_tf32_bound_factor(size_t n);

conv_verify_opts conv_verify_exact(void);
conv_verify_opts conv_verify_bound(double factor);
/* Bound mode with each output's own tolerance from tol(ctx, n, k, oh, ow). */
conv_verify_opts conv_verify_pointwise(conv_point_tol tol, const void *ctx);

/* The double reference of one output element: its value and sum |x*w|. */
void conv_reference_point(const conv_params *p, const float *x, const float *w, int n, int k,
                          int out_h, int out_w, double *value, double *abs_sum);
/* The whole double reference (either may be NULL to skip it). */
void conv_reference_double(const conv_params *p, const float *x, const float *w, double *y,
                           double *abs_sum);

/* Accumulates one comparison into a report (start from conv_report_init).
 * index and the coordinates only serve to describe the first mismatch. */
conv_verify_report conv_report_init(void);
void conv_report_add(conv_verify_report *rep, size_t index, double got, double want, double tol,
                     int exact);
void conv_report_finish(conv_verify_report *rep);

/* Full verification of a 2D convolution output against the double reference. */
conv_verify_report conv_verify_full(const conv_params *p, const float *x, const float *w,
                                    const float *got, conv_verify_opts opts);
/* Full verification against a double reference computed beforehand with
 * conv_reference_double (ref and ref_abs hold every output, in output order):
 * the same report as conv_verify_full without recomputing the reference. */
conv_verify_report conv_verify_precomputed(const conv_params *p, const float *got,
                                           const double *ref, const double *ref_abs,
                                           conv_verify_opts opts);
/* Sampled verification for problems too large to check fully on a CPU:
 * `samples` output points chosen by the seed (the first and last element always
 * among them), each computed in double. */
conv_verify_report conv_verify_sampled(const conv_params *p, const float *x, const float *w,
                                       const float *got, size_t samples, uint64_t seed,
                                       conv_verify_opts opts);
/* Exact element-by-element comparison of two float outputs (e.g. a GPU kernel
 * against step 01 on small-integer inputs); p may be NULL for 1D data. */
conv_verify_report conv_compare_exact(const conv_params *p, const float *got, const float *want,
                                      size_t count);

/* The 1D "same" convolution reference (mask centred, zeros outside). */
void conv1d_reference_double(const float *x, size_t width, const float *mask, int mask_width,
                             double *y, double *abs_sum);
conv_verify_report conv1d_verify_full(const float *x, size_t width, const float *mask,
                                      int mask_width, const float *got, conv_verify_opts opts);

/* One line, e.g. "OK (262144 checked, max abs err 0, rel L2 0)" or
 * "FAILED: 3 of 262144 mismatch; first at 17 (n=0 k=0 p=0 q=17): got 5 want 4 (tol 0)". */
void conv_report_describe(const conv_verify_report *rep, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* CONV_VERIFY_H */
