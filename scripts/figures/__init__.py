"""The concept figures of the lecture notes; scripts/figures.py is their
command line.

    manifest.py         the constants read out of the sources, the registry of
                        figures, their captions, figures.json, README.md and
                        the check
    draw.py             the drawing helpers and colours every figure shares
    step01.py ... step05.py, step06a.py (6a to 6d), step06e.py (6e and 6f),
    step07.py, step08.py, step09.py, step10.py, step11.py (note 11)
                        each step's figures, one function fig_<name>() each
                        and beside it caption_<name>(), its caption

Importing the package imports the step modules in this order; each registers
its figures as it is read, so FIGURES lists them step by step, which is the
order of docs/figures/README.md. Nothing here imports matplotlib: drawing
does, on first use, and the check never.
"""
from . import (step01, step02, step03, step04, step05, step06a, step06e, step07,  # noqa: F401
               step08, step09, step10, step11)
from .manifest import FIGURES, MANIFEST, README, check, generate, inputs  # noqa: F401
