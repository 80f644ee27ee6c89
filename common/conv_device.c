#include "conv_device.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "conv_cuda.h"

#ifndef CONV_CUDA_ARCHS
#define CONV_CUDA_ARCHS "unknown"
#endif

/* From conv_device_probe.cu: an empty kernel of this build, to ask the
 * driver whether the build has code this GPU can run. */
const void *conv_probe_kernel_address(void);

const char *conv_built_archs(void)
{
    return CONV_CUDA_ARCHS;
}

conv_status conv_diagnose_no_device(int err, const char *err_text, int driver, int runtime,
                                    const char *visible, conv_msg *msg)
{
    if (driver == 0)
        return conv_fail(msg, CONV_ERR_NO_DEVICE,
                         "no CUDA device: no NVIDIA driver is installed (the CUDA toolkit builds "
                         "the programs, but running a kernel needs an NVIDIA GPU and its driver)");
    if (driver < runtime)
        return conv_fail(msg, CONV_ERR_NO_DEVICE,
                         "no CUDA device: the NVIDIA driver supports CUDA %d.%d, older than the "
                         "CUDA %d.%d runtime this program was built with: update the driver (or "
                         "build with a CUDA %d.%d toolkit)",
                         driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10,
                         driver / 1000, driver % 1000 / 10);
    if (err == (int)cudaErrorNoDevice || err == (int)cudaSuccess) {
        if (visible != NULL)
            return conv_fail(msg, CONV_ERR_NO_DEVICE,
                             "no CUDA device: CUDA_VISIBLE_DEVICES='%s' hides every GPU (unset it "
                             "or name a device, e.g. CUDA_VISIBLE_DEVICES=0)",
                             visible);
        return conv_fail(msg, CONV_ERR_NO_DEVICE,
                         "no CUDA device: the NVIDIA driver (CUDA %d.%d) found no GPU",
                         driver / 1000, driver % 1000 / 10);
    }
    return conv_fail(msg, CONV_ERR_NO_DEVICE, "no CUDA device: cudaGetDeviceCount failed: %s",
                     err_text ? err_text : "unknown error");
}

conv_status conv_diagnose_no_image(const char *built_for, const char *gpu_name, int cc_major,
                                   int cc_minor, conv_msg *msg)
{
    return conv_fail(msg, CONV_ERR_NO_DEVICE,
                     "no kernel image for this GPU: the program was built for %s "
                     "(CMAKE_CUDA_ARCHITECTURES), and this GPU, %s, is sm_%d%d: rebuild with "
                     "-DCMAKE_CUDA_ARCHITECTURES=%d%d (or =native on this machine)",
                     built_for, gpu_name, cc_major, cc_minor, cc_major, cc_minor);
}

int conv_current_device(void)
{
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        device = 0;
    }
    return device;
}

conv_status conv_cuda_require_device(conv_msg *msg)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < 1) {
        cudaGetLastError(); /* clear the error state */
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        return conv_diagnose_no_device((int)e, cudaGetErrorString(e), driver, runtime,
                                       getenv("CUDA_VISIBLE_DEVICES"), msg);
    }
    struct cudaFuncAttributes attr;
    e = cudaFuncGetAttributes(&attr, conv_probe_kernel_address());
    if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) {
        cudaGetLastError();
        struct cudaDeviceProp prop;
        const int device = conv_current_device();
        if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
            cudaGetLastError();
            snprintf(prop.name, sizeof prop.name, "device %d", device);
            prop.major = prop.minor = 0;
        }
        return conv_diagnose_no_image(conv_built_archs(), prop.name, prop.major, prop.minor, msg);
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        return conv_cuda_fail(msg, e, "cudaFuncGetAttributes (the device check)", __FILE__,
                              __LINE__);
    }
    return CONV_OK;
}

int conv_fp32_lanes_per_sm(int cc_major, int cc_minor)
{
    switch (cc_major) {
    case 6: return cc_minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return cc_minor == 0 ? 64 : 128;
    case 9: return 128;
    case 10:
    case 11:
    case 12: return 128;
    default: return 0;
    }
}

conv_status conv_cuda_device_info(int device, conv_device_info *info, conv_msg *msg)
{
    struct cudaDeviceProp prop;
    memset(info, 0, sizeof *info);
    conv_status st = conv_cuda_require_device(msg); /* the reason, not a raw error */
    if (st != CONV_OK)
        return st;
    CONV_CUDA_CHECK(cudaGetDeviceProperties(&prop, device), msg);
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sm_count = prop.multiProcessorCount;
    info->global_mem_bytes = prop.totalGlobalMem;
    info->const_mem_bytes = prop.totalConstMem;
    info->smem_per_block_optin = prop.sharedMemPerBlockOptin;
    info->smem_per_sm = prop.sharedMemPerMultiprocessor;
    info->regs_per_sm = prop.regsPerMultiprocessor;
    info->max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
    info->max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
    info->mem_bus_bits = prop.memoryBusWidth;
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&info->sm_clock_khz, cudaDevAttrClockRate, device), msg);
    CONV_CUDA_CHECK(
        cudaDeviceGetAttribute(&info->mem_clock_khz, cudaDevAttrMemoryClockRate, device), msg);
    CONV_CUDA_CHECK(cudaDriverGetVersion(&info->driver_version), msg);
    CONV_CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version), msg);
    struct cudaFuncAttributes attr;
    CONV_CUDA_CHECK(cudaFuncGetAttributes(&attr, conv_probe_kernel_address()), msg);
    info->ptx_version = attr.ptxVersion;
    info->binary_version = attr.binaryVersion;
    /* The kernel module's release, which nvidia-smi calls the driver version. */
    FILE *module = fopen("/proc/driver/nvidia/version", "r");
    if (module != NULL) {
        char line[256];
        if (fgets(line, sizeof line, module) != NULL)
            conv_parse_driver_release(line, info->driver_release, sizeof info->driver_release);
        fclose(module);
    }
    info->fp32_lanes_per_sm = conv_fp32_lanes_per_sm(prop.major, prop.minor);
    info->peak_fp32_gflops =
        2.0 * info->fp32_lanes_per_sm * info->sm_count * (info->sm_clock_khz * 1e3) / 1e9;
    info->peak_dram_gbps = 2.0 * (info->mem_clock_khz * 1e3) * (info->mem_bus_bits / 8.0) / 1e9;
    return CONV_OK;
}

void conv_parse_driver_release(const char *line, char *release, size_t size)
{
    if (size == 0)
        return;
    release[0] = '\0';
    const char *at = strstr(line, "Kernel Module");
    if (at == NULL)
        return;
    /* The release is the first word after "Kernel Module" made of digits and
     * dots with at least one dot ("for x86_64" may come first). */
    at += strlen("Kernel Module");
    while (*at != '\0') {
        at += strspn(at, " \t");
        size_t len = strcspn(at, " \t\n");
        if (len > 0 && len < size && strspn(at, "0123456789.") == len && memchr(at, '.', len)) {
            memcpy(release, at, len);
            release[len] = '\0';
            return;
        }
        at += len;
    }
}

int conv_gpu_required(void)
{
    const char *v = getenv("CONV_REQUIRE_GPU");
    return v != NULL && strcmp(v, "1") == 0;
}

void conv_format_versions(const conv_device_info *info, long cudnn, char *buf, size_t size)
{
    /* cudnn: major * 10000 + minor * 100 + patch since cuDNN 9 */
    char cudnn_text[32] = "not built";
    if (cudnn > 0)
        snprintf(cudnn_text, sizeof cudnn_text, "%ld.%ld.%ld", cudnn / 10000, cudnn / 100 % 100,
                 cudnn % 100);
    snprintf(buf, size, "driver %s (CUDA %d.%d), runtime %d.%d, cuDNN %s",
             info->driver_release[0] ? info->driver_release : "unknown",
             info->driver_version / 1000, info->driver_version % 1000 / 10,
             info->runtime_version / 1000, info->runtime_version % 1000 / 10, cudnn_text);
}

/* 1 when the build list holds machine code (a real architecture) that runs
 * on compute capability major.minor: same major, minor not above. */
static int built_with_sass_for(const char *archs, int major, int minor)
{
    const char *at = archs;
    while (*at != '\0') {
        size_t len = strcspn(at, "; ");
        char item[32];
        if (len > 0 && len < sizeof item) {
            memcpy(item, at, len);
            item[len] = '\0';
            int arch = atoi(item);
            if (arch > 0 && strstr(item, "virtual") == NULL && arch / 10 == major &&
                arch % 10 <= minor)
                return 1;
        }
        at += len;
        at += strspn(at, "; ");
    }
    return 0;
}

void conv_format_code(const conv_device_info *info, char *buf, size_t size)
{
    if (info->ptx_version > 0 &&
        !built_with_sass_for(conv_built_archs(), info->cc_major, info->cc_minor))
        snprintf(buf, size, "compute_%d PTX, JIT-compiled for sm_%d%d by the driver",
                 info->ptx_version, info->cc_major, info->cc_minor);
    else
        snprintf(buf, size, "sm_%d code", info->binary_version);
}

void conv_print_device(FILE *out, const conv_device_info *info, long cudnn_version)
{
    char versions[160], code[96];
    conv_format_versions(info, cudnn_version, versions, sizeof versions);
    conv_format_code(info, code, sizeof code);
    size_t smem = conv_smem_limit();
    fprintf(out,
            "device:  %s (sm_%d%d), %d SMs at %.0f MHz, FP32 peak %.1f TFLOP/s, "
            "DRAM peak %.0f GB/s; %s\n",
            info->name, info->cc_major, info->cc_minor, info->sm_count, info->sm_clock_khz / 1e3,
            info->peak_fp32_gflops / 1e3, info->peak_dram_gbps, versions);
    fprintf(out, "build:   %s (built for %s); shared memory per block up to %zu KB%s\n", code,
            conv_built_archs(), smem / 1024,
            smem < info->smem_per_block_optin ? " (" CONV_SMEM_LIMIT_ENV ")" : "");
}

/* ---- launch limits ---- */

conv_status conv_smem_cap_parse(const char *text, size_t *bytes, conv_msg *msg)
{
    *bytes = 0;
    if (text == NULL || text[0] == '\0')
        return CONV_OK;
    char *end = NULL;
    long kb = strtol(text, &end, 10);
    if (end == text || *end != '\0' || kb < 1 || kb > 1024)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid " CONV_SMEM_LIMIT_ENV "='%s': expected a whole number of KiB "
                         "from 1 to 1024",
                         text);
    *bytes = (size_t)kb * 1024;
    return CONV_OK;
}

/* The caches below (each device's facts, the attributes of the kernels
 * checked so far) are shared by every thread of the process: PyTorch, for
 * one, runs the backward pass on a thread of its own. One lock guards them;
 * the CUDA queries that fill them run outside it. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

conv_status conv_device_once(int *table, conv_device_ask ask, int *value, conv_msg *msg)
{
    const int device = conv_current_device();
    const int kept = device >= 0 && device < CONV_MAX_DEVICES;
    *value = 0;
    if (kept) {
        pthread_mutex_lock(&cache_lock);
        *value = table[device];
        pthread_mutex_unlock(&cache_lock);
    }
    if (*value != 0)
        return CONV_OK;
    conv_status st = ask(device, value, msg);
    if (st == CONV_OK && kept) {
        pthread_mutex_lock(&cache_lock);
        table[device] = *value;
        pthread_mutex_unlock(&cache_lock);
    }
    return st;
}

static conv_status ask_smem_optin(int device, int *bytes, conv_msg *msg)
{
    if (cudaDeviceGetAttribute(bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) ==
        cudaSuccess)
        return CONV_OK;
    const cudaError_t e = cudaGetLastError(); /* no device: later calls start clean */
    return conv_cuda_fail(msg, e, "cudaDeviceGetAttribute", __FILE__, __LINE__);
}

size_t conv_smem_limit(void)
{
    static int optin[CONV_MAX_DEVICES]; /* the device's maximum, asked once per device */
    int bytes = 0;
    if (conv_device_once(optin, ask_smem_optin, &bytes, NULL) != CONV_OK)
        return 0;
    size_t cap = 0;
    if (conv_smem_cap_parse(getenv(CONV_SMEM_LIMIT_ENV), &cap, NULL) != CONV_OK)
        return 0;
    return cap > 0 && cap < (size_t)bytes ? cap : (size_t)bytes;
}

/* Attributes of the kernels checked so far (a handful per program). */
#define MAX_KERNELS 128
static struct {
    const void *kernel;
    int device;
    struct cudaFuncAttributes attr;
} kernels[MAX_KERNELS];
static int n_kernels;

/* The slot of (kernel, device) in kernels[], or -1; with cache_lock held. */
static int kernel_slot(const void *kernel, int device)
{
    for (int i = 0; i < n_kernels; ++i)
        if (kernels[i].kernel == kernel && kernels[i].device == device)
            return i;
    return -1;
}

/* A copy of kernel's attributes on the current device, asked once. */
static conv_status kernel_attributes(const void *kernel, struct cudaFuncAttributes *attr,
                                     conv_msg *msg)
{
    const int device = conv_current_device();
    pthread_mutex_lock(&cache_lock);
    int i = kernel_slot(kernel, device);
    if (i >= 0)
        *attr = kernels[i].attr;
    pthread_mutex_unlock(&cache_lock);
    if (i >= 0)
        return CONV_OK;
    cudaError_t e = cudaFuncGetAttributes(attr, kernel);
    if (e != cudaSuccess) {
        cudaGetLastError();
        conv_status st = conv_cuda_require_device(msg); /* no device, or no image for it */
        return st != CONV_OK ? st
                             : conv_cuda_fail(msg, e, "cudaFuncGetAttributes", __FILE__, __LINE__);
    }
    pthread_mutex_lock(&cache_lock);
    if (kernel_slot(kernel, device) < 0 && n_kernels < MAX_KERNELS) { /* full: ask again */
        kernels[n_kernels].kernel = kernel;
        kernels[n_kernels].device = device;
        kernels[n_kernels].attr = *attr;
        ++n_kernels;
    }
    pthread_mutex_unlock(&cache_lock);
    return CONV_OK;
}

/* Records that kernel may now take `bytes` of dynamic shared memory. */
static void remember_dynamic_smem(const void *kernel, int bytes)
{
    pthread_mutex_lock(&cache_lock);
    int i = kernel_slot(kernel, conv_current_device());
    if (i >= 0)
        kernels[i].attr.maxDynamicSharedSizeBytes = bytes;
    pthread_mutex_unlock(&cache_lock);
}

conv_status conv_kernel_fits(const void *kernel, const char *name, int threads, size_t dyn_smem,
                             conv_msg *msg)
{
    size_t cap = 0;
    conv_status st = conv_smem_cap_parse(getenv(CONV_SMEM_LIMIT_ENV), &cap, msg);
    if (st != CONV_OK)
        return st;
    struct cudaFuncAttributes attr;
    if ((st = kernel_attributes(kernel, &attr, msg)) != CONV_OK)
        return st;
    if (threads > attr.maxThreadsPerBlock)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "%s: %d threads per block, but with %d registers per thread this GPU "
                         "runs at most %d",
                         name, threads, attr.numRegs, attr.maxThreadsPerBlock);
    const size_t limit = conv_smem_limit();
    const size_t total = attr.sharedSizeBytes + dyn_smem;
    if (total > limit)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "%s: needs %.1f KB of shared memory per block; this GPU allows %.1f KB%s",
                         name, total / 1024.0, limit / 1024.0,
                         cap > 0 ? " (capped by " CONV_SMEM_LIMIT_ENV ")" : "");
    if (dyn_smem > (size_t)attr.maxDynamicSharedSizeBytes) {
        CONV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)dyn_smem),
                        msg);
        remember_dynamic_smem(kernel, (int)dyn_smem);
    }
    return CONV_OK;
}

int conv_blocks_per_sm(const void *kernel, int threads, size_t dyn_smem)
{
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, dyn_smem) !=
        cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

conv_status conv_tf32_available(const void *kernel, const char *what, conv_msg *msg)
{
    int major = 0, minor = 0;
    const int device = conv_current_device();
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), msg);
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), msg);
    if (major < 8)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "%s: TF32 tensor cores need compute capability 8.0 or newer; this GPU "
                         "is sm_%d%d",
                         what, major, minor);
    struct cudaFuncAttributes attr;
    conv_status st = kernel_attributes(kernel, &attr, msg);
    if (st != CONV_OK)
        return st;
    if (attr.ptxVersion < 80)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "%s: this build runs compute_%d code on this sm_%d%d GPU, which has no "
                         "TF32 tensor-core instructions: rebuild with "
                         "-DCMAKE_CUDA_ARCHITECTURES=%d%d%s (or native)",
                         what, attr.ptxVersion, major, minor, major, minor,
                         major == 9 && minor == 0 ? "a" : ""); /* 90a: Hopper's wgmma too */
    return CONV_OK;
}
