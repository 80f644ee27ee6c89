/* The project's random source: a counter-based hash of (seed, index), the
 * same on the host and on the device. Element i of a seeded tensor depends
 * only on the seed and i, so a tensor filled on the GPU equals the one filled
 * on the CPU, whatever order or thread fills it. */
#ifndef CONV_HASH_H
#define CONV_HASH_H

#include <stdint.h>

#if defined(__CUDACC__)
#define CONV_HOST_DEVICE __host__ __device__
#else
#define CONV_HOST_DEVICE
#endif

/* splitmix64's finaliser over a seed-dependent counter. */
static inline CONV_HOST_DEVICE uint64_t conv_hash64(uint64_t seed, uint64_t index)
{
    uint64_t z =
        seed * 0x9e3779b97f4a7c15ull + index * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A float in [lo, hi) from the top 24 bits of the hash (exactly representable
 * steps of 2^-24 before scaling). */
static inline CONV_HOST_DEVICE float conv_hash_uniform(uint64_t seed, uint64_t index, float lo,
                                                       float hi)
{
    float unit = (float)(conv_hash64(seed, index) >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * unit;
}

#endif /* CONV_HASH_H */
