/* The PTX helpers that 8b and 8c (tensor_cores_mma.cu) and 8d
 * (tensor_cores_wgmma.cu) share: a pointer's shared-memory address, cp.async
 * with its zero fill, and a float rounded to TF32. Device code only, for
 * compute capability 8.0 and newer, where those kernels are compiled. */
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
#endif

#endif /* TC_PTX_CUH */
