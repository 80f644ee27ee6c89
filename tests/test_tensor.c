/* common/conv_tensor and conv_hash.h: host buffers with canaries, the seeded
 * fills, NaN poisoning, and the hash the host and the device share. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "conv_hash.h"
#include "conv_tensor.h"
#include "conv_test_support.h"

Test(tensor, the_rng_repeats_for_a_seed_and_differs_between_seeds)
{
    float a[1000], b[1000], c[1000];
    conv_fill_uniform(a, 1000, 42, -1.0f, 1.0f);
    conv_fill_uniform(b, 1000, 42, -1.0f, 1.0f);
    conv_fill_uniform(c, 1000, 43, -1.0f, 1.0f);
    cr_assert(memcmp(a, b, sizeof a) == 0, "same seed, same data");
    int same = 0;
    double mean = 0;
    for (int i = 0; i < 1000; ++i) {
        same += a[i] == c[i];
        cr_assert(a[i] >= -1.0f && a[i] < 1.0f, "a[%d] = %g out of range", i, a[i]);
        mean += a[i];
    }
    cr_assert_lt(same, 5, "different seeds gave %d equal values", same);
    cr_assert_lt(fabs(mean / 1000), 0.1, "mean %g far from 0", mean / 1000);
}

Test(tensor, small_integers_cover_exactly_the_requested_range)
{
    float x[4000];
    int seen[7] = {0};
    conv_fill_small_int(x, 4000, 9, -3, 3);
    for (int i = 0; i < 4000; ++i) {
        cr_assert(x[i] == floorf(x[i]) && x[i] >= -3 && x[i] <= 3, "x[%d] = %g", i, x[i]);
        seen[(int)x[i] + 3]++;
    }
    for (int v = 0; v < 7; ++v)
        cr_assert_gt(seen[v], 400, "value %d drawn %d times", v - 3, seen[v]);
}

Test(tensor, canaries_catch_a_write_past_the_end)
{
    float *buf = conv_host_alloc(10);
    cr_assert_not_null(buf);
    cr_assert_eq((uintptr_t)buf % 64, 0, "64-byte alignment");
    cr_assert_eq(conv_host_canary_check(buf, 10), 0);
    for (int i = 0; i < 10; ++i)
        buf[i] = 1.0f; /* in bounds: canary intact */
    cr_assert_eq(conv_host_canary_check(buf, 10), 0);
    buf[10] = 1.0f;
    cr_assert_eq(conv_host_canary_check(buf, 10), 1);
    conv_host_free(buf);
    cr_assert_null(conv_host_alloc(0));
    cr_assert_null(conv_host_alloc(SIZE_MAX / 2));
}

Test(tensor, nan_poison_is_counted)
{
    float x[16];
    conv_fill_uniform(x, 16, 1, 0.0f, 1.0f);
    cr_assert_eq(conv_count_nan(x, 16), 0);
    conv_fill_nan(x, 16);
    cr_assert_eq(conv_count_nan(x, 16), 16);
}

/* Refused before the allocator is asked, so that a sanitizer build (whose
 * allocator aborts on a request it cannot meet) answers NULL too. */
Test(tensor, a_buffer_larger_than_the_machine_is_refused_without_asking_for_it)
{
    size_t physical = conv_host_memory_bytes();
    cr_assert_gt(physical, 0, "sysconf knows the physical memory on Linux");
    cr_assert_null(conv_host_alloc(physical / sizeof(float) + 1));
    /* the buffer alone fits, its canary does not */
    cr_assert_null(conv_host_alloc(physical / sizeof(float) - CONV_CANARY_FLOATS / 2));
    cr_assert_null(conv_host_alloc(SIZE_MAX / sizeof(float)));
    cr_assert_null(conv_host_alloc(SIZE_MAX));
    float *small = conv_host_alloc(1); /* and the allocator still works afterwards */
    cr_assert_not_null(small);
    conv_host_free(small);
}

Test(tensor, host_and_device_share_one_hash)
{
    const uint64_t seeds[] = {0, 1, 2024, 0xffffffffffffffffull};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; ++s)
        for (uint64_t i = 0; i < 1000; ++i)
            cr_assert_eq(conv_hash64(seeds[s], i), conv_rng_hash(seeds[s], i),
                         "seed %zu index %llu", s, (unsigned long long)i);
    float x[1000];
    conv_fill_uniform(x, 1000, 77, -2.0f, 3.0f);
    for (uint64_t i = 0; i < 1000; ++i) {
        float v = conv_hash_uniform(77, i, -2.0f, 3.0f);
        cr_assert(memcmp(&v, &x[i], sizeof v) == 0, "element %llu: %.9g vs %.9g",
                  (unsigned long long)i, v, x[i]);
    }
}

/* Every seeded input of the project (tests, programs, the docs' measured
 * tables) comes from this hash: a change to it changes them all. */
Test(tensor, the_hash_is_pinned_so_seeded_inputs_never_change)
{
    cr_assert_eq(conv_rng_hash(0, 0), 0x2848d6a4a7b28bc1ull);
    cr_assert_eq(conv_rng_hash(2024, 5), 0xb59713ee94f6113dull);
    float first[2];
    conv_fill_uniform(first, 2, 2024, -1.0f, 1.0f);
    cr_assert_eq(first[0], -0.61702311f, "%.9g", first[0]);
    cr_assert_eq(first[1], -0.824868441f, "%.9g", first[1]);
    cr_assert_neq(conv_rng_hash(2024, 5), conv_rng_hash(2025, 5));
    cr_assert_neq(conv_rng_hash(2024, 5), conv_rng_hash(2024, 6));
}

Test(tensor, uniform_floats_are_multiples_of_2_to_the_minus_24)
{
    float x[4096];
    conv_fill_uniform(x, 4096, 5, 0.0f, 1.0f);
    float lo = 1.0f, hi = 0.0f;
    for (int i = 0; i < 4096; ++i) {
        cr_assert(x[i] >= 0.0f && x[i] < 1.0f, "x[%d] = %.9g", i, x[i]);
        double steps = ldexp(x[i], 24);
        cr_assert_eq(steps, floor(steps), "x[%d] = %.9g", i, x[i]);
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    cr_assert(lo < 0.01f && hi > 0.99f, "range [%g, %g] not covered", lo, hi);
}
