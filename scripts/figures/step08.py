"""Step 08's figures: the tensor cores through WMMA and mma.sync (docs/08_tensor_cores.md).

    08_wmma_tiles       8a's tiling of the implicit GEMM: the block tile, its four
                        warps and their 2 x 2 accumulator fragments, the shared
                        A and B tiles of one step with their padded rows and the
                        fragments one warp loads at each k-step of 8
    08_tf32_split       TF32 inside float's 32 bits, and 8c's 3xTF32: a float
                        split into a big and a small TF32 part, and the three
                        products of the four that are kept
    08_mma_fragments    8b's mma.m16n8k8 fragments, lane by lane, and the banks
                        of its shared-memory loads, unswizzled and swizzled
    08_mma_pipeline     8b's cp.async ring on a timeline, where its barrier sits,
                        and its two sets of fragment registers against one
    08_nchw_stage       8b's and 8c's stage in NCHW (A transposed, padded rows) beside
                        NHWC's, and the banks of x's fragment loads there

The tile sizes are the #defines of 08_tensor_cores/tensor_cores_wmma_8a.cu (TC_BM,
TC_BN, TC_BK, TC_THREADS, TC_LDA, TC_LDB) and tensor_cores_mma.cu (TC8B_*, and its
swizzle stage_col(), which stage_col below repeats); the warps' 2 x 2 layout and the
fragment shape m16n16k8 are written into its kernel (WARPS_N and WMMA_SHAPE
below say so); the problem is CUTLASS's in NHWC, from the benchmark's table.
TF32's format (8 exponent bits, 10 mantissa bits) is the hardware's.
"""
import math
import struct

from .draw import (COLORS, WARP, arrow, box, canvas_below, fmt, grid_lines, new_figure,
                   out_size, outline)
from .manifest import figure, paragraph

NOTE = "08_tensor_cores.md"  # the lecture note of every figure here (docs/)

WMMA_SHAPE = (16, 16, 8)  # m16n16k8: WMMA's shape for TF32 inputs
WARPS_N = 2  # the kernel's warp layout: warp / 2 picks the rows, warp % 2 the columns
FOLLOWED = {"bx": 1000, "by": 1, "row": 45, "col": 36, "j": 700}  # the output the figure follows
WARP_COLORS = ["#f6c6c6", "#c6d4f5", "#d9efc4", "#efc9ec"]


def wmma_geometry(k):
    """8a's tiles from the constants, and one output of CUTLASS's NHWC problem
    followed from its block to its warp, fragment and shared-memory slots."""
    BM, BN, BK = k["TC_BM"], k["TC_BN"], k["TC_BK"]
    fm, fn, fk = WMMA_SHAPE
    warps = k["TC_THREADS"] // WARP
    WM, WN = BM // (warps // WARPS_N), BN // WARPS_N  # a warp's tile
    pr = k["problem cutlass-nhwc"]
    N, C, K, R, S = pr["n"], pr["c"], pr["k"], pr["r"], pr["s"]
    P, Q = out_size(pr["h"], R, pr["pad_h"]), out_size(pr["w"], S, pr["pad_w"])
    M, J = N * P * Q, R * S * C
    f = FOLLOWED
    row, col = f["row"] % BM, f["col"] % BN
    m, kk_out = f["bx"] * BM + row, f["by"] * BN + col
    n, rem = m // (P * Q), m % (P * Q)
    p, q = rem // Q, rem % Q
    wr, wc = row // WM, col // WN
    j = f["j"]
    c, rs = j % C, j // C
    r, s = rs // S, rs % S
    j0 = j // BK * BK
    h, w = p - pr["pad_h"] + r, q - pr["pad_w"] + s
    return {"BM": BM, "BN": BN, "BK": BK, "LDA": k["TC_LDA"], "LDB": k["TC_LDB"],
            "threads": k["TC_THREADS"], "warps": warps, "WM": WM, "WN": WN, "fm": fm, "fn": fn,
            "fk": fk, "fr": WM // fm, "fc": WN // fn, "N": N, "C": C, "K": K, "H": pr["h"],
            "W": pr["w"], "R": R, "S": S, "P": P, "Q": Q, "M": M, "J": J,
            "gx": -(-M // BM), "gy": -(-K // BN), "steps": -(-J // BK),
            "bx": f["bx"], "by": f["by"], "row": row, "col": col, "m": m, "k": kk_out, "n": n,
            "p": p, "q": q, "warp": wr * WARPS_N + wc, "wm": wr * WM, "wn": wc * WN,
            "fi": (row - wr * WM) // fm, "fj": (col - wc * WN) // fn, "ri": (row - wr * WM) % fm,
            "ci": (col - wc * WN) % fn, "j": j, "c": c, "r": r, "s": s, "h": h, "w": w,
            "xoff": ((n * pr["h"] + h) * pr["w"] + w) * C + c, "j0": j0, "jc": j - j0,
            "kstep": (j - j0) // fk * fk}


# ---------------------------------------------------------------------------
# 08_wmma_tiles


def caption_08_wmma_tiles(k):
    g = wmma_geometry(k)
    return paragraph("""
        (a) 8a computes the implicit GEMM of an NHWC convolution, C = A x B with A[m][j] the
        image element that output pixel m = (n*P + p)*Q + q meets at tap j = (r*S + s)*C + c
        (zero outside the image), B[j][k] = w[j*K + k] and C[m][k] = y[m*K + k]. On CUTLASS's
        problem in NHWC (N = {g[N]}, C = K = {g[C]}, {g[H]} x {g[W]}, 3 x 3, padding 1), A is
        {M} x {J}: one block of {g[threads]} threads per {g[BM]} x {g[BN]} tile of C,
        {gx} x {g[gy]} = {blocks} blocks, each walking j in {g[steps]} steps of
        TC_BK = {g[BK]}. (b) The block tile: {g[warps]} warps, warp w owning the
        {g[WM]} x {g[WN]} quarter at (wm, wn) = ((w / {wn}) * {g[WM]}, (w % {wn}) * {g[WN]}),
        held as {g[fr]} x {g[fc]} accumulator fragments acc[i][jj] of {g[fm]} x {g[fn]}
        floats; which thread of the warp holds which element of a fragment is the hardware's
        choice. Red: the output followed in the note, row {g[row]} and column {g[col]} of
        block ({g[bx]}, {g[by]}), that is y[{m}][{g[k]}] (pixel (n, p, q) = ({g[n]}, {g[p]},
        {g[q]}), output channel {g[k]}), in warp {g[warp]}, fragment acc[{g[fi]}][{g[fj]}],
        at its row {g[ri]} and column {g[ci]}. (c) One step: the A tile as[{g[BM]}][{g[LDA]}]
        and the B tile bs[{g[BK]}][{g[LDB]}] in shared memory, their rows padded by
        {pa} and {pb} floats (grey) so that the row stride is a multiple of 4 floats, as
        load_matrix_sync requires, and consecutive rows start on different banks. At each k-step of
        {g[fk]} (kk = 0 and {g[fk]}) warp {g[warp]} loads a[0], a[1] ({g[fm]} x {g[fk]}, rows
        {g[wm]}.. of as) and b[0], b[1] ({g[fk]} x {g[fn]}, columns {g[wn]}.. of bs), dark,
        rounds their elements to TF32 and issues {mmas} mma_sync. Red: A[{m}][{j}]
        = x[{g[n]}][{g[h]}][{g[w]}][{g[c]}] ({xoff} floats into x; tap (r, s) = ({g[r]},
        {g[s]}), channel {g[c]}) in the step j0 = {g[j0]}, at as[{g[row]}][{g[jc]}], k-step
        kk = {g[kstep]}; and B[{j}][{g[k]}] at bs[{g[jc]}][{g[col]}].""",
                     g=g, M=fmt(g["M"]), J=fmt(g["J"]), gx=fmt(g["gx"]),
                     blocks=fmt(g["gx"] * g["gy"]), wn=WARPS_N, m=fmt(g["m"]), j=g["j"],
                     xoff=fmt(g["xoff"]), pa=g["LDA"] - g["BK"], pb=g["LDB"] - g["BN"],
                     mmas=g["fr"] * g["fc"])


@figure(section="8a: the implicit GEMM on tensor cores",
        uses=["TC_BM", "TC_BN", "TC_BK", "TC_THREADS", "TC_LDA", "TC_LDB", "problem cutlass-nhwc"])
def fig_08_wmma_tiles(k):
    """8a's tiles: block tile, four warps of 2 x 2 fragments, padded shared tiles, k-steps of 8."""
    g = wmma_geometry(k)
    BM, BN, BK, LDA, LDB = g["BM"], g["BN"], g["BK"], g["LDA"], g["LDB"]
    fm, fn, fk = g["fm"], g["fn"], g["fk"]
    fig = new_figure(11.5, 7.6, f"Step 08: 8a's tiles: a {BM} x {BN} block tile, {g['warps']} "
                     f"warps of {g['WM']} x {g['WN']}, {g['fr']} x {g['fc']} fragments of "
                     f"{fm} x {fn}, k-steps of {fk}")
    # (a) the GEMM, not to scale
    ax, bottom = canvas_below(fig, 0.9, 0.01, 0.98, (-1, 166), (-3.5, 29.5),
                              title="(a) the implicit GEMM of the NHWC convolution, one block "
                                    f"per {BM} x {BN} tile of C")
    ax0, cy, ch, aw, cw = 2, 10, 18, 24, 30
    cx = ax0 + aw + 4
    box(ax, ax0, cy, aw, ch, "#eeeeee", ec="#888888")
    box(ax, cx, 0, cw, cy - 2, "#eeeeee", ec="#888888")
    box(ax, cx, cy, cw, ch, "#f7f7f7", ec="#888888")
    tr, th, tc, tw = cy + 7, 3, cx + cw / 2, cw / 2  # the block tile: half of K wide
    box(ax, ax0, tr, aw, th, COLORS["input"], ec="#555555", lw=0.8)
    box(ax, tc, 0, tw, cy - 2, COLORS["weight"], ec="#555555", lw=0.8)
    box(ax, ax0 + 9, tr, 1.6, th, COLORS["input_dark"], ec="black", lw=0.8)
    box(ax, tc, 3, tw, 1.6, COLORS["weight_dark"], ec="black", lw=0.8)
    box(ax, tc, tr, tw, th, COLORS["output"], ec="black", lw=1.0, text=f"{BM} x {BN}", fs=7)
    ax.text(ax0 + 9.8, tr - 0.3, f"TC_BK = {BK}", ha="center", va="bottom", fontsize=7)
    ax.text(ax0 + aw / 2, cy + ch + 0.4, f"A: M x J = {fmt(g['M'])} x {fmt(g['J'])}",
            ha="center", va="top", fontsize=7.5)
    ax.text(cx + cw / 2, cy + ch + 0.4, "C = y: M x K", ha="center", va="top", fontsize=7.5)
    ax.text(cx + cw + 0.8, 3.5, f"B = w: J x K\n= {fmt(g['J'])} x {g['K']}", ha="left",
            va="center", fontsize=7.5)
    tx = cx + cw + 16
    lines = [f"rows m = (n*P + p)*Q + q: the output pixels, M = N*P*Q = {fmt(g['M'])}",
             f"columns j = (r*S + s)*C + c: the taps, J = R*S*C = {fmt(g['J'])}; zeros outside "
             "the image",
             f"grid: {fmt(g['gx'])} x {g['gy']} blocks of {g['threads']} threads "
             f"({g['warps']} warps)",
             f"each block: {g['steps']} steps of TC_BK = {BK} along j, "
             f"{BK // fk} k-steps of {fk} per step"]
    for i, line in enumerate(lines):
        ax.text(tx, 4 + 5.5 * i, line, fontsize=8, va="center")
    # (b) the block tile, (c) the shared tiles: one canvas, to scale
    bx0 = BN + 9  # where as starts
    bsx = bx0 + LDA + 9  # where bs starts
    ax2, _ = canvas_below(fig, bottom - 0.03, 0.01, 0.98, (-6, bsx + LDB + 1),
                          (-5.5, BM + 2.5))
    ax2.text(-6, -4.5, "(b) the block tile: warps and fragments", fontsize=10,
             fontweight="bold", va="bottom")
    for w in range(g["warps"]):
        r0, c0 = (w // WARPS_N) * g["WM"], (w % WARPS_N) * g["WN"]
        box(ax2, c0, r0, g["WN"], g["WM"], WARP_COLORS[w % len(WARP_COLORS)], ec="none", z=1)
        for i in range(g["fr"]):
            for jj in range(g["fc"]):
                outline(ax2, c0 + jj * fn + 0.15, r0 + i * fm + 0.15, fn - 0.3, fm - 0.3,
                        "#555555", lw=0.9, z=3)
                if w == g["warp"]:
                    ax2.text(c0 + jj * fn + fn / 2, r0 + i * fm + fm / 2,
                             f"acc[{i}][{jj}]", ha="center", va="center", fontsize=7, zorder=5)
        ax2.text(c0 + 0.6, r0 + 0.6, f"warp {w}: (wm, wn) = ({r0}, {c0})", fontsize=6.5,
                 va="top", zorder=5, bbox={"fc": WARP_COLORS[w % len(WARP_COLORS)], "ec": "none",
                                           "pad": 0.8})
    grid_lines(ax2, 0, 0, BN, BM, color="#ffffff", lw=0.2, z=2)
    outline(ax2, 0, 0, BN, BM, "#333333", lw=1.0)
    box(ax2, g["col"], g["row"], 1, 1, COLORS["highlight"], ec="black", lw=0.6, z=6)
    for v in range(0, BN + 1, fn):
        ax2.text(v, -0.5, str(v), ha="center", va="bottom", fontsize=7)
    for v in range(0, BM + 1, fm):
        ax2.text(-0.6, v, str(v), ha="right", va="center", fontsize=7)
    ax2.text(0, BM + 0.8, f"red: y[{fmt(g['m'])}][{g['k']}], block ({g['bx']}, {g['by']}), "
             f"row {g['row']}, column {g['col']}", fontsize=7.5, va="top",
             color=COLORS["highlight"])
    # (c) as and bs
    ax2.text(bx0, -4.5, f"(c) one step of TC_BK = {BK} in shared memory", fontsize=10,
             fontweight="bold", va="bottom")
    box(ax2, bx0, 0, BK, BM, COLORS["input"], ec="none", z=1)
    box(ax2, bx0 + BK, 0, LDA - BK, BM, COLORS["idle"], ec="none", z=1)
    grid_lines(ax2, bx0, 0, LDA, BM, color="#ffffff", lw=0.2, z=2)
    outline(ax2, bx0, 0, LDA, BM, "#333333", lw=0.8)
    ax2.text(bx0, -0.5, f"as[{BM}][{LDA}]", fontsize=7.5, va="bottom")
    box(ax2, bsx, 0, BN, BK, COLORS["weight"], ec="none", z=1)
    box(ax2, bsx + BN, 0, LDB - BN, BK, COLORS["idle"], ec="none", z=1)
    grid_lines(ax2, bsx, 0, LDB, BK, color="#ffffff", lw=0.2, z=2)
    outline(ax2, bsx, 0, LDB, BK, "#333333", lw=0.8)
    ax2.text(bsx, -0.5, f"bs[{BK}][{LDB}]", fontsize=7.5, va="bottom")
    kk = g["kstep"]
    for i in range(g["fr"]):
        box(ax2, bx0 + kk, g["wm"] + i * fm, fk, fm, COLORS["input_dark"], ec="black", lw=0.8,
            z=3)
        ax2.text(bx0 + kk + fk / 2, g["wm"] + i * fm + fm / 2, f"a[{i}]", ha="center",
                 va="center", fontsize=7, color="white", zorder=5)
    for jj in range(g["fc"]):
        box(ax2, bsx + g["wn"] + jj * fn, kk, fn, fk, COLORS["weight_dark"], ec="black", lw=0.8,
            z=3)
        ax2.text(bsx + g["wn"] + jj * fn + fn / 2, kk + fk / 2, f"b[{jj}]", ha="center",
                 va="center", fontsize=7, color="white", zorder=5)
    box(ax2, bx0 + g["jc"], g["row"], 1, 1, COLORS["highlight"], ec="black", lw=0.6, z=6)
    box(ax2, bsx + g["col"], g["jc"], 1, 1, COLORS["highlight"], ec="black", lw=0.6, z=6)
    for v in (0, fk, BK):
        ax2.text(bx0 + v, BM + 0.5, str(v), ha="center", va="top", fontsize=7)
    ax2.text(bx0 + LDA / 2, BM + 2.2, "kk", ha="center", va="top", fontsize=7)
    for v in (0, fk, BK):
        ax2.text(bsx - 0.6, v, str(v), ha="right", va="center", fontsize=7)
    notes = [f"warp {g['warp']} at k-step kk = {kk} (the steps are kk = 0, {fk}):",
             f"  load_matrix_sync: a[i] = {fm} x {fk} at as + (wm + {fm}*i)*{LDA} + kk,",
             f"                    b[jj] = {fk} x {fn} at bs + kk*{LDB} + wn + {fn}*jj",
             "  each element rounded to TF32",
             f"  mma_sync acc[i][jj] += a[i] x b[jj]: {g['fr'] * g['fc']} per k-step",
             f"grey: padding, rows of {LDA} and {LDB} floats (multiples of 4)",
             f"red: A[{fmt(g['m'])}][{g['j']}] at as[{g['row']}][{g['jc']}] (step j0 = "
             f"{g['j0']}), B[{g['j']}][{g['k']}] at bs[{g['jc']}][{g['col']}]"]
    for i, line in enumerate(notes):
        ax2.text(bsx, BK + 7 + 4.2 * i, line, fontsize=8, va="center", family="DejaVu Sans Mono"
                 if line.startswith("  ") else "DejaVu Sans",
                 color=COLORS["highlight"] if line.startswith("red") else COLORS["text"])
    return fig


# ---------------------------------------------------------------------------
# 08_tf32_split


def float_bits(v):
    """The 32 bits of float v, most significant first."""
    word = struct.unpack("<I", struct.pack("<f", v))[0]
    return [(word >> (31 - i)) & 1 for i in range(32)]


def tf32_round(v):
    """v rounded to TF32 as cvt.rna.tf32.f32 does (tc_tf32_round() on the host)."""
    word = struct.unpack("<I", struct.pack("<f", v))[0]
    word = (word + 0x1000) & 0xFFFFE000
    return struct.unpack("<f", struct.pack("<I", word))[0]


def to_float(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def split3(v):
    """v as float, its big and small TF32 parts and what they leave out."""
    x = to_float(v)
    big = tf32_round(x)
    rest = to_float(x - big)  # exact in float
    small = tf32_round(rest)
    return x, big, small, to_float(rest - small)


def significand(v, nbits=24):
    """{binary position: bit} of the first nbits bits of the significand of |v|
    (position e for 2^e); nbits=None: up to its last 1 bit."""
    if v == 0:
        return {}
    mant, exp = math.frexp(abs(v))  # |v| = mant * 2^exp, mant in [0.5, 1)
    scaled = int(round(mant * 2 ** 24))  # the 24 bits of a float significand
    bits = {exp - 1 - i: (scaled >> (23 - i)) & 1 for i in range(24)}
    if nbits is None:
        last = min(p for p, b in bits.items() if b)
        return {p: b for p, b in bits.items() if p >= last}
    return {p: b for p, b in bits.items() if p > exp - 1 - nbits}


EXAMPLE = math.pi  # the float the split panel follows


def caption_08_tf32_split(k):
    x, big, small, rest = split3(EXAMPLE)
    return paragraph("""
        (a) A float has 1 sign bit, 8 exponent bits and 23 stored mantissa bits (a 24-bit
        significand with the leading 1). TF32 keeps the sign, all 8 exponent bits (float's
        range) and the first 10 mantissa bits: an 11-bit significand, in a 32-bit register
        whose low 13 bits are zero. cvt.rna.tf32.f32 (wmma::__float_to_tf32 on the GPU,
        tc_tf32_round() on the host) adds half of the last kept bit, 0x1000, and clears bits
        0..12: rounding to nearest, ties away from zero, a relative error of at most
        u_t = 2^-11. (b) 8c's split of x = {x:.9g} (the float nearest pi), bit by bit on a
        common scale: big = tf32(x) = {big:.9g} keeps the first 11 bits; x - big is exact in
        float, and small = tf32(x - big) = {small:.9g} keeps its first 11; big + small misses x
        by {miss:.3g} (2^{e}), and by at most about 2^-22 |x| for any x. (c) x*w =
        (big_x + small_x)(big_w + small_w): 8c keeps big_x big_w, big_x small_w and
        small_x big_w, three mma_sync on the same accumulator (the two small terms first),
        and drops small_x small_w, about 2^-22 |x w|, as CUTLASS's 3xTF32 kernels do. 8a
        keeps only big_x big_w: each input off by up to 2^-11 of itself.""",
                     x=x, big=big, small=small, miss=abs(rest),
                     e=math.frexp(abs(rest))[1] - 1 if rest else "-inf")


@figure(section="Why tensor cores; 8c: 3xTF32, float's accuracy from TF32 products",
        uses=[])
def fig_08_tf32_split(k):
    """TF32 inside a float's 32 bits; 3xTF32's split into big and small and the products kept."""
    fig = new_figure(11.5, 6.4, "Step 08: TF32 inside a float, and 8c's 3xTF32: "
                     "x = big + small, three of four products")
    x, big, small, rest = split3(EXAMPLE)
    # (a) the formats
    ax, bottom = canvas_below(fig, 0.93, 0.01, 0.98, (-9, 36), (-2.2, 6.4),
                              title="(a) float and TF32: the same sign and exponent, 10 of "
                                    "23 mantissa bits")
    fields = [(0, 1, "sign", COLORS["halo"]), (1, 9, "exponent: 8 bits", COLORS["weight"]),
              (9, 32, "mantissa: 23 bits", COLORS["input"])]
    xb, tb = float_bits(x), float_bits(big)
    for row, (name, bits, kept) in enumerate([("float x", xb, 32), ("TF32: tf32(x)", tb, 19)]):
        y = row * 3.2
        ax.text(-0.5, y + 0.5, name, ha="right", va="center", fontsize=8)
        for i in range(32):
            color = next(col for a, b, _, col in fields if a <= i < b)
            hatch = None
            if i >= kept:
                color, hatch = "white", "///"
            box(ax, i, y, 1, 1, color, ec="#666666", lw=0.5, text=str(bits[i]), fs=7,
                hatch=hatch)
    for a, b, label, _ in fields:
        ax.text((a + b) / 2, -0.3, label, ha="center", va="bottom", fontsize=7.5)
    ax.text(19, 4.6, "bits 12..0: zero in TF32", ha="left", va="center", fontsize=7.5)
    ax.text(9, 4.6, "10 kept", ha="left", va="center", fontsize=7.5)
    ax.text(32.3, 1.6, "+ 0x1000,\nclear 0..12", ha="left", va="center", fontsize=7.5)
    arrow(ax, (33.5, 0.9), (33.5, 3.3), lw=0.9, ms=7)
    # (b) the split, bit by bit on one scale
    parts = [("x", x), ("big = tf32(x)", big), ("small = tf32(x - big)", small),
             ("x - big - small", rest)]
    sig = [significand(v, n) for (_, v), n in zip(parts, (24, 11, 11, None))]
    hi = max(max(s) for s in sig if s)
    lo = min(min(s) for s in sig if s)
    width = hi - lo + 1
    ax2, bottom2 = canvas_below(fig, bottom - 0.05, 0.01, 0.62, (-13, width + 1),
                                (-2.0, 4 * 1.6 + 0.6),
                                title="(b) 8c splits each input: x = big + small + (left out)")
    for row, ((name, v), bits) in enumerate(zip(parts, sig)):
        y = row * 1.6
        sign = "-" if v < 0 else "+"
        ax2.text(-0.5, y + 0.5, f"{name}  {sign}", ha="right", va="center", fontsize=8)
        for pos, bit in bits.items():
            col = hi - pos
            color = [COLORS["input"], COLORS["output"], COLORS["register"], COLORS["idle"]][row]
            box(ax2, col, y, 1, 1, color if bit else "white", ec="#666666", lw=0.5,
                text=str(bit), fs=6.5)
    marks = {hi, min(sig[1]), max(sig[2]), lo}  # where big ends, small begins, the last bit
    for pos in sorted(marks):
        ax2.text(hi - pos + 0.5, -0.3, f"2^{pos}", ha="center", va="bottom", fontsize=6.5)
    ax2.text(0, 4 * 1.6 + 0.2, f"x = {x:.9g}: big = {big:.9g}, small = {small:.6g}, "
             f"left out {rest:.3g}", fontsize=7.5, va="top")
    # (c) the products
    ax3, _ = canvas_below(fig, bottom - 0.05, 0.65, 0.34, (-4.5, 12.2), (-2.4, 8.6),
                          title="(c) the products of x*w")
    heads = ["big_w", "small_w"]
    for jj, head in enumerate(heads):
        ax3.text(jj * 6 + 2.9, -0.3, head, ha="center", va="bottom", fontsize=8)
    cells = {(0, 0): ("big_x big_w\nkept: ~|x w|", COLORS["output"]),
             (0, 1): ("big_x small_w\nkept: ~2^-11 |x w|", COLORS["register"]),
             (1, 0): ("small_x big_w\nkept: ~2^-11 |x w|", COLORS["register"]),
             (1, 1): ("small_x small_w\ndropped: ~2^-22 |x w|", "white")}
    for (i, jj), (text, color) in cells.items():
        box(ax3, jj * 6, i * 4, 5.8, 3.8, color, ec="#444444", lw=0.8,
            hatch="///" if color == "white" else None)
        ax3.text(jj * 6 + 2.9, i * 4 + 1.9, text, ha="center", va="center", fontsize=7.5,
                 zorder=5, bbox={"fc": "white", "ec": "none", "pad": 1.0} if color == "white"
                 else None)
    for i, head in enumerate(["big_x", "small_x"]):
        ax3.text(-0.3, i * 4 + 1.9, head, ha="right", va="center", fontsize=8)
    ax3.text(0, 8.3, "8a, 8b: big_x big_w only; 8c: three mma.sync", fontsize=7.5, va="top")
    return fig


# ---------------------------------------------------------------------------
# 08_mma_fragments

MMA_SHAPE = (16, 8, 8)  # mma.sync.m16n8k8 with TF32 inputs
MMA_WARPS_M = 2  # 8b's warp layout: 2 x WN warps (TC8B_TILE's first value), each 64 rows


def mma_owner_a(row, col):
    """(lane, register) holding a[row][col] of mma's 16 x 8 operand a (PTX ISA)."""
    g, t = row % 8, col % 4
    return 4 * g + t, (row // 8) + 2 * (col // 4)


def mma_owner_b(row, col):
    """(lane, register) holding b[row][col] of its 8 x 8 operand b."""
    return 4 * col + row % 4, row // 4


def mma_owner_c(row, col):
    """(lane, register) holding c[row][col] of its 16 x 8 accumulator."""
    return 4 * (row % 8) + col // 2, 2 * (row // 8) + col % 2


def mma_geometry(k):
    """8b's tiles from the constants of tensor_cores_mma.cu: a warp of WM pixels x WN
    channels is tn tiles of fn pixels by tm of fm channels (mma's m is channels)."""
    BM, BN = k["TC8B_BM"], k["TC8B_BN"]
    wn_n, _, stages, BK = k["TC8B_TILE"]  # WN, blocks per SM, stages, BK
    warps = MMA_WARPS_M * wn_n
    fm, fn, fk = MMA_SHAPE
    WM, WN = BM // MMA_WARPS_M, BN // wn_n
    stage = BK * (BM + BN)  # TC8B_STAGE(BK): unpadded rows
    return {"BM": BM, "BN": BN, "BK": BK, "stages": stages, "threads": warps * WARP,
            "warps": warps, "wm_n": MMA_WARPS_M, "wn_n": wn_n, "WM": WM, "WN": WN, "fm": fm,
            "fn": fn, "fk": fk, "tm": WN // fm, "tn": WM // fn, "stage": stage,
            "smem": stages * stage * 4}


def stage_col(bk, row, col):
    """tensor_cores_mma.cu's stage_col(): column col of row `row` of a stage (x's rows
    and w's alike), its 16-byte chunk XORed with (row / (32 / BK)) % (BK / 4)."""
    return col ^ (4 * ((row // (32 // bk)) % (bk // 4)))


def banks_ldmatrix(bk, swizzled):
    """The bank of each lane's word in one ldmatrix block (x's or w's): row g,
    column t, rows bk floats apart: [g][t]."""
    col = (lambda g, t: stage_col(bk, g, t)) if swizzled else (lambda g, t: t)
    return [[(g * bk + col(g, t)) % 32 for t in range(4)] for g in range(8)]


def worst_conflict(table, words=1):
    """The most lanes on one bank, each lane reading `words` consecutive banks."""
    counts = {}
    for row in table:
        for b in row:
            for w in range(words):
                counts[(b + w) % 32] = counts.get((b + w) % 32, 0) + 1
    return max(counts.values())


def bank_verdict(table, words=1):
    """What a warp's (with 8-byte words, a half warp's) load with these banks costs."""
    worst = worst_conflict(table, words)
    if words > 1:
        lanes = sum(len(row) for row in table)
        return (f"{lanes} lanes x {words} words: 32 different banks" if worst == 1 else
                f"up to {worst} lanes on one bank, a {worst}-way conflict")
    return ("32 different banks" if worst == 1 else
            f"up to {worst} lanes on one bank, {'an' if worst in (8, 11, 18) else 'a'} {worst}-way conflict")


def bank_tables(fig, top, tables, title):
    """Side by side, tables of the bank each lane of a warp reads ([g][t], lane
    4g + t, one colour per lane), each with its verdict: (title, table, words)."""
    from .draw import lane_color
    ax2, bottom = canvas_below(fig, top, 0.01, 0.98, (-2.5, 4 * 8 * 1.6 + 16), (-3.4, 9.6),
                               title=title)
    x0 = 0.0
    for name, table, words in tables:
        worst = worst_conflict(table, words)
        ax2.text(x0, -1.0, name, fontsize=7.5, va="bottom")
        for r, row in enumerate(table):
            for c, bank in enumerate(row):
                lane = 4 * r + c
                box(ax2, x0 + c * 1.6, r, 1.6, 1, lane_color(lane), ec="#ffffff", lw=0.5,
                    text=str(bank), fs=6.5)
        width = len(table[0]) * 1.6
        outline(ax2, x0, 0, width, len(table), "#333333", lw=0.8)
        ax2.text(x0, len(table) + 0.3, bank_verdict(table, words), fontsize=7.5, va="top",
                 color=COLORS["output_dark"] if worst == 1 else COLORS["highlight"])
        ax2.text(x0 - 0.2, -0.1, "g\\t", ha="right", va="bottom", fontsize=6)
        x0 += max(width, 12.0) + 4.5
    return bottom


def caption_08_mma_fragments(k):
    g = mma_geometry(k)
    return paragraph("""
        8b drives the tensor cores with the PTX instruction mma.sync.aligned.m16n8k8 (TF32
        inputs, float accumulators), c += a b, whose fragments have a documented layout. With
        lane = 4 g + t (g = lane / 4, t = lane % 4): (a) of its 16 x 8 operand a, lane 4g + t
        holds a0 = a[g][t], a1 = a[g+8][t], a2 = a[g][t+4], a3 = a[g+8][t+4]; (b) of its 8 x 8
        operand b, b0 = b[t][g] and b1 = b[t+4][g]; (c) of the 16 x 8 accumulator,
        c0 = c[g][2t], c1 = c[g][2t+1], c2 = c[g+8][2t], c3 = c[g+8][2t+1]. Each cell names the
        lane (L) and the register that holds it; one colour per lane. 8b computes y^T = w^T x^T:
        a is 16 output channels by 8 j of the weights, b 8 j by 8 pixels of x, c 16 channels
        by 8 pixels. One ldmatrix hands each thread b0 and b1 of two tiles of 8 pixels, in
        consecutive registers, and one more a0..a3 of a tile of 16 channels, from the filter
        written once per call as KRSC (rows of output channels, j consecutive, as x's rows);
        rows g and g + 8 of a channel tile are channels 2g and 2g + 1; each thread writes its
        own outputs to y. (d) The banks of one load: one ldmatrix block, rows g = 0..7 and
        columns t = 0..3, from rows of {bk} floats, bank ({bk} g + t) mod 32: {wa}; with each
        16-byte chunk XORed with the row (stage_col()), {va}. The
        block: {g[BM]} x {g[BN]} outputs, {g[warps]} warps ({g[wm_n]} along m, {g[wn_n]} along
        n) of {g[WM]} x {g[WN]}, each {g[tn]} x {g[tm]} tiles of {g[fn]} pixels x {g[fm]}
        channels ({acc} accumulators per thread), {mmas} mma.sync per warp and k-step of
        {g[fk]}; {g[stages]} stages of ({g[BM]} + {bn}) x {bk} floats in flight, {smem:,}
        bytes of shared memory.""",
                     g=g, bk=g["BK"], bn=g["BN"], va=bank_verdict(banks_ldmatrix(g["BK"], True)),
                     wa=bank_verdict(banks_ldmatrix(g["BK"], False)),
                     acc=g["tm"] * g["tn"] * 4, mmas=g["tm"] * g["tn"], smem=g["smem"])


@figure(section="8b: mma.sync and a cp.async pipeline",
        uses=["TC8B_BM", "TC8B_BN", "TC8B_TILE"])
def fig_08_mma_fragments(k):
    """8b's mma.m16n8k8 fragments: which lane holds which element; the banks of its loads."""
    from .draw import lane_color
    g = mma_geometry(k)
    fm, fn, fk = g["fm"], g["fn"], g["fk"]
    fig = new_figure(11.5, 7.2, "Step 08: 8b's mma.sync.m16n8k8 (TF32): lane 4g + t, "
                     "its registers, and the banks of its loads")
    cw = 2.0  # a cell's width (two short lines of text)
    ax, bottom = canvas_below(fig, 0.9, 0.01, 0.98, (-2.5, 3 * 8 * cw + 15.5), (-2.2, fm + 1.6))
    panels = [("(a) a = w^T: 16 x 8, a0..a3", fm, fk, mma_owner_a, "a", COLORS["weight_dark"]),
              ("(b) b = x^T: 8 x 8, b0, b1", fk, fn, mma_owner_b, "b", COLORS["input_dark"]),
              ("(c) c = y^T: 16 x 8, c0..c3", fm, fn, mma_owner_c, "c", COLORS["output_dark"])]
    x0 = 0.0
    for title, rows, cols, owner, reg, dark in panels:
        ax.text(x0, -1.2, title, fontsize=9.5, fontweight="bold", va="bottom")
        for r in range(rows):
            for c in range(cols):
                lane, idx = owner(r, c)
                box(ax, x0 + c * cw, r, cw, 1, lane_color(lane), ec="#ffffff", lw=0.5,
                    text=f"L{lane} {reg}{idx}", fs=5.5)
        outline(ax, x0, 0, cols * cw, rows, "#333333", lw=0.8)
        for c in range(cols):
            ax.text(x0 + c * cw + cw / 2, -0.1, str(c), ha="center", va="bottom", fontsize=6)
        for r in range(rows):
            ax.text(x0 - 0.2, r + 0.5, str(r), ha="right", va="center", fontsize=6)
        x0 += cols * cw + 7
    bx = 8 * cw + 7  # under panel (b)
    for i, line in enumerate(["lane = 4g + t:  g = lane / 4,  t = lane % 4",
                              "L13 a2: lane 13 (g = 3, t = 1), its register a2",
                              "a: 16 channels x 8 j of w; b: 8 j x 8 pixels of x;",
                              "ldmatrix hands each thread b0, b1 of two pixel tiles,",
                              "and a0..a3 of w (KRSC: row g + 8h = channel 2g + h);",
                              "x rounded to TF32 (cvt.rn), w once per call",
                              "c: stored by each thread straight to y",
                              "(c0, c2: two adjacent channels, one 8-byte store)"]):
        ax.text(bx, fk + 1.2 + 1.0 * i, line, fontsize=7.5, va="top")
    # (d) the banks
    tables = [(f"x or w (ldmatrix), rows of {g['BK']} floats", banks_ldmatrix(g["BK"], False), 1),
              ("x or w, chunks XORed (stage_col)", banks_ldmatrix(g["BK"], True), 1)]
    bank_tables(fig, bottom - 0.06, tables, "(d) the bank of each lane's load: 32 lanes, "
                                            "32 banks?")
    return fig


def caption_08_mma_pipeline(k):
    g = mma_geometry(k)
    return paragraph("""
        8b's steps on a timeline: one warp's fragment loads (L: {g[tm]} 8-byte pairs of w
        and {ldm} ldmatrix of x per thread, converted to TF32) and its products (P: the
        {mmas} mma.sync of a k-step) on the top two lanes, the {g[stages]} stage buffers of
        shared memory below ({g[stages]} stages of BK = {g[BK]}, {ks} k-steps of 8 a step;
        the lengths are drawn to show the order, not measured). A buffer is copied
        (cp.async, hatched while in flight), lands, and is read by its step's fragment
        loads. All {g[stages]} stages are in flight before the loop, and in both panels the
        barrier (red) sits before the last k-step's products: every warp then holds that
        k-step's fragments, so the stage is free, and its refill with step s + {g[stages]}
        starts while the tensor cores work; the next step's stage has landed
        (cp.async.wait_group {wait} before the barrier). (a) 8b, two sets of fragment
        registers: a k-step's loads run under the products of the k-step before, and after
        the barrier the first fragments of the next stage load under the last products, so
        the products follow one another without a gap. (b) One set, as 8c (whose split
        fragments take the second set's registers), drawn with 8b's stages: each k-step
        loads, then multiplies, and the tensor pipe waits for every k-step's loads.
        instructor/logs/08_8b_barrier.txt measures both in 8b.""",
                     g=g, ks=g["BK"] // g["fk"], ldm=g["tn"] // 2, mmas=g["tm"] * g["tn"],
                     wait=g["stages"] - 2)


@figure(section="8b: mma.sync and a cp.async pipeline",
        uses=["TC8B_BM", "TC8B_BN", "TC8B_TILE"])
def fig_08_mma_pipeline(k):
    """8b's cp.async ring with two fragment sets, against one set."""
    from .draw import gantt_axes, gantt_bar
    g = mma_geometry(k)
    S, ks = g["stages"], g["BK"] // g["fk"]
    L, P, copy = 1.0, 3.0, 2.0 * ks  # drawn lengths: fragment loads, products, a copy in flight
    steps = S + 1
    fig = new_figure(11.5, 7.2, f"Step 08: 8b's cp.async pipeline, {S} stages of {ks} k-steps: "
                     "two fragment sets against one")
    lanes = ["warp: loads (L)", "warp: products (P)"] + [f"buffer {b}" for b in range(S)]
    xmax = copy + 0.6 + steps * (ks * (L + P) + 0.4) + 0.5
    flight = dict(hatch="////", ec="#999999")

    def in_flight(ax, x0, b, step):
        gantt_bar(ax, x0, x0 + copy, 2 + b, "white", f"copy of step {step}", fs=6.5, **flight)
        return x0 + copy

    def barrier(ax, x):
        ax.plot([x, x], [-0.45, S + 1.45], color=COLORS["highlight"], lw=1.4, zorder=6)

    mmas = f"{g['tm'] * g['tn']} mma"
    for panel, sets in ((0, 2), (1, 1)):
        top = 0.9 - panel * 0.47
        ax = gantt_axes(fig, (0.12, top - 0.37, 0.87, 0.37), lanes, xmax,
                        "(a) 8b: two sets of fragment registers" if sets == 2 else
                        "(b) one set (8c's loop, drawn with 8b's stages)")
        landed = [in_flight(ax, 0.3 * st, st, st) for st in range(S)]  # the prologue
        t = landed[0] + 0.3 * (S - 1)
        barrier(ax, t)  # stage 0 has landed
        t += 0.2
        if sets == 2:  # k-step 0 of stage 0, before the loop
            gantt_bar(ax, t, t + L, 0, COLORS["shared"], "L", fs=6.5)
        read0 = t
        tp = t + L  # when the products of the next k-step may start
        for s in range(steps):
            b = s % S
            ax.text(read0, -0.55, f"step {s}", fontsize=7, va="bottom")
            for kk in range(ks):
                last = kk == ks - 1
                if sets == 1:  # load, then multiply
                    start = tp if kk else read0
                    gantt_bar(ax, start, start + L, 0, COLORS["shared"], "L", fs=6.5)
                    tp = start + L
                elif not last:  # the next k-step's fragments, under these products
                    gantt_bar(ax, tp, tp + L, 0, COLORS["shared"], "L", fs=6.5)
                if last:
                    gantt_bar(ax, read0, tp, 2 + b, COLORS["input"], f"read by step {s}", fs=6.5)
                    barrier(ax, tp)
                    if s < steps - 1:  # the last step's refill is left out
                        in_flight(ax, tp + 0.1, b, s + S)
                    tp += 0.2
                    nxt = tp
                    if sets == 2 and s < steps - 1:  # k-step 0 of the next stage
                        gantt_bar(ax, tp, tp + L, 0, COLORS["shared"], "L", fs=6.5)
                gantt_bar(ax, tp, tp + P, 1, COLORS["register"], mmas, fs=6.5)
                tp += P
            read0 = nxt if sets == 2 else tp
        ax.text(0, S + 2.05, "red: the barrier, before the last k-step's products. " + (
            "Loads run under the products: the products follow one another" if sets == 2 else
            "Each k-step's products wait for its loads"),
            fontsize=7.5, ha="left", va="top", color=COLORS["highlight"])
    return fig


def banks_nchw(lda):
    """The bank of b0 = A[pixel g][column t] for lane 4g + t, from a stage whose
    rows are A's columns, lda floats apart: word t lda + g."""
    return [[(t * lda + g) % 32 for t in range(4)] for g in range(8)]


def caption_08_nchw_stage(k):
    g = mma_geometry(k)
    lda = k["TC8B_NCHW_LDA"]
    return paragraph("""
        8b and 8c in NCHW. (a) In NHWC a pixel's values of consecutive j (channels of one
        tap) are neighbours in x, so a stage holds {g[BM]} rows, one per pixel, of {bk} j each,
        and a 16-byte copy is 4 j of one pixel. (b) In NCHW the neighbours are pixels: the stage
        holds A transposed, {bk} rows, one per column j, of the block's {g[BM]} pixels and
        {pad} floats of padding ({lda} floats a row); a 16-byte copy is 4 pixels of one j, one
        copy where those 4 pixels are neighbours in x (a 1x1 filter, stride 1, no padding,
        H W a multiple of 4), else 4 copies of 4 bytes. A warp copies one whole row. The
        filter, KCRS, is already rows of output channels with j consecutive: w's part of the
        stage is NHWC's. (c) ldmatrix reads rows of 16 bytes, and a pixel's j are now a row
        apart, so x's operands b0 = A[g][t] and b1 = A[g][t + 4] come by 4-byte loads: lane
        4g + t reads word t {lda} + g. Rows of {bm} floats: {v0}; rows of {lda}: {v1}.""",
                     g=g, bk=g["BK"], bm=g["BM"], lda=lda, pad=lda - g["BM"],
                     v0=bank_verdict(banks_nchw(g["BM"])), v1=bank_verdict(banks_nchw(lda)))


@figure(section="8b and 8c in NCHW: pixels side by side",
        uses=["TC8B_BM", "TC8B_BN", "TC8B_TILE", "TC8B_NCHW_LDA"])
def fig_08_nchw_stage(k):
    """8b's stage in NHWC and in NCHW, and the banks of x's fragment loads in NCHW."""
    g = mma_geometry(k)
    lda, bk, bm = k["TC8B_NCHW_LDA"], g["BK"], g["BM"]
    fig = new_figure(11.5, 6.4, "Step 08: x's part of a stage, NHWC against NCHW, "
                     "and x's fragment loads in NCHW")
    rows_shown = 6
    cw = 0.9  # one float
    ax, bottom = canvas_below(fig, 0.9, 0.01, 0.98, (-3.0, bk * cw + 56), (-2.6, rows_shown + 3.4))
    # (a) NHWC: pixel rows of bk floats, chunks of 4 j
    ax.text(0, -1.4, f"(a) NHWC: {bm} pixel rows x {bk} j", fontsize=9.5,
            fontweight="bold", va="bottom")
    for r in range(rows_shown):
        for c in range(bk // 4):
            box(ax, c * 4 * cw, r, 4 * cw, 1, COLORS["input"], ec="#ffffff", lw=0.6,
                text=f"{4 * c}-{4 * c + 3}" if r == 0 else None, fs=5.5)
        ax.text(-0.3, r + 0.5, f"pixel {r}", ha="right", va="center", fontsize=6)
    outline(ax, 0, 0, bk * cw, rows_shown, "#333333", lw=0.8)
    ax.text(0, rows_shown + 0.4, f"... {bm} pixel rows;\na 16-byte copy: 4 j of one pixel",
            fontsize=7.5, va="top")
    # (b) NCHW: bk rows of bm pixels + padding
    x0 = bk * cw + 12
    scale = 40.0 / lda  # the row drawn 40 units wide
    ax.text(x0, -1.4, f"(b) NCHW: {bk} j rows x ({bm} pixels + {lda - bm})",
            fontsize=9.5, fontweight="bold", va="bottom")
    for r in range(rows_shown):
        for c in range(bm // 4):
            box(ax, x0 + c * 4 * scale, r, 4 * scale, 1, COLORS["input"], ec="#ffffff", lw=0.3)
        box(ax, x0 + bm * scale, r, (lda - bm) * scale, 1, COLORS["idle"], ec="#ffffff", lw=0.3,
            hatch="///")
        ax.text(x0 - 0.3, r + 0.5, f"j {r}", ha="right", va="center", fontsize=6)
    outline(ax, x0, 0, lda * scale, rows_shown, "#333333", lw=0.8)
    ax.text(x0, rows_shown + 0.4, f"... {bk} rows; a 16-byte copy: 4 pixels of one j;\n"
            f"hatched: {lda - bm} floats of padding", fontsize=7.5, va="top")
    bank_tables(fig, bottom - 0.04,
                [(f"b0 = A[g][t] from rows of {bm} floats", banks_nchw(bm), 1),
                 (f"rows of {lda} floats (padded)", banks_nchw(lda), 1)],
                "(c) NCHW: the bank of lane 4g + t's load of b0 (word t x row + g)")
    return fig
