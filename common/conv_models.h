/* Whole networks as convolution problems: the catalogue of models that
 * conv_bench --model runs (plain C, no CUDA).
 *
 * A model is described once, by its architecture (for ResNet-50: the stem,
 * then four stages of bottleneck blocks with their block counts and widths),
 * and the convolutions are derived from that description by walking the
 * forward pass, the way torchvision builds the network. Two views of it:
 *   conv_model_convolutions  every convolution in the order the forward pass
 *                            runs it (53 for resnet50), named after its
 *                            module ("layer2.0.downsample.0");
 *   conv_model_layers        the distinct ones (same C, H, W, K, R, S, padding,
 *                            stride and dilation: one entry), each with how
 *                            many times it occurs and the name of its first
 *                            occurrence (23 for resnet50).
 * A benchmark times the distinct ones once and weighs each by its count. */
#ifndef CONV_MODELS_H
#define CONV_MODELS_H

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most convolutions a model of the catalogue may have (the forward pass). */
#define CONV_MODEL_MAX_CONVS 256
/* Room for a module name, e.g. "layer4.0.downsample.0". */
#define CONV_MODEL_NAME_LEN 32

typedef struct {
    char name[CONV_MODEL_NAME_LEN]; /* the module name (of its first occurrence) */
    int count;                      /* how many convolutions of the model have this shape */
    conv_params params;
} conv_model_layer;

/* The name of model i of the catalogue (i = 0, 1, ...); NULL past the last. */
const char *conv_model_name(int i);

/* Every model name, joined by '|' ("resnet50|..."): the choices of --model. */
const char *conv_model_names(void);

/* What model `model` is, in a few words (NULL for an unknown name). */
const char *conv_model_about(const char *model);

/* The distinct convolutions of `model` for a batch of n images in `layout`,
 * in the order of their first occurrence, into out[0 .. *count - 1]. Each
 * passes conv_params_validate. CONV_ERR_INVALID with one line: an unknown
 * model (the line lists the known ones), n < 1, a batch whose tensors
 * overflow, or more distinct convolutions than max. */
conv_status conv_model_layers(const char *model, int n, conv_layout layout, conv_model_layer *out,
                              int max, int *count, conv_msg *msg);

/* Every convolution of `model`, in the order the forward pass runs them, each
 * with count 1 and its own module name; otherwise as conv_model_layers. */
conv_status conv_model_convolutions(const char *model, int n, conv_layout layout,
                                    conv_model_layer *out, int max, int *count, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_MODELS_H */
