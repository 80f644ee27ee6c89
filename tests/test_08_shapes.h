/* Step 08's shape table and its telling inputs, shared by
 * tests/test_08_tensor_cores.c and tests/test_09_hopper.c (step 09 runs step
 * 08's product on Hopper's instructions, on the same shapes). */
#ifndef TEST_08_SHAPES_H
#define TEST_08_SHAPES_H

#include <math.h>

#include "conv_test_support.h"

/* How many shapes tc_shapes() may write. */
#define TC_TEST_SHAPES (CONV_USUAL_SHAPES + 11)

/* The shape table of every step in NHWC, two larger shapes with several
 * blocks in both directions and partial edge tiles, and shapes with C and K
 * multiples of 4, where 8b and 8c copy 16 bytes at a time and 9b copies by
 * TMA (tc_tma_fits: the stride-9 shape is the one it hands to 9a). */
static size_t tc_shapes(conv_params *t)
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

/* A value that tells rounding from truncation: +-(1 + f 2^-12) 2^e, f odd.
 * TF32 keeps 2^-10 of the 1, so f = 1 and 5 round down, 3 and 7 round up
 * (never a tie, where cvt.rna and cvt.rn differ), and truncation always goes
 * down. */
static float tc_telling_value(size_t i)
{
    const float v = ldexpf(1.0f + (float)(1 + 2 * (i % 4)) / 4096.0f, (int)(i / 4 % 7) - 3);
    return i / 28 % 2 ? -v : v;
}

#endif /* TEST_08_SHAPES_H */
