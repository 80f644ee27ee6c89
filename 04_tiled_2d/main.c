/* 04_tiled_2d: the tiled 2D convolutions of step 04 on one problem (default:
 * the lecture's N=1, C=6, 768x512, K=6, 6x6 valid), measured in the same run
 * as cuDNN and step 02's naive 2D kernel. Each version is verified
 * (NaN-poisoned output, every output against the double reference or a
 * sample on large problems, canary) and timed (median of --repeat runs).
 *
 * --strategy 1|2|3|mc|all picks the kernels: 1, 2, 3 are the single-channel
 * strategies (every tile configuration of the strategy; they need C = K = 1,
 * else their rows say why they were skipped), mc the multi-channel kernel
 * (every configuration; weights from constant memory when they fit, and also
 * from global memory for comparison). "all" (the default) runs 1, 2, 3 and mc
 * when C = K = 1, and mc alone otherwise.
 *
 * Exit status: 0 all verified, 1 wrong result or runtime error, 2 bad
 * command line. */
#include <stdio.h>
#include <string.h>

#include "conv_cli.h"
#include "conv_gpu_run.h"
#include "conv_naive.h"
#include "conv_tiled_2d.h"

#define PROGRAM "04_tiled_2d"

enum { REF_CUDNN, REF_STEP02, N_REFS };

int main(int argc, char **argv)
{
    conv_cli_options opt = conv_cli_defaults();
    conv_cli_extra extras[] = {
        {"strategy", "1|2|3|mc|all",
         "1, 2, 3: the single-channel strategies (C = K = 1); mc: the multi-channel kernel; "
         "all: every kernel the problem allows",
         "all"},
    };
    conv_msg msg = {{0}};
    conv_status st = conv_cli_parse(argc, argv, PROGRAM,
                                    "Step 04: tiled 2D convolution with halos (strategies 1, 2, 3 "
                                    "of ECE408 lecture 8, mask in constant memory) and its "
                                    "multi-channel extension, against step 02 and cuDNN.",
                                    extras, 1, &opt, stdout, &msg);
    if (st == CONV_HELP_SHOWN)
        return 0;
    const char *strategy = extras[0].value;
    int run_s[4] = {0, 0, 0, 0}, run_mc = 0; /* run_s[1..3] */
    if (st == CONV_OK) {
        if (strcmp(strategy, "1") == 0 || strcmp(strategy, "2") == 0 || strcmp(strategy, "3") == 0)
            run_s[strategy[0] - '0'] = 1;
        else if (strcmp(strategy, "mc") == 0)
            run_mc = 1;
        else if (strcmp(strategy, "all") == 0)
            run_s[1] = run_s[2] = run_s[3] = run_mc = 1;
        else
            st = conv_fail(&msg, CONV_ERR_INVALID,
                           "invalid value for --strategy: '%s' (expected 1, 2, 3, mc or all)",
                           strategy);
    }
    if (st != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 2;
    }
    const conv_params *p = &opt.params;
    if (strcmp(strategy, "all") == 0 && (p->c != 1 || p->k != 1)) {
        run_s[1] = run_s[2] = run_s[3] = 0;
        printf("C=%d K=%d: the single-channel strategies 1, 2, 3 need C = K = 1; running the "
               "multi-channel kernel only\n",
               p->c, p->k);
    }

    /* The references first (their times fill the "vs" columns), then this
     * step's kernels, in the order of the header's table. */
    static conv_tiled_rows l; /* static: 32 rows with their results are large for the stack */
    l.rows[l.n++] = (conv_row){.name = "cuDNN", .kind = CONV_ROW_CUDNN, .ref = REF_CUDNN};
    l.rows[l.n++] = (conv_row){.name = "step 02 naive 2D",
                               .kind = CONV_ROW_DEVICE,
                               .conv = conv2d_naive_2d_run,
                               .ref = REF_STEP02};
    for (int s = 1; s <= 3; ++s)
        if (run_s[s])
            conv2d_tiled_add_rows(&l, (conv_tiled_strategy)s, p);
    if (run_mc)
        conv2d_tiled_add_rows(&l, CONV_TILED_MC, p);

    const char *const ref_names[N_REFS] = {"cuDNN", "step 02"};
    int status = conv_step_program_run(
        PROGRAM, "tiled 2D convolution with halos (strategies 1, 2, 3; multi-channel)", argc, argv,
        &opt, 0, l.rows, l.n, ref_names, N_REFS);

    /* The fastest verified kernel of this step, against the references. */
    int best = -1;
    for (int i = 2; i < l.n; ++i)
        if (l.rows[i].status == CONV_OK && l.rows[i].res.passed &&
            (best < 0 || l.rows[i].res.timing.median_ms < l.rows[best].res.timing.median_ms))
            best = i;
    if (best >= 0) {
        const double ms = l.rows[best].res.timing.median_ms;
        printf("fastest step 04 kernel: %s, %.4f ms", l.rows[best].label, ms);
        for (int i = 0; i < 2; ++i)
            if (l.rows[i].status == CONV_OK && l.rows[i].res.timing.median_ms > 0.0)
                printf(", %.2fx %s", l.rows[i].res.timing.median_ms / ms, ref_names[i]);
        printf("\n");
    }
    return status;
}
