/* Step 07: the Winograd transforms of F(2x2, 3x3) and F(4x4, 3x3), written
 * once for the host and the device (Lavin and Gray, 2016):
 *
 *     y = A^T [ (G g) .* (B^T d) ]                    (1D)
 *     Y = A^T [ (G g G^T) .* (B^T d B) ] A            (2D: columns, then rows)
 *
 * with y[i] = sum_j d[i + j] * g[j], the correlation every step computes.
 * G (alpha x r) transforms the filter, B^T (alpha x alpha) the input tile,
 * A^T (m x alpha) brings the alpha products back to m outputs. F(2, 3) uses
 * the points 0, 1, -1 and infinity (constants 0, +-1, 1/2); F(4, 3) adds 2
 * and -2 (4, 5, 8 in B^T and A^T; 1/4, 1/6, 1/12, 1/24 in G).
 *
 * Each function below is one matrix product written out, the form a kernel
 * wants (no loops over zeros, the constants folded). The 2D forms apply the
 * 1D transform to every column, then to every row of the result. Tiles are
 * row-major: d[i * alpha + j] is row i, column j.
 *
 * Lesson: docs/07_winograd.md, sections "Where the matrices come from" and
 * "From 1D to 2D, and F(4x4, 3x3)". */
#ifndef WINOGRAD_TRANSFORMS_H
#define WINOGRAD_TRANSFORMS_H

#ifdef __CUDACC__
#define WINO_HD static __host__ __device__ __forceinline__
#else
#define WINO_HD static inline
#endif

/* ---- F(2, 3): alpha = 4 ------------------------------------------------ */

/* excerpt: f23 1d */
/* u = G g,  G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]; strides in elements. */
WINO_HD void wino_f2_filter_1d(const float *g, int gs, float *u, int us)
{
    const float half_sum = 0.5f * (g[0] + g[2 * gs]);
    u[0] = g[0];
    u[us] = half_sum + 0.5f * g[gs];
    u[2 * us] = half_sum - 0.5f * g[gs];
    u[3 * us] = g[2 * gs];
}

/* v = B^T d,  B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]. */
WINO_HD void wino_f2_input_1d(const float *d, int ds, float *v, int vs)
{
    /* exercise 07-f2 begin: F(2, 3)'s input transform, v = B^T d */
    v[0] = d[0] - d[2 * ds];
    v[vs] = d[ds] + d[2 * ds];
    v[2 * vs] = d[2 * ds] - d[ds];
    v[3 * vs] = d[ds] - d[3 * ds];
    /* exercise 07-f2 stub
    // TODO(exercise 07-f2): v[i * vs] = row i of B^T (above) times d, whose
    // element j is d[j * ds]; fold the zeros and ones away. Graded by
    // tests/test_07_winograd.c (suites cpu_winograd_transforms, cpu_winograd).
    for (int i = 0; i < 4; ++i)
        v[i * vs] = 0.0f * d[i * ds];
       exercise 07-f2 end */
}

/* y = A^T m,  A^T = [1 1 1 0; 0 1 -1 -1]. */
WINO_HD void wino_f2_output_1d(const float *m, int ms, float *y, int ys)
{
    /* exercise 07-f2 begin: F(2, 3)'s output transform, y = A^T m */
    y[0] = m[0] + m[ms] + m[2 * ms];
    y[ys] = m[ms] - m[2 * ms] - m[3 * ms];
    /* exercise 07-f2 stub
    // TODO(exercise 07-f2): y[i * ys] = row i of A^T (above) times m, whose
    // element j is m[j * ms].
    y[0] = 0.0f * m[0];
    y[ys] = 0.0f * m[ms];
       exercise 07-f2 end */
}
/* excerpt end: f23 1d */

/* The 2D transform of an n_in x n_in tile `in` into the n_out x n_out tile
 * `out` by the 1D transform f (n_in values to n_out, with strides), e.g.
 * U = G g G^T: f on every column of in (t = G g, n_out x n_in), then on
 * every row of t (U = t G^T). */
#define WINO_2D_FROM_1D(f, in, out, n_in, n_out)                                                   \
    do {                                                                                           \
        float t[(n_out) * (n_in)];                                                                 \
        for (int j = 0; j < (n_in); ++j)                                                           \
            f((in) + j, (n_in), t + j, (n_in));                                                    \
        for (int i = 0; i < (n_out); ++i)                                                          \
            f(t + (n_in)*i, 1, (out) + (n_out)*i, 1);                                              \
    } while (0)

/* U = G g G^T: g is 3x3, U is 4x4. */
WINO_HD void wino_f2_filter_2d(const float *g, float *u)
{
    WINO_2D_FROM_1D(wino_f2_filter_1d, g, u, 3, 4);
}

/* V = B^T d B: d and V are 4x4. */
WINO_HD void wino_f2_input_2d(const float *d, float *v)
{
    WINO_2D_FROM_1D(wino_f2_input_1d, d, v, 4, 4);
}

/* Y = A^T M A: M is 4x4, Y is 2x2. */
WINO_HD void wino_f2_output_2d(const float *m, float *y)
{
    WINO_2D_FROM_1D(wino_f2_output_1d, m, y, 4, 2);
}

/* ---- F(4, 3): alpha = 6 ------------------------------------------------ */

/* u = G g,  G = [ 1/4     0     0  ]
 *               [-1/6  -1/6  -1/6  ]
 *               [-1/6   1/6  -1/6  ]
 *               [ 1/24  1/12  1/6  ]
 *               [ 1/24 -1/12  1/6  ]
 *               [  0     0     1   ]                                         */
WINO_HD void wino_f4_filter_1d(const float *g, int gs, float *u, int us)
{
    const float g0 = g[0], g1 = g[gs], g2 = g[2 * gs];
    const float a = -(1.0f / 6.0f) * (g0 + g2), b = (1.0f / 6.0f) * g1;
    const float c = (1.0f / 24.0f) * g0 + (1.0f / 6.0f) * g2, e = (1.0f / 12.0f) * g1;
    u[0] = 0.25f * g0;
    u[us] = a - b;
    u[2 * us] = a + b;
    u[3 * us] = c + e;
    u[4 * us] = c - e;
    u[5 * us] = g2;
}

/* v = B^T d,  B^T = [4  0 -5  0 1 0]
 *                   [0 -4 -4  1 1 0]
 *                   [0  4 -4 -1 1 0]
 *                   [0 -2 -1  2 1 0]
 *                   [0  2 -1 -2 1 0]
 *                   [0  4  0 -5 0 1]                                          */
WINO_HD void wino_f4_input_1d(const float *d, int ds, float *v, int vs)
{
    const float d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds],
                d5 = d[5 * ds];
    const float p = d4 - 4.0f * d2, q = d3 - 4.0f * d1; /* rows 1, 2 */
    const float s = d4 - d2, t = 2.0f * (d3 - d1);      /* rows 3, 4 */
    v[0] = 4.0f * d0 - 5.0f * d2 + d4;
    v[vs] = p + q;
    v[2 * vs] = p - q;
    v[3 * vs] = s + t;
    v[4 * vs] = s - t;
    v[5 * vs] = 4.0f * d1 - 5.0f * d3 + d5;
}

/* y = A^T m,  A^T = [1 1  1 1  1 0]
 *                   [0 1 -1 2 -2 0]
 *                   [0 1  1 4  4 0]
 *                   [0 1 -1 8 -8 1]                                           */
WINO_HD void wino_f4_output_1d(const float *m, int ms, float *y, int ys)
{
    const float s12 = m[ms] + m[2 * ms], d12 = m[ms] - m[2 * ms];
    const float s34 = m[3 * ms] + m[4 * ms], d34 = m[3 * ms] - m[4 * ms];
    y[0] = m[0] + s12 + s34;
    y[ys] = d12 + 2.0f * d34;
    y[2 * ys] = s12 + 4.0f * s34;
    y[3 * ys] = d12 + 8.0f * d34 + m[5 * ms];
}

/* U = G g G^T: g is 3x3, U is 6x6. */
WINO_HD void wino_f4_filter_2d(const float *g, float *u)
{
    WINO_2D_FROM_1D(wino_f4_filter_1d, g, u, 3, 6);
}

/* V = B^T d B: d and V are 6x6. */
WINO_HD void wino_f4_input_2d(const float *d, float *v)
{
    WINO_2D_FROM_1D(wino_f4_input_1d, d, v, 6, 6);
}

/* Y = A^T M A: M is 6x6, Y is 4x4. */
WINO_HD void wino_f4_output_2d(const float *m, float *y)
{
    WINO_2D_FROM_1D(wino_f4_output_1d, m, y, 6, 4);
}

#endif /* WINOGRAD_TRANSFORMS_H */
