/* conv_auto_rule: the rule of conv_auto_choose() on problems read from
 * standard input, for a GPU given by name, without a GPU. Each input line is
 * a class and a shape as conv_bench describes it:
 *
 *   FP32 N=32 C=64 H=56 W=56 K=64 R=3 S=3 pad=1x1 stride=1x1 dil=1x1 NHWC
 *
 * (the class FP32, TF32 or FP16; anything after the layout is ignored); each output line is the
 * chosen version's key, a tab and the reason. scripts/auto_rule_evidence.py runs it on the measured
 * problems. Exit status 2 with one line for a bad line or flag. */
#include <stdio.h>
#include <string.h>

#include "conv_auto.h"

/* Facts of GPUs the course runs on (a free memory that holds any problem of
 * the course). */
static int preset(const char *name, conv_auto_device *d)
{
    const size_t gib = (size_t)1 << 30;
    if (strcmp(name, "h200") == 0)
        *d = (conv_auto_device){9, 0, 132, 227 * 1024, 228 * 1024, 139 * gib, 1, 1, 1};
    else if (strcmp(name, "a100") == 0)
        *d = (conv_auto_device){8, 0, 108, 163 * 1024, 164 * 1024, 39 * gib, 1, 0, 0};
    else if (strcmp(name, "t4") == 0)
        *d = (conv_auto_device){7, 5, 40, 64 * 1024, 64 * 1024, 14 * gib, 0, 0, 0};
    else
        return 0;
    return 1;
}

static int parse_line(const char *line, conv_params *p, conv_class *cls)
{
    char cname[8], layout[8];
    memset(p, 0, sizeof *p);
    if (sscanf(line, "%7s N=%d C=%d H=%d W=%d K=%d R=%d S=%d pad=%dx%d stride=%dx%d dil=%dx%d %7s",
               cname, &p->n, &p->c, &p->h, &p->w, &p->k, &p->r, &p->s, &p->pad_h, &p->pad_w,
               &p->stride_h, &p->stride_w, &p->dil_h, &p->dil_w, layout) != 15)
        return 0;
    if (strcmp(cname, "FP32") == 0)
        *cls = CONV_CLASS_FP32;
    else if (strcmp(cname, "TF32") == 0)
        *cls = CONV_CLASS_TF32;
    else if (strcmp(cname, "FP16") == 0)
        *cls = CONV_CLASS_FP16;
    else
        return 0;
    if (strcmp(layout, "NCHW") == 0)
        p->layout = CONV_LAYOUT_NCHW;
    else if (strcmp(layout, "NHWC") == 0)
        p->layout = CONV_LAYOUT_NHWC;
    else
        return 0;
    return 1;
}

int main(int argc, char **argv)
{
    conv_auto_device d;
    const char *gpu = "h200";
    if (argc == 3 && strcmp(argv[1], "--device") == 0)
        gpu = argv[2];
    else if (argc != 1) {
        fprintf(stderr, "usage: conv_auto_rule [--device h200|a100|t4] < problems\n");
        return 2;
    }
    if (!preset(gpu, &d)) {
        fprintf(stderr, "invalid value for --device: '%s' (expected h200, a100 or t4)\n", gpu);
        return 2;
    }
    char line[512];
    for (int no = 1; fgets(line, sizeof line, stdin) != NULL; ++no) {
        conv_params p;
        conv_class cls;
        conv_auto_choice c;
        conv_msg msg = {{0}};
        if (!parse_line(line, &p, &cls)) {
            fprintf(stderr,
                    "line %d: expected 'FP32|TF32|FP16 N=.. C=.. H=.. W=.. K=.. R=.. S=.. "
                    "pad=AxB stride=AxB dil=AxB NCHW|NHWC'\n",
                    no);
            return 2;
        }
        if (conv_auto_choose(&p, cls, &d, &c, &msg) != CONV_OK) {
            fprintf(stderr, "line %d: %s\n", no, msg.text);
            return 2;
        }
        printf("%s\t%s\n", c.key, c.reason);
    }
    return 0;
}
