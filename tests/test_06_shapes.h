/* Step 06's shape table, shared by tests/test_06_im2col.c and
 * tests/test_06_conv.c: the usual shapes of every step
 * (tests/conv_test_support.h) and those step 06's own kernels need. */
#ifndef TEST_06_SHAPES_H
#define TEST_06_SHAPES_H

#include "conv_test_support.h"

/* The shape table: 1x1 images, primes, filters 1x1 .. image, even and odd,
 * padding, stride, dilation, batches, and channel counts that are and are not
 * multiples of 4 (the float4 paths of NHWC im2col and 6f). */
static const conv_params *shape_table(size_t *count)
{
    static conv_params t[CONV_USUAL_SHAPES + 8];
    size_t n = conv_usual_shapes(t);
    t[n++] = conv_shape(1, 4, 13, 11, 4, 3, 3, 1, 1, 1);    /* C, K multiples of 4 */
    t[n++] = conv_shape(2, 8, 19, 23, 12, 3, 3, 1, 2, 1);   /* ... with stride */
    t[n++] = conv_shape(1, 12, 17, 17, 8, 3, 3, 2, 1, 2);   /* ... with dilation */
    t[n++] = conv_shape(2, 16, 24, 20, 129, 3, 3, 1, 1, 1); /* K = tile + 1 */
    t[n++] = conv_shape(3, 36, 12, 14, 132, 2, 3, 1, 1, 1); /* K = 132, C*R*S = 216 */
    t[n++] = conv_shape(1, 64, 20, 20, 128, 3, 3, 1, 1, 1); /* one full K tile */
    t[n++] = conv_shape(2, 20, 15, 17, 40, 5, 5, 2, 2, 1);  /* 5x5 stride 2 */
    t[n++] = conv_shape(5, 8, 23, 9, 20, 4, 2, 1, 1, 3);    /* even filters, dilation 3 */
    *count = n;
    return t;
}

#endif /* TEST_06_SHAPES_H */
