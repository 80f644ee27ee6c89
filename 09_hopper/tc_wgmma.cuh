/* Step 09. Versions: 9a, 9b (and 9c, 9b with its sum split), 9a-fp16 and 9b-fp16.
 *
 * What the wgmma kernels (9a: hopper_wgmma_9a.cu, 9b: hopper_tma_9b.cu,
 * 9a-fp16: hopper_wgmma_fp16.cu, 9b-fp16: hopper_tma_fp16.cu) need of
 * Hopper's wgmma.mma_async: the matrix descriptor of an operand in shared
 * memory, the m64n256k8 TF32 product and the m64n256k16 FP16 one; and where
 * a pixel row starts, for the copies of 9a and 9a-fp16. Device code
 * compiled for sm_90a only (__CUDA_ARCH_FEAT_SM90_ALL), the one code that
 * has wgmma. */
#ifndef TC_WGMMA_CUH
#define TC_WGMMA_CUH

#include "tc_geom.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* Where pixel row m of the implicit GEMM starts, for 9a's and 9a-fp16's
 * copies: {its offset in x (low, high), h0, w0}, (h0, w0) the input pixel
 * under filter tap (0, 0), which padding may put outside the image; a row
 * past M gets an origin far outside, so that every copy of it zero-fills. */
__device__ __forceinline__ int4 wgmma_pixel(long long m, const tc_geom &g)
{
    int4 e = make_int4(0, 0, -(1 << 30), -(1 << 30));
    if (m < g.m) {
        const long long pq = (long long)g.p * g.q;
        const int n = (int)(m / pq), rem = (int)(m % pq);
        const int h0 = (rem / g.q) * g.stride_h - g.pad_h, w0 = (rem % g.q) * g.stride_w - g.pad_w;
        const long long at = (((long long)n * g.h + h0) * g.w + w0) * g.c;
        e = make_int4((int)(at & 0xffffffff), (int)(at >> 32), h0, w0);
    }
    return e;
}

/* The block's tile of y straight from the accumulators, for 9a and 9a-fp16
 * (after wgmma.wait_group 0). D's layout (PTX ISA, wgmma's f32 accumulator,
 * m64nN): acc[4i + v] is row (channel) krow + 8 (v / 2), column (pixel)
 * 8i + 2t + v % 2 of the BM pixels from m0. A warp's store covers 4 pixels x
 * 8 neighbouring channels: 32-byte pieces. */
template <int BM>
__device__ __forceinline__ void wgmma_store_y(float acc[128], float *__restrict__ y,
                                              const tc_geom &g, long long m0, int k0, int krow,
                                              int t)
{
    /* the accumulators are final only now: keep their reads below the wait */
#pragma unroll
    for (int i = 0; i < 128; ++i)
        asm volatile("" : "+f"(acc[i])::"memory");
#pragma unroll
    for (int i = 0; i < BM / 8; ++i)
#pragma unroll
        for (int v = 0; v < 4; ++v) {
            const long long m = m0 + 8 * i + 2 * t + (v & 1);
            const int k = k0 + krow + 8 * (v >> 1);
            if (m < g.m && k < g.k)
                y[m * g.k + k] = acc[4 * i + v];
        }
}

/* excerpt: matrix descriptor */
/* The descriptor of a K-major operand with the 128-byte swizzle (PTX ISA,
 * "Matrix Descriptor Format"): bits 0-13 the start address / 16, bits 16-29
 * the leading byte offset / 16 (unused with this swizzle: 1), bits 32-45 the
 * stride byte offset / 16 (the next 8 rows: 1024 bytes), bits 62-63 the
 * swizzle mode (1 = 128 bytes). */
__device__ __forceinline__ unsigned long long wgmma_desc(unsigned addr)
{
    return (unsigned long long)((addr & 0x3ffff) >> 4) | 1ull << 16 | (1024ull >> 4) << 32 |
           1ull << 62;
}
/* excerpt end: matrix descriptor */

/* excerpt: wgmma */
/* d[128] += A (64 x 8, TF32, registers a) * B (8 x 256, TF32, shared memory
 * through desc): one warpgroup, all four warps issuing it together. */
#define TC9_D8(i)                                                                                  \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]),    \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define TC9_D32(i) TC9_D8(i), TC9_D8(i + 8), TC9_D8(i + 16), TC9_D8(i + 24)
__device__ __forceinline__ void wgmma_m64n256k8(float d[128], const unsigned a[4],
                                                unsigned long long desc)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "
                 "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, "
                 "%123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, 1, 1, 1;\n"
                 : TC9_D32(0), TC9_D32(32), TC9_D32(64), TC9_D32(96)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc)
                 : "memory");
}
/* excerpt end: wgmma */

/* excerpt: wgmma fp16 */
/* d[128] += A (64 x 16, FP16) * B (16 x 256, FP16), both from shared memory
 * through their descriptors, both K-major (the last two 0s: neither
 * transposed); the same accumulators and the same 32 bytes of each row per
 * product as the TF32 one, which reads 8 floats where this reads 16 halves. */
__device__ __forceinline__ void wgmma_m64n256k16_f16(float d[128], unsigned long long desc_a,
                                                     unsigned long long desc_b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "
                 "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, "
                 "%123, %124, %125, %126, %127}, %128, %129, 1, 1, 1, 0, 0;\n"
                 : TC9_D32(0), TC9_D32(32), TC9_D32(64), TC9_D32(96)
                 : "l"(desc_a), "l"(desc_b)
                 : "memory");
}
/* excerpt end: wgmma fp16 */
#endif

#endif /* TC_WGMMA_CUH */
