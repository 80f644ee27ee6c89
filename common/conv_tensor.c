#include "conv_tensor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conv_hash.h"

#define CONV_HOST_ALIGN 64

size_t conv_host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0)
        return 0;
    return (size_t)pages * (size_t)page;
}

float *conv_host_alloc(size_t count)
{
    size_t total, bytes, physical = conv_host_memory_bytes();
    if (count == 0 || __builtin_add_overflow(count, (size_t)CONV_CANARY_FLOATS, &total) ||
        __builtin_mul_overflow(total, sizeof(float), &bytes) || (physical > 0 && bytes > physical))
        return NULL;
    /* aligned_alloc wants a size that is a multiple of the alignment */
    size_t rounded = (bytes + CONV_HOST_ALIGN - 1) / CONV_HOST_ALIGN * CONV_HOST_ALIGN;
    if (rounded < bytes)
        return NULL;
    float *buf = aligned_alloc(CONV_HOST_ALIGN, rounded);
    if (buf != NULL)
        conv_canary_fill(buf + count, CONV_CANARY_FLOATS);
    return buf;
}

void conv_host_free(float *buf)
{
    free(buf);
}

void conv_canary_fill(float *guard, size_t n)
{
    const uint32_t bits = CONV_CANARY_BITS;
    for (size_t i = 0; i < n; ++i)
        memcpy(&guard[i], &bits, sizeof bits);
}

size_t conv_canary_check(const float *guard, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        uint32_t bits;
        memcpy(&bits, &guard[i], sizeof bits);
        bad += bits != CONV_CANARY_BITS;
    }
    return bad;
}

size_t conv_host_canary_check(const float *buf, size_t count)
{
    return conv_canary_check(buf + count, CONV_CANARY_FLOATS);
}

uint64_t conv_rng_hash(uint64_t seed, uint64_t index)
{
    return conv_hash64(seed, index);
}

void conv_fill_uniform(float *x, size_t n, uint64_t seed, float lo, float hi)
{
    for (size_t i = 0; i < n; ++i)
        x[i] = conv_hash_uniform(seed, i, lo, hi);
}

void conv_fill_small_int(float *x, size_t n, uint64_t seed, int lo, int hi)
{
    uint64_t range = (uint64_t)((long long)hi - lo + 1);
    for (size_t i = 0; i < n; ++i)
        x[i] = (float)(lo + (long long)(conv_rng_hash(seed, i) % range));
}

void conv_fill_nan(float *x, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        x[i] = NAN;
}

size_t conv_count_nan(const float *x, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; ++i)
        count += isnan(x[i]) != 0;
    return count;
}
