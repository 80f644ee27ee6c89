/* What each step's program says about itself, side by side: its name, the
 * summary of its --help, the title its output opens with, the versions
 * --variant picks (with their help) and the old flag names it still
 * accepts. Each CONV_STEP_NN_TEXTS goes into that step's conv_program
 * initializer (main.c, CONV_PROGRAM_MAIN); what a program does (its rows,
 * references and hooks) stays in its main.c. Read together, these lines
 * are the course's map: which program runs which versions. */
#ifndef CONV_STEP_TEXTS_H
#define CONV_STEP_TEXTS_H

/* clang-format off */
#define CONV_STEP_01_TEXTS                                                                         \
    .cli.program = "01_cpu_serial",                                                                \
    .cli.summary = "Step 01: the serial 5-loop convolution (loop order oc -> h -> w -> ic "        \
                   "-> kh -> kw) and its OpenMP version, on the CPU.",                             \
    .title = "the serial five-loop convolution and its OpenMP version (CPU)",                      \
    .variant = {"1a|1b|all", "which versions to run (1a: serial, 1b: OpenMP; all adds 1c, the 1D " \
                             "convolution, on a 1D problem; 1a always runs, the reference)"}

/* Step 02 declares its --variant in its own flags[] (before --host-repeat). */
#define CONV_STEP_02_TEXTS                                                                         \
    .cli.program = "02_naive_gpu",                                                                 \
    .cli.summary = "Step 02: one thread per output element; a grid-stride loop over all "          \
                   "outputs and 16x16 blocks over the output plane, against step 01 and "          \
                   "cuDNN.",                                                                       \
    .cli.renamed = "gridstride=2a|2d=2b",                                                          \
    .title = "one thread per output element (grid-stride loop; 16x16 blocks)"
#define CONV_STEP_02_VARIANT_FLAG                                                                  \
    CONV_VARIANT_FLAG("2a|2b|all",                                                                 \
                      "which kernel(s) to run (2a: grid-stride loop, 2b: 16x16 blocks)")

#define CONV_STEP_03_TEXTS                                                                         \
    .cli.program = "03_tiled_1d",                                                                  \
    .cli.summary = "Step 03: 1D \"same\" convolution, mask in constant memory; naive and "         \
                   "the three tiling strategies, against the device-to-device copy "               \
                   "bandwidth and cuDNN.",                                                         \
    .cli.renamed = "--strategy=--variant|naive=3a|naive4=3b|1=3c|2=3d|3=3e",                       \
    .title = "1D \"same\" convolution, mask in constant memory",                                   \
    .variant = {"3a|3b|3c|3d|3e|all",                                                              \
                "which kernel(s) to run (3a: naive, 3b: naive x4, 3c, 3d, 3e: the lecture's "      \
                "strategies 1, 2, 3)"}

#define CONV_STEP_04_TEXTS                                                                         \
    .cli.program = "04_tiled_2d",                                                                  \
    .cli.summary = "Step 04: tiled 2D convolution with halos (strategies 1, 2, 3 of ECE408 "       \
                   "lecture 8, mask in constant memory) and its multi-channel extension, "         \
                   "against step 02 and cuDNN.",                                                   \
    .cli.renamed = "--strategy=--variant|1=4a|2=4b|3=4c|mc=4d",                                    \
    .title = "tiled 2D convolution with halos (strategies 1, 2, 3; multi-channel)",                \
    .variant = {"4a|4b|4c|4d|all",                                                                 \
                "4a, 4b, 4c: the lecture's strategies 1, 2, 3 (single channel, C = K = 1); "       \
                "4d: the multi-channel kernel"}

#define CONV_STEP_05_TEXTS                                                                         \
    .cli.program = "05_prefetch_float4",                                                           \
    .cli.summary = "Step 05: the direct convolution of the blog article (one-warp blocks, "        \
                   "equal split of float4 loads, filter in shared memory, register "               \
                   "accumulators, prefetch of the next channel) and its tuned version, "           \
                   "against cuDNN and steps 02 and 04.",                                           \
    .title = "direct convolution with float4 loads, shared tiles, register accumulators and "     \
             "prefetching",                                                                        \
    .variant = {"5a|5b|all", "which step 05 kernels to run (5a: both of its loop orders)"}

#define CONV_STEP_06_TEXTS                                                                         \
    .cli.program = "06_im2col_gemm",                                                               \
    .cli.summary = "Step 06: convolution as a matrix product: im2col + GEMM (6a naive .. "         \
                   "6e double-buffered register tiles, cuBLAS) and implicit GEMM (6f), "           \
                   "NCHW and NHWC. The GEMMs alone: 06_gemm.",                                     \
    .cli.renamed = "--gemm=--variant",                                                             \
    .title = "convolution as im2col + GEMM (6a..6e, cuBLAS) and implicit GEMM (6f)",               \
    .variant = {"6a|6b|6c|6d|6e|6f|cublas|all",                                                    \
                "which versions to run (6a..6e: im2col + that GEMM, 6f: implicit GEMM, "           \
                "NHWC only; im2col + cuBLAS always runs: it is the reference)"}

#define CONV_STEP_07_TEXTS                                                                         \
    .cli.program = "07_winograd",                                                                  \
    .cli.summary = "Step 07: Winograd convolution F(2x2,3x3) and F(4x4,3x3): filter and "          \
                   "input transforms, a batched GEMM of step 06, output transform (7a, "           \
                   "7b), and all of it in one kernel (7c); 3x3 filters, stride 1, NCHW "           \
                   "and NHWC; against cuDNN and step 06.",                                         \
    .title = "Winograd convolution F(2x2,3x3) and F(4x4,3x3), non-fused and fused",                \
    .variant = {"7a|7b|7c|all", "which step 07 versions to run (7a: F(2x2,3x3), 7b: "             \
                                "F(4x4,3x3), 7c: fused F(4x4,3x3))"}

#define CONV_STEP_08_TEXTS                                                                         \
    .cli.program = "08_tensor_cores",                                                              \
    .cli.summary = "Step 08: 6f's implicit GEMM (NHWC) on the tensor cores: TF32 through "         \
                   "WMMA (8a) and mma.sync (8b), 3xTF32 through mma.sync (8c, FP32's "             \
                   "accuracy; 8b and 8c in NCHW too), FP16 through WMMA (8a-fp16) and mma.sync "   \
                   "(8b-fp16); against "                                                           \
                   "cuDNN (FP32, TF32, FP16) and 6f. TF32 needs compute capability 8.0 or "        \
                   "newer, FP16 7.0 (8b-fp16: 7.5). Hopper's wgmma and TMA: 09_hopper.",           \
    .title = "implicit GEMM on the tensor cores: TF32, 3xTF32 and FP16 through WMMA, mma.sync",    \
    .variant = {"8a|8a-fp16|8b|8b-xt|8b-fp16|8c|all",                                              \
                "which step 08 versions to run (8a: TF32 through WMMA, 8a-fp16: 8a in FP16, "      \
                "8b-fp16: mma.sync in FP16 fed by cp.async from FP16 copies, 8b: TF32 through "    \
                "mma.sync with a cp.async pipeline, 8b-xt: 8b with x truncated as step 09's "      \
                "wgmma kernels do, 8c: 3xTF32 through mma.sync)"}

#define CONV_STEP_09_TEXTS                                                                         \
    .cli.program = "09_hopper",                                                                    \
    .cli.summary = "Step 09: step 08's implicit GEMM (NHWC) on Hopper's tensor-core "              \
                   "instructions: TF32 through wgmma.mma_async with a cp.async pipeline (9a), "    \
                   "and fed by TMA copies from a producer warpgroup in persistent blocks (9b); "   \
                   "both in FP16 (9a-fp16, 9b-fp16); against cuDNN (FP32, TF32, FP16), 8b and "    \
                   "8b-fp16. "                                                                     \
                   "Needs compute capability 9.0 (H100, H200) and sm_90a code.",                   \
    .title = "implicit GEMM on Hopper: wgmma, fed by cp.async and by TMA, in TF32 and FP16",       \
    .variant = {"9a|9b|9a-fp16|9b-fp16|all",                                                       \
                "which step 09 versions to run (9a: TF32 through wgmma, 9b: 9a fed by TMA, "       \
                "warps in roles, persistent blocks, 9a-fp16 and 9b-fp16: 9a and 9b in FP16; 8b "   \
                "and 8b-fp16, step 08's mma.sync, always run)"}

#define CONV_STEP_10_TEXTS                                                                         \
    .cli.program = "10_backward",                                                                  \
    .cli.summary = "Step 10: the backward pass, the gradients of the input (dgrad) and of "        \
                   "the filter (wgrad), against cuDNN's.",                                         \
    .title = "the backward pass: dgrad and wgrad",                                                 \
    .variant = {"10a|10b|10c|10d|all",                                                             \
                "which version(s) to run (10a: one thread per gradient element; 10b: "             \
                "implicit GEMMs, wgrad with split-K; 10c: the same on TF32 tensor cores; "         \
                "10d: dgrad at stride 1 as a forward convolution with the flipped filter, "        \
                "by steps 06 to 09)"}
/* clang-format on */

#endif /* CONV_STEP_TEXTS_H */
