/* Step 06: the host side the GEMM launchers share (plain C, no kernels): the
 * variants' names, the checks and the grid every launcher needs before a
 * launch, and gemm_sgemm, which picks a launcher (or cuBLAS) by variant. The kernels and
 * their launchers are in gemm_6a.cu .. gemm_6e.cu, one file per version. */
#include "gemm.h"

#include "conv_device.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const char *const variant_tags[GEMM_VARIANT_COUNT] = {"6a", "6b", "6c",
                                                             "6d", "6e", "cublas"};
static const char *const variant_names[GEMM_VARIANT_COUNT] = {
    "6a naive",        "6b shared 32x32",    "6c regtile 128x128/8x8",
    "6d float4 + A^T", "6e double buffered", "cuBLAS SGEMM"};

/* The block tile of each kernel, as its file defines it (none for cuBLAS). */
static const gemm_block_tile *const variant_tiles[GEMM_CUBLAS] = {
    &gemm_6a_tile, &gemm_6b_tile, &gemm_6c_tile, &gemm_6d_tile, &gemm_6e_tile};

const char *gemm_variant_tag(gemm_variant v)
{
    return (unsigned)v < GEMM_VARIANT_COUNT ? variant_tags[v] : "?";
}

const char *gemm_variant_name(gemm_variant v)
{
    return (unsigned)v < GEMM_VARIANT_COUNT ? variant_names[v] : "?";
}

conv_status gemm_variant_parse(const char *text, gemm_variant *v, conv_msg *msg)
{
    for (int i = 0; i < GEMM_VARIANT_COUNT; ++i)
        if (text != NULL && strcmp(text, variant_tags[i]) == 0) {
            *v = (gemm_variant)i;
            return CONV_OK;
        }
    return conv_fail(msg, CONV_ERR_INVALID,
                     "invalid GEMM variant (--variant): '%s' (expected 6a..6e or cublas)",
                     text ? text : "(null)");
}

static long long ceil_div_ll(long long a, long long b)
{
    return (a + b - 1) / b;
}

long long gemm_grid_blocks(gemm_block_tile tile, long long m, long long n, int *tiles_n)
{
    *tiles_n = (int)ceil_div_ll(n, tile.cols);
    return ceil_div_ll(m, tile.rows) * *tiles_n;
}

conv_status gemm_validate(gemm_variant v, long long m, long long n, long long k, const float *d_a,
                          const float *d_b, const float *d_c, const conv_cublas *cublas,
                          conv_msg *msg)
{
    if ((unsigned)v >= GEMM_VARIANT_COUNT)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid GEMM variant (--variant): %d", (int)v);
    const struct {
        const char *name;
        long long value;
    } dims[] = {{"GEMM rows M (--m)", m}, {"GEMM columns N (--n)", n}, {"GEMM depth K (--k)", k}};
    for (int i = 0; i < 3; ++i) {
        if (dims[i].value < 1)
            return conv_fail(msg, CONV_ERR_INVALID, "invalid %s: must be >= 1, got %lld",
                             dims[i].name, dims[i].value);
        if (dims[i].value > GEMM_MAX_DIM)
            return conv_fail(msg, CONV_ERR_UNSUPPORTED, "%s = %lld exceeds this step's limit %d",
                             dims[i].name, dims[i].value, GEMM_MAX_DIM);
    }
    conv_status st = conv_check_pointers(d_a, "d_a", d_b, "d_b", d_c, "d_c", msg);
    if (st != CONV_OK)
        return st;
    if (v == GEMM_CUBLAS) {
        if (cublas == NULL)
            return conv_fail(msg, CONV_ERR_INVALID,
                             "invalid cuBLAS handle: NULL (create one with conv_cublas_create)");
        return CONV_OK;
    }
    gemm_block_tile tile = *variant_tiles[v];
    int tiles_n;
    long long tiles = gemm_grid_blocks(tile, m, n, &tiles_n);
    if (tiles > INT_MAX)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "GEMM %lldx%lld needs %lld thread blocks of %dx%d for %s "
                         "(grid limit %d)",
                         m, n, tiles, tile.rows, tile.cols, gemm_variant_tag(v), INT_MAX);
    return CONV_OK;
}

gemm_launch gemm_prepare(gemm_variant v, long long m, long long n, long long k, const float *d_a,
                         const float *d_b, const float *d_c, const void *kernel, const char *name,
                         int threads, conv_msg *msg)
{
    gemm_launch l = {gemm_validate(v, m, n, k, d_a, d_b, d_c, NULL, msg), 0, 0};
    if (l.status == CONV_OK)
        l.blocks = (unsigned)gemm_grid_blocks(*variant_tiles[v], m, n, &l.tiles_n);
    if (l.status == CONV_OK)
        l.status = conv_kernel_fits(kernel, name, threads, 0, msg);
    return l;
}

int gemm_vec_ok(int n, int k, const float *d_a, const float *d_b, const float *d_c)
{
    return k % 4 == 0 && n % 4 == 0 && ((uintptr_t)d_a % 16) == 0 && ((uintptr_t)d_b % 16) == 0 &&
           ((uintptr_t)d_c % 16) == 0;
}

conv_status gemm_sgemm(gemm_variant v, int m, int n, int k, const float *d_a, const float *d_b,
                       float *d_c, conv_cublas *cublas, cudaStream_t stream, conv_msg *msg)
{
    /* Each launcher validates its own arguments; the rest (cuBLAS, or an
     * invalid v) is checked here. */
    switch (v) {
    case GEMM_6A_NAIVE: return gemm_6a_naive(m, n, k, d_a, d_b, d_c, stream, msg);
    case GEMM_6B_SHARED: return gemm_6b_shared(m, n, k, d_a, d_b, d_c, stream, msg);
    case GEMM_6C_REGTILE: return gemm_6c_regtile(m, n, k, d_a, d_b, d_c, stream, msg);
    case GEMM_6D_FLOAT4: return gemm_6d_float4(m, n, k, d_a, d_b, d_c, stream, msg);
    case GEMM_6E_DBUF: return gemm_6e_dbuf(m, n, k, d_a, d_b, d_c, stream, msg);
    default: {
        conv_status st = gemm_validate(v, m, n, k, d_a, d_b, d_c, cublas, msg);
        if (st != CONV_OK)
            return st;
        return conv_cublas_sgemm(cublas, m, n, k, d_a, d_b, d_c, stream, msg);
    }
    }
}
