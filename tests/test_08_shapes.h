/* Step 08's shape tables (TF32 and FP16) and their telling inputs, shared
 * by the tests of steps 08 and 09 (step 09 runs step 08's product on
 * Hopper's instructions, on the same shapes). */
#ifndef TEST_08_SHAPES_H
#define TEST_08_SHAPES_H

#include <math.h>
#include <stdint.h>

#include "conv_test_support.h"

/* How many shapes tc_shapes() may write. */
#define TC_TEST_SHAPES (CONV_USUAL_SHAPES + 11)

/* The shape table of every step in NHWC, two larger shapes with several
 * blocks in both directions and partial edge tiles, and shapes with C and K
 * multiples of 4, where 8b and 8c copy 16 bytes at a time and 9b copies by
 * TMA (tc_tma_fits: the stride-9 shape is the one it hands to 9a). */
static inline size_t tc_shapes(conv_params *t)
{
    size_t n = conv_usual_shapes(t);
    t[n++] = conv_shape(2, 37, 21, 19, 70, 3, 3, 1, 1, 1);  /* 2 x 1 blocks of 8b, 13 x 2 of 8a */
    t[n++] = conv_shape(1, 5, 40, 33, 130, 5, 5, 2, 2, 1);  /* K past one 128-wide block */
    t[n++] = conv_shape(1, 4, 1, 1, 4, 1, 1, 0, 1, 1);      /* 16-byte copies from here */
    t[n++] = conv_shape(2, 36, 21, 19, 132, 3, 3, 1, 1, 1); /* J = 324: a partial last step */
    t[n++] = conv_shape(3, 8, 23, 29, 12, 5, 5, 3, 2, 2);   /* padding, stride, dilation */
    t[n++] = conv_shape(1, 16, 40, 40, 256, 3, 3, 1, 1, 1); /* 7 x 2 blocks of 9a */
    t[n++] = conv_shape(1, 4, 1, 1, 4, 3, 3, 1, 1, 1);      /* 1x1 image, padded 3x3 */
    t[n++] = conv_shape(1, 4, 7, 7, 8, 7, 7, 0, 1, 1);      /* filter = image */
    t[n++] = conv_shape(2, 4, 23, 29, 4, 5, 4, 3, 3, 2);    /* all of them at once */
    conv_params asym = conv_shape(1, 8, 13, 11, 8, 3, 5, 0, 1, 1); /* per-axis settings */
    asym.pad_h = 2;
    asym.stride_w = 2;
    asym.dil_h = 3;
    t[n++] = asym;
    t[n++] = conv_shape(2, 8, 30, 40, 8, 3, 3, 1, 9, 1); /* stride 9: no tensor map */
    for (size_t i = 0; i < n; ++i)
        t[i].layout = CONV_LAYOUT_NHWC;
    return n;
}

/* How many shapes tc_nchw_shapes() may write. */
#define TC_NCHW_TEST_SHAPES (CONV_USUAL_SHAPES + 10)

/* 8b's and 8c's NCHW table: the usual shapes in NCHW, shapes past one
 * block each way and past whole stages, and 1x1 filters: with stride 1,
 * no padding and H W and C multiples of 4 the 16-byte copies (several
 * images in one block, depths past one stage and a partial one), with H W
 * odd (no 8-byte stores) or a stride the 4-byte ones. */
static inline size_t tc_nchw_shapes(conv_params *t)
{
    size_t n = conv_usual_shapes(t);
    t[n++] = conv_shape(2, 37, 21, 19, 70, 3, 3, 1, 1, 1);
    t[n++] = conv_shape(1, 5, 40, 33, 130, 5, 5, 2, 2, 1);
    t[n++] = conv_shape(3, 8, 23, 29, 12, 5, 5, 3, 2, 2);   /* padding, stride, dilation */
    t[n++] = conv_shape(2, 3, 29, 31, 16, 7, 7, 3, 2, 1);   /* a stem: C = 3, 7x7, stride 2 */
    t[n++] = conv_shape(5, 8, 6, 6, 12, 1, 1, 0, 1, 1);     /* 16-byte copies, 5 images a block */
    t[n++] = conv_shape(2, 72, 12, 12, 136, 1, 1, 0, 1, 1); /* J = 72, K past one block */
    t[n++] = conv_shape(1, 64, 16, 20, 40, 1, 1, 0, 1, 1);  /* 320 pixels: 3 blocks */
    t[n++] = conv_shape(3, 12, 7, 7, 20, 1, 1, 0, 1, 1);    /* H W = 49: 4-byte copies */
    t[n++] = conv_shape(2, 16, 9, 11, 24, 1, 1, 0, 2, 1);   /* 1x1, stride 2 */
    t[n++] = conv_shape(1, 4, 1, 1, 4, 1, 1, 0, 1, 1);      /* one pixel */
    for (size_t i = 0; i < n; ++i)
        t[i].layout = CONV_LAYOUT_NCHW;
    return n;
}

/* A value that tells rounding from truncation: +-(1 + f 2^-12) 2^e, f odd.
 * TF32 keeps 2^-10 of the 1, so f = 1 and 5 round down, 3 and 7 round up
 * (never a tie, where cvt.rna and cvt.rn differ), and truncation always goes
 * down. */
static inline float tc_telling_value(size_t i)
{
    const float v = ldexpf(1.0f + (float)(1 + 2 * (i % 4)) / 4096.0f, (int)(i / 4 % 7) - 3);
    return i / 28 % 2 ? -v : v;
}

/* How many shapes tc_fp16_shapes() may write. */
#define TC_FP16_TEST_SHAPES (CONV_USUAL_SHAPES + 8)

/* The FP16 versions' table (8b-fp16, 9b-fp16): the usual shapes in NHWC,
 * three with several blocks each way, partial edge tiles and a depth (C R S)
 * past one 16- and one 32-wide step, and five with C % 8 == 0, where 8b-fp16
 * copies through cp.async and 9b-fp16 by TMA. */
static inline size_t tc_fp16_shapes(conv_params *t)
{
    size_t n = conv_usual_shapes(t);
    t[n++] = conv_shape(2, 37, 21, 19, 70, 3, 3, 1, 1, 1);
    t[n++] = conv_shape(3, 8, 23, 29, 12, 5, 5, 3, 2, 2);   /* padding, stride, dilation */
    t[n++] = conv_shape(1, 24, 13, 11, 136, 3, 3, 1, 1, 1); /* K past one 128-wide block */
    /* C % 8 == 0: a depth past whole stages, outputs past one block each
     * way (two of 9b-fp16's 256 pixels x 128 channels), a 1x1 with stride,
     * padding, stride and dilation in the im2col map, 72 channels (a second
     * stage of 8) with an odd K */
    t[n++] = conv_shape(2, 8, 17, 13, 24, 3, 3, 1, 1, 1);
    t[n++] = conv_shape(1, 64, 19, 23, 132, 3, 3, 1, 1, 1);
    t[n++] = conv_shape(3, 16, 9, 11, 40, 1, 1, 0, 2, 1);
    t[n++] = conv_shape(2, 16, 23, 29, 20, 5, 5, 3, 2, 2);
    t[n++] = conv_shape(1, 72, 9, 10, 17, 3, 3, 1, 1, 1);
    for (size_t i = 0; i < n; ++i)
        t[i].layout = CONV_LAYOUT_NHWC;
    return n;
}

/* Uniform floats in [-1, 1), with every 7th x and every 5th w scaled into
 * FP16's subnormal range (below 2^-14), where the bound's absolute term
 * counts. */
static inline void tc_fill_with_subnormals(float *v, size_t count, uint64_t start, int every)
{
    conv_fill_uniform(v, count, start, -1.0f, 1.0f);
    for (size_t i = 0; i < count; i += (size_t)every)
        v[i] *= ldexpf(1.0f, -16);
}

#endif /* TEST_08_SHAPES_H */
