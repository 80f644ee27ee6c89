/* Step 08. Versions: 8b, 8b-xt, 8c, 8b-fp16; step 09's 9a and 9b.
 *
 * The PTX helpers that 8b, 8b-xt and 8c (tensor_cores_mma.cu) share with
 * step 09's wgmma kernels (hopper_wgmma_9a.cu, hopper_tma_9b.cu): a
 * pointer's shared-memory address, cp.async with its zero fill, a float
 * rounded to TF32, and mma.sync's m16n8k8 TF32 product, for compute
 * capability 8.0 and newer, where those kernels are compiled. Then 8b-fp16's
 * product in FP16 (tensor_cores_mma_fp16.cu), from 7.5. tensor_cores_peak.cu
 * times each product alone. Device code only. */
#ifndef TC_PTX_CUH
#define TC_PTX_CUH

#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* A cp.async of BYTES (4 or 16) to the shared address dst; where ok is false
 * it copies 0 source bytes, which writes zeros (src is not read). 16-byte
 * copies bypass L1 (.cg): a tile is read from shared memory, and the overlap
 * of neighbouring tiles is served by L2. PTX allows 4-byte copies only
 * through L1 (.ca). */
template <int BYTES>
__device__ __forceinline__ void cp_async_zfill(unsigned dst, const float *src, bool ok)
{
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                     "r"(ok ? 16 : 0)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                     "r"(ok ? 4 : 0)
                     : "memory");
}

/* v rounded to TF32, to nearest. sm_90 has one instruction for it (ties to
 * even); before, the ties-away form is the one PTX offers, a few integer
 * instructions. Both are off by at most half of TF32's last bit. */
__device__ __forceinline__ unsigned to_tf32(float v)
{
    unsigned r;
#if __CUDA_ARCH__ >= 900
    asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
#else
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
#endif
    return r;
}

/* excerpt: mma m16n8k8 */
/* c += a * b for one warp: a 16 x 8 tile of TF32 (a0..a3), an 8 x 8 tile of
 * TF32 (b0, b1), a 16 x 8 tile of floats (c0..c3), each spread over the
 * warp's 32 lanes as the PTX ISA's figures for m16n8k8 show. */
__device__ __forceinline__ void mma_m16n8k8_tf32(float c[4], const unsigned a[4],
                                                 const unsigned b[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
/* excerpt end: mma m16n8k8 */
#endif

#if __CUDA_ARCH__ >= 750
/* excerpt: mma fp16 */
/* c += a * b for one warp: a 16 x 16 tile of halves (a0..a3), a 16 x 8 tile
 * (b0, b1), a 16 x 8 tile of floats (c0..c3). Turing has m16n8k8 only: the
 * same product as two, columns 0-7 of a with b0 and 8-15 with b1. */
__device__ __forceinline__ void mma_fp16(float c[4], const unsigned a[4], const unsigned b[2])
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]));
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[2]), "r"(a[3]), "r"(b[1]));
#endif
}
/* excerpt end: mma fp16 */
#endif

#endif /* TC_PTX_CUH */
