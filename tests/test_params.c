/* common/conv_params: the problem's parameters, the sizes derived from them,
 * the validation every launcher runs, the layouts, and the 1D problem as a
 * 2D one. */
#include <stdint.h>
#include <string.h>

#include "conv_params.h"
#include "conv_test_support.h"

Test(params, default_is_the_lecture_problem)
{
    conv_params p = conv_params_default();
    cr_assert(p.n == 1 && p.c == 6 && p.h == 768 && p.w == 512 && p.k == 6 && p.r == 6 && p.s == 6);
    cr_assert_eq(conv_out_h(&p), 763);
    cr_assert_eq(conv_out_w(&p), 507);
    cr_assert_eq(conv_flops(&p), 2.0 * 6 * 763 * 507 * 6 * 36);
    cr_assert_eq(conv_min_bytes(&p), 4.0 * (6 * 768 * 512 + 6 * 6 * 36 + 6 * 763 * 507));
}

Test(params, output_size_follows_padding_stride_and_dilation)
{
    struct {
        int in, filt, pad, stride, dil, want;
    } cases[] = {
        {5, 3, 0, 1, 1, 3},     {5, 3, 1, 1, 1, 5},   {5, 3, 1, 2, 1, 3}, {6, 3, 1, 2, 1, 3},
        {7, 3, 0, 1, 2, 3},     {7, 3, 2, 3, 2, 3},   {1, 1, 0, 1, 1, 1}, {4, 4, 0, 1, 1, 1},
        {224, 7, 3, 2, 1, 112}, {10, 2, 1, 1, 1, 11},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        conv_params p = conv_shape(1, 1, cases[i].in, cases[i].in, 1, cases[i].filt, cases[i].filt,
                                   cases[i].pad, cases[i].stride, cases[i].dil);
        cr_assert_eq(conv_out_h(&p), cases[i].want, "case %zu: P=%d want %d", i, conv_out_h(&p),
                     cases[i].want);
        cr_assert_eq(conv_out_w(&p), cases[i].want, "case %zu", i);
        cr_assert_eq(conv_params_validate(&p, NULL), CONV_OK, "case %zu valid", i);
    }
}

Test(params, same_padding_keeps_the_size_for_odd_filters)
{
    conv_params p = conv_shape(1, 1, 29, 31, 1, 5, 3, 0, 1, 1);
    conv_params_set_same_padding(&p);
    cr_assert(p.pad_h == 2 && p.pad_w == 1);
    cr_assert(conv_out_h(&p) == 29 && conv_out_w(&p) == 31);
    p.dil_h = 3;
    conv_params_set_same_padding(&p);
    cr_assert_eq(conv_out_h(&p), 29, "dilated same");
    p = conv_shape(1, 1, 29, 31, 1, 6, 6, 0, 1, 1); /* even: symmetric padding, one smaller */
    conv_params_set_same_padding(&p);
    cr_assert(conv_out_h(&p) == 28 && conv_out_w(&p) == 30);
}

/* Every invalid combination gives CONV_ERR_INVALID and one line with the key word. */
Test(params, validation_rejects_every_bad_case_with_a_named_parameter)
{
    struct {
        conv_params p;
        const char *expect;
    } cases[] = {
        {conv_shape(0, 1, 8, 8, 1, 3, 3, 0, 1, 1), "--n"},
        {conv_shape(-1, 1, 8, 8, 1, 3, 3, 0, 1, 1), "--n"},
        {conv_shape(1, 0, 8, 8, 1, 3, 3, 0, 1, 1), "--c"},
        {conv_shape(1, 1, 0, 8, 1, 3, 3, 0, 1, 1), "--h"},
        {conv_shape(1, 1, 8, -5, 1, 3, 3, 0, 1, 1), "--w"},
        {conv_shape(1, 1, 8, 8, 0, 3, 3, 0, 1, 1), "--k"},
        {conv_shape(1, 1, 8, 8, 1, 0, 3, 0, 1, 1), "--r"},
        {conv_shape(1, 1, 8, 8, 1, 3, -3, 0, 1, 1), "--s"},
        {conv_shape(1, 1, 8, 8, 1, 3, 3, -1, 1, 1), "--pad-h"},
        {conv_shape(1, 1, 8, 8, 1, 3, 3, 0, 0, 1), "--stride-h"},
        {conv_shape(1, 1, 8, 8, 1, 3, 3, 0, 1, 0), "--dil-h"},
        {conv_shape(1, 1, 4, 8, 1, 5, 3, 0, 1, 1), "larger than the padded image"},
        {conv_shape(1, 1, 8, 4, 1, 3, 5, 0, 1, 1), "larger than the padded image"},
        {conv_shape(1, 1, 8, 8, 1, 3, 3, 0, 1, 4), "larger than the padded image"},
        {conv_shape(100000, 100000, 100000, 100000, 1, 1, 1, 0, 1, 1), "input tensor too large"},
        {conv_shape(1, 100000, 4, 4, 100000, 100000, 1, 0, 1, 1), "larger than the padded image"},
        {conv_shape(1, 65536, 1, 65536, 1, 1, 65536, 0, 1, 1), NULL},
    };
    /* The last one: the filter K*C*R*S*4 bytes overflows while the input does not. */
    cases[16].p = conv_shape(1, 2000000000, 2, 1, 2000000000, 2, 1, 0, 1, 1);
    cases[16].expect = "filter tensor too large";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        conv_msg msg = {{0}};
        conv_status st = conv_params_validate(&cases[i].p, &msg);
        cr_assert_eq(st, CONV_ERR_INVALID, "case %zu accepted", i);
        cr_assert(strstr(msg.text, cases[i].expect) != NULL, "case %zu: '%s' lacks '%s'", i,
                  msg.text, cases[i].expect);
        cr_assert(strchr(msg.text, '\n') == NULL, "case %zu: more than one line", i);
    }
    conv_params bad_layout = conv_shape(1, 1, 8, 8, 1, 3, 3, 0, 1, 1);
    bad_layout.layout = (conv_layout)7;
    cr_assert_eq(conv_params_validate(&bad_layout, NULL), CONV_ERR_INVALID);
    cr_assert_eq(conv_params_validate(NULL, NULL), CONV_ERR_INVALID);
}

Test(params, padding_makes_a_large_filter_fit)
{
    conv_params p = conv_shape(1, 1, 4, 4, 1, 5, 5, 0, 1, 1);
    cr_assert_eq(conv_params_validate(&p, NULL), CONV_ERR_INVALID);
    p.pad_h = p.pad_w = 1;
    cr_assert_eq(conv_params_validate(&p, NULL), CONV_OK);
    cr_assert(conv_out_h(&p) == 2 && conv_out_w(&p) == 2);
}

Test(params, validation_catches_an_im2col_buffer_that_overflows)
{
    /* Each tensor fits, but (C*R*S)*(N*P*Q)*4 bytes does not. */
    conv_params p = conv_shape(1 << 28, 1 << 12, 64, 64, 1, 64, 64, 32, 1, 1);
    conv_msg msg = {{0}};
    cr_assert_eq(conv_params_validate(&p, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "too large") != NULL, "message: %s", msg.text);
}

Test(params, offsets_and_coordinates_are_inverse_in_both_layouts)
{
    conv_params p = conv_shape(2, 3, 7, 5, 4, 3, 2, 1, 1, 1);
    for (int layout = 0; layout < 2; ++layout) {
        p.layout = (conv_layout)layout;
        for (size_t i = 0; i < conv_output_elems(&p); ++i) {
            int n, k, oh, ow;
            conv_output_coords(&p, i, &n, &k, &oh, &ow);
            cr_assert_eq(conv_output_offset(&p, n, k, oh, ow), i, "layout %d offset %zu", layout,
                         i);
        }
    }
    p.layout = CONV_LAYOUT_NHWC;
    cr_assert_eq(conv_input_offset(&p, 0, 1, 0, 0), 1, "NHWC: channels are contiguous");
    cr_assert_eq(conv_filter_offset(&p, 1, 0, 0, 0), 1, "RSCK: output channels are contiguous");
}

Test(params, conv1d_validation_names_width_and_mask)
{
    conv_msg msg = {{0}};
    cr_assert_eq(conv1d_params_validate(1, 1, &msg), CONV_OK);
    cr_assert_eq(conv1d_params_validate(0, 3, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--width"));
    cr_assert_eq(conv1d_params_validate(10, 4, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "odd"));
    cr_assert_eq(conv1d_params_validate(10, -1, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--mask"));
}

Test(params, a_1d_problem_is_a_2d_problem_with_one_row)
{
    conv_params p = conv1d_as_conv_params(1000, 7);
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_params_validate(&p, &msg), msg);
    cr_assert(p.n == 1 && p.c == 1 && p.k == 1 && p.h == 1 && p.r == 1, "%s", conv_shape_name(&p));
    cr_assert(p.w == 1000 && p.s == 7 && p.pad_w == 3 && p.pad_h == 0, "%s", conv_shape_name(&p));
    cr_assert_eq(conv_out_h(&p), 1);
    cr_assert_eq(conv_out_w(&p), 1000, "\"same\" width");
    cr_assert(conv1d_is_1d_problem(&p));
    p.stride_w = 2;
    cr_assert_not(conv1d_is_1d_problem(&p), "stride 2 is not step 03's problem");
    p = conv1d_as_conv_params(1000, 7);
    p.pad_w = 2;
    cr_assert_not(conv1d_is_1d_problem(&p), "an off-centre mask is not step 03's problem");
    p = conv_params_default();
    cr_assert_not(conv1d_is_1d_problem(&p));
    p = conv1d_as_conv_params(10000000000LL, 3); /* wider than an int: clamped, not wrapped */
    cr_assert_eq(p.w, 2147483647);
}

Test(params, description_names_every_parameter_and_the_output_size)
{
    conv_params p = conv_shape(2, 3, 29, 31, 4, 5, 3, 1, 2, 1);
    p.pad_w = 2;
    p.dil_w = 3;
    p.layout = CONV_LAYOUT_NHWC;
    char text[256];
    conv_params_describe(&p, text, sizeof text);
    cr_assert_str_eq(text, "N=2 C=3 H=29 W=31 K=4 R=5 S=3 pad=1x2 stride=2x2 dil=1x3 NHWC -> "
                           "P=14 Q=15");
}

Test(params, the_pass_is_named_validated_and_described)
{
    cr_assert_str_eq(conv_pass_name(CONV_PASS_FORWARD), "forward");
    cr_assert_str_eq(conv_pass_name(CONV_PASS_DGRAD), "dgrad");
    cr_assert_str_eq(conv_pass_name(CONV_PASS_WGRAD), "wgrad");
    cr_assert_str_eq(conv_pass_name(CONV_PASS_COUNT), "?");
    conv_params p = conv_shape(1, 2, 5, 5, 3, 3, 3, 1, 1, 1);
    cr_assert_eq(p.pass, CONV_PASS_FORWARD, "zero is the forward pass");
    char text[256];
    p.pass = CONV_PASS_WGRAD;
    conv_params_describe(&p, text, sizeof text);
    cr_assert(strstr(text, "-> P=5 Q=5, wgrad") != NULL, "%s", text);
    conv_msg msg = {{0}};
    cr_assert_eq(conv_params_validate(&p, &msg), CONV_OK);
    p.pass = (conv_pass)7;
    cr_assert_eq(conv_params_validate(&p, &msg), CONV_ERR_INVALID);
    cr_assert(strstr(msg.text, "--pass") != NULL, "%s", msg.text);
}

Test(params, im2col_buffer_has_one_column_per_output_pixel)
{
    conv_params p = conv_shape(2, 3, 7, 5, 4, 3, 2, 1, 1, 1);
    size_t npq = 2 * (size_t)conv_out_h(&p) * conv_out_w(&p);
    cr_assert_eq(conv_im2col_elems(&p), 3 * 3 * 2 * npq);
    cr_assert_eq(conv_input_elems(&p), 2 * 3 * 7 * 5);
    cr_assert_eq(conv_filter_elems(&p), 4 * 3 * 3 * 2);
    cr_assert_eq(conv_output_elems(&p), 4 * npq);
}
