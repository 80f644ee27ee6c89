"""Step 09's figures: step 08's implicit GEMM on Hopper's wgmma and TMA (docs/09_hopper.md).

    09_wgmma            9a's block tile as two warpgroups' wgmma products, and
                        the 128-byte swizzle of its activation rows
    09_tma              9b's block: a producer warpgroup, two consumer
                        warpgroups and the ring of stages with their full and
                        empty mbarriers; the pixels one im2col copy walks
    09_tma_fp16         9b-fp16: one stage in shared memory, the weights' and
                        the activations' boxes that both operands of wgmma
                        are read from; the output's way out, in chunks through
                        the two halves of a warpgroup's buffer and TMA stores
    09_wgmma_fp16       9a-fp16: who copies which 16 bytes of a stage with
                        cp.async, and where the 128-byte swizzle puts them

The tile sizes are the #defines of 09_hopper/hopper_wgmma_9a.cu (TC9A_*),
hopper_tma_9b.cu (TC9B_*), hopper_tma_fp16.cu (TC9H_*) and
hopper_wgmma_fp16.cu (TC9AH_*); wgmma's k for
TF32 and for FP16, the four warps of a warpgroup and the eight rows of a
128-byte swizzle pattern are the hardware's (WGMMA_K, WGMMA_K16, WARPGROUP
and ATOM below); the problems are CUTLASS's and HPC101's in NHWC, from the
benchmark's table.
"""
from .draw import (CHANNEL_COLORS, COLORS, WARP, arrow, box, canvas_below, fmt, new_figure,
                   out_size, outline)
from .manifest import figure, paragraph

NOTE = "09_hopper.md"  # the lecture note of every figure here (docs/)

WGMMA_K = 8  # wgmma's k for TF32: m64nNk8
WARPGROUP = 4  # warps per warpgroup: the hardware's
FOLLOW_9A = {"m": 64045, "k": 100, "j": 700}  # the output the note follows (CUTLASS's problem)


# ---------------------------------------------------------------------------
# 09_wgmma

def wgmma_geometry(k):
    """9a's tiles from the constants of hopper_wgmma_9a.cu, and the output
    the note follows, from its block to its lane, register and swizzled slot."""
    BM, BN, BK = k["TC9A_BM"], k["TC9A_BN"], k["TC9A_BK"]
    warps = k["TC9A_THREADS"] // WARP
    groups = warps // WARPGROUP
    M64 = BN // groups  # rows of D per warpgroup: wgmma's M
    row_bytes, ldw = k["TC9A_ROW"], k["TC9A_LDW"]
    stage = BM * row_bytes + BK * ldw * 4
    smem = 1024 + k["TC9A_STAGES"] * stage + BM * 16
    m, kk, j = FOLLOW_9A["m"], FOLLOW_9A["k"], FOLLOW_9A["j"]
    px, ch = m % BM, kk % BN  # pixel and channel within the block's tile
    wg, r64 = ch // M64, ch % M64
    warp = wg * WARPGROUP + r64 // 16
    g, half = r64 % 8, (r64 % 16) // 8
    i, t, odd = px // 8, (px % 8) // 2, px % 2
    jj = j % BK  # j within its stage
    chunk = jj // 4
    slot = chunk ^ (px % 8)
    copier = (px % 32) * 8 + chunk  # thread tid copies rows tid / 8 + 32 i, chunk tid % 8
    return {"BM": BM, "BN": BN, "BK": BK, "warps": warps, "groups": groups, "M64": M64,
            "stages": k["TC9A_STAGES"], "threads": k["TC9A_THREADS"], "row": row_bytes,
            "ldw": ldw, "stage": stage, "smem": smem, "acc": M64 * BM // (WARPGROUP * WARP),
            "chunks": row_bytes // 16, "m": m, "k": kk, "j": j, "bx": m // BM, "by": kk // BN,
            "px": px, "ch": ch, "wg": wg, "warp": warp, "lane": 4 * g + t,
            "reg": 4 * i + 2 * half + odd, "kt": j // BK, "jj": jj, "chunk": chunk,
            "slot": slot, "copier": copier, "ks": jj // WGMMA_K,
            "byte": px * row_bytes + slot * 16 + (jj % 4) * 4}


def caption_09_wgmma(k):
    g = wgmma_geometry(k)
    return paragraph("""
        (a) 9a's block computes the transposed tile D[k][m] = sum_j W[k][j] A^T[j][m]:
        {g[BN]} output channels (rows) by {g[BM]} pixels (columns), with {g[threads]} threads,
        {g[groups]} warpgroups of {wg} warps. Warpgroup w owns channels {g[M64]}w to
        {g[M64]}w + {last}, one wgmma.mma_async m{g[M64]}n{g[BM]}k{kk} per k-step of {kk}:
        its first operand, {g[M64]} x {kk} of the weights, from registers (each warp {wrows}
        rows, rounded to TF32 with cvt.rna); its second, {kk} x {g[BM]} of the activations,
        read by the tensor cores from shared memory through a matrix descriptor (TF32 operands
        in shared memory must be K-major: j contiguous, as the channels of an NHWC image are).
        {g[acc]} accumulators per thread. A stage holds {g[BK]} j: a row of {g[row]} bytes per
        pixel and a {g[BK]} x {g[BN]} weight tile in rows of {g[ldw]} floats; {g[stages]}
        stages and a table of the pixels take {smem:,} bytes of shared memory. Red: the
        output the note follows, y[{m}][{g[k]}] on CUTLASS's problem in NHWC: block
        ({g[bx]}, {g[by]}), pixel {g[px]} and channel {g[ch]} of its tile, warpgroup
        {g[wg]}, warp {g[warp]}, lane {g[lane]}, accumulator acc[{g[reg]}]. (b) The
        activation rows of a stage without and with the 128-byte swizzle: each row is
        {g[chunks]} chunks of 16 bytes (4 floats of j); the tensor cores read 8 rows of one
        chunk at a time. Stored plainly, chunk c of 8 rows sits in the same 4 banks, an
        8-way conflict; swizzled, chunk c of row p goes to slot c ^ (p % 8), 8 different
        slots, all 32 banks. Red: A[{m}][{g[j]}], j {g[jj]} of stage {g[kt]}, in chunk
        {g[chunk]} of pixel row {g[px]}, stored in slot {g[slot]} ({g[byte]:,} bytes into the
        stage), copied by thread {g[copier]} and read at k-step {g[ks]}.""",
                     g=g, wg=WARPGROUP, last=g["M64"] - 1, kk=WGMMA_K, wrows=g["M64"] // WARPGROUP,
                     smem=g["smem"], m=fmt(g["m"]))


@figure(section="9a: wgmma, a warpgroup's product from shared memory",
        uses=["TC9A_BM", "TC9A_BN", "TC9A_BK", "TC9A_THREADS", "TC9A_STAGES", "TC9A_LDW",
              "TC9A_ROW"])
def fig_09_wgmma(k):
    """9a's block tile as two warpgroups' wgmma products, and the 128-byte swizzle."""
    g = wgmma_geometry(k)
    BM, BN = g["BM"], g["BN"]
    sc = 4  # pixels and channels per drawn cell in (a)
    fig = new_figure(11.5, 7.4, f"Step 09: 9a's block: {BN} channels x {BM} pixels, "
                     f"{g['groups']} warpgroups of wgmma m{g['M64']}n{BM}k{WGMMA_K}; "
                     "the 128-byte swizzle")
    dw, dh = BM / sc, BN / sc  # D in cells
    ax, bottom = canvas_below(fig, 0.9, 0.01, 0.98, (-14, dw + 84), (-9, dh + 2.5),
                              title="(a) D = W x A^T, the block's tile of y transposed")
    wgc = [COLORS["output"], "#c7e9c0"]
    for w in range(g["warps"]):
        wg = w // WARPGROUP
        r0 = w * (g["M64"] // WARPGROUP) / sc
        box(ax, 0, r0, dw, g["M64"] / WARPGROUP / sc, wgc[wg], ec="#ffffff", lw=0.6, z=1)
        ax.text(0.5, r0 + 0.5 * g["M64"] / WARPGROUP / sc, f"warp {w}", fontsize=6.5,
                va="center", zorder=5)
    for wg in range(g["groups"]):
        outline(ax, 0, wg * g["M64"] / sc, dw, g["M64"] / sc, "#333333", lw=1.2)
        ax.text(dw + 0.8, (wg + 0.5) * g["M64"] / sc,
                f"warpgroup {wg}: channels {wg * g['M64']}-{(wg + 1) * g['M64'] - 1}\n"
                f"wgmma m{g['M64']}n{BM}k{WGMMA_K}, {g['acc']} accumulators per thread",
                fontsize=7.5, va="center")
    box(ax, g["px"] / sc, g["ch"] / sc, 1, 1, COLORS["highlight"], ec="black", lw=0.6, z=6)
    # the operands of one k-step: W (registers) on the left, A^T (shared memory) above
    box(ax, -4, 0, 2, dh, COLORS["weight"], ec="#555555", lw=0.8, z=1)
    ax.text(-3, dh + 0.4, f"W\n{BN} x {WGMMA_K}\nregisters", ha="center", va="top", fontsize=7)
    box(ax, 0, -4, dw, 2, COLORS["input"], ec="#555555", lw=0.8, z=1)
    ax.text(dw / 2, -4.3, f"A^T: {WGMMA_K} x {BM} pixels, from shared memory (descriptor)",
            ha="center", va="bottom", fontsize=7.5)
    ax.text(-0.3, dh + 0.4, "0", ha="right", va="top", fontsize=6.5)
    ax.text(dw, dh + 0.4, f"{BM} pixels", ha="right", va="top", fontsize=7)
    notes = [f"one stage: {g['BK']} j = {g['BK'] // WGMMA_K} k-steps of {WGMMA_K}",
             f"  activations: {BM} rows of {g['row']} bytes (swizzled)",
             f"  weights: {g['BK']} x {BN} in rows of {g['ldw']} floats",
             f"{g['stages']} stages + pixel table: {g['smem']:,} bytes",
             f"red: y[{fmt(g['m'])}][{g['k']}]: block ({g['bx']}, {g['by']}),",
             f"  warp {g['warp']}, lane {g['lane']}, acc[{g['reg']}]"]
    for i, line in enumerate(notes):
        ax.text(dw + 42, 2 + 3.6 * i, line, fontsize=7.5, va="center",
                color=COLORS["highlight"] if line.startswith(("red", "  warp")) else
                COLORS["text"])
    # (b) plain and swizzled rows
    n = g["chunks"]
    ax2, _ = canvas_below(fig, bottom - 0.05, 0.01, 0.98, (-4, 4 * n + 40), (-2.2, 9.8),
                          title="(b) 8 rows of 128 bytes: chunk c of row p stored in slot c, "
                                "or in slot c ^ (p % 8)")
    for panel, (x0, swz, title) in enumerate([(0, False, "plain: chunk 0 in slot 0 of every "
                                                          "row"),
                                              (n + 6, True, "swizzled: chunk 0 in slot p")]):
        ax2.text(x0, -0.4, title, fontsize=8, va="bottom")
        for p in range(8):
            for s in range(n):
                c = s ^ p if swz else s
                hot = c == 0
                box(ax2, x0 + s, p, 1, 1, COLORS["input_dark"] if hot else
                    CHANNEL_COLORS_8[c], ec="#ffffff", lw=0.5, text=str(c), fs=6.5,
                    tc="white" if hot else None)
            ax2.text(x0 - 0.3, p + 0.5, str(p), ha="right", va="center", fontsize=6)
        outline(ax2, x0, 0, n, 8, "#333333", lw=0.8)
        ax2.text(x0, 8.4, "the 8 dark cells: " + ("the same 4 banks" if not swz else
                                                  "32 different banks"),
                 fontsize=7.5, va="top",
                 color=COLORS["highlight"] if not swz else COLORS["output_dark"])
    tx = 2 * n + 12
    lines = [f"red in the note: A[{fmt(g['m'])}][{g['j']}], stage {g['kt']}, j {g['jj']}:",
             f"  pixel row {g['px']}, chunk {g['chunk']} -> slot {g['chunk']} ^ {g['px'] % 8}"
             f" = {g['slot']}",
             f"  copied by thread {g['copier']}, read at k-step {g['ks']}",
             "descriptor: start / 16, stride 1024 bytes (8 rows),",
             "  swizzle mode 128 bytes; stage aligned to 1024 bytes"]
    for i, line in enumerate(lines):
        ax2.text(tx, 0.6 + 1.8 * i, line, fontsize=7.5, va="center",
                 color=COLORS["highlight"] if i < 3 else COLORS["text"])
    return fig


CHANNEL_COLORS_8 = ["#9ecae1", "#fdae6b", "#a1d99b", "#cbc9e2", "#fcbba1", "#fdd0a2", "#c7e9c0",
                    "#dadaeb"]


# ---------------------------------------------------------------------------
# 09_tma

FOLLOW_9B = 39  # the tile whose im2col copy 09_tma follows (the lab problem)


def tma_geometry(k):
    """9b's block from the constants of hopper_tma_9b.cu, and the pixels of
    one tile's im2col copy on the lab problem: where they start and how the
    copy walks them across rows and images."""
    BM, BN, BK, stages = k["TC9B_BM"], k["TC9B_BN"], k["TC9B_BK"], k["TC9B_STAGES"]
    threads = k["TC9B_THREADS"]
    pr = k["problem hpc101-nhwc"]
    N, C, H, W, R, S = pr["n"], pr["c"], pr["h"], pr["w"], pr["r"], pr["s"]
    P, Q = out_size(H, R, pr["pad_h"]), out_size(W, S, pr["pad_w"])
    m0 = FOLLOW_9B * BM
    runs = []  # (n, p, q0, q1): the tile's pixels, one run per output row
    m = m0
    while m < m0 + BM:
        n, rem = m // (P * Q), m % (P * Q)
        p, q = rem // Q, rem % Q
        q1 = min(Q, q + m0 + BM - m)
        runs.append((n, p, q, q1))
        m += q1 - q
    n0, p0, q0 = runs[0][0], runs[0][1], runs[0][2]
    return {"BM": BM, "BN": BN, "BK": BK, "stages": stages, "threads": threads,
            "groups": threads // (WARPGROUP * WARP), "act": k["TC9B_ACT_BYTES"],
            "wts": k["TC9B_WTS_BYTES"], "boxes": BN // 32, "smem": k["TC9B_SMEM"],
            "N": N, "C": C, "H": H, "W": W, "R": R, "S": S, "P": P, "Q": Q,
            "pad_h": pr["pad_h"], "pad_w": pr["pad_w"], "cch": -(-C // BK),
            "kts": R * S * -(-C // BK), "bx": FOLLOW_9B, "m0": m0, "runs": runs,
            "h0": p0 - pr["pad_h"], "w0": q0 - pr["pad_w"], "n0": n0,
            "upper_h": pr["pad_h"] - (R - 1), "upper_w": pr["pad_w"] - (S - 1)}


def caption_09_tma(k):
    g = tma_geometry(k)
    runs = "; ".join(f"image {n}, row {p}, columns {a}-{b - 1}" for n, p, a, b in g["runs"])
    return paragraph("""
        (a) 9b's block of {g[threads]} threads: warpgroup 2 is the producer, whose first
        thread issues every TMA copy; warpgroups 0 and 1 are the consumers, each issuing
        wgmma m64n{g[BM]}k8 for 64 of the block's {g[BN]} output channels, as in 9a. The
        block is persistent: it takes tiles bx, bx + gridDim.x, ..., and the stages of all its
        tiles go round the ring of {g[stages]} buffers: stage it, counted across the tiles, uses
        buffer it % {g[stages]}, which holds the
        activations of {g[BM]} pixels x {g[BK]} channels ({g[act]:,} bytes, one im2col
        copy) and the weights, {g[boxes]} boxes of {g[BK]} rows x 32 channels ({g[wts]:,}
        bytes, {g[boxes]} tiled copies). Each buffer has two mbarriers: "full", on which the
        producer arrives announcing the {total:,} bytes and the copies count them in, and
        "empty", on which each of the 8 consumer warps arrives once its wgmmas of that stage
        are complete. A wait names the phase it expects by its parity, 0, 1, 0, ... on each
        round of the ring. (b) The pixels of one im2col copy on the HPC101 lab problem
        ({g[N]} images of {g[H]} x {g[W]}, 3 x 3, padding 1): tile {g[bx]}, block {g[bx]}'s
        first, starts at output
        pixel {m0}, and its copy takes {g[BM]} consecutive pixels, {runs}: across a row end and
        an image end. The producer gives the window corner of the first pixel, (n, h, w) =
        ({g[n0]}, {g[h0]}, {g[w0]}), and a tap offset (s, r); the tensor map holds the rest:
        the corners run from -{g[pad_w]} to {g[upper_w]} past the far edge of each row (so
        {g[Q]} pixels a row), rows from -{g[pad_h]} to {g[upper_h]} past the last, then the next
        image; what lies outside the image reads as 0. Stage kt of a tile is tap kt / {g[cch]},
        channels {g[BK]} (kt % {g[cch]}) on: {g[kts]} stages a tile here.""",
                     g=g, total=g["act"] + g["wts"], runs=runs, m0=fmt(g["m0"]))


@figure(section="9b: TMA copies and warps in roles",
        uses=["TC9B_BM", "TC9B_BN", "TC9B_BK", "TC9B_STAGES", "TC9B_THREADS", "TC9B_ACT_BYTES",
              "TC9B_WTS_BYTES", "TC9B_SMEM", "problem hpc101-nhwc"])
def fig_09_tma(k):
    """9b's roles and ring of stages, and the pixels of one im2col copy."""
    g = tma_geometry(k)
    fig = new_figure(11.5, 7.6, f"Step 09: 9b's block: a producer warpgroup, {g['groups'] - 1} "
                     f"consumer warpgroups, {g['stages']} stages handed over through mbarriers")
    ax, bottom = canvas_below(fig, 0.93, 0.01, 0.98, (0, 108), (2, 31),
                              title="(a) roles and the ring of stages")
    box(ax, 1, 11, 20, 8, COLORS["register"], text="warpgroup 2: producer\nthread 0 issues "
        "every copy\n(setmaxnreg: 40 registers)", fs=7.5)
    for wg in range(g["groups"] - 1):
        box(ax, 87, 4 + 13 * wg, 20, 9, COLORS["output"],
            text=f"warpgroup {wg}: consumer\nwgmma m64n{g['BM']}k8,\nchannels "
                 f"{64 * wg}-{64 * wg + 63}\n(setmaxnreg: 232)", fs=7.5)
    bw = 12
    for st in range(g["stages"]):
        x0 = 27 + st * (bw + 1.5)
        box(ax, x0, 6, bw, 12, COLORS["input"], text=f"x: {g['BM']} px\nx {g['BK']} ch\n"
            f"{g['act'] // 1024} KB", fs=6.5)
        for b in range(g["boxes"]):
            box(ax, x0 + b * bw / g["boxes"], 18, bw / g["boxes"], 4, COLORS["weight"],
                ec="#ffffff")
        ax.text(x0 + bw / 2, 20, f"w: {g['wts'] // 1024} KB", ha="center", va="center",
                fontsize=6.5)
        ax.text(x0 + bw / 2, 4.9, f"buffer {st}", ha="center", va="bottom", fontsize=7)
        box(ax, x0, 23, bw / 2 - 0.3, 2.6, COLORS["shared"], text="full", fs=6.5)
        box(ax, x0 + bw / 2 + 0.3, 23, bw / 2 - 0.3, 2.6, COLORS["idle"], text="empty", fs=6.5)
    ax.text(1, 3.5, "persistent: one block per SM takes tiles bx, bx + gridDim.x, ...;\n"
            "its stages go round the ring from one tile into the next", fontsize=7,
            va="center")
    arrow(ax, (21, 15), (27, 12), color=COLORS["input_dark"])
    ax.text(21.5, 17.5, "TMA copies,\nbytes counted\non full", fontsize=6.5, va="top")
    last = 27 + g["stages"] * (bw + 1.5) - 1.5
    arrow(ax, (last + 0.5, 11), (87, 8.5), color=COLORS["output_dark"])
    arrow(ax, (last + 0.5, 13), (87, 21.5), color=COLORS["output_dark"])
    ax.text(last + 1, 15.5, "wait full,\nwgmma", fontsize=6.5, va="top")
    arrow(ax, (87, 26), (11, 19.5), color="#777777", rad=-0.12)
    ax.text(50, 30, "each consumer warp arrives on empty when its wgmmas of the stage are "
            "done; the producer waits on empty before it reuses the buffer", fontsize=7,
            ha="center", va="center")
    # (b) the pixels of one im2col copy
    Q = g["Q"]
    rows = [(n, p) for n, p, _, _ in g["runs"]]
    show = [(rows[0][0], rows[0][1] - 1)] + rows + [(rows[-1][0], rows[-1][1] + 1)]
    rh = 2.4  # a drawn row's height, in pixel widths
    ax2, _ = canvas_below(fig, bottom - 0.03, 0.01, 0.98, (-16, Q + 30),
                          (-2.5, rh * len(show) + 1),
                          title=f"(b) tile {g['bx']}'s im2col copy on the lab problem: "
                                f"{g['BM']} consecutive output pixels, walked by the tensor map")
    order = 0
    for i, (n, p) in enumerate(show):
        y = rh * i
        ax2.text(-1, y + rh / 2, f"image {n}, row {p}", ha="right", va="center", fontsize=7)
        run = [r for r in g["runs"] if (r[0], r[1]) == (n, p)]
        for q in range(Q):
            inside = bool(run) and run[0][2] <= q < run[0][3]
            box(ax2, q, y + 0.2, 1, rh - 0.4, COLORS["input_dark"] if inside else
                COLORS["idle"], ec="#ffffff", lw=0.2, z=2)
        if run:
            a, b = run[0][2], run[0][3]
            ax2.text(Q + 1, y + rh / 2, f"pixels {order}-{order + b - a - 1} of the copy",
                     fontsize=7, va="center", color=COLORS["input_dark"])
            order += b - a
        if i + 1 < len(show) and show[i + 1][0] != n:
            ax2.plot([-15, Q + 29], [y + rh, y + rh], color=COLORS["highlight"], lw=1.0,
                     zorder=6)
            ax2.text(Q + 29, y + rh - 0.2, "next image", ha="right", va="bottom", fontsize=6.5,
                     color=COLORS["highlight"])
    first = g["runs"][0]
    ax2.text(first[2], -0.3, f"start: window corner (n, h, w) = ({g['n0']}, {g['h0']}, "
             f"{g['w0']}) of pixel ({first[0]}, {first[1]}, {first[2]})", fontsize=7,
             va="bottom", color=COLORS["highlight"])
    return fig


# ---------------------------------------------------------------------------
# 09_tma_fp16

WGMMA_K16 = 16  # wgmma's k for FP16: m64nNk16
HALF, FLOAT = 2, 4  # bytes of a half and of a float
LABEL_BOX = {"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none",
             "alpha": 0.8}  # behind a label drawn over lines
ATOM = 8  # rows of one 128-byte swizzle pattern (1024 bytes): a drawn row in (a)


def tma_fp16_geometry(k):
    """9b-fp16's stage and its way out, from the constants of hopper_tma_fp16.cu."""
    BM, BN, BK = k["TC9H_BM"], k["TC9H_BN"], k["TC9H_BK"]
    groups = k["TC9H_THREADS"] // (WARPGROUP * WARP)
    M64 = BN // (groups - 1)  # channels per consumer warpgroup: wgmma's M
    out_px, box = k["TC9H_OUT_PX"], k["TC9H_BOX_BYTES"]
    box_ch = box // (out_px * FLOAT)  # channels of a TMA box of y
    boxes = M64 // box_ch  # boxes a chunk of out_px pixels fills
    return {"BM": BM, "BN": BN, "BK": BK, "stages": k["TC9H_STAGES"],
            "threads": k["TC9H_THREADS"], "groups": groups, "M64": M64,
            "act": k["TC9H_ACT_BYTES"], "wts": k["TC9H_WTS_BYTES"],
            "arow": k["TC9H_ACT_BYTES"] // BM, "wrow": k["TC9H_WTS_BYTES"] // BN,
            "ksteps": BK // WGMMA_K16, "kbytes": WGMMA_K16 * HALF,
            "acc": M64 * BM // (WARPGROUP * WARP), "out_px": out_px, "chunks": BM // out_px,
            "box": box, "box_ch": box_ch, "box_row": box_ch * FLOAT, "boxes": boxes,
            "out": k["TC9H_OUT_BYTES"], "halves": k["TC9H_OUT_BYTES"] // (boxes * box),
            "smem": k["TC9H_SMEM"]}


def caption_09_tma_fp16(k):
    g = tma_fp16_geometry(k)
    return paragraph("""
        (a) One stage of 9b-fp16's ring of {g[stages]}, in shared memory: the weights' box,
        {g[BN]} rows of {g[wrow]} bytes, one per output channel, each {g[BK]} input channels of
        one filter tap in halves ({wkb} KB), and the activations' box, {g[BM]} rows of {g[arow]}
        bytes, one per pixel, the same {g[BK]} channels of x under that tap ({akb} KB). The
        producer writes each box with one TMA copy from step 08's FP16 copies: a tiled copy of
        the filter (KRSC, so the {g[BK]} channels of a tap lie side by side, K-major, as wgmma's
        first operand wants them) and an im2col copy of x, as in 9b; both boxes are stored with
        the 128-byte swizzle, so each drawn row stands for {atom} rows, one 1024-byte pattern.
        In half precision both operands of wgmma come from shared memory through descriptors:
        consumer warpgroup 0 reads weight rows 0-{m1} as the first operand (A), warpgroup 1 rows
        {g[M64]}-{b1}, and both read all {g[BM]} activation rows as the second (B). One wgmma
        m{g[M64]}n{g[BM]}k{kk} covers {kk} of those channels, so a stage is {g[ksteps]} of them,
        each with both descriptors {g[kbytes]} bytes further along the rows; the columns
        k0-k{kl} are drawn before the swizzle, which moves the 16-byte piece c of row p to slot
        c ^ (p % 8), undone by the tensor cores as they read. (b) The way out: a consumer
        warpgroup holds {g[M64]} channels x {g[BM]} pixels of float accumulators ({g[acc]} a
        thread) and writes them out in {g[chunks]} chunks of {g[out_px]} pixels. Its buffer of
        {okb} KB has {g[halves]} halves, each {g[boxes]} TMA boxes of {g[out_px]} pixel rows x
        {g[box_ch]} channels ({g[box_row]} bytes a row, {bkb} KB, 128-byte swizzle): chunk q
        goes into half q % 2, channels 0-{c1} into its first box and {g[box_ch]}-{m1} into its
        second, each pixel a row, as y holds it. The warpgroup's threads store their values with
        st.shared, make them visible to the TMA unit (fence.proxy.async) and meet at a barrier
        of its {wgt} threads; then its first thread hands both boxes to the TMA unit
        (cp.async.bulk.tensor from shared memory to y, one bulk group), and the warpgroup fills
        the other half with the next chunk while the TMA unit reads this one. Before each
        chunk's barrier that thread waits with cp.async.bulk.wait_group.read 0 until the chunk
        before has been read out of shared memory, not until it has reached y: the half that
        chunk used is the one the warpgroup fills after the barrier. After the last chunk the
        warpgroup goes on to its next tile while the TMA unit still reads. The stages, the two
        warpgroups' buffers, the mbarriers and 1 KB of slack to align the stages to 1024 bytes
        take {smem:,} bytes of shared memory.""",
                     g=g, wkb=g["wts"] // 1024, akb=g["act"] // 1024, atom=ATOM,
                     m1=g["M64"] - 1, b1=g["BN"] - 1, kk=WGMMA_K16, kl=g["ksteps"] - 1,
                     okb=g["out"] // 1024, bkb=g["box"] // 1024, c1=g["box_ch"] - 1,
                     wgt=WARPGROUP * WARP, smem=g["smem"])


@figure(section="9b in half precision: both operands and the output by TMA",
        uses=["TC9H_BM", "TC9H_BN", "TC9H_BK", "TC9H_STAGES", "TC9H_THREADS", "TC9H_ACT_BYTES",
              "TC9H_WTS_BYTES", "TC9H_OUT_PX", "TC9H_BOX_BYTES", "TC9H_OUT_BYTES", "TC9H_SMEM"])
def fig_09_tma_fp16(k):
    """9b-fp16's stage, both wgmma operands in shared memory, and its output's way out by TMA."""
    g = tma_fp16_geometry(k)
    BM, BN, M64 = g["BM"], g["BN"], g["M64"]
    kk, ks = WGMMA_K16, g["ksteps"]
    fig = new_figure(11.5, 8.4, f"Step 09: 9b-fp16: both operands of wgmma m{M64}n{BM}k{kk} "
                     "in shared memory; the output leaves by TMA")
    # (a) one stage: a drawn row is ATOM rows, a row of the boxes BW units wide
    BW = 16
    wy, wh = (BM - BN) / ATOM / 2, BN / ATOM  # the weights' box, centred on the activations'
    ah = BM / ATOM
    WX, GX, AX, SX = 26, 56, 92, 120  # weights, warpgroups, activations, x's copy
    ax, bottom = canvas_below(fig, 0.93, 0.01, 0.98, (-1, SX + 16), (-5, ah + 6),
                              title=f"(a) one stage of {g['stages']} in shared memory "
                                    f"({(g['act'] + g['wts']) // 1024} KB), read by both "
                                    "consumer warpgroups")
    wgc = [COLORS["weight"], "#e3e2f0"]
    for wg in range(g["groups"] - 1):
        box(ax, WX, wy + wg * M64 / ATOM, BW, M64 / ATOM, wgc[wg], ec="#555555", lw=0.6, z=1)
        ax.text(WX + BW / 2, wy + (wg + 0.5) * M64 / ATOM, f"rows {wg * M64}-{(wg + 1) * M64 - 1}",
                ha="center", va="center", fontsize=7, zorder=5, bbox=LABEL_BOX)
    box(ax, AX, 0, BW, ah, COLORS["input"], ec="#555555", lw=0.6, z=1)
    ax.text(AX + BW / 2, ah / 2, f"rows 0-{BM - 1}", ha="center", va="center", fontsize=7,
            zorder=5, bbox=LABEL_BOX)
    for x0, y0, h in ((WX, wy, wh), (AX, 0, ah)):
        for r in range(1, int(h)):
            ax.plot([x0, x0 + BW], [y0 + r, y0 + r], color="#ffffff", lw=0.5, zorder=3)
        for s in range(ks):
            if s:
                ax.plot([x0 + s * BW / ks] * 2, [y0, y0 + h], color="#555555", lw=0.6,
                        ls=(0, (2, 2)), zorder=3)
            ax.text(x0 + (s + 0.5) * BW / ks, y0 - 0.3, f"k{s}", ha="center", va="bottom",
                    fontsize=6.5)
    ax.text(WX + BW / 2, wy - 1.8, f"weights: {BN} rows x {g['wrow']} B", ha="center",
            va="bottom", fontsize=7.5)
    ax.text(AX + BW / 2, -1.8, f"activations: {BM} rows x {g['arow']} B", ha="center",
            va="bottom", fontsize=7.5)
    for x0, y0, whose in ((WX, wy + wh, "one out channel"), (AX, ah, "one pixel")):
        ax.text(x0 + BW / 2, y0 + 0.4, f"a row: {g['BK']} halves of one\ntap, {whose};\n"
                f"k0-k{ks - 1}: {g['kbytes']} B each", ha="center", va="top", fontsize=7)
    # the copies that fill the stage
    for x0, y0, text, x1, label in ((0, wy + wh / 2, "w: FP16 copy\n(K, R, S, C)", WX,
                                     "TMA: 1 copy"),
                                    (SX, ah / 2, "x: FP16 copy\n(N, H, W, C)", AX + BW,
                                     "TMA: 1 copy\n(im2col)")):
        box(ax, x0, y0 - 3, 14, 6, COLORS["idle"], text=text, fs=7)
        a, b = (x0 + 14, x1) if x0 < x1 else (x0, x1)
        arrow(ax, (a, y0), (b, y0), color=COLORS["input_dark"])
        ax.text((a + b) / 2, y0 - 0.5, label, ha="center", va="bottom", fontsize=6.5)
    # the consumers: A from their weight rows, B from every activation row
    gh = ah / 2 - 2
    for wg in range(g["groups"] - 1):
        gy = wg * (ah / 2 + 2)
        box(ax, GX, gy, 24, gh, COLORS["output"],
            text=f"warpgroup {wg}\nchannels {wg * M64}-{(wg + 1) * M64 - 1}\n\n"
                 f"{ks} x wgmma m{M64}n{BM}k{kk}\na stage: one per k0-k{ks - 1}", fs=7.5)
        ya = wy + (wg + 0.5) * M64 / ATOM
        arrow(ax, (WX + BW, ya), (GX, ya), color=COLORS["weight_dark"])
        ax.text(WX + BW + 6, ya - 0.4, "A", ha="center", va="bottom", fontsize=7.5,
                color=COLORS["weight_dark"], fontweight="bold")
        yb = gy + gh / 2 + (-3 if wg == 0 else 3)
        arrow(ax, (AX, yb), (GX + 24, yb), color=COLORS["input_dark"])
        ax.text(GX + 24 + (AX - GX - 24) / 2, yb - 0.4, "B", ha="center", va="bottom",
                fontsize=7.5, color=COLORS["input_dark"], fontweight="bold")
    # (b) the way out, one warpgroup: 1 unit = 4 pixels or channels
    u = 4
    n, T = g["chunks"], 12  # chunks; a chunk's time in the timeline
    halves = [COLORS["output"], "#e5f5e0"]
    ax2, _ = canvas_below(fig, bottom - 0.04, 0.01, 0.98, (-1, SX + 16), (-5, 40),
                          title=f"(b) the way out: a warpgroup's {M64} x {BM} accumulators, "
                                f"{n} chunks of {g['out_px']} pixels through the two halves "
                                "of its buffer")
    cw, ch = g["out_px"] / u, M64 / u
    now = 2  # the chunk the warpgroup writes in the moment drawn
    for q in range(n):
        box(ax2, q * cw, 0, cw, ch, halves[q % 2], ec="#555555", lw=0.6, z=1,
            text=f"chunk {q}\nhalf {q % 2}", fs=7)
    outline(ax2, now * cw, 0, cw, ch, COLORS["highlight"], lw=1.6)
    ax2.text(0, -0.4, f"accumulators (registers): {M64} channels x {BM} pixels, floats",
             fontsize=7.5, va="bottom")
    # the buffer: halves of boxes, a box out_px pixel rows x box_ch channels
    bs = g["out_px"] / u
    BX = n * cw + 12
    for h in range(g["halves"]):
        x0 = BX + h * (g["boxes"] * bs + 3)
        for b in range(g["boxes"]):
            box(ax2, x0 + b * bs, 2, bs, bs, halves[h], ec="#555555", lw=0.6,
                text=f"ch\n{b * g['box_ch']}-{(b + 1) * g['box_ch'] - 1}", fs=6.5)
        ax2.text(x0 + g["boxes"] * bs / 2, 1.6, f"half {h}", ha="center", va="bottom",
                 fontsize=7)
    bw_all = g["halves"] * g["boxes"] * bs + 3 * (g["halves"] - 1)
    ax2.text(BX + bw_all / 2, -0.4, f"its buffer: {g['out'] // 1024} KB", ha="center",
             va="bottom", fontsize=7.5)
    ax2.text(BX + bw_all / 2, 2 + bs + 0.5, f"a box: {g['out_px']} pixel rows x "
             f"{g['box_row']} B,\n{g['box'] // 1024} KB, 128-byte swizzle", ha="center",
             va="top", fontsize=7)
    arrow(ax2, ((now + 0.5) * cw, ch), (BX + g["boxes"] * bs / 2, 2 + bs), rad=0.18,
          color=COLORS["highlight"])
    ax2.text((now + 0.5) * cw + (BX - now * cw) / 2 - 4, ch + 4, f"chunk {now}: st.shared",
             fontsize=7, ha="center", va="top", color=COLORS["highlight"])
    # y, written by the TMA unit from the other half
    YX = BX + bw_all + 12
    box(ax2, YX, 2, SX + 15 - YX, bs, COLORS["idle"], text="y\n(global)", fs=7.5)
    arrow(ax2, (BX + bw_all, 2 + bs / 2), (YX, 2 + bs / 2), color=COLORS["output_dark"])
    ax2.text(BX + bw_all + 6, 2 + bs / 2 - 0.4, f"chunk {now - 1}", ha="center", va="bottom",
             fontsize=7, color=COLORS["output_dark"])
    ax2.text(BX + bw_all + 6, 2 + bs / 2 + 0.4, "TMA store", ha="center", va="top",
             fontsize=7, color=COLORS["output_dark"])
    # the timeline: the warpgroup writes one half while the TMA unit reads the other
    t0, l0, l1, lh = 14, 28, 34, 3
    ax2.text(t0 - 1, l0 + lh / 2, "warpgroup", ha="right", va="center", fontsize=7.5)
    ax2.text(t0 - 1, l1 + lh / 2, "TMA unit", ha="right", va="center", fontsize=7.5)
    for q in range(n):
        box(ax2, t0 + q * T, l0, T, lh, halves[q % 2], ec="#555555", lw=0.6,
            text=f"writes {q} -> half {q % 2}", fs=6.5)
        box(ax2, t0 + (q + 1) * T, l1, 0.75 * T, lh, halves[q % 2], ec="#555555", lw=0.6,
            text=f"reads half {q % 2}", fs=6.5)
        x = t0 + (q + 1) * T
        ax2.plot([x, x], [l0 - 0.6, l1 + lh + 0.3], color=COLORS["highlight"], lw=0.9,
                 zorder=6)
    box(ax2, t0 + n * T, l0, SX + 15 - t0 - n * T, lh, COLORS["idle"], ec="#555555", lw=0.6,
        text="next tile", fs=6.5)
    outline(ax2, t0 + now * T, l0 - 0.3, T, l1 + lh - l0 + 0.6, "#333333", lw=1.0, ls="--")
    ax2.text(t0 + T + 0.5, l0 - 0.8, "red: barrier, after wait_group.read 0 (the chunk before "
             "read out)", fontsize=7, va="bottom", color=COLORS["highlight"])
    ax2.text(t0 + now * T + T / 2, l1 + lh + 0.5, "drawn above", ha="center", va="top",
             fontsize=6.5)
    return fig


# ---------------------------------------------------------------------------
# 09_wgmma_fp16

CHUNK = 16  # bytes of one cp.async: 8 halves


def wgmma_fp16_geometry(k):
    """9a-fp16's stage and its copies, from the constants of hopper_wgmma_fp16.cu."""
    BM, BN, BK, T = k["TC9AH_BM"], k["TC9AH_BN"], k["TC9AH_BK"], k["TC9AH_THREADS"]
    chunks = BK * HALF // CHUNK  # 16-byte chunks per row
    step = T // chunks  # rows between one thread's copies
    return {"BM": BM, "BN": BN, "BK": BK, "threads": T, "chunks": chunks, "step": step,
            "act_rows": BM // step, "wts_rows": BN // step, "halves": CHUNK // HALF,
            "row": k["TC9AH_ACT"] // BM, "stages": k["TC9AH_STAGES"],
            "stage": k["TC9AH_ACT"] + k["TC9AH_WTS"], "smem": k["TC9AH_SMEM"]}


def caption_09_wgmma_fp16(k):
    g = wgmma_fp16_geometry(k)
    return paragraph("""
        9a-fp16's copies of one stage, columns j0 to j0 + {bk1} of the implicit GEMM, by
        cp.async. Left: the first {atom} pixel rows of the stage as x's FP16 copy holds them,
        each row {g[BK]} halves ({g[row]} bytes) in {g[chunks]} chunks of {g[halves]} halves
        (16 bytes, one cp.async); C is a multiple of {g[halves]}, so a chunk is {g[halves]}
        channels of one filter tap. The number in a chunk is the thread that copies it: thread
        tid takes chunk tid % {g[chunks]} of rows tid / {g[chunks]} + {g[step]} i, i = 0 to
        {a1} among the {g[BM]} pixel rows and 0 to {w1} among the {g[BN]} filter rows, so each
        thread decodes its column's tap once per stage, and the {g[chunks]} threads of one row
        read {g[row]} contiguous bytes of x when the row's pixel lies in the image (a chunk
        outside the image, past K or past J is written as zeros: cp.async with 0 source
        bytes). Right: the same chunks in shared memory, where chunk c of row p goes to slot c
        ^ (p % {atom}), the 128-byte swizzle wgmma's descriptors expect, so that the {atom}
        rows of one 16-byte column lie in {atom} different groups of banks. The filter's
        {g[BN]} rows (its FP16 copy as KRSC: the channels of one tap side by side) are copied
        and swizzled the same way, and wgmma reads both parts through descriptors: a
        warpgroup's {m64} filter rows as its first operand, all {g[BM]} pixel rows as its
        second. {g[stages]} stages of {skb} KB and one 16-byte entry per pixel take {smem:,}
        bytes of shared memory with 1 KB of slack for alignment.""",
                     g=g, bk1=g["BK"] - 1, atom=ATOM, a1=g["act_rows"] - 1,
                     w1=g["wts_rows"] - 1, m64=g["BN"] // 2, skb=g["stage"] // 1024,
                     smem=g["smem"])


@figure(section="9a-fp16: the same stage by cp.async",
        uses=["TC9AH_BM", "TC9AH_BN", "TC9AH_BK", "TC9AH_THREADS", "TC9AH_STAGES", "TC9AH_ACT",
              "TC9AH_WTS", "TC9AH_SMEM"])
def fig_09_wgmma_fp16(k):
    """9a-fp16: which thread copies which chunk of a stage, and the swizzle in shared memory."""
    g = wgmma_fp16_geometry(k)
    C = g["chunks"]
    fig = new_figure(11.5, 3.6, f"Step 09: 9a-fp16: a stage's copies, {g['threads']} threads "
                     f"x ({g['act_rows']} + {g['wts_rows']}) cp.async of 16 bytes")
    W = 3.2  # a chunk's width; a row is 1 unit high
    LX, RX = 8, 8 + C * W + 22
    ax, _ = canvas_below(fig, 0.88, 0.01, 0.98, (-1, RX + C * W + 6), (-4, ATOM + 4))
    for title, x0 in (("x's FP16 copy: pixel rows, chunk c in place", LX),
                      (f"shared memory: chunk c of row p in slot c ^ (p % {ATOM})", RX)):
        ax.text(x0 + C * W / 2, -2.2, title, ha="center", va="bottom", fontsize=8.5)
        for c in range(C):
            ax.text(x0 + (c + 0.5) * W, -0.3, f"{'c' if x0 == LX else 'slot'} {c}",
                    ha="center", va="bottom", fontsize=6.5)
    for p in range(ATOM):
        ax.text(LX - 0.5, p + 0.5, f"row {p}", ha="right", va="center", fontsize=7)
        ax.text(RX - 0.5, p + 0.5, f"row {p}", ha="right", va="center", fontsize=7)
        for c in range(C):
            tid = C * p + c
            shade = COLORS["input"] if c % 2 == 0 else "#c6dbef"
            box(ax, LX + c * W, p, W, 1, shade, text=f"t{tid}", fs=6.5)
            box(ax, RX + (c ^ (p % ATOM)) * W, p, W, 1, shade, text=f"t{tid}", fs=6.5)
    follow = 3  # the chunk column followed by the arrows
    for p in (0, ATOM - 1):
        arrow(ax, (LX + (follow + 1) * W, p + 0.5), (RX + (follow ^ p) * W, p + 0.5),
              color=COLORS["highlight"], lw=0.9, rad=0.08 if p else -0.08)
    outline(ax, LX + follow * W, 0, W, ATOM, COLORS["highlight"], lw=1.4)
    for p in range(ATOM):
        outline(ax, RX + (follow ^ p) * W, p, W, 1, COLORS["highlight"], lw=1.4)
    ax.text(LX + C * W / 2, ATOM + 0.6,
            f"thread tid: chunk tid % {C} of rows tid / {C} + {g['step']} i\n"
            f"(i < {g['act_rows']} of {g['BM']} pixel rows, i < {g['wts_rows']} of "
            f"{g['BN']} filter rows): one column j, one tap", ha="center", va="top", fontsize=7.5)
    ax.text(RX + C * W / 2, ATOM + 0.6,
            f"column {follow} (red) lands in {ATOM} different slots:\n"
            f"{ATOM} rows read together hit {ATOM} different groups of banks",
            ha="center", va="top", fontsize=7.5)
    return fig


# ---------------------------------------------------------------------------
# 09_split

# The layer the 9c section follows: ResNet-50's layer4.1.conv2 at batch 32
# (torchvision's shapes, conv_bench --model resnet50), and the SMs of an H100
# or H200, where the rule was measured.
LAYER_9C = {"n": 32, "c": 512, "h": 7, "w": 7, "k": 512, "r": 3, "s": 3, "pad": 1}
SMS_9C = 132


def split_geometry(k):
    """9c's work items on the layer: 9b's tiles, the stages of each, and the
    slices conv2d_tc_tma_splits() picks (hopper_tma_9b.cu, the same arithmetic)."""
    BM, BN, BK = k["TC9B_BM"], k["TC9B_BN"], k["TC9B_BK"]
    L = LAYER_9C
    P, Q = out_size(L["h"], L["r"], L["pad"]), out_size(L["w"], L["s"], L["pad"])
    m = L["n"] * P * Q
    mt, nt = -(-m // BM), -(-L["k"] // BN)
    tiles = mt * nt
    stages = (L["r"] * L["s"] * -(-L["c"] // BK) + 1) // 2 * 2
    want = min(SMS_9C // tiles, stages // k["TC9C_MIN_SLICE_STAGES"], k["TC9C_MAX_SPLITS"])
    span = (-(-stages // want) + 1) // 2 * 2 if want > 1 else stages
    slices = -(-stages // span)
    return {"BM": BM, "BN": BN, "BK": BK, "m": m, "P": P, "Q": Q, "mt": mt, "nt": nt,
            "tiles": tiles, "stages": stages, "span": span, "slices": slices,
            "items": tiles * slices, "last": m - (mt - 1) * BM, "sms": SMS_9C, "L": L}


def caption_09_split(k):
    g = split_geometry(k)
    return paragraph("""
        (a) 9b on ResNet-50's layer4.1.conv2 at batch 32 ({L[c]} channels, a {L[h]} x {L[w]}
        image, {L[k]} filters of 3 x 3): the GEMM has N P Q = {g[m]:,} pixel rows and
        {L[k]} filter columns, cut into {g[mt]} x {g[nt]} = {g[tiles]} tiles of {g[BM]} pixels x
        {g[BN]} channels (the last pixel tile holds {g[last]} pixels). Each tile is one
        persistent block's work, so of {g[sms]} SMs {g[tiles]} are busy and {idle} idle.
        (b) 9c cuts each tile's sum of {g[stages]} stages (9 taps x {cch} slices of {g[BK]}
        channels) into {g[slices]} slices of {g[span]} stages: {g[items]} work items, one per
        (tile, slice), and {idle9c} SMs idle. Slice z of every tile writes its partial tile to
        part of the workspace at z M K, laid out as y; a second kernel adds, for each output,
        slice 0 + slice 1 + ... + slice {zmax} in that order, so every run gives the same
        bits.""", g=g, L=g["L"], idle=g["sms"] - g["tiles"], idle9c=g["sms"] - g["items"],
                     cch=g["stages"] // 9, zmax=g["slices"] - 1)


@figure(section="9c: split the sum where tiles are few",
        uses=["TC9B_BM", "TC9B_BN", "TC9B_BK", "TC9C_MIN_SLICE_STAGES", "TC9C_MAX_SPLITS"])
def fig_09_split(k):
    """9b's few tiles on a late ResNet-50 layer, and 9c's slices of their sums."""
    g = split_geometry(k)
    fig = new_figure(11.5, 5.4, f"Step 09: 9c splits the sum of each of 9b's {g['tiles']} tiles "
                     f"into {g['slices']} slices, so that {g['items']} of {g['sms']} SMs work")
    cols = 33  # SMs drawn per row
    rows = -(-g["sms"] // cols)

    def sms(ax, y0, color_of):
        for s in range(g["sms"]):
            box(ax, 40 + (s % cols) * 2, y0 + (s // cols) * 2, 1.8, 1.8, color_of(s), lw=0.3)
        ax.text(40, y0 - 0.6, f"the {g['sms']} SMs, one persistent block each", fontsize=7)

    ax, bottom = canvas_below(fig, 0.92, 0.01, 0.98, (0, 108), (-1, 13),
                              title=f"(a) 9b: {g['mt']} x {g['nt']} = {g['tiles']} tiles "
                                    f"of {g['BM']} pixels x {g['BN']} channels")
    cw, ch = 4.2, 2.6
    for i in range(g["mt"]):
        for j in range(g["nt"]):
            box(ax, 1 + i * cw, 1 + j * ch, cw, ch, COLORS["output"], lw=0.5,
                text=f"{j * g['mt'] + i}", fs=6.5)
    ax.text(1, 12.2, f"{g['m']:,} pixels (N P Q) ->", fontsize=7)
    ax.text(1 + g["mt"] * cw + 0.5, 6, f"{g['L']['k']}\nfilters", fontsize=7, va="center")
    sms(ax, 1, lambda s: COLORS["output_dark"] if s < g["tiles"] else COLORS["idle"])
    ax.text(40, 1.2 + 2 * rows + 0.8, f"{g['tiles']} busy, {g['sms'] - g['tiles']} idle",
            fontsize=7, va="top")
    ax2, _ = canvas_below(fig, bottom - 0.04, 0.01, 0.98, (0, 108), (-1, 15),
                          title=f"(b) 9c: {g['stages']} stages a tile in {g['slices']} slices "
                                f"of {g['span']}: {g['items']} work items, then the slices added")
    colors = CHANNEL_COLORS
    sw = 34 / g["stages"]
    for z in range(g["slices"]):
        a, b = z * g["span"], min((z + 1) * g["span"], g["stages"])
        box(ax2, 1 + a * sw, 1, (b - a) * sw, 2.4, colors[z % len(colors)], lw=0.5,
            text=f"{z}: {a}-{b - 1}", fs=6.5)
        box(ax2, 1 + z * 8.6, 6, 8, 2.4, colors[z % len(colors)], lw=0.5,
            text=f"part + {z} M K", fs=6.5)
        arrow(ax2, (1 + (a + b) / 2 * sw, 3.4), (5 + z * 8.6, 6), color="#777777", lw=0.8)
    ax2.text(1, 0.6, "one tile's sum: slice z, its stages", fontsize=7)
    ax2.text(1, 10.2, "y = ((slice 0 + slice 1) + slice 2) + ...: a fixed order, the same bits "
             "on every run", fontsize=7)
    sms(ax2, 1, lambda s: colors[(s // g["tiles"]) % len(colors)] if s < g["items"]
        else COLORS["idle"])
    ax2.text(40, 1.2 + 2 * rows + 0.8, f"{g['items']} busy (item i: tile i % {g['tiles']}, "
             f"slice i / {g['tiles']}), {g['sms'] - g['items']} idle", fontsize=7, va="top")
    return fig
