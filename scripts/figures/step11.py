"""Note 11's figure: the launcher above the steps (docs/11_auto.md).

    11_rule     conv2d_auto()'s forward rule as two ladders, NHWC and NCHW:
                each rung a condition and the kernel it picks, taken when the
                condition holds and the kernel's own check accepts the problem
"""
from .draw import COLORS, arrow, box, canvas, new_figure
from .manifest import figure, paragraph

NOTE = "11_auto.md"  # the lecture note of every figure here (docs/)

# The rungs of each ladder, in the order of choose_fp16(), choose_nhwc() and
# choose_nchw() in library/conv_auto.c: (condition, the keys it tries in turn).
NHWC = [("FP16 class", ["9b-fp16", "9a-fp16", "8b-fp16"]),
        ("TF32 allowed, Hopper, C >= 32, 9b's tiles < SMs / 2", ["9c"]),
        ("TF32 allowed, Hopper, C >= 32", ["9b"]),
        ("TF32 allowed, compute capability >= 8.0", ["8b"]),
        ("3x3, stride 1, F(4x4) tiles < 2 x SMs", ["7a"]),
        ("3x3, stride 1", ["7b"]),
        ("128x128 tiles >= SMs / 2", ["8c"]),
        ("32x32 tiles <= SMs", ["6b"]),
        ("any", ["6f"]),
        ("nothing above accepts", ["2a"])]
NCHW = [("3x3, stride 1", ["7b"]),
        ("C = K = 1, output >= 64 x 32", ["4a"]),
        ("K <= 32", ["5b"]),
        ("TF32 allowed, compute capability >= 8.0", ["8b"]),
        ("1x1, stride 1, H W % 4 = 0; 128x128 tiles >= SMs / 2", ["8c"]),
        ("any", ["6e"]),
        ("nothing above accepts", ["2a"])]
STEP_COLORS = {"2": "#d9d9d9", "4": "#c6dbef", "5": "#9ecae1", "6": "#fdd0a2", "7": "#c7e9c0",
               "8": "#fcbba1", "9": "#dadaeb"}


def caption_11_rule(k):
    return paragraph("""
        conv2d_auto()'s rule for the forward pass, as two ladders read from the top: NHWC on
        the left ({n_nhwc} rungs), NCHW on the right ({n_nchw}). Each rung is a condition on
        the problem, the precision class and the GPU (its SM count, its compute capability)
        and the kernel it picks, coloured by step. The rule takes the first rung whose
        condition holds and whose kernel's own check accepts the problem; a refused kernel
        falls through to the next rung, down to 2a, which takes every valid problem. An FP16
        request tries 9b-fp16, 9a-fp16 and 8b-fp16 in turn and, where none accepts it, goes on
        down the FP32 rungs; a TF32 request may also take every FP32 rung below its own. The
        bound on C for 9b and 9c is CONV_AUTO_9B_MIN_C (library/conv_auto.h): 9b fills its
        stages with 32 channels of one filter tap; 9c, 9b with its sum split, is taken where
        9b's tiles of 256 pixels x 128 channels are fewer than half the SMs (its split rule,
        conv2d_tc_tma_splits(), asks for more than one slice).""",
                     n_nhwc=len(NHWC), n_nchw=len(NCHW))


@figure(section="The rule", uses=[])
def fig_11_rule(k):
    """The forward rule of conv2d_auto() as two ladders of conditions and picks."""
    rung, gap = 1.0, 0.55
    rows = max(len(NHWC), len(NCHW))
    fig = new_figure(12, 7.0, "Note 11: conv2d_auto()'s forward rule: the first rung that holds "
                     "and whose kernel accepts")
    ax = canvas(fig, (0.01, 0.01, 0.98, 0.88), (0, 30), (-1.2, rows * (rung + gap) + 0.2))

    def ladder(x, title, rungs):
        cond_w, pick_w = 8.2, 1.7
        ax.text(x, -0.7, title, ha="left", va="center", fontsize=10, fontweight="bold")
        for i, (cond, picks) in enumerate(rungs):
            y = i * (rung + gap)
            box(ax, x, y, cond_w, rung, "white", text=cond, fs=7.5)
            px = x + cond_w + 0.6
            arrow(ax, (x + cond_w, y + rung / 2), (px, y + rung / 2), lw=0.9, ms=8)
            for j, key in enumerate(picks):
                box(ax, px, y, pick_w, rung, STEP_COLORS[key[0]], text=key, fs=8,
                    weight="bold")
                if j + 1 < len(picks):  # refused: the next kernel of the same rung
                    arrow(ax, (px + pick_w, y + rung / 2), (px + pick_w + 0.5, y + rung / 2),
                          lw=0.9, ms=8, color=COLORS["text"])
                    px += pick_w + 0.5
            if len(picks) > 1:  # the FP16 rung: where none accepts, the FP32 rungs
                ax.text(px + pick_w + 0.3, y + rung / 2, "none accepts:\nthe FP32 rungs", ha="left",
                        va="center", fontsize=6.5, color=COLORS["text"])
            if i + 1 < len(rungs):  # the condition fails, or its kernel refuses
                arrow(ax, (x + 1.0, y + rung), (x + 1.0, y + rung + gap), lw=0.9, ms=8)
                ax.text(x + 1.25, y + rung + gap / 2, "no, or refused", ha="left",
                        va="center", fontsize=6.5, color=COLORS["text"])

    ladder(0.3, "NHWC", NHWC)
    ladder(18.6, "NCHW", NCHW)
    ax.text(18.6, len(NCHW) * (rung + gap) + 0.6,
            "FP16 in NCHW and TF32 on a GPU below 8.0 take the FP32\n"
            "rungs: the steps have no such kernel there.",
            ha="left", va="top", fontsize=7.5, color=COLORS["text"])
    return fig
