#include "conv_models.h"

#include <stdio.h>
#include <string.h>

/* A ResNet of bottleneck blocks as torchvision builds it (v1.5: the stride of
 * a stage's first block sits on its 3x3 convolution, where the original paper
 * put it on the first 1x1; the same work, but the 3x3 sees the full image).
 * A block: 1x1 (in -> width), 3x3 (width -> width, the stage's stride on the
 * first block), 1x1 (width -> expansion x width); the first block of a stage
 * whose stride or channels change also has a downsample branch, a 1x1 of that
 * stride from its input to its output channels. */
typedef struct {
    int image, in_channels;                      /* 224x224 RGB */
    int stem_channels, stem_filter, stem_stride; /* conv1; padding (filter - 1) / 2 */
    int pool_filter, pool_stride;                /* the max pool after conv1, same-padded */
    int expansion;
    int stages;
    int blocks[4], widths[4], strides[4];
} bottleneck_resnet;

/* Collects the convolutions of the forward pass as the walk meets them. */
typedef struct {
    conv_model_layer *out;
    int count, max;
    int n;
    conv_layout layout;
} conv_walk;

/* One entry of the catalogue: a model family's description and the walk
 * that turns it into convolutions (another family brings its own walk). */
typedef struct {
    const char *name, *about;
    const bottleneck_resnet *arch;
    void (*walk)(const bottleneck_resnet *arch, conv_walk *w);
} model_entry;

/* Appends one square convolution (stride on both axes, padding (filter-1)/2
 * so that a stride-1 3x3 keeps the size) and returns its output size. */
static int emit(conv_walk *w, const char *name, int c, int size, int k, int filter, int stride)
{
    conv_params p = conv_params_default();
    p.n = w->n;
    p.c = c, p.h = p.w = size, p.k = k, p.r = p.s = filter;
    p.pad_h = p.pad_w = (filter - 1) / 2;
    p.stride_h = p.stride_w = stride;
    p.layout = w->layout;
    if (w->count < w->max) {
        conv_model_layer *l = &w->out[w->count];
        snprintf(l->name, sizeof l->name, "%s", name);
        l->count = 1;
        l->params = p;
    }
    ++w->count; /* counted beyond max too, so that the caller can say how many */
    return conv_out_h(&p);
}

static void walk_bottleneck_resnet(const bottleneck_resnet *a, conv_walk *w)
{
    int size = emit(w, "conv1", a->in_channels, a->image, a->stem_channels, a->stem_filter,
                    a->stem_stride);
    int pad = (a->pool_filter - 1) / 2;
    size = (size + 2 * pad - a->pool_filter) / a->pool_stride + 1; /* 112 -> 56 */
    int channels = a->stem_channels;
    for (int st = 0; st < a->stages; ++st)
        for (int b = 0; b < a->blocks[st]; ++b) {
            int width = a->widths[st], out = a->expansion * width;
            int stride = b == 0 ? a->strides[st] : 1;
            char name[CONV_MODEL_NAME_LEN];
            int len = snprintf(name, sizeof name, "layer%d.%d.", st + 1, b);
            snprintf(name + len, sizeof name - (size_t)len, "conv1");
            int mid = emit(w, name, channels, size, width, 1, 1);
            snprintf(name + len, sizeof name - (size_t)len, "conv2");
            mid = emit(w, name, width, mid, width, 3, stride);
            snprintf(name + len, sizeof name - (size_t)len, "conv3");
            int next = emit(w, name, width, mid, out, 1, 1);
            if (b == 0 && (stride != 1 || channels != out)) {
                snprintf(name + len, sizeof name - (size_t)len, "downsample.0");
                emit(w, name, channels, size, out, 1, stride);
            }
            channels = out;
            size = next;
        }
}

static const bottleneck_resnet resnet50 = {
    .image = 224,
    .in_channels = 3,
    .stem_channels = 64,
    .stem_filter = 7,
    .stem_stride = 2,
    .pool_filter = 3,
    .pool_stride = 2,
    .expansion = 4,
    .stages = 4,
    .blocks = {3, 4, 6, 3},
    .widths = {64, 128, 256, 512},
    .strides = {1, 2, 2, 2},
};

static const model_entry catalogue[] = {
    {"resnet50", "ResNet-50 as torchvision builds it (v1.5), 224x224 images", &resnet50,
     walk_bottleneck_resnet},
};
#define N_MODELS ((int)(sizeof catalogue / sizeof catalogue[0]))

const char *conv_model_name(int i)
{
    return i >= 0 && i < N_MODELS ? catalogue[i].name : NULL;
}

const char *conv_model_names(void)
{
    static char names[256];
    if (names[0] == '\0')
        for (int i = 0; i < N_MODELS; ++i) {
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, "%s%s", i ? "|" : "", catalogue[i].name);
        }
    return names;
}

static const model_entry *find(const char *model)
{
    for (int i = 0; model != NULL && i < N_MODELS; ++i)
        if (strcmp(model, catalogue[i].name) == 0)
            return &catalogue[i];
    return NULL;
}

const char *conv_model_about(const char *model)
{
    const model_entry *m = find(model);
    return m != NULL ? m->about : NULL;
}

/* Walks the model into out (every convolution, in order) and checks each. */
static conv_status walk_model(const char *model, int n, conv_layout layout, conv_model_layer *out,
                              int max, int *count, conv_msg *msg)
{
    *count = 0;
    const model_entry *m = find(model);
    if (m == NULL) {
        char known[256];
        snprintf(known, sizeof known, "%s", conv_model_names());
        for (char *c = known; *c; ++c)
            *c = *c == '|' ? ' ' : *c;
        return conv_fail(msg, CONV_ERR_INVALID, "unknown model '%s' (known models: %s)",
                         model != NULL ? model : "(null)", known);
    }
    if (n < 1)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid batch for model %s: n = %d (must be >= 1)",
                         m->name, n);
    conv_walk w = {out, 0, max, n, layout};
    m->walk(m->arch, &w);
    if (w.count > max)
        return conv_fail(msg, CONV_ERR_INVALID, "model %s has %d convolutions, room for %d",
                         m->name, w.count, max);
    for (int i = 0; i < w.count; ++i) {
        conv_msg why = {{0}};
        if (conv_params_validate(&out[i].params, &why) != CONV_OK)
            return conv_fail(msg, CONV_ERR_INVALID, "model %s, %s with n = %d: %s", m->name,
                             out[i].name, n, why.text);
    }
    *count = w.count;
    return CONV_OK;
}

conv_status conv_model_convolutions(const char *model, int n, conv_layout layout,
                                    conv_model_layer *out, int max, int *count, conv_msg *msg)
{
    return walk_model(model, n, layout, out, max, count, msg);
}

/* The same problem: every field but the name and the count. */
static int same_shape(const conv_params *a, const conv_params *b)
{
    return a->n == b->n && a->c == b->c && a->h == b->h && a->w == b->w && a->k == b->k &&
           a->r == b->r && a->s == b->s && a->pad_h == b->pad_h && a->pad_w == b->pad_w &&
           a->stride_h == b->stride_h && a->stride_w == b->stride_w && a->dil_h == b->dil_h &&
           a->dil_w == b->dil_w && a->layout == b->layout;
}

conv_status conv_model_layers(const char *model, int n, conv_layout layout, conv_model_layer *out,
                              int max, int *count, conv_msg *msg)
{
    conv_model_layer all[CONV_MODEL_MAX_CONVS];
    int n_all = 0;
    *count = 0;
    conv_status st = walk_model(model, n, layout, all, CONV_MODEL_MAX_CONVS, &n_all, msg);
    if (st != CONV_OK)
        return st;
    int distinct = 0;
    for (int i = 0; i < n_all; ++i) {
        int j = 0;
        while (j < distinct && !same_shape(&all[j].params, &all[i].params))
            ++j;
        if (j < distinct) {
            ++all[j].count;
            continue;
        }
        all[distinct++] = all[i]; /* j == distinct <= i: a slot already read */
    }
    if (distinct > max)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "model %s has %d distinct convolutions, room for %d", model, distinct,
                         max);
    memcpy(out, all, (size_t)distinct * sizeof *out);
    *count = distinct;
    return CONV_OK;
}
