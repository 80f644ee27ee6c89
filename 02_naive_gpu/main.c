/* 02_naive_gpu: the two one-thread-per-output kernels on one problem
 * (default: the lecture's N=1, C=6, 768x512, K=6, 6x6), measured in the same
 * run as step 01 (serial and OpenMP) and cuDNN. Each version is verified
 * (NaN-poisoned output, every output against the double reference, canary)
 * and timed (median of --repeat runs). Exit status: 0 all verified, 1 wrong
 * result or runtime error, 2 bad command line. */
#include <stdio.h>
#include <string.h>

#include "conv_cli.h"
#include "conv_cpu.h"
#include "conv_gpu_run.h"
#include "conv_naive.h"

#define PROGRAM "02_naive_gpu"

enum { REF_CUDNN, REF_SERIAL, REF_OPENMP, N_REFS };

int main(int argc, char **argv)
{
    conv_cli_options opt = conv_cli_defaults();
    conv_cli_extra extras[] = {
        {"variant", "all|gridstride|2d", "which kernel(s) to run", "all"},
        {"host-repeat", "N", "timed runs of the CPU versions (0: skip them)", "3"},
    };
    conv_msg msg = {{0}};
    conv_status st = conv_cli_parse(argc, argv, PROGRAM,
                                    "Step 02: one thread per output element; a grid-stride loop "
                                    "over all outputs and a 16x16-block mapping over the output "
                                    "plane, against step 01 and cuDNN.",
                                    extras, 2, &opt, stdout, &msg);
    if (st == CONV_HELP_SHOWN)
        return 0;
    const char *variant = extras[0].value;
    long long host_repeat = 0;
    if (st == CONV_OK && strcmp(variant, "all") != 0 && strcmp(variant, "gridstride") != 0 &&
        strcmp(variant, "2d") != 0)
        st = conv_fail(&msg, CONV_ERR_INVALID,
                       "invalid value for --variant: '%s' (expected all, gridstride or 2d)",
                       variant);
    if (st == CONV_OK)
        st = conv_cli_parse_ll("host-repeat", extras[1].value, 0, 1000, &host_repeat, &msg);
    if (st != CONV_OK) {
        fprintf(stderr, PROGRAM ": %s\n", msg.text);
        return 2;
    }

    /* The references first (their times fill the "vs" columns), then this
     * step's kernels. */
    const char *no_host = host_repeat == 0 ? "skipped: --host-repeat 0" : NULL;
    conv_row rows[5];
    int n = 0;
    rows[n++] = (conv_row){.name = "step 01 serial (CPU)",
                           .kind = CONV_ROW_HOST,
                           .host = conv2d_cpu_serial,
                           .ref = REF_SERIAL,
                           .skip = no_host};
    char omp_name[48];
    snprintf(omp_name, sizeof omp_name, "step 01 OpenMP (%d threads)", conv2d_cpu_openmp_threads());
    rows[n++] = (conv_row){.name = omp_name,
                           .kind = CONV_ROW_HOST,
                           .host = conv2d_cpu_openmp,
                           .ref = REF_OPENMP,
                           .skip = no_host};
    rows[n++] = (conv_row){.name = "cuDNN", .kind = CONV_ROW_CUDNN, .ref = REF_CUDNN};
    if (strcmp(variant, "2d") != 0)
        rows[n++] = (conv_row){.name = "naive grid-stride (1D)",
                               .kind = CONV_ROW_DEVICE,
                               .conv = conv2d_naive_run,
                               .ref = -1};
    if (strcmp(variant, "gridstride") != 0)
        rows[n++] = (conv_row){.name = "naive 16x16 blocks (2D)",
                               .kind = CONV_ROW_DEVICE,
                               .conv = conv2d_naive_2d_run,
                               .ref = -1};
    const char *const ref_names[N_REFS] = {"cuDNN", "serial", "OpenMP"};
    return conv_step_program_run(PROGRAM,
                                 "one thread per output element (grid-stride loop; 16x16 blocks)",
                                 argc, argv, &opt, (int)host_repeat, rows, n, ref_names, N_REFS);
}
