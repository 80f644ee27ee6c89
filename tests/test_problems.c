/* common/conv_problems: the named problems of the course, the one catalogue
 * every program's --problem asks by name. Their shapes, the lookup of a
 * name, of "all" and of an unknown name, and the names --help shows. */
#include <stdio.h>
#include <string.h>

#include "conv_problems.h"
#include "conv_test_support.h"

static const conv_problem *one(const char *name)
{
    const conv_problem *p = NULL;
    int count = 0;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_problem_select(name, &p, &count, &msg), msg);
    cr_assert_eq(count, 1, "'%s' selects one problem", name);
    cr_assert_str_eq(p->name, name);
    cr_assert_eq(conv_problem_find(name), p, "find and select agree on '%s'", name);
    return p;
}

Test(cpu_problems, the_catalogue_holds_the_course_problems_with_their_shapes)
{
    const conv_params *p = &one("lecture")->params;
    cr_assert(p->n == 1 && p->c == 6 && p->h == 768 && p->w == 512 && p->k == 6 && p->r == 6 &&
              p->s == 6 && p->pad_h == 0);
    p = &one("hpc101")->params;
    cr_assert_eq(conv_out_h(p), 100, "same padding keeps 100x100");
    cr_assert_eq(p->n, 128);
    p = &one("cutlass")->params;
    cr_assert(p->n == 8 && p->h == 224 && conv_out_w(p) == 224);
    p = &one("ece408-l1")->params;
    cr_assert(p->n == 10000 && p->k == 4 && conv_out_h(p) == 80);
    p = &one("ece408-l2")->params;
    cr_assert(p->c == 4 && p->k == 16 && conv_out_h(p) == 34);
    p = &one("hpc101-image")->params;
    cr_assert(p->h == 2000 && p->r == 13 && conv_out_h(p) == 2000);
    p = &one("conv1d")->params;
    conv_params as_1d = conv1d_as_conv_params(1 << 26, 7);
    cr_assert(memcmp(p, &as_1d, sizeof as_1d) == 0, "the 1D problem as step 03 takes it");
    cr_assert(conv1d_is_1d_problem(p));
}

Test(cpu_problems, the_lecture_problem_is_the_default_of_every_program)
{
    conv_params d = conv_params_default();
    cr_assert(memcmp(&one("lecture")->params, &d, sizeof d) == 0,
              "conv_params_default() and the catalogue's lecture differ");
}

Test(cpu_problems, the_nhwc_problems_are_their_twins_in_the_other_layout)
{
    const char *twins[][2] = {{"hpc101-nhwc", "hpc101"}, {"cutlass-nhwc", "cutlass"}};
    for (int i = 0; i < 2; ++i) {
        const conv_problem *nhwc = one(twins[i][0]), *nchw = one(twins[i][1]);
        cr_assert(nhwc->params.layout == CONV_LAYOUT_NHWC && nhwc->fixed_layout, "%s", twins[i][0]);
        cr_assert(nchw->params.layout == CONV_LAYOUT_NCHW && !nchw->fixed_layout, "%s",
                  twins[i][1]);
        conv_params same_shape = nhwc->params;
        same_shape.layout = CONV_LAYOUT_NCHW;
        cr_assert(memcmp(&same_shape, &nchw->params, sizeof same_shape) == 0, "%s is %s in NHWC",
                  twins[i][0], twins[i][1]);
    }
}

Test(cpu_problems, every_problem_is_valid_and_all_selects_them_in_order)
{
    const conv_problem *all = NULL, *table = NULL;
    int count = 0, n = 0;
    conv_msg msg = {{0}};
    table = conv_problems(&n);
    CONV_ASSERT_OK(conv_problem_select("all", &all, &count, &msg), msg);
    cr_assert_eq(all, table);
    cr_assert_eq(count, n);
    cr_assert_eq(n, 9);
    for (int i = 0; i < n; ++i) {
        CONV_ASSERT_OK(conv_params_validate(&all[i].params, &msg), msg);
        cr_assert_eq(conv_problem_find(all[i].name), &all[i], "%s", all[i].name);
        for (int j = 0; j < i; ++j)
            cr_assert_str_neq(all[i].name, all[j].name, "a name given twice");
    }
    cr_assert_null(conv_problem_find("all"), "all is no problem of its own");
}

Test(cpu_problems, an_unknown_name_is_refused_in_one_line_listing_the_known_ones)
{
    const char *bad[] = {"lectures", "", "LECTURE", "hpc101 ", "al"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const conv_problem *p = NULL;
        int count = 0;
        conv_msg msg = {{0}};
        cr_assert_eq(conv_problem_select(bad[i], &p, &count, &msg), CONV_ERR_INVALID,
                     "'%s' accepted", bad[i]);
        char want[64];
        snprintf(want, sizeof want, "invalid value for --problem: '%s' (expected one of ", bad[i]);
        CONV_ASSERT_ONE_LINE(msg.text, want);
        cr_assert(strstr(msg.text, "lecture,hpc101,cutlass,ece408-l1,ece408-l2,hpc101-image,"
                                   "conv1d,hpc101-nhwc,cutlass-nhwc,all)") != NULL,
                  "every known name, then all: %s", msg.text);
        cr_assert_null(conv_problem_find(bad[i]));
    }
}

Test(cpu_problems, names_list_the_catalogue_in_order_then_all)
{
    int n = 0;
    const conv_problem *table = conv_problems(&n);
    char want[256] = "";
    for (int i = 0; i < n; ++i) {
        strcat(want, table[i].name);
        strcat(want, "|");
    }
    strcat(want, "all");
    cr_assert_str_eq(conv_problem_names(), want);
}
