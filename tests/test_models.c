/* common/conv_models: the catalogue of whole networks. ResNet-50's
 * convolutions are derived from its description (stages, blocks, widths);
 * these tests count them, add up their work, and follow the image through
 * the forward pass, against what torchvision's model is known to be. */
#include <stdio.h>
#include <string.h>

#include "conv_models.h"
#include "conv_test_support.h"

#define MAX CONV_MODEL_MAX_CONVS

static int layers(const char *model, int n, conv_layout layout, conv_model_layer *out)
{
    int count = 0;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_model_layers(model, n, layout, out, MAX, &count, &msg), msg);
    return count;
}

static int convolutions(const char *model, int n, conv_model_layer *out)
{
    int count = 0;
    conv_msg msg = {{0}};
    CONV_ASSERT_OK(conv_model_convolutions(model, n, CONV_LAYOUT_NCHW, out, MAX, &count, &msg),
                   msg);
    return count;
}

static const conv_model_layer *find(const conv_model_layer *l, int n, const char *name)
{
    for (int i = 0; i < n; ++i)
        if (strcmp(l[i].name, name) == 0)
            return &l[i];
    cr_assert_fail("no layer named %s", name);
    return NULL;
}

Test(cpu_models, resnet50_has_53_convolutions_in_23_distinct_shapes)
{
    static conv_model_layer all[MAX], distinct[MAX];
    int n_all = convolutions("resnet50", 1, all);
    int n_distinct = layers("resnet50", 1, CONV_LAYOUT_NCHW, distinct);
    cr_assert_eq(n_all, 53, "1 stem + 16 blocks x 3 + 4 downsample branches");
    cr_assert_eq(n_distinct, 23);
    int total = 0;
    for (int i = 0; i < n_distinct; ++i)
        total += distinct[i].count;
    cr_assert_eq(total, 53, "the counts add up to every convolution");
}

Test(cpu_models, each_distinct_shape_counts_its_occurrences_under_its_first_name)
{
    static conv_model_layer all[MAX], distinct[MAX];
    int n_all = convolutions("resnet50", 1, all);
    int n_distinct = layers("resnet50", 1, CONV_LAYOUT_NCHW, distinct);
    for (int d = 0; d < n_distinct; ++d) {
        int seen = 0, first = -1;
        for (int i = 0; i < n_all; ++i)
            if (memcmp(&all[i].params, &distinct[d].params, sizeof all[i].params) == 0) {
                seen++;
                first = first < 0 ? i : first;
            }
        cr_assert_eq(seen, distinct[d].count, "%s", distinct[d].name);
        cr_assert_str_eq(distinct[d].name, all[first].name);
        for (int e = 0; e < d; ++e)
            cr_assert(memcmp(&distinct[e].params, &distinct[d].params, sizeof distinct[d].params),
                      "%s and %s have the same shape", distinct[e].name, distinct[d].name);
    }
    cr_assert_str_eq(distinct[0].name, "conv1");
    cr_assert_str_eq(distinct[1].name, "layer1.0.conv1");
    cr_assert_str_eq(distinct[2].name, "layer1.0.conv2");
    /* layer1's downsample (64 -> 256, 1x1, stride 1 at 56x56) is conv3's shape */
    cr_assert_eq(find(distinct, n_distinct, "layer1.0.conv3")->count, 4);
    cr_assert_eq(find(distinct, n_distinct, "layer2.0.downsample.0")->count, 1);
    cr_assert_eq(find(distinct, n_distinct, "layer3.1.conv2")->count, 5);
    for (int d = 0; d < n_distinct; ++d)
        cr_assert(strcmp(distinct[d].name, "layer1.0.downsample.0") != 0);
}

Test(cpu_models, multiply_adds_of_one_image_are_resnet50s_well_known_4_09_billion)
{
    static conv_model_layer distinct[MAX];
    int n = layers("resnet50", 1, CONV_LAYOUT_NCHW, distinct);
    double macs = 0.0;
    for (int i = 0; i < n; ++i)
        macs += distinct[i].count * conv_flops(&distinct[i].params) / 2.0;
    cr_assert(macs > 4.09e9 * 0.99 && macs < 4.09e9 * 1.01, "%.4g multiply-adds", macs);
}

/* The stride-2 of a stage sits on the 3x3 of its first block (v1.5), and its
 * downsample branch is a 1x1 of stride 2. */
Test(cpu_models, stride_two_sits_on_the_3x3_of_the_first_block_of_layers_2_to_4)
{
    static conv_model_layer all[MAX];
    int n = convolutions("resnet50", 1, all);
    const conv_model_layer *stem = find(all, n, "conv1");
    cr_assert(stem->params.c == 3 && stem->params.k == 64 && stem->params.r == 7 &&
              stem->params.stride_h == 2 && stem->params.pad_h == 3 && stem->params.h == 224);
    for (int stage = 2; stage <= 4; ++stage) {
        char name[CONV_MODEL_NAME_LEN];
        snprintf(name, sizeof name, "layer%d.0.conv1", stage);
        cr_assert_eq(find(all, n, name)->params.stride_h, 1, "%s", name);
        snprintf(name, sizeof name, "layer%d.0.conv2", stage);
        const conv_model_layer *c2 = find(all, n, name);
        cr_assert(c2->params.stride_h == 2 && c2->params.stride_w == 2 && c2->params.r == 3 &&
                      c2->params.pad_h == 1,
                  "%s", name);
        snprintf(name, sizeof name, "layer%d.0.downsample.0", stage);
        const conv_model_layer *ds = find(all, n, name);
        cr_assert(ds->params.r == 1 && ds->params.s == 1 && ds->params.stride_h == 2 &&
                      ds->params.pad_h == 0,
                  "%s", name);
    }
    for (int i = 0; i < n; ++i)
        if (strstr(all[i].name, ".conv2") == NULL && strstr(all[i].name, "downsample") == NULL &&
            strcmp(all[i].name, "conv1") != 0)
            cr_assert(all[i].params.stride_h == 1 && all[i].params.r == 1, "%s", all[i].name);
}

/* What a convolution hands on: its output size and channels. */
typedef struct {
    int size, channels;
} feature_map;

static feature_map output_of(const conv_model_layer *l)
{
    return (feature_map){conv_out_h(&l->params), l->params.k};
}

static void assert_consumes(const conv_model_layer *l, feature_map in)
{
    cr_assert(l->params.h == in.size && l->params.w == in.size && l->params.c == in.channels,
              "%s reads %dx%d x %d channels, the previous layer gives %dx%d x %d", l->name,
              l->params.h, l->params.w, l->params.c, in.size, in.size, in.channels);
}

Test(cpu_models, spatial_sizes_chain_from_224_through_112_56_28_14_to_7)
{
    static conv_model_layer all[MAX];
    int n = convolutions("resnet50", 1, all);
    cr_assert_str_eq(all[0].name, "conv1");
    feature_map stem = output_of(&all[0]);
    cr_assert_eq(stem.size, 112);
    /* the 3x3 max pool of stride 2 (padding 1) between conv1 and layer1 */
    feature_map block_in = {(stem.size + 2 - 3) / 2 + 1, stem.channels};
    feature_map prev = block_in;
    int stage_sizes[5] = {0}, stage_channels[5] = {0};
    for (int i = 1; i < n; ++i) {
        int stage = 0, block = 0;
        char conv[24] = "";
        cr_assert_eq(sscanf(all[i].name, "layer%d.%d.%23s", &stage, &block, conv), 3, "%s",
                     all[i].name);
        cr_assert(stage >= 1 && stage <= 4, "%s", all[i].name);
        if (strcmp(conv, "conv1") == 0) {
            block_in = prev; /* the previous block's output */
            assert_consumes(&all[i], block_in);
        } else if (strcmp(conv, "downsample.0") == 0) {
            assert_consumes(&all[i], block_in); /* the branch reads the block's input */
            feature_map out = output_of(&all[i]);
            cr_assert(out.size == prev.size && out.channels == prev.channels,
                      "%s must match conv3's output to be added to it", all[i].name);
            continue; /* the main path goes on from conv3 */
        } else {
            cr_assert(strcmp(conv, "conv2") == 0 || strcmp(conv, "conv3") == 0, "%s", conv);
            assert_consumes(&all[i], prev);
        }
        prev = output_of(&all[i]);
        stage_sizes[stage] = prev.size;
        stage_channels[stage] = prev.channels;
    }
    const int sizes[5] = {112, 56, 28, 14, 7}, channels[5] = {64, 256, 512, 1024, 2048};
    for (int s = 1; s <= 4; ++s) {
        cr_assert_eq(stage_sizes[s], sizes[s], "layer%d ends at %d", s, stage_sizes[s]);
        cr_assert_eq(stage_channels[s], channels[s], "layer%d", s);
    }
}

Test(cpu_models, every_layer_is_valid_and_takes_the_batch_and_layout_asked_for)
{
    static conv_model_layer l[MAX];
    conv_msg msg = {{0}};
    const int batches[] = {1, 7, 32, 256};
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; ++b)
        for (int layout = CONV_LAYOUT_NCHW; layout <= CONV_LAYOUT_NHWC; ++layout) {
            int n = layers("resnet50", batches[b], (conv_layout)layout, l);
            for (int i = 0; i < n; ++i) {
                CONV_ASSERT_OK(conv_params_validate(&l[i].params, &msg), msg);
                cr_assert_eq(l[i].params.n, batches[b], "%s", l[i].name);
                cr_assert_eq((int)l[i].params.layout, layout, "%s", l[i].name);
                cr_assert(l[i].params.dil_h == 1 && l[i].params.dil_w == 1 &&
                          l[i].params.h == l[i].params.w && l[i].params.r == l[i].params.s);
            }
        }
}

/* conv_model_layers (distinct: 1) or conv_model_convolutions of model at
 * batch n with room for `room` layers: refused in one line that says `want`,
 * with no layer. */
static void assert_refused(int distinct, const char *model, int n, int room, const char *want)
{
    static conv_model_layer l[MAX];
    int count = -1;
    conv_msg msg = {{0}};
    conv_status st =
        distinct ? conv_model_layers(model, n, CONV_LAYOUT_NCHW, l, room, &count, &msg)
                 : conv_model_convolutions(model, n, CONV_LAYOUT_NCHW, l, room, &count, &msg);
    cr_assert_eq(st, CONV_ERR_INVALID, "%s, n = %d: not refused", model, n);
    cr_assert_eq(count, 0);
    CONV_ASSERT_ONE_LINE(msg.text, want);
}

Test(cpu_models, unknown_model_is_refused_in_one_line_listing_the_known_ones)
{
    assert_refused(1, "resnet51", 32, MAX, "'resnet51'");
    assert_refused(1, "resnet51", 32, MAX, "resnet50");
    assert_refused(0, "", 1, MAX, "");
    cr_assert_null(conv_model_about("resnet51"));
}

Test(cpu_models, bad_batch_and_too_little_room_are_refused_naming_the_limit)
{
    assert_refused(1, "resnet50", 0, MAX, "n = 0");
    assert_refused(1, "resnet50", 32, 16, "23 distinct convolutions, room for 16");
    assert_refused(0, "resnet50", 1, 50, "53 convolutions, room for 50");
}

Test(cpu_models, names_list_the_catalogue_in_order)
{
    cr_assert_str_eq(conv_model_name(0), "resnet50");
    int n = 0;
    while (conv_model_name(n) != NULL)
        ++n;
    cr_assert_null(conv_model_name(-1));
    char joined[256] = "";
    for (int i = 0; i < n; ++i) {
        size_t used = strlen(joined);
        snprintf(joined + used, sizeof joined - used, "%s%s", i ? "|" : "", conv_model_name(i));
        cr_assert_not_null(conv_model_about(conv_model_name(i)));
    }
    cr_assert_str_eq(conv_model_names(), joined);
}
