"""convsteps: the course's CUDA convolution kernels (libconvsteps) from PyTorch.

    import convsteps
    y = convsteps.conv2d(x, w, bias, stride=1, padding=1)     # like F.conv2d
    layer = convsteps.Conv2d(64, 64, 3, padding=1)            # like nn.Conv2d
    report = convsteps.patch(model)                           # every supported nn.Conv2d
    print(convsteps.last_kernel())                            # e.g. "7b"

The lesson: docs/12_pytorch.md. The library is found through the
environment variable CONVSTEPS_LIBRARY, else in the repository's
build/release/lib/ or build/lib/ (convsteps.library_error() says why not).
"""
from ._lib import LibraryNotFound, last_kernel, last_kernels, launch_count
from ._lib import available as _available
from .functional import conv2d
from .nn import Conv2d, PatchReport, patch, unsupported_reason

__all__ = ["conv2d", "Conv2d", "patch", "PatchReport", "unsupported_reason", "last_kernel",
           "last_kernels", "launch_count", "library_error", "LibraryNotFound"]
__version__ = "1.0.0"


def library_error():
    """None when libconvsteps loads, else the one-line reason why not."""
    return _available()
