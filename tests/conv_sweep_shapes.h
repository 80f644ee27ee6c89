/* The randomized sweep's shape generator (tests/test_sweep.c), for every
 * test that wants its shapes: sizes from 1 to a few hundred, primes, every
 * padding, stride and dilation, both layouts, batches, drawn from a random
 * stream (conv_rng_hash) so that the same start value gives the same shapes.
 * A test binary that includes it links step 06 (gemm_as_conv_params). */
#ifndef CONV_SWEEP_SHAPES_H
#define CONV_SWEEP_SHAPES_H

#include <stdint.h>

#include "conv_params.h"
#include "conv_tensor.h"
#include "im2col_gemm_rows.h"

/* A problem of at most this many multiply-adds keeps the CPU references of a
 * shape well under a second. */
#define CONV_SWEEP_MAX_MACS 2.0e7

/* The generator's state: a random stream's start value and the next index. */
typedef struct {
    uint64_t start, i;
} conv_sweep_draw;

static inline int sweep_pick(conv_sweep_draw *d, int lo, int hi) /* uniform in [lo, hi] */
{
    return lo + (int)(conv_rng_hash(d->start, d->i++) % (uint64_t)(hi - lo + 1));
}

static inline int sweep_chance(conv_sweep_draw *d, int percent)
{
    return sweep_pick(d, 1, 100) <= percent;
}

/* A size: often small, sometimes a prime, sometimes up to a few hundred. */
static inline int sweep_size(conv_sweep_draw *d, int most)
{
    static const int primes[] = {1, 2, 3, 5, 7, 11, 13, 17, 29, 31, 61, 97, 127, 251, 257, 313};
    int v;
    switch (sweep_pick(d, 0, 3)) {
    case 0: v = sweep_pick(d, 1, 8); break;
    case 1: v = primes[sweep_pick(d, 0, (int)(sizeof primes / sizeof primes[0]) - 1)]; break;
    case 2: v = sweep_pick(d, 9, 64); break;
    default: v = sweep_pick(d, 65, 320); break;
    }
    return v < most ? v : most;
}

/* Draws one valid shape within CONV_SWEEP_MAX_MACS. Kinds of shape, so that every step
 * gets work: 1D problems (step 03), one channel in and out (step 04's
 * single-channel strategies), stride and dilation 1 (steps 04 and 05), 3x3
 * at stride 1 (step 07's Winograd), 1x1 NHWC (step 06's GEMMs), and anything. */
static inline conv_params conv_sweep_shape(conv_sweep_draw *d)
{
    for (;;) {
        conv_params p = conv_params_default();
        int kind = sweep_pick(d, 0, 9);
        if (kind == 0) { /* 1D "same" */
            int mask = 2 * sweep_pick(d, 0, 12) + 1;
            p = conv1d_as_conv_params(sweep_size(d, 320) * sweep_pick(d, 1, 64), mask);
        } else if (kind == 1) { /* GEMM as 1x1 NHWC */
            p = gemm_as_conv_params(sweep_size(d, 320), sweep_size(d, 160), sweep_size(d, 160));
        } else {
            p.n = sweep_chance(d, 30) ? sweep_pick(d, 2, 4) : 1;
            p.c = kind == 2 ? 1 : sweep_size(d, 24);
            p.k = kind == 2 ? 1 : sweep_size(d, 24);
            p.h = sweep_size(d, 320);
            p.w = sweep_size(d, 320);
            p.r = sweep_chance(d, 80) ? sweep_pick(d, 1, 7) : sweep_pick(d, 8, 16);
            p.s = sweep_chance(d, 70) ? p.r : sweep_pick(d, 1, 16);
            if (kind == 3) /* Winograd's filter */
                p.r = p.s = 3;
            p.pad_h = sweep_chance(d, 50) ? 0 : sweep_pick(d, 0, p.r);
            p.pad_w = sweep_chance(d, 70) ? p.pad_h : sweep_pick(d, 0, p.s);
            int unit = kind <= 5; /* stride and dilation 1 */
            p.stride_h = unit || sweep_chance(d, 40) ? 1 : sweep_pick(d, 2, 3);
            p.stride_w = unit || sweep_chance(d, 40) ? 1 : sweep_pick(d, 2, 3);
            p.dil_h = unit || sweep_chance(d, 50) ? 1 : sweep_pick(d, 2, 3);
            p.dil_w = unit || sweep_chance(d, 50) ? 1 : sweep_pick(d, 2, 3);
            p.layout = sweep_chance(d, 50) ? CONV_LAYOUT_NHWC : CONV_LAYOUT_NCHW;
        }
        if (conv_params_validate(&p, NULL) != CONV_OK)
            continue;
        double macs = conv_flops(&p) / 2.0;
        if (macs <= CONV_SWEEP_MAX_MACS && conv_input_elems(&p) <= (size_t)1 << 24)
            return p;
    }
}

#endif /* CONV_SWEEP_SHAPES_H */
