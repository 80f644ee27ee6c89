/* Host tensors: aligned allocation with a canary guard region after every
 * buffer, deterministic seeded fills, and NaN poisoning.
 *
 * Fills are counter-based (element i depends only on the seed and i), so a
 * tensor is the same whatever order or thread fills it. */
#ifndef CONV_TENSOR_H
#define CONV_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Floats of guard region placed after every buffer from conv_host_alloc and
 * conv_device_alloc; they hold CONV_CANARY_BITS and must still hold them
 * after a kernel ran (a write past the end is caught). */
#define CONV_CANARY_FLOATS 64
/* A NaN with a recognisable payload: if a kernel *reads* the canary as data,
 * its result turns NaN and the verifier catches that too. */
#define CONV_CANARY_BITS 0x7fbadbadu

/* 64-byte aligned buffer of count floats followed by the canary guard.
 * Returns NULL when count is 0, the size overflows, the buffer alone would be
 * larger than the machine's physical memory (refused before asking the
 * allocator, so that a sanitizer build answers the same way), or memory is
 * short. */
float *conv_host_alloc(size_t count);
/* The machine's physical memory in bytes (0 if unknown). */
size_t conv_host_memory_bytes(void);
void conv_host_free(float *buf);

/* Fills / checks a guard region of n floats. check returns how many of them
 * no longer hold the canary (0 = intact). */
void conv_canary_fill(float *guard, size_t n);
size_t conv_canary_check(const float *guard, size_t n);
/* Checks the guard after a conv_host_alloc buffer of count floats. */
size_t conv_host_canary_check(const float *buf, size_t count);

/* A well-mixed 64-bit hash of (seed, index): the project's random source. */
uint64_t conv_rng_hash(uint64_t seed, uint64_t index);

/* Uniform floats in [lo, hi). */
void conv_fill_uniform(float *x, size_t n, uint64_t seed, float lo, float hi);
/* Integers in [lo, hi] stored as floats. With small magnitudes every product
 * and every partial sum is an integer below 2^24, so float arithmetic is
 * exact in any order and results can be compared for equality. */
void conv_fill_small_int(float *x, size_t n, uint64_t seed, int lo, int hi);
/* Poisons a buffer with quiet NaNs, so an element a kernel forgets to write
 * cannot pass verification by holding a stale correct value. */
void conv_fill_nan(float *x, size_t n);
size_t conv_count_nan(const float *x, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* CONV_TENSOR_H */
