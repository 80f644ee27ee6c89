/* Step 10, 10b: wgrad as an implicit GEMM in FP32, M = K, N = R*S*C, depth
 * N*P*Q: A is read where it lies in dy, B in x (the im2col matrix, never
 * written). The output is small and the depth long, so the depth is cut into
 * `splits` slices (split-K, a grid dimension): each block sums one slice of
 * one 64 x 64 tile, 16 steps at a time through shared memory, 4 x 4 outputs
 * per thread, and writes its partial tile to a workspace; a second kernel
 * adds the slices in slice order into dw: the same bits on every run, no
 * float atomics. With one slice the first kernel writes dw itself.
 * conv2d_backward_filter_igemm_splits() is the rule that picks the slices.
 * Both layouts, through each tensor's strides; the loads are coalesced in
 * NHWC (consecutive threads read consecutive k of dy and c of x). GEMM
 * dimensions are ints (checked), tensor offsets 64-bit. Lesson:
 * docs/10_backward.md, section "dgrad and wgrad as implicit GEMMs". */
#include "conv_backward.h"

#include "conv_backward_10b.cuh"
#include "conv_backward_shape.cuh"
#include "conv_cuda.h"
#include "conv_device.h"

/* wgrad, slice blockIdx.z of `splits`: A[k][j] = dy[n][k][oh][ow] and
 * B[j][col] = x[n][c][ih][iw] with j = (n*P + oh)*Q + ow, col = (r*S + s)*C + c,
 * ih = oh*stride_h - pad_h + r*dil_h (zero outside the image). The slice sums
 * the depth tiles [z*T/splits, (z+1)*T/splits) of T; a slice may be empty
 * (more slices than tiles) and then writes zeros. partial == NULL: write dw;
 * else the slice's K x C*R*S tile, row-major, at partial + z*K*C*R*S. */
__global__ void __launch_bounds__(THREADS)
    conv2d_backward_filter_igemm_kernel(const float *__restrict__ x, const float *__restrict__ dy,
                                        float *__restrict__ dw, float *__restrict__ partial,
                                        bwd_shape sh, int splits)
{
    __shared__ float as[DEPTH][TILE + 1], bs[DEPTH][TILE + 1];
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    const int rows = sh.k, cols = sh.c * sh.r * sh.s, pq = sh.p * sh.q, depth = sh.n * pq;
    const int row0 = (int)blockIdx.y * TILE, col0 = (int)blockIdx.x * TILE;
    const long long tiles = (depth + DEPTH - 1) / DEPTH;
    const int t_begin = (int)(blockIdx.z * tiles / splits);
    const int t_end = (int)((blockIdx.z + 1) * tiles / splits);

    /* Loads: thread (lj, lm) takes row or column lm of the tile at depth
     * lj + 4*l: consecutive threads read consecutive k of dy and c of x in
     * NHWC. Its column of B is one (r, s, c) for the whole sum. */
    const int lm = threadIdx.x % TILE, lj = threadIdx.x / TILE;
    const int k_a = row0 + lm, col_b = col0 + lm;
    const bool a_ok = k_a < rows, b_ok = col_b < cols;
    const int c_b = col_b % sh.c, s_b = col_b / sh.c % sh.s, r_b = col_b / sh.c / sh.s;
    const int h_off = r_b * sh.dil_h - sh.pad_h, w_off = s_b * sh.dil_w - sh.pad_w;

    float acc[4][4] = {};
    for (int t = t_begin; t < t_end; ++t) {
        /* excerpt: wgrad load */
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const int j = t * DEPTH + lj + 4 * l;
            float va = 0.0f, vb = 0.0f;
            if (j < depth) {
                const int n = j / pq, oh = j % pq / sh.q, ow = j % sh.q;
                if (a_ok)
                    va = dy[n * sh.ys[0] + k_a * sh.ys[1] + oh * sh.ys[2] + ow * sh.ys[3]];
                const int ih = oh * sh.stride_h + h_off, iw = ow * sh.stride_w + w_off;
                if (b_ok && ih >= 0 && ih < sh.h && iw >= 0 && iw < sh.w)
                    vb = x[n * sh.xs[0] + c_b * sh.xs[1] + ih * sh.xs[2] + iw * sh.xs[3]];
            }
            as[lj + 4 * l][lm] = va;
            bs[lj + 4 * l][lm] = vb;
        }
        /* excerpt end: wgrad load */
        __syncthreads();
        tile_fma(acc, as, bs, ty, tx);
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int k = row0 + ty + 16 * i, col = col0 + tx + 16 * j;
            if (k >= rows || col >= cols)
                continue;
            if (partial) {
                partial[((long long)blockIdx.z * rows + k) * cols + col] = acc[i][j];
            } else {
                const int c = col % sh.c, s = col / sh.c % sh.s, r = col / sh.c / sh.s;
                dw[k * sh.ws[0] + c * sh.ws[1] + r * sh.ws[2] + s * sh.ws[3]] = acc[i][j];
            }
        }
}

/* excerpt: wgrad reduce */
/* The deterministic end of split-K: element e of dw (row-major K x C*R*S) is
 * slice 0 + slice 1 + ... + slice splits-1, always in that order, so the
 * result does not depend on which block finished first. */
__global__ void conv2d_backward_filter_reduce_kernel(const float *__restrict__ partial,
                                                     float *__restrict__ dw, bwd_shape sh,
                                                     int splits)
{
    const int cols = sh.c * sh.r * sh.s;
    const long long total = (long long)sh.k * cols, step = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
        /* exercise 10-reduce begin: element e of dw, the slices added in a fixed order */
        float sum = 0.0f;
        for (int z = 0; z < splits; ++z)
            sum += partial[z * total + e];
        /* exercise 10-reduce stub
        // TODO(exercise 10-reduce): the sum of element e over the `splits` partial filters
        // (slice z starts at partial + z * total), always in the same order, so that every
        // run gives the same bits. Graded by tests/test_10_backward.c (suite
        // gpu_backward_filter_igemm).
        float sum = 0.0f;
        (void)partial, (void)splits;
           exercise 10-reduce end */
        const int k = (int)(e / cols), col = (int)(e % cols);
        const int c = col % sh.c, s = col / sh.c % sh.s, r = col / sh.c / sh.s;
        dw[k * sh.ws[0] + c * sh.ws[1] + r * sh.ws[2] + s * sh.ws[3]] = sum;
    }
}
/* excerpt end: wgrad reduce */

extern "C" size_t conv2d_backward_filter_igemm_workspace(const conv_params *p, int splits)
{
    if (p == NULL || splits <= 1)
        return 0;
    return (size_t)splits * conv_filter_elems(p) * sizeof(float);
}

/* excerpt: wgrad split rule */
extern "C" int conv2d_backward_filter_igemm_splits(const conv_params *p, int sm_count)
{
    if (p == NULL || sm_count < 1 || p->k < 1 || p->c < 1 || p->r < 1 || p->s < 1)
        return 1;
    const long long tiles = tiles_of(p->k) * tiles_of((long long)p->c * p->r * p->s);
    const long long depth_tiles =
        ((long long)p->n * conv_out_h(p) * conv_out_w(p) + DEPTH - 1) / DEPTH;
    long long splits = (2LL * sm_count + tiles - 1) / tiles; /* two blocks per SM */
    if (splits > depth_tiles / CONV_BACKWARD_IGEMM_MIN_SLICE_TILES)
        splits = depth_tiles / CONV_BACKWARD_IGEMM_MIN_SLICE_TILES; /* slices not too thin */
    if (splits > CONV_BACKWARD_IGEMM_RULE_MAX_SPLITS)
        splits = CONV_BACKWARD_IGEMM_RULE_MAX_SPLITS;
    return splits < 1 ? 1 : (int)splits;
}
/* excerpt end: wgrad split rule */

extern "C" conv_status conv2d_backward_filter_igemm(const conv_params *p, const float *d_x,
                                                    const float *d_dy, float *d_dw, int splits,
                                                    float *d_workspace, size_t workspace_bytes,
                                                    cudaStream_t stream, conv_msg *msg)
{
    conv_status st = bwd_validate(p, d_x, "d_x", d_dy, "d_dy", d_dw, "d_dw", msg);
    if (st != CONV_OK)
        return st;
    if (splits > CONV_BACKWARD_IGEMM_MAX_SPLITS)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid splits: %d (at most %d)", splits,
                         CONV_BACKWARD_IGEMM_MAX_SPLITS);
    const long long cols = (long long)p->c * p->r * p->s;
    const long long depth = (long long)p->n * conv_out_h(p) * conv_out_w(p);
    st = check_dims(p, p->k, cols, depth, tiles_of(p->k), 1, msg);
    if (st != CONV_OK)
        return st;
    if (splits <= 0) { /* the rule, on the current device: the first CUDA call */
        int sm_count = 0;
        CONV_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount,
                                               conv_current_device()),
                        msg);
        splits = conv2d_backward_filter_igemm_splits(p, sm_count);
    }
    const size_t need = conv2d_backward_filter_igemm_workspace(p, splits);
    if (need > 0 && (d_workspace == NULL || workspace_bytes < need))
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid workspace: %d splits need d_workspace of %zu bytes, got %zu%s",
                         splits, need, workspace_bytes, d_workspace ? "" : " (NULL)");
    st = conv_kernel_fits((const void *)conv2d_backward_filter_igemm_kernel,
                          "conv2d_backward_filter_igemm_kernel", THREADS, 0, msg);
    if (st == CONV_OK && splits > 1)
        st = conv_kernel_fits((const void *)conv2d_backward_filter_reduce_kernel,
                              "conv2d_backward_filter_reduce_kernel", THREADS, 0, msg);
    if (st != CONV_OK)
        return st;
    const bwd_shape sh = make_shape(p);
    const dim3 grid((unsigned)tiles_of(cols), (unsigned)tiles_of(p->k), (unsigned)splits);
    conv2d_backward_filter_igemm_kernel<<<grid, THREADS, 0, stream>>>(
        d_x, d_dy, d_dw, splits > 1 ? d_workspace : NULL, sh, splits);
    CONV_CHECK_LAUNCH("conv2d_backward_filter_igemm_kernel", msg);
    if (splits > 1) {
        const long long blocks = ((long long)p->k * cols + THREADS - 1) / THREADS;
        conv2d_backward_filter_reduce_kernel<<<
            (unsigned)(blocks < CONV_BACKWARD_MAX_BLOCKS ? blocks : CONV_BACKWARD_MAX_BLOCKS),
            THREADS, 0, stream>>>(d_workspace, d_dw, sh, splits);
        CONV_CHECK_LAUNCH("conv2d_backward_filter_reduce_kernel", msg);
    }
    return CONV_OK;
}
