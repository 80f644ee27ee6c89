"""Step 04's figures: tiled 2D convolution (docs/04_tiled_2d.md).

    04_halo_tile        strategy 1's input tile: the output tile and its halo
    04_rows_window      strategy 1's register window of ROWS rows sliding
                        down a tile column
"""
from .draw import (COLORS, box, brace, canvas, canvas_below, grid_lines, lane_color, new_figure,
                   note, outline, swatch, vbrace)
from .manifest import figure, paragraph

NOTE = "04_tiled_2d.md"  # the lecture note of every figure here (docs/)


def s1_config(k, pick):
    """One of step 04's strategy 1 configurations (TILE_W, TILE_H, ROWS), read
    from the launch_s1<...> calls: pick = "fastest" (the most outputs per
    thread) or "small" (the fewest rows per thread above one)."""
    configs = [tuple(c) for c in k["launch_s1<>"]]
    if pick == "fastest":
        return max(configs, key=lambda c: (c[2], c[0] * c[1]))
    return min((c for c in configs if c[2] > 1), key=lambda c: c[2])


def halo_tile_example(k):
    """Strategy 1's fastest configuration on the HPC101 image problem, and the
    thread and the block that 04_halo_tile follows."""
    TW, TH, ROWS = s1_config(k, "fastest")
    pr = k["problem hpc101-image"]
    R, S, ph, pw = pr["r"], pr["s"], pr["pad_h"], pr["pad_w"]
    BY = TH // ROWS  # threads per block column: the block is TW x BY
    bx, by = 2, 1  # the block of the note's worked example
    tx, ty = 5, 3  # the thread followed
    return {"TW": TW, "TH": TH, "ROWS": ROWS, "R": R, "S": S, "ph": ph, "pw": pw,
            "IH": TH + R - 1, "IW": TW + S - 1, "BY": BY, "bx": bx, "by": by,
            "p0": by * TH, "q0": bx * TW, "tx": tx, "ty": ty, "base": ty * ROWS}


def caption_04_halo_tile(k):
    e = halo_tile_example(k)
    IH, IW, BY, ROWS, R, base, ph, pw = (e[n] for n in ("IH", "IW", "BY", "ROWS", "R", "base",
                                                       "ph", "pw"))
    return paragraph("""
        The input tile of launch_s1<{e[TW]}, {e[TH]}, {e[ROWS]}> is (TILE_H + R - 1) x
        (TILE_W + S - 1) = {e[IH]} x {e[IW]} floats ({kb:.1f} KB) for TILE_H x TILE_W =
        {e[TH]} x {e[TW]} outputs: the inputs at the output tile's own positions, and a halo
        of R - 1 = {R1} rows ({e[ph]} = pad_h above, R - 1 - pad_h = {below} below) and
        S - 1 = {S1} columns, shared with the neighbouring tiles, or zeros outside the image.
        The block of {e[TW]} x {e[BY]} threads loads the tile in block-sized steps (the dashed
        lines): thread (tx, ty) loads tile rows ty, ty + {e[BY]}, ... and columns tx,
        tx + {e[TW]}, ..., ceil({e[IH]}/{e[BY]}) x ceil({e[IW]}/{e[TW]}) = {steps_h} x
        {steps_w} steps; the red dots are the loads of thread ({e[tx]}, {e[ty]}). Consecutive
        tx load consecutive columns: the loads are coalesced. For its {e[ROWS]} outputs (column
        q0 + {e[tx]}, rows p0 + {e[base]}..p0 + {out_last}) that thread reads the
        {e[S]} x {window} inputs of tile rows {e[base]}..{in_last} and columns
        {e[tx]}..{col_last}. Block (blockIdx.x, blockIdx.y) = ({e[bx]}, {e[by]}) of the HPC101
        image problem has p0 = {e[p0]} and q0 = {e[q0]}; its tile holds input rows
        {row0}..{row1} and columns {col0}..{col1}. Tiles at the image border store zeros for
        the rows and columns outside it.""",
                     e=e, kb=IH * IW * 4 / 1024, R1=R - 1, below=R - 1 - ph, S1=e["S"] - 1,
                     steps_h=-(-IH // BY), steps_w=-(-IW // e["TW"]), out_last=base + ROWS - 1,
                     window=ROWS + R - 1, in_last=base + ROWS + R - 2,
                     col_last=e["tx"] + e["S"] - 1, row0=e["p0"] - ph,
                     row1=e["p0"] - ph + IH - 1, col0=e["q0"] - pw, col1=e["q0"] - pw + IW - 1)


@figure(section="2D halos; The index math, worked through",
        uses=["launch_s1<>", "problem hpc101-image"])
def fig_04_halo_tile(k):
    """Strategy 1's input tile: the output tile plus a halo of R - 1 rows and S - 1 columns."""
    e = halo_tile_example(k)
    TW, TH, ROWS, R, S, IH, IW, BY = (e[n] for n in ("TW", "TH", "ROWS", "R", "S", "IH", "IW",
                                                     "BY"))
    tx, ty, base, ph, pw = (e[n] for n in ("tx", "ty", "base", "ph", "pw"))
    fig = new_figure(6.2, 8.0, f"Step 04: strategy 1's input tile, launch_s1<{TW}, {TH}, "
                     f"{ROWS}>,\nand a {S} x {R} filter with pad {ph} (HPC101 image problem)")
    ax, bottom = canvas_below(fig, 0.93, 0.16, 0.64, (-9, IW + 1), (-4, IH + 1))
    for r in range(IH):
        for c in range(IW):
            inside = ph <= r < ph + TH and pw <= c < pw + TW
            box(ax, c, r, 1, 1, COLORS["input"] if inside else COLORS["halo"], ec="none", z=1)
    grid_lines(ax, 0, 0, IW, IH, color="#ffffff", lw=0.35, z=2)
    outline(ax, pw, ph, TW, TH, COLORS["input_dark"], lw=1.5)
    outline(ax, 0, 0, IW, IH, "#333333", lw=1.0)
    # the block-sized load steps: TW columns x BY rows each
    for r in range(0, IH + 1, BY):
        ax.plot([0, IW], [r, r], color="#555555", lw=0.5, ls=(0, (2, 2)), zorder=4)
    for c in range(0, IW + 1, TW):
        ax.plot([c, c], [0, IH], color="#555555", lw=1.0, ls=(0, (4, 2)), zorder=4)
    # what thread (tx, ty) loads: rows ty, ty + BY, ..., columns tx, tx + TW, ...
    for r in range(ty, IH, BY):
        for c in range(tx, IW, TW):
            ax.plot(c + 0.5, r + 0.5, "o", color=COLORS["highlight"], ms=2.8, zorder=7)
    # the window of its ROWS outputs, and the outputs themselves
    box(ax, tx, base, S, ROWS + R - 1, COLORS["weight_dark"] + "40", ec=COLORS["weight_dark"],
        lw=1.6, z=5)
    for v in range(ROWS):
        box(ax, tx + pw, base + v + ph, 1, 1, COLORS["output_dark"], ec="none", z=6)
    # labels along the edges
    for r, text in [(0, f"p0 - {ph}"), (ph, "p0"), (ph + TH - 1, f"p0 + {TH - 1}"),
                    (IH - 1, f"p0 + {TH + R - 2 - ph}")]:
        ax.text(-0.4, r + 0.5, f"{text}  (tile row {r})", ha="right", va="center", fontsize=7)
    for c, text in [(0, f"q0-{pw}"), (pw, "q0"), (pw + TW - 1, f"q0+{TW - 1}")]:
        ax.text(c + 0.5, -0.4, text, ha="center", va="bottom", fontsize=7, rotation=90)
    vbrace(ax, IW + 0.6, 0, ph, f"{ph} = pad_h", left=False, fs=7)
    vbrace(ax, IW + 0.6, ph + TH, IH, f"{R - 1 - ph} = R-1-pad_h", left=False, fs=7)
    legend = [(COLORS["input"], f"the inputs at the {TH} x {TW} outputs' own positions"),
              (COLORS["halo"], f"the halo: {R - 1} rows and {S - 1} columns"),
              (COLORS["weight_dark"] + "40",
               f"the {S} x {ROWS + R - 1} inputs that thread (tx, ty) = ({tx}, {ty}) reads"),
              (COLORS["output_dark"], f"its {ROWS} outputs")]
    y = bottom - 0.012
    note(fig, 0.02, y, f"input tile: {IH} x {IW} floats ({IH * IW * 4 / 1024:.1f} KB)", fs=8.5)
    for color, text in legend:
        y -= 0.03
        swatch(fig, 0.02, y + 0.003, color)
        note(fig, 0.06, y, text, fs=8.5)
    note(fig, 0.02, y - 0.03, f"red dots: the loads of thread ({tx}, {ty});  dashed: the "
         f"block's load steps of {TW} x {BY}", fs=8.5, color=COLORS["highlight"])
    return fig


def caption_04_rows_window(k):
    TW, TH, ROWS = s1_config(k, "small")
    R = k["problem hpc101-image"]["r"]
    return paragraph("""
        With launch_s1<{TW}, {TH}, {ROWS}> a thread computes ROWS = {ROWS} outputs of one tile
        column, and output v reads tile rows v..v + {R1}, one per filter row, for each filter
        column s. Before the r loop, rows 0..{ROWS2} are loaded into buf[0..{ROWS2}]. Step r
        (r = r0 + j, s1_window_step) loads ONE new tile row, row r + {ROWS1}, into
        buf[(j + {ROWS1}) % {ROWS}] (red edge), the slot that held row r - 1; then output v
        adds buf[(j + v) % {ROWS}] (= row r + v) times M[r][s]. Tile row base + i always lives
        in buf[i % {ROWS}], and j is a compile-time constant of the unrolled chunk of {ROWS}
        steps: no register is copied, the ring turns by itself. Per filter column that is
        {ROWS1} + {R} = {loads} shared loads for {R} x {ROWS} = {fmas} multiply-adds,
        {ratio:.2f} loads per multiply-add (1 with ROWS = 1).""",
                     TW=TW, TH=TH, ROWS=ROWS, ROWS1=ROWS - 1, ROWS2=ROWS - 2, R=R, R1=R - 1,
                     loads=R + ROWS - 1, fmas=R * ROWS, ratio=(R + ROWS - 1) / (R * ROWS))


@figure(section="Shared memory bandwidth, and why strategy 1 computes several outputs per thread",
        uses=["launch_s1<>", "problem hpc101-image"])
def fig_04_rows_window(k):
    """Strategy 1's register window: a ring of ROWS registers sliding down a tile column."""
    TW, TH, ROWS = s1_config(k, "small")
    R = k["problem hpc101-image"]["r"]
    n_rows = ROWS + R - 1
    fig = new_figure(10.5, 3.9, f"Step 04: strategy 1's register window, launch_s1<{TW}, "
                     f"{TH}, {ROWS}>: ROWS = {ROWS} outputs per thread,\na {R}-row filter "
                     f"(HPC101 image problem), one filter column s")
    # left: the tile column and the outputs' windows
    ax = canvas(fig, (0.01, 0.02, 0.15, 0.8), (-1.5, 7.0), (-3.2, n_rows + 1.2))
    for i in range(n_rows):
        box(ax, 0, i, 1.6, 1, COLORS["input"], text=f"{i}", fs=7)
    ax.text(0.8, -0.3, "tile rows\nbase + i,\ncolumn tx + s", ha="center", va="bottom",
            fontsize=7.5)
    for v in range(ROWS):
        x = 2.4 + v * 1.1
        ax.plot([x, x], [v + 0.1, v + R - 0.1], color=lane_color(v, ROWS, 0.45), lw=3,
                solid_capstyle="butt")
        ax.text(x, v + R + 0.2, f"y{v}", ha="center", va="top", fontsize=7.5,
                color=lane_color(v, ROWS, 0.35))
    ax.text(-0.3, n_rows / 2, f"output v reads rows v .. v + {R - 1}", rotation=90,
            ha="right", va="center", fontsize=7.5)
    # right: the ring, step by step
    cw, ch = 2.05, 1.5
    steps = R + 1
    ax2 = canvas(fig, (0.17, 0.02, 0.82, 0.8), (-2.4, steps * cw + 0.2), (-1.6, ROWS * ch + 2.4))
    for slot in range(ROWS):
        ax2.text(-0.2, slot * ch + ch / 2, f"buf[{slot}]", ha="right", va="center", fontsize=8)
    # before the r loop: rows 0 .. ROWS - 2 preloaded into buf[0 .. ROWS - 2]
    ax2.text(cw / 2, -0.2, "before\nr = 0", ha="center", va="bottom", fontsize=7.5)
    for slot in range(ROWS):
        held = slot if slot < ROWS - 1 else None
        box(ax2, 0, slot * ch, cw, ch, COLORS["register"] if held is not None else "white",
            text=f"row {held}" if held is not None else "-", fs=7.5)
    for r in range(R):
        x = (r + 1) * cw
        j = r % ROWS
        ax2.text(x + cw / 2, -0.2, f"r = {r}\nj = {j}", ha="center", va="bottom", fontsize=7.5)
        for slot in range(ROWS):
            row = r + (slot - r) % ROWS  # the row this slot holds during step r
            v = row - r
            new = slot == (j + ROWS - 1) % ROWS
            box(ax2, x, slot * ch, cw, ch, COLORS["register"], text=f"row {row}\n-> y{v}",
                fs=7, ec=COLORS["highlight"] if new else "#444444", lw=1.8 if new else 0.6,
                z=3 if new else 2)
    # the chunks of the unrolled loop
    y = ROWS * ch + 0.5
    r0 = 0
    while r0 + ROWS <= R:
        brace(ax2, (r0 + 1) * cw + 0.1, (r0 + ROWS + 1) * cw - 0.1, y,
              f"r0 = {r0}: j = 0..{ROWS - 1}, unrolled", above=False, fs=7)
        r0 += ROWS
    if r0 < R:
        brace(ax2, (r0 + 1) * cw + 0.1, (R + 1) * cw - 0.1, y, f"last {R - r0}", above=False,
              fs=7)
    ax2.text(0, y + 1.3, f"red edge: the slot that step r loads, tile row r + {ROWS - 1};  "
             f"row i -> yv: output v adds row i times M[r][s]", fontsize=8.5, va="top")
    return fig
