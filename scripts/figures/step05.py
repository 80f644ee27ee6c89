"""Step 05's figures: direct convolution with float4 loads and prefetching
(docs/05_prefetch_float4.md).

    05_equal_split      5a's loader: tile rows cut into float4 pieces on
                        16-byte boundaries and dealt to the threads
    05_prefetch_timeline  5a's channel loop: channel c + 1 loads while c is
                        computed, two buffers, one barrier
"""
from .draw import (COLORS, box, canvas_below, gantt_axes, gantt_bar, lane_color, new_figure, note,
                   out_size, outline)
from .manifest import figure, paragraph

NOTE = "05_prefetch_float4.md"  # the lecture note of every figure here (docs/)


def round4(v):
    return (v + 3) // 4 * 4


def plan_5a_tile(pr, bw, bh):
    """conv_prefetch.c's plan_5a(): the rows and the row stride (floats) of the
    shared input tile, and the number of blocks along Q and P."""
    P, Q = out_size(pr["h"], pr["r"], pr["pad_h"]), out_size(pr["w"], pr["s"], pr["pad_w"])
    col_blocks, row_blocks = max(1, Q // bw), max(1, P // bh)
    cols = max(Q - (col_blocks - 1) * bw, min(Q, bw))
    rows = max(P - (row_blocks - 1) * bh, min(P, bh))
    return rows + pr["r"] - 1, round4(cols + pr["s"] - 1) + 8, col_blocks, row_blocks


def equal_split(pr, bw, bh, bx, by, nt):
    """prefetch_tile.cuh's loader for block (bx, by) of image 0, channel 0 (a
    16-byte aligned tensor): one dict per float4 piece."""
    W, H = pr["w"], pr["h"]
    ox0, oy0 = bx * bw, by * bh
    gx0, gy0 = ox0 - pr["pad_w"], oy0 - pr["pad_h"]
    rows, cols = bh + pr["r"] - 1, bw + pr["s"] - 1  # a regular block
    _, stride, _, _ = plan_5a_tile(pr, bw, bh)
    ppr = (cols + 6) // 4  # tile_make(): ceil((cols + 3) / 4)
    pieces = []
    for i in range(rows * ppr):
        row, piece = i // ppr, i % ppr
        gy = gy0 + row
        m = (gy * W) % 4  # misalignment of the row start, in floats
        shift = (gx0 + m) % 4
        col = gx0 - shift + 4 * piece  # first image column of the piece
        needed = [c for c in range(col, col + 4) if gx0 <= c < gx0 + cols]
        pieces.append({"i": i, "thread": i % nt, "item": i // nt, "row": row, "gy": gy,
                       "shift": shift, "col": col, "needed": needed,
                       "vector": 0 <= gy < H and col >= 0 and col + 3 < W,
                       "soff": row * stride + 4 - shift + 4 * piece})
    return pieces, {"gx0": gx0, "gy0": gy0, "rows": rows, "cols": cols, "ppr": ppr,
                    "stride": stride}


def piece_box(ax, x, p):
    """One float4 piece of the equal split at x: coloured by its thread, dashed
    when it is the thread's second piece, hatched when no float of it is needed."""
    wasted = not p["needed"]
    box(ax, x + 0.08, p["row"] + 0.12, 3.84, 0.76, lane_color(p["thread"]),
        ec="#888888" if wasted else "#333333", lw=0.8 if p["item"] == 0 else 1.4,
        ls="-" if p["item"] == 0 else "--", hatch="///" if wasted else None, z=3)
    ax.text(x + 2, p["row"] + 0.5, f"t{p['thread']}", ha="center", va="center", fontsize=7,
            zorder=7, bbox=dict(boxstyle="square,pad=0.1", fc=lane_color(p["thread"]),
                                ec="none") if wasted else None)


SPLIT_BLOCK = (1, 1)  # the block (bx, by) that 05_equal_split draws


def caption_05_equal_split(k):
    BW, BH = k["CONV_PREFETCH_5A_BW"], k["CONV_PREFETCH_5A_BH"]
    pr = k["problem ece408-l1"]
    pieces, g = equal_split(pr, BW, BH, *SPLIT_BLOCK, BW * BH)
    second = sorted({p["thread"] for p in pieces if p["item"] == 1})
    scalar = [p for p in pieces if not p["vector"]]
    return paragraph("""
        Block {block} of ECE408 layer 1 needs an input tile of {g[rows]} x {g[cols]} floats
        (outlined in blue), cut into {n} float4 pieces that the block's {nt} threads
        (tid = ty*{BW} + tx) share: thread t loads pieces t, t + {nt}, ..., so {loads}
        (dashed: a second piece); up to PREFETCH_5A_ITEMS = {items} per thread are staged in
        registers. (a) Each row's pieces start at its own 16-byte boundary (the thick lines):
        shift = (gx0 + m) mod 4 floats before the tile's first column gx0 = {g[gx0]}, m being
        the misalignment of the row start (row gy starts at float gy*{W}, so m is {m} here). A
        row takes ceil((cols + 3) / 4) = {g[ppr]} pieces, enough for any shift; with shift 0 or
        2 the last holds no needed float (hatched: {wasted} of {n} pieces). {vector} (b) In
        shared memory a row has 4 floats of margin on each side (grey; a row stride of
        {g[stride]} floats) and a piece goes whole to offset 4 - shift + 4*piece: no store
        needs a test.""",
                     block=SPLIT_BLOCK, g=g, n=len(pieces), nt=BW * BH, BW=BW,
                     items=k["PREFETCH_5A_ITEMS"], W=pr["w"],
                     loads=(f"threads {second[0]}..{second[-1]} load 2, the others 1" if second
                            else "every thread loads one"),
                     m=" or ".join(str(m) for m in sorted({p["gy"] * pr["w"] % 4
                                                           for p in pieces})),
                     wasted=sum(not p["needed"] for p in pieces),
                     vector=("Every piece lies inside the image: one 16-byte load each."
                             if not scalar else f"{len(scalar)} pieces cross the image's edge "
                             f"and are read float by float."))


@figure(section="The equal split, on 16-byte boundaries",
        uses=["CONV_PREFETCH_5A_BW", "CONV_PREFETCH_5A_BH", "PREFETCH_5A_ITEMS",
              "problem ece408-l1"])
def fig_05_equal_split(k):
    """5a's loader: tile rows cut into float4 pieces on 16-byte boundaries, dealt to 32 threads."""
    BW, BH = k["CONV_PREFETCH_5A_BW"], k["CONV_PREFETCH_5A_BH"]
    pr = k["problem ece408-l1"]
    nt = BW * BH
    bx, by = SPLIT_BLOCK
    pieces, g = equal_split(pr, BW, BH, bx, by, nt)
    rows, cols, ppr, stride, gx0 = g["rows"], g["cols"], g["ppr"], g["stride"], g["gx0"]
    fig = new_figure(11, 5.2, f"Step 05: the equal split of 5a's loader, block ({bx}, {by}) "
                     f"of ECE408 layer 1 (W = {pr['w']}, {pr['r']} x {pr['s']} filter):\n"
                     f"a {rows} x {cols} input tile, {len(pieces)} float4 pieces, {nt} threads")
    c_lo, c_hi = gx0 - 4, gx0 + 4 * ppr + 2  # image columns drawn
    xa, xb = (-6.5, c_hi - c_lo + 0.3), (-0.3, stride + 0.3)
    wa = 0.955 * (xa[1] - xa[0]) / (xa[1] - xa[0] + xb[1] - xb[0])
    # (a) global memory
    ax, bottom = canvas_below(fig, 0.86, 0.01, wa, xa, (-2.2, rows + 0.3),
                              title="(a) global memory: image rows, pieces on 16-byte "
                                    "boundaries")
    for c in range(c_lo, c_hi):
        if c % 2 == 0:
            ax.text(c - c_lo + 0.5, -0.15, str(c), ha="center", va="bottom", fontsize=6,
                    color="#555555")
    ax.text(0, -1.1, "image column", fontsize=7, color="#555555", va="bottom")
    for r in range(rows):
        gy = g["gy0"] + r
        for c in range(c_lo, c_hi):
            need = gx0 <= c < gx0 + cols
            box(ax, c - c_lo, r, 1, 1, COLORS["input"] if need else "white", ec="#cccccc",
                lw=0.4, z=1)
        for c in range(c_lo, c_hi + 1):
            if (gy * pr["w"] + c) % 4 == 0:  # a 16-byte boundary of this row
                ax.plot([c - c_lo] * 2, [r, r + 1], color="#222222", lw=1.4, zorder=5)
        shift = next(p["shift"] for p in pieces if p["row"] == r)
        ax.text(-0.3, r + 0.5, f"row {gy}: shift {shift}", ha="right", va="center", fontsize=7)
    for p in pieces:
        x = p["col"] - c_lo
        piece_box(ax, x, p)
    outline(ax, gx0 - c_lo, 0, cols, rows, COLORS["input_dark"], lw=1.5)
    # (b) shared memory
    ax2, _ = canvas_below(fig, 0.86, 0.025 + wa, 0.955 - wa, xb, (-2.2, rows + 0.3),
                          title="(b) shared memory in[buf]: the same pieces, stored whole")
    for j in range(stride):
        if j % 2 == 0:
            ax2.text(j + 0.5, -0.15, str(j), ha="center", va="bottom", fontsize=6,
                     color="#555555")
    ax2.text(0, -1.1, "offset in the row (floats)", fontsize=7, color="#555555", va="bottom")
    for r in range(rows):
        for j in range(stride):
            need = 4 <= j < 4 + cols
            box(ax2, j, r, 1, 1, COLORS["input"] if need else COLORS["idle"], ec="#ffffff",
                lw=0.4, z=1)
    for p in pieces:
        x = p["soff"] - p["row"] * stride
        piece_box(ax2, x, p)
    outline(ax2, 4, 0, cols, rows, COLORS["input_dark"], lw=1.5)
    # the block's threads
    ax3, _ = canvas_below(fig, bottom - 0.02, 0.01, 0.17, (-0.2, BW + 0.2), (-1.2, BH + 0.2))
    ax3.text(0, -0.3, f"the {BW} x {BH} block: tid = ty*{BW} + tx", fontsize=8, va="bottom")
    for ty in range(BH):
        for tx in range(BW):
            t = ty * BW + tx
            box(ax3, tx, ty, 1, 1, lane_color(t), text=f"t{t}", fs=7)
    note(fig, 0.21, bottom - 0.1, "tN: the thread that loads a piece;  dashed: its second "
         "piece;  hatched: a piece with no needed float\nthick lines: 16-byte boundaries;  "
         "blue outline: the floats the tile needs;  grey: the margins of a shared row", fs=8.5,
         linespacing=1.6)
    return fig


def caption_05_prefetch_timeline(k):
    KC, C, K = k["CONV_PREFETCH_5A_KC"], k["problem lecture"]["c"], k["problem lecture"]["k"]
    chunks = (K + KC - 1) // KC
    return paragraph("""
        On the lecture problem (C = {C}, K = {K}, KC = {KC}: {chunks}) kernel 5a runs {steps}
        steps after a prologue that loads channel 0. Step t requests the x tile of channel
        c + 1 with global loads (LDG) into registers, at most {items} float4 per thread, and
        starts cp.async copies of its weights into the other buffer, then computes channel c
        from in[buf] and ws[buf]; only then does it store the staged registers into
        in[buf ^ 1] (STS) and wait for its copies. One barrier (__syncthreads(), the red lines)
        per step suffices: the buffer written in step t was last read in step t - 1, before
        that step's barrier. The cp.async copies need no registers. With K > KC the steps run
        over (chunk, channel) pairs, channel fastest, and the last channel of a chunk writes y.
        The durations are schematic, not measured.""",
                     C=C, K=K, KC=KC, steps=chunks * C, items=k["PREFETCH_5A_ITEMS"],
                     chunks=f"{chunks} chunk{'s' if chunks > 1 else ''} of output channels")


@figure(section="Prefetching: two buffers, one barrier per channel",
        uses=["CONV_PREFETCH_5A_KC", "PREFETCH_5A_ITEMS", "problem lecture"])
def fig_05_prefetch_timeline(k):
    """5a's channel loop: load channel c + 1 while computing c, two buffers, one barrier."""
    KC, ITEMS = k["CONV_PREFETCH_5A_KC"], k["PREFETCH_5A_ITEMS"]
    pr = k["problem lecture"]
    C, K = pr["c"], pr["k"]
    chunks = (K + KC - 1) // KC
    steps = chunks * C
    fig = new_figure(11, 4.2, f"Step 05: kernel 5a's channel loop on the lecture problem "
                     f"(C = {C}, K = {K}, KC = {KC}: {chunks} chunk{'s' if chunks > 1 else ''} "
                     f"of output channels,\n{steps} steps): channel c + 1 is loaded into the "
                     f"other buffer while channel c is computed")
    lanes = [f"LDG: x tile of c+1 -> registers\n(<= {ITEMS} float4 per thread)",
             "cp.async: weights of c+1\n-> ws[buf ^ 1]",
             "FMAs: channel c from\nin[buf], ws[buf]",
             "STS: registers\n-> in[buf ^ 1]",
             "buffer 0: in[0], ws[0]", "buffer 1: in[1], ws[1]"]
    pro, fma, sts, gap = 1.6, 4.0, 0.55, 0.25
    it = 0.35 + fma + sts + 0.35 + gap  # one iteration
    xmax = pro + steps * it + 0.6
    ax = gantt_axes(fig, (0.17, 0.06, 0.82, 0.76), lanes, xmax, None)
    # the prologue: channel 0 loaded, stored, waited for
    gantt_bar(ax, 0, 0.6, 0, COLORS["input"], "0", fs=7)
    gantt_bar(ax, 0.05, 0.6, 1, COLORS["weight"], "0", fs=7)
    gantt_bar(ax, 0.7, 1.25, 3, COLORS["shared"], "0", fs=7)
    gantt_bar(ax, 0.7, 1.25, 4, COLORS["shared"], "0", fs=7)
    ax.text(pro / 2, -0.55, "prologue", ha="center", va="bottom", fontsize=8)
    barriers = [pro - 0.05]
    x = pro
    for t in range(steps):
        c = t % C
        cur = t % 2
        more = t + 1 < steps
        x0 = x
        if more:
            gantt_bar(ax, x0, x0 + 0.35, 0, COLORS["input"])
            gantt_bar(ax, x0 + 0.35, x0 + 0.35 + fma, 0, "white", "in flight", hatch="....",
                      ec="#aaaaaa")
            gantt_bar(ax, x0 + 0.05, x0 + 0.35, 1, COLORS["weight"])
            gantt_bar(ax, x0 + 0.35, x0 + 0.35 + fma, 1, "white", "in flight", hatch="....",
                      ec="#aaaaaa")
        gantt_bar(ax, x0 + 0.35, x0 + 0.35 + fma, 2, COLORS["output"], f"channel c = {c}")
        if c == C - 1:
            ax.text(x0 + 0.35 + fma, 2.42, "write y", ha="right", va="top", fontsize=7)
        if more:
            gantt_bar(ax, x0 + 0.35 + fma, x0 + 0.35 + fma + sts, 3, COLORS["shared"],
                      f"{c + 1}", fs=7)
            ax.text(x0 + 0.35 + fma + sts + 0.02, 3.35, "wait", fontsize=6.5, va="top")
        x = x0 + it
        barriers.append(x - gap / 2)
        # the buffers during this step
        gantt_bar(ax, x0 + 0.35, x0 + 0.35 + fma, 4 + cur, COLORS["output"], f"read: c = {c}",
                  fs=7)
        if more:
            gantt_bar(ax, x0 + 0.35 + fma, x0 + 0.35 + fma + sts + 0.35, 4 + (1 - cur),
                      COLORS["shared"], "", fs=7)
            ax.text(x0 + 0.35 + fma + (sts + 0.35) / 2, 4 + (1 - cur), f"{c + 1}",
                    fontsize=6.5, ha="center", va="center", zorder=5)
            free = (x0, x0 + 0.35 + fma)
            gantt_bar(ax, free[0] + 0.05, free[1], 4 + (1 - cur), "#f7f7f7",
                      "not read;\nws <- cp.async", fs=6.5, ec="#cccccc")
        ax.text(x0 + it / 2 - gap / 2, -0.55, f"step t = {t}", ha="center", va="bottom",
                fontsize=8)
    for xb in barriers:
        ax.plot([xb, xb], [-0.45, 5.45], color=COLORS["highlight"], lw=1.6, zorder=6)
    ax.set_ylim(6.0, -0.6)
    ax.text(barriers[0], 5.55, "red lines: __syncthreads(), one per channel;  durations are "
            "schematic", color=COLORS["highlight"], fontsize=8, va="top", ha="left")
    return fig
