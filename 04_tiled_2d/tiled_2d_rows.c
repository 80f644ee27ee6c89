#include "tiled_2d_rows.h"

#include <stdio.h>
#include <string.h>

#include "conv_tiled_2d.h"

#define MAX_ROWS 16

conv_status conv2d_tiled_conv(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                              float *d_y, cudaStream_t stream, conv_msg *msg)
{
    return conv2d_tiled((const conv_tiled_choice *)ctx, p, d_x, d_w, d_y, stream, msg);
}

static conv_status check(void *ctx, const conv_params *p, conv_msg *msg)
{
    return conv2d_tiled_check((const conv_tiled_choice *)ctx, p, msg);
}

/* Storage the rows' names and contexts point to (one problem at a time). */
static conv_tiled_choice choices[MAX_ROWS];
static char names[MAX_ROWS][64];

static int add(conv_row *rows, int n, int max_rows, const char *key, conv_tiled_choice choice,
               const char *suffix)
{
    if (n >= max_rows || n >= MAX_ROWS)
        return n;
    choices[n] = choice;
    /* the key, then the configuration ("s1 32x32, 4 outputs/thread" without its strategy) */
    const char *config = conv2d_tiled_config_name(choice.strategy, choice.config);
    const char *space = strchr(config, ' ');
    snprintf(names[n], sizeof names[n], "%s %s%s", key, space != NULL ? space + 1 : config, suffix);
    rows[n] = conv_row_device(names[n], key, conv2d_tiled_conv, &choices[n]);
    rows[n].check = check;
    return n + 1;
}

int conv_tiled_2d_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    static const char *const keys[] = {NULL, "4a", "4b", "4c"};
    int n = 0;
    int single = (p->c == 1 && p->k == 1) ||
                 (select != NULL && strcmp(select, "all") != 0 && strcmp(select, "4d") != 0);
    for (int s = CONV_TILED_S1; single && s <= CONV_TILED_S3; ++s)
        for (int cfg = 0; cfg < conv2d_tiled_num_configs((conv_tiled_strategy)s); ++cfg)
            n = add(rows, n, max_rows, keys[s],
                    (conv_tiled_choice){(conv_tiled_strategy)s, cfg, CONV_TILED_WEIGHTS_AUTO}, "");
    int fits = conv2d_tiled_mc_weights_in_constant(p, CONV_TILED_WEIGHTS_AUTO);
    for (int cfg = 0; cfg < conv2d_tiled_num_configs(CONV_TILED_MC); ++cfg) {
        if (fits)
            n = add(rows, n, max_rows, "4d",
                    (conv_tiled_choice){CONV_TILED_MC, cfg, CONV_TILED_WEIGHTS_CONSTANT},
                    ", const w");
        n = add(rows, n, max_rows, "4d",
                (conv_tiled_choice){CONV_TILED_MC, cfg, CONV_TILED_WEIGHTS_GLOBAL}, ", global w");
    }
    return n;
}
