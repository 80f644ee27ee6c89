/* Device helpers that the kernels of several steps share: a thread's
 * register tile of sums set to zero, and a run of floats read as float4s.
 * The sizes are compile-time and both loops unroll fully, so each call
 * compiles to the same instructions as the loop written out in place. */
#ifndef CONV_KERNEL_UTIL_CUH
#define CONV_KERNEL_UTIL_CUH

/* acc[i][j] = 0 for the whole M x N register tile. */
template <int M, int N> static __device__ __forceinline__ void zero_tile(float (&acc)[M][N])
{
#pragma unroll
    for (int i = 0; i < M; ++i)
#pragma unroll
        for (int j = 0; j < N; ++j)
            acc[i][j] = 0.0f;
}

/* dst[0 .. N-1] = src[0 .. N-1], read as N/4 float4s: N a multiple of 4 and
 * src 16-byte aligned. */
template <int N>
static __device__ __forceinline__ void load_float4s(float (&dst)[N], const float *src)
{
#pragma unroll
    for (int q = 0; q < N / 4; ++q) {
        const float4 t = *reinterpret_cast<const float4 *>(src + 4 * q);
        dst[4 * q] = t.x;
        dst[4 * q + 1] = t.y;
        dst[4 * q + 2] = t.z;
        dst[4 * q + 3] = t.w;
    }
}

#endif /* CONV_KERNEL_UTIL_CUH */
