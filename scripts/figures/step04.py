"""Step 04's figures: tiled 2D convolution (docs/04_tiled_2d.md).

    04_halo_tile        strategy 1's input tile: the output tile and its halo
    04_rows_window      strategy 1's register window of ROWS rows sliding
                        down a tile column
"""
from .draw import (COLORS, box, brace, canvas, grid_lines, lane_color, new_figure, note, outline,
                   swatch, vbrace)
from .manifest import figure


def s1_config(k, pick):
    """One of step 04's strategy 1 configurations (TILE_W, TILE_H, ROWS), read
    from the launch_s1<...> calls: pick = "fastest" (the most outputs per
    thread) or "small" (the fewest rows per thread above one)."""
    configs = [tuple(c) for c in k["launch_s1<>"]]
    if pick == "fastest":
        return max(configs, key=lambda c: (c[2], c[0] * c[1]))
    return min((c for c in configs if c[2] > 1), key=lambda c: c[2])


@figure("04_halo_tile", note="04_tiled_2d.md",
        section="2D halos; The index math, worked through",
        uses=["launch_s1<>", "problem hpc101-image"])
def fig_04_halo_tile(k):
    """Strategy 1's input tile: the output tile plus a halo of R - 1 rows and S - 1 columns."""
    TW, TH, ROWS = s1_config(k, "fastest")
    pr = k["problem hpc101-image"]
    R, S, ph, pw = pr["r"], pr["s"], pr["pad_h"], pr["pad_w"]
    IH, IW = TH + R - 1, TW + S - 1
    BY = TH // ROWS  # threads per block column: the block is TW x BY
    bx, by = 2, 1  # the block of the note's worked example
    p0, q0 = by * TH, bx * TW
    tx, ty = 5, 3
    base = ty * ROWS
    fig = new_figure(10.5, 8.0, f"Step 04: strategy 1's input tile for {TW} x {TH} outputs, "
                     f"a {S} x {R} filter with \"same\" padding (pad = {ph}),\n{TW} x {BY} "
                     f"threads, ROWS = {ROWS} (HPC101 image problem)")
    ax = canvas(fig, (0.01, 0.02, 0.55, 0.85), (-9, IW + 1), (-4, IH + 1))
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
    x0 = 0.56
    note(fig, x0, 0.86,
         f"Input tile: (TILE_H + R - 1) x (TILE_W + S - 1) = {IH} x {IW} floats "
         f"({IH * IW * 4 / 1024:.1f} KB)\nfor TILE_H x TILE_W = {TH} x {TW} outputs "
         f"(launch_s1<{TW}, {TH}, {ROWS}>).", fs=9)
    legend = [(COLORS["input"], "the inputs at the output tile's own positions"),
              (COLORS["halo"], f"the halo: {R - 1} rows and {S - 1} columns, shared with "
                               f"the\nneighbouring tiles, or zeros outside the image"),
              (COLORS["weight_dark"] + "40",
               f"the {S} x {ROWS + R - 1} inputs that thread (tx, ty) = ({tx}, {ty})\nreads for "
               f"its {ROWS} outputs (tile rows {base}..{base + ROWS + R - 2},\ncolumns "
               f"{tx}..{tx + S - 1})"),
              (COLORS["output_dark"], f"its {ROWS} outputs: column q0 + {tx}, rows p0 + "
                                      f"{base}..p0 + {base + ROWS - 1}")]
    y = 0.76
    for color, text in legend:
        swatch(fig, x0, y, color)
        note(fig, x0 + 0.028, y, text, fs=8.5)
        y -= 0.025 + 0.028 * text.count("\n") + 0.02
    note(fig, x0, y - 0.01,
         f"The multi-step load (dashed: block-sized steps of {TW} x {BY}):\n"
         f"thread (tx, ty) loads tile rows ty, ty + {BY}, ... and columns\n"
         f"tx, tx + {TW}, ...: ceil({IH}/{BY}) x ceil({IW}/{TW}) = "
         f"{-(-IH // BY)} x {-(-IW // TW)} steps (red dots: thread ({tx}, {ty})).\n"
         f"Consecutive tx load consecutive columns: coalesced.\n\n"
         f"Block (blockIdx.x, blockIdx.y) = ({bx}, {by}) of the HPC101 image\n"
         f"problem: p0 = {p0}, q0 = {q0}; its tile holds input rows "
         f"{p0 - ph}..{p0 - ph + IH - 1}\nand columns {q0 - pw}..{q0 - pw + IW - 1}. "
         f"Tiles at the image border store zeros\nfor the rows and columns outside it.", fs=8.5)
    return fig


@figure("04_rows_window", note="04_tiled_2d.md",
        section=("Shared memory bandwidth, and why strategy 1 computes several outputs "
                 "per thread"),
        uses=["launch_s1<>", "problem hpc101-image"])
def fig_04_rows_window(k):
    """Strategy 1's register window: a ring of ROWS registers sliding down a tile column."""
    TW, TH, ROWS = s1_config(k, "small")
    R = k["problem hpc101-image"]["r"]
    n_rows = ROWS + R - 1
    fig = new_figure(10.5, 5.2, f"Step 04: strategy 1's register window, launch_s1<{TW}, "
                     f"{TH}, {ROWS}>: ROWS = {ROWS} outputs per thread,\na {R}-row filter "
                     f"(HPC101 image problem), one filter column s")
    # left: the tile column and the outputs' windows
    ax = canvas(fig, (0.01, 0.04, 0.17, 0.8), (-1.5, 6.5), (-1.5, n_rows + 0.5))
    for i in range(n_rows):
        box(ax, 0, i, 1.6, 1, COLORS["input"], text=f"{i}", fs=7)
    ax.text(0.8, -0.3, "tile rows\nbase + i,\ncolumn tx + s", ha="center", va="bottom",
            fontsize=7.5)
    for v in range(ROWS):
        x = 2.0 + v * 1.0
        ax.plot([x, x], [v + 0.1, v + R - 0.1], color=lane_color(v, ROWS, 0.45), lw=3,
                solid_capstyle="butt")
        ax.text(x, v + R + 0.2, f"y{v}", ha="center", va="top", fontsize=7.5,
                color=lane_color(v, ROWS, 0.35))
    ax.text(-0.3, n_rows / 2, f"output v reads rows v .. v + {R - 1}", rotation=90,
            ha="right", va="center", fontsize=7.5)
    # right: the ring, step by step
    cw, ch = 2.05, 1.5
    steps = R + 1
    ax2 = canvas(fig, (0.19, 0.04, 0.8, 0.8), (-2.4, steps * cw + 0.2), (-1.6, ROWS * ch + 5.6))
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
    loads = R + ROWS - 1
    ax2.text(0, y + 1.6,
             f"Step r (r = r0 + j, s1_window_step) loads ONE new tile row, row r + {ROWS - 1}, "
             f"into buf[(j + {ROWS - 1}) % {ROWS}] (red edge),\nthe slot that held row r - 1; "
             f"then output v adds buf[(j + v) % {ROWS}] (= row r + v) times M[r][s]. Tile row\n"
             f"base + i always lives in buf[i % {ROWS}] and j is a compile-time constant: no "
             f"register is copied, the ring turns by itself.\n"
             f"Per filter column: {ROWS - 1} + {R} = {loads} shared loads for {R} x {ROWS} = "
             f"{R * ROWS} multiply-adds, {loads / (R * ROWS):.2f} loads per multiply-add "
             f"(1 with ROWS = 1).", fontsize=8.5, va="top")
    return fig
