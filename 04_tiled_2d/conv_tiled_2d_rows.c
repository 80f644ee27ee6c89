/* Step 04's kernels as rows of a result table (conv_tiled_2d.h). */
#include <stdio.h>

#include "conv_tiled_2d.h"

void conv2d_tiled_add_row(conv_tiled_rows *l, const char *name, conv_tiled_choice choice)
{
    if (l->n >= CONV_TILED_MAX_ROWS)
        return;
    l->choices[l->n] = choice;
    snprintf(l->names[l->n], sizeof l->names[l->n], "%s", name);
    l->rows[l->n] = (conv_row){.name = l->names[l->n],
                               .kind = CONV_ROW_DEVICE,
                               .conv = conv2d_tiled_conv,
                               .ctx = &l->choices[l->n],
                               .ref = -1};
    l->n++;
}

void conv2d_tiled_add_rows(conv_tiled_rows *l, conv_tiled_strategy strategy, const conv_params *p)
{
    for (int cfg = 0; cfg < conv2d_tiled_num_configs(strategy); ++cfg) {
        const char *cfg_name = conv2d_tiled_config_name(strategy, cfg);
        conv_tiled_choice choice = {strategy, cfg, CONV_TILED_WEIGHTS_AUTO};
        if (strategy != CONV_TILED_MC) {
            conv2d_tiled_add_row(l, cfg_name, choice);
            continue;
        }
        char name[64];
        if ((double)p->k * p->c * p->r * p->s <= CONV_TILED_CONST_FLOATS) {
            choice.weights = CONV_TILED_WEIGHTS_CONSTANT;
            snprintf(name, sizeof name, "%s, const w", cfg_name);
            conv2d_tiled_add_row(l, name, choice);
        }
        choice.weights = CONV_TILED_WEIGHTS_GLOBAL;
        snprintf(name, sizeof name, "%s, global w", cfg_name);
        conv2d_tiled_add_row(l, name, choice);
    }
}
