/* The GPU the programs run on: whether there is a usable one (and if not,
 * which of the usual reasons applies), its properties and peak rates, the
 * software versions behind a measurement, and the limits a launcher checks
 * its configuration against.
 *
 * Launch limits. A launcher asks conv_kernel_fits() before it launches: the
 * kernel's block size, its registers and its shared memory must fit this
 * device, else the launcher returns CONV_ERR_UNSUPPORTED with one line naming
 * the limit (a row of a table is then skipped with that line; nothing
 * crashes). Shared memory above 48 KB per block needs an opt-in, which
 * conv_kernel_fits() makes. The shared memory a block may use is the
 * device's own maximum (from 64 KB on Turing to 227 KB on Hopper), capped
 * by the environment variable CONV_SMEM_LIMIT_KB when it is set: with
 * CONV_SMEM_LIMIT_KB=64 an H100 runs the configurations a Turing GPU would
 * get, so the fallbacks are tested on any GPU. */
#ifndef CONV_DEVICE_H
#define CONV_DEVICE_H

#include <stddef.h>
#include <stdio.h>

#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable that caps the shared memory per block (in KiB). */
#define CONV_SMEM_LIMIT_ENV "CONV_SMEM_LIMIT_KB"
/* Shared memory a block gets without opting in, on every GPU since Volta. */
#define CONV_SMEM_DEFAULT_BYTES ((size_t)48 * 1024)

typedef struct {
    char name[256];
    int cc_major, cc_minor;
    int sm_count;
    int sm_clock_khz;  /* peak SM clock */
    int mem_clock_khz; /* peak memory clock */
    int mem_bus_bits;
    int fp32_lanes_per_sm; /* FP32 FMA units per SM for this architecture */
    size_t global_mem_bytes;
    size_t const_mem_bytes;      /* __constant__ memory: 64 KiB on every GPU so far */
    size_t smem_per_block_optin; /* the most shared memory one block may opt in to */
    size_t smem_per_sm;
    int regs_per_sm;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int driver_version, runtime_version; /* CUDA versions, e.g. 13000 = 13.0 */
    char driver_release[32];             /* NVIDIA driver, e.g. "580.159.04"; "" if unknown */
    int ptx_version;         /* > 0: this build runs PTX of compute_<ptx_version>, JIT-compiled */
    int binary_version;      /* the SASS architecture the kernels run as, e.g. 90 */
    double peak_fp32_gflops; /* 2 * lanes * SMs * clock */
    double peak_dram_gbps;   /* 2 (DDR) * memory clock * bus width / 8 */
} conv_device_info;

/* The device this thread's CUDA calls go to (cudaGetDevice(): device 0
 * unless the program chose another with cudaSetDevice()); 0 where CUDA
 * cannot say. The launchers size their launches for it. */
int conv_current_device(void);

/* CONV_OK when the current device can run this build's kernels. Otherwise
 * CONV_ERR_NO_DEVICE with one line that says which case it is: no NVIDIA
 * driver installed; a driver older than the CUDA runtime the program was
 * built with (both versions named); no GPU visible (CUDA_VISIBLE_DEVICES);
 * or a GPU this build has no code for (with the CMake option that fixes it). */
conv_status conv_cuda_require_device(conv_msg *msg);

/* The same diagnosis from its inputs, without calling CUDA (for the tests):
 * err is what cudaGetDeviceCount returned, driver and runtime the versions
 * (driver 0: no driver library), visible the value of CUDA_VISIBLE_DEVICES
 * (NULL if unset). Writes the message and returns CONV_ERR_NO_DEVICE. */
conv_status conv_diagnose_no_device(int err, const char *err_text, int driver, int runtime,
                                    const char *visible, conv_msg *msg);

/* The message for a GPU this build cannot run: "this program was built for
 * sm_90 (CMAKE_CUDA_ARCHITECTURES=90); this GPU, <name>, is sm_86: rebuild
 * with -DCMAKE_CUDA_ARCHITECTURES=86 (or =native on this machine)". */
conv_status conv_diagnose_no_image(const char *built_for, const char *gpu_name, int cc_major,
                                   int cc_minor, conv_msg *msg);

/* The architectures this build was compiled for (CMAKE_CUDA_ARCHITECTURES,
 * e.g. "75;80;86;89;90;100;120;120-virtual"). */
const char *conv_built_archs(void);

/* Properties of `device` (conv_cuda_require_device() first). */
conv_status conv_cuda_device_info(int device, conv_device_info *info, conv_msg *msg);

/* The driver release ("580.159.04") from the first line of
 * /proc/driver/nvidia/version; "" when the line has none. */
void conv_parse_driver_release(const char *line, char *release, size_t size);

/* FP32 lanes per SM of a compute capability (64 or 128; 0 if unknown). */
int conv_fp32_lanes_per_sm(int cc_major, int cc_minor);

/* 1 when the environment variable CONV_REQUIRE_GPU is "1": a missing device
 * is then a test failure instead of a skip. */
int conv_gpu_required(void);

/* The software versions behind a measurement, as one phrase:
 * "driver 580.159.04 (CUDA 13.0), runtime 13.0, cuDNN 9.13.0"; cudnn_version
 * as conv_cudnn_version() gives it (0: "not built"), passed in so that this
 * file needs nothing of cuDNN's. */
void conv_format_versions(const conv_device_info *info, long cudnn_version, char *buf, size_t size);
/* How the kernels run on this device, e.g. "sm_90 code" or "compute_75 PTX,
 * JIT-compiled for sm_90 by the driver". */
void conv_format_code(const conv_device_info *info, char *buf, size_t size);
/* Prints the device line: name, SMs, clock, FP32 peak, DRAM peak, versions,
 * the code it runs and the shared-memory limit in force. */
void conv_print_device(FILE *out, const conv_device_info *info, long cudnn_version);

/* ---- launch limits ---- */

/* Parses a CONV_SMEM_LIMIT_KB value: a whole number of KiB in [1, 1024].
 * NULL or "" means no cap (*bytes = 0). */
conv_status conv_smem_cap_parse(const char *text, size_t *bytes, conv_msg *msg);

/* A fact of a device asked once and kept: per device, under a lock (any
 * thread may ask). table holds CONV_MAX_DEVICES ints, 0 for "not asked yet";
 * ask(device, &value, msg) answers for the current device with a value other
 * than 0. *value is the kept answer, or ask's on the first call. */
#define CONV_MAX_DEVICES 64
typedef conv_status (*conv_device_ask)(int device, int *value, conv_msg *msg);
conv_status conv_device_once(int *table, conv_device_ask ask, int *value, conv_msg *msg);

/* The shared memory per block the launchers may use on the current device: its opt-in
 * maximum, capped by CONV_SMEM_LIMIT_KB. 0 when there is no device or the
 * variable is malformed (conv_kernel_fits then says why). */
size_t conv_smem_limit(void);

/* Checks that `kernel` (a __global__ function's address) can be launched on
 * the current device with `threads` threads per block and `dyn_smem` bytes of dynamic
 * shared memory: a block size its registers allow, static plus dynamic
 * shared memory within conv_smem_limit(). Opts the kernel in to more than
 * 48 KB of dynamic shared memory when it needs it. The kernel's attributes
 * are looked up once per device. CONV_ERR_UNSUPPORTED names the kernel and
 * the limit; CONV_ERR_NO_DEVICE when the build has no code for the GPU. */
conv_status conv_kernel_fits(const void *kernel, const char *name, int threads, size_t dyn_smem,
                             conv_msg *msg);

/* The blocks of `kernel` one SM of the current device runs at once with
 * `threads` threads and `dyn_smem` bytes of dynamic shared memory each (ask
 * conv_kernel_fits() first, which opts the kernel in to more than 48 KB); 0
 * where the occupancy calculator fails (the launch checks then say why). */
int conv_blocks_per_sm(const void *kernel, int threads, size_t dyn_smem);

/* CONV_OK when `kernel` can run TF32 on tensor cores here: a GPU of compute
 * capability 8.0 or newer, and the kernel compiled for one (a build for
 * compute_75 alone runs its PTX on any GPU, without tensor cores). Else
 * CONV_ERR_UNSUPPORTED with one line that starts with `what` and says which
 * is missing. Steps 08, 09 and 10 ask it before they launch. */
conv_status conv_tf32_available(const void *kernel, const char *what, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_DEVICE_H */
