/* Step 09, 9a: step 08's implicit GEMM on Hopper's warpgroup tensor-core
 * instruction, wgmma.mma_async (PTX ISA, "Asynchronous Warpgroup Level Matrix
 * Multiply-Accumulate"), in TF32 (hopper.h). It exists only in code compiled
 * for sm_90a, and runs only on compute capability 9.0.
 *
 * A warpgroup (4 warps) issues an asynchronous 64 x N x 8 product that reads
 * its second operand from shared memory through a matrix descriptor. For TF32
 * that operand must be K-major, so 9a computes the transposed tile,
 *
 *     D[k][m] = sum_j W[k][j] A^T[j][m]        (D = the block's tile of y, transposed)
 *
 * the weights from registers (rounded to nearest), the activations from
 * shared memory (truncated by the tensor cores: step 08's tc_host.h gives
 * the bound). A block: 128 output channels x 256 pixels, 2 warpgroups of 64
 * channels, 128 accumulators per thread; four stages of 32 j (201 KB of
 * shared memory), the activation rows stored with the 128-byte swizzle
 * wgmma expects.
 *
 * Lesson: docs/09_hopper.md, section "9a: wgmma, a warpgroup's product from
 * shared memory". */
#include "hopper.h"

#include <stdint.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_check.h"
#include "tc_geom.cuh"
#include "tc_ptx.cuh"
#include "tc_wgmma.cuh"

#define TC9A_BM      256 /* pixels per block: wgmma's N */
#define TC9A_BN      128 /* output channels per block: 2 warpgroups x wgmma's M = 64 */
#define TC9A_BK      32  /* j per stage: 32 floats, one 128-byte swizzled row per pixel */
#define TC9A_STAGES  4
#define TC9A_THREADS 256
#define TC9A_LDW     (TC9A_BN + 8) /* weight rows: lane 4g + t loads t*136 + g, 32 banks */
#define TC9A_ROW     128           /* bytes of one pixel's row in a stage */
/* Shared memory: 1 KB of slack to align the stages to 1024 bytes (the
 * swizzle pattern repeats every 8 rows x 128 bytes), the activation rows, the
 * weight tiles, and one int4 per pixel (where it starts in x, its h0 and w0). */
#define TC9A_SMEM                                                                                  \
    (1024 + TC9A_STAGES * (TC9A_BM * TC9A_ROW + TC9A_BK * TC9A_LDW * 4) + TC9A_BM * 16)

/* 1 in code compiled for sm_90a, which alone has wgmma; 0 in any other. The
 * copy the GPU runs tells the launcher which one that is. */
__device__ int tc_wgmma_built =
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    1;
#else
    0;
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

/* One stage (j0 = kt * 32 .. + 31) with cp.async. Activations: pixel rows
 * p = tid / 8 + 32 i, chunk c = tid % 8 (4 consecutive j), to slot c ^ (p % 8).
 * With VEC (C % 4 == 0) the chunk is 4 channels of one tap, one 16-byte
 * copy; else four 4-byte copies, each j its own tap. Weights: rows
 * j0 + tid / 32 + 8 i, columns 4 (tid % 32) .. + 3. */
template <bool VEC>
__device__ __forceinline__ void
load_stage(unsigned act, unsigned wts, const int4 *pix, const float *__restrict__ x,
           const float *__restrict__ wt, const tc_geom &g, int j0, int k0, int tid)
{
    const int c4 = tid & 7, p0 = tid >> 3;
    const unsigned dst0 = act + p0 * TC9A_ROW + ((c4 ^ (p0 & 7)) << 4); /* p0 + 32 i: same % 8 */
    long long off[4]; /* each j's offset from a pixel's (n, h0, w0) in x */
    int dh[4], dw[4];
    bool jok[4];
#pragma unroll
    for (int e = 0; e < (VEC ? 1 : 4); ++e) {
        const int j = j0 + 4 * c4 + e;
        jok[e] = j < g.j;
        const int tap = jok[e] ? j / g.c : 0, c = j - tap * g.c, r = tap / g.s, s = tap % g.s;
        dh[e] = r * g.dil_h, dw[e] = s * g.dil_w;
        off[e] = ((long long)dh[e] * g.w + dw[e]) * g.c + c;
    }
#pragma unroll
    for (int i = 0; i < TC9A_BM / 32; ++i) {
        const int4 p = pix[p0 + 32 * i]; /* {offset low, offset high, h0, w0} */
        const long long base = (long long)p.y << 32 | (unsigned)p.x;
#pragma unroll
        for (int e = 0; e < (VEC ? 1 : 4); ++e) {
            const int h = p.z + dh[e], w = p.w + dw[e];
            const bool ok = jok[e] && h >= 0 && h < g.h && w >= 0 && w < g.w;
            cp_async_zfill<VEC ? 16 : 4>(dst0 + i * 32 * TC9A_ROW + 4 * e,
                                         ok ? x + base + off[e] : x, ok);
        }
    }
    const int kc = tid & 31, jr = tid >> 5;
#pragma unroll
    for (int i = 0; i < TC9A_BK / 8; ++i) {
        const int j = j0 + jr + 8 * i;
        const unsigned dst = wts + ((jr + 8 * i) * TC9A_LDW + 4 * kc) * 4;
#pragma unroll
        for (int e = 0; e < (VEC ? 1 : 4); ++e) {
            const int k = k0 + 4 * kc + e;
            const bool ok = j < g.j && k < g.k;
            cp_async_zfill<VEC ? 16 : 4>(dst + 4 * e, ok ? wt + (long long)j * g.k + k : wt, ok);
        }
    }
}

/* One stage's products for this warpgroup: 4 wgmmas of k = 8. The weight
 * fragment of warp w of the warpgroup is rows (channels) 16w .. 16w + 15 of
 * the warpgroup's 64, lane 4g + t holding (g, t), (g+8, t), (g, t+4),
 * (g+8, t+4) of each 16 x 8 slice, as mma.m16n8k8's A. */
__device__ __forceinline__ void mma_stage(float acc[128], unsigned frag[16], const float *wts,
                                          unsigned act, int krow, int t)
{
#pragma unroll
    for (int ks = 0; ks < TC9A_BK / 8; ++ks) {
        const float *p = wts + (8 * ks + t) * TC9A_LDW + krow;
        frag[4 * ks + 0] = to_tf32(p[0]);
        frag[4 * ks + 1] = to_tf32(p[8]);
        frag[4 * ks + 2] = to_tf32(p[4 * TC9A_LDW]);
        frag[4 * ks + 3] = to_tf32(p[4 * TC9A_LDW + 8]);
    }
    /* the registers written above are wgmma's inputs: order them first */
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < TC9A_BK / 8; ++ks) /* the next 8 j: 32 bytes on in each row */
        wgmma_m64n256k8(acc, &frag[4 * ks], wgmma_desc(act + 32 * ks));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* excerpt: wgmma pipeline */
/* Step kt of the main loop: start stage kt's products, wait for those of
 * stage kt - 1 (at most one group in flight), wait for this thread's copies
 * of stage kt + 1, publish them (the proxy fence: cp.async wrote through the
 * generic proxy, wgmma reads through the async one), then refill the buffer
 * of stage kt - 1, which no warpgroup reads any more. */
template <bool VEC>
__device__ __forceinline__ void
pipeline_step(float acc[128], unsigned frag[16], int kt, int kts, unsigned act, float *wts,
              const int4 *pix, const float *__restrict__ x, const float *__restrict__ wt,
              const tc_geom &g, int k0, int tid, int krow, int t)
{
    const int buf = kt % TC9A_STAGES;
    mma_stage(acc, frag, wts + buf * TC9A_BK * TC9A_LDW, act + buf * TC9A_BM * TC9A_ROW, krow, t);
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    asm volatile("cp.async.wait_group %0;\n" ::"n"(TC9A_STAGES - 3) : "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    const int next = kt + TC9A_STAGES - 1, nb = next % TC9A_STAGES;
    if (next < kts)
        load_stage<VEC>(act + nb * TC9A_BM * TC9A_ROW, smem_addr(wts + nb * TC9A_BK * TC9A_LDW),
                        pix, x, wt, g, next * TC9A_BK, k0, tid);
    asm volatile("cp.async.commit_group;\n" ::: "memory"); /* empty or not: one group per step */
}
/* excerpt end: wgmma pipeline */
#endif

template <bool VEC>
__global__ void __launch_bounds__(TC9A_THREADS, 1)
    conv2d_tc_wgmma_kernel(const float *__restrict__ x, const float *__restrict__ wt,
                           float *__restrict__ y, tc_geom g)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ float4 smem4[];
    unsigned char *raw = (unsigned char *)smem4;
    unsigned char *base = raw + ((1024 - (smem_addr(raw) & 1023)) & 1023); /* 1024-aligned */
    const unsigned act = smem_addr(base);
    float *wts = (float *)(base + TC9A_STAGES * TC9A_BM * TC9A_ROW);
    int4 *pix = (int4 *)(base + TC9A_STAGES * (TC9A_BM * TC9A_ROW + TC9A_BK * TC9A_LDW * 4));

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int t = lane & 3;
    const int krow = (warp >> 2) * 64 + (warp & 3) * 16 + (lane >> 2); /* first channel of D */
    const long long m0 = (long long)blockIdx.x * TC9A_BM;
    const int k0 = blockIdx.y * TC9A_BN;

    /* each pixel of the block decoded once (wgmma_pixel(), tc_wgmma.cuh) */
    pix[tid] = wgmma_pixel(m0 + tid, g);
    __syncthreads();

    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i)
        acc[i] = 0.0f;
    /* Two sets of fragment registers, for even and odd stages: a wgmma may
     * still read one set while the next stage's fragments go into the other.
     * The stage count is rounded up to even so that the loop, unrolled by
     * two, has no condition around a wgmma (the extra stage is all zeros). */
    unsigned frag_even[16], frag_odd[16];
    const int kts = (g.j + 2 * TC9A_BK - 1) / (2 * TC9A_BK) * 2;
#pragma unroll
    for (int st = 0; st < TC9A_STAGES - 1; ++st) {
        if (st < kts)
            load_stage<VEC>(act + st * TC9A_BM * TC9A_ROW, smem_addr(wts + st * TC9A_BK * TC9A_LDW),
                            pix, x, wt, g, st * TC9A_BK, k0, tid);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    asm volatile("cp.async.wait_group %0;\n" ::"n"(TC9A_STAGES - 2) : "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    int kt = 0;
    do { /* kts >= 2 */
        pipeline_step<VEC>(acc, frag_even, kt, kts, act, wts, pix, x, wt, g, k0, tid, krow, t);
        pipeline_step<VEC>(acc, frag_odd, kt + 1, kts, act, wts, pix, x, wt, g, k0, tid, krow, t);
        kt += 2;
    } while (kt < kts);
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    wgmma_store_y<TC9A_BM>(acc, y, g, m0, k0, krow, t);
#endif
}

/* The kernel for VEC, as an address. */
static const void *wgmma_kernel(bool vec)
{
    return vec ? (const void *)conv2d_tc_wgmma_kernel<true>
               : (const void *)conv2d_tc_wgmma_kernel<false>;
}

/* What tc_wgmma_built holds on this device: 1 set, 2 not. Reading it
 * copies from the device, which waits for the GPU: asked once per device
 * (conv_device_once). */
static conv_status ask_wgmma_built(int device, int *answer, conv_msg *msg)
{
    (void)device; /* the current one */
    int built = 0;
    CONV_CUDA_CHECK(cudaMemcpyFromSymbol(&built, tc_wgmma_built, sizeof built), msg);
    *answer = built ? 1 : 2;
    return CONV_OK;
}

extern "C" conv_status tc_wgmma_runs(const void *kernel, const char *what, const char *name,
                                     int threads, size_t smem, conv_msg *msg)
{
    conv_status st = conv_tf32_available(kernel, what, msg);
    if (st != CONV_OK)
        return st;
    int major = 0, minor = 0, built = 0;
    const int device = conv_current_device();
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), msg);
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), msg);
    /* excerpt: wgmma runs */
    if (major != 9 || minor != 0)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "%s: wgmma exists on compute capability 9.0 only (H100, H200); this GPU "
                         "is sm_%d%d",
                         what, major, minor);
    static int built_on[CONV_MAX_DEVICES];
    if ((st = conv_device_once(built_on, ask_wgmma_built, &built, msg)) != CONV_OK)
        return st;
    if (built != 1)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "%s: this build has no sm_90a code, the only code with wgmma: rebuild "
                         "with -DCMAKE_CUDA_ARCHITECTURES=90a (or native)",
                         what);
    /* excerpt end: wgmma runs */
    return conv_kernel_fits(kernel, name, threads, smem, msg);
}

/* Whether `kernel` (one of the two) runs here. */
static conv_status wgmma_runs(const void *kernel, conv_msg *msg)
{
    return tc_wgmma_runs(kernel, "9a wgmma TF32", "conv2d_tc_wgmma_kernel", TC9A_THREADS, TC9A_SMEM,
                         msg);
}

extern "C" conv_status tc_wgmma_available(conv_msg *msg)
{
    return wgmma_runs(wgmma_kernel(true), msg);
}

extern "C" conv_status conv2d_tc_wgmma(const conv_params *p, const float *d_x, const float *d_w,
                                       float *d_y, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = tc_check_call(p, d_x, d_w, d_y, msg);
    if (st != CONV_OK)
        return st;
    const bool vec = p->c % 4 == 0 && p->k % 4 == 0 && ((uintptr_t)d_x | (uintptr_t)d_w) % 16 == 0;
    const void *kernel = wgmma_kernel(vec);
    if ((st = wgmma_runs(kernel, msg)) != CONV_OK)
        return st;
    tc_geom g = tc_make_geom(p);
    const dim3 grid((unsigned)((g.m + TC9A_BM - 1) / TC9A_BM),
                    (unsigned)((g.k + TC9A_BN - 1) / TC9A_BN));
    void *args[] = {(void *)&d_x, (void *)&d_w, (void *)&d_y, (void *)&g};
    CONV_CUDA_CHECK(cudaLaunchKernel(kernel, grid, dim3(TC9A_THREADS), args, TC9A_SMEM, stream),
                    msg);
    CONV_CHECK_LAUNCH("conv2d_tc_wgmma_kernel", msg);
    return CONV_OK;
}
