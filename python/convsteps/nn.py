"""convsteps.Conv2d, a drop-in torch.nn.Conv2d, and patch(), which puts it into a model."""
import torch
from torch import nn

from .functional import conv2d

__all__ = ["Conv2d", "PatchReport", "patch", "unsupported_reason"]


def unsupported_reason(module):
    """None when the course's kernels can run this nn.Conv2d, else why not (one line)."""
    if module.groups != 1:
        return f"groups={module.groups} (the kernels take groups=1 only)"
    if module.padding_mode != "zeros":
        return f"padding_mode={module.padding_mode!r} (the kernels pad with zeros only)"
    if module.weight.dtype != torch.float32:
        return f"weight is {module.weight.dtype} (the kernels take float32 only)"
    return None


class Conv2d(nn.Conv2d):
    """torch.nn.Conv2d whose forward runs convsteps.conv2d.

    The same constructor (plus precision="fp32" or "tf32"), the same
    parameters and the same state_dict, so it loads an nn.Conv2d's weights
    and the other way round. groups other than 1 and a padding_mode other
    than "zeros" raise NotImplementedError here, at construction."""

    def __init__(self, *args, precision="fp32", **kwargs):
        super().__init__(*args, **kwargs)
        why = unsupported_reason(self)
        if why is not None:
            raise NotImplementedError(f"convsteps.Conv2d: {why}")
        if precision not in ("fp32", "tf32"):
            raise ValueError(f"precision must be 'fp32' or 'tf32', got {precision!r}")
        self.precision = precision

    def forward(self, input):
        return conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                      1, precision=self.precision)

    def extra_repr(self):
        return super().extra_repr() + f", precision={self.precision!r}"

    @classmethod
    def from_conv(cls, conv, precision="fp32"):
        """A convsteps.Conv2d that shares conv's weight and bias Parameters
        (nothing copied: training either trains both)."""
        why = unsupported_reason(conv)
        if why is not None:
            raise NotImplementedError(f"convsteps.Conv2d.from_conv: {why}")
        new = cls(conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride,
                  padding=conv.padding, dilation=conv.dilation, groups=1,
                  bias=conv.bias is not None, padding_mode="zeros", device="meta",
                  dtype=conv.weight.dtype, precision=precision)
        new.weight = conv.weight
        new.bias = conv.bias
        new.train(conv.training)
        return new


class PatchReport:
    """What patch() did: `replaced`, the names of the modules now ours, and
    `left_alone`, (name, reason) of the convolutions it kept."""

    def __init__(self):
        self.replaced = []
        self.left_alone = []

    def __str__(self):
        lines = [f"convsteps.patch: {len(self.replaced)} convolution(s) replaced, "
                 f"{len(self.left_alone)} left alone"]
        lines += [f"  left alone {name or '(the model)'}: {why}" for name, why in self.left_alone]
        return "\n".join(lines)

    __repr__ = __str__


def patch(model, precision="fp32"):
    """Replaces every supported torch.nn.Conv2d inside model by a
    convsteps.Conv2d sharing its weight and bias Parameters, in place, and
    returns a PatchReport. A module shared by several parents is replaced by
    one module everywhere. Subclasses of nn.Conv2d (their forward may differ)
    and unsupported convolutions (groups, padding_mode, dtype) are left alone,
    each with its reason."""
    if precision not in ("fp32", "tf32"):
        raise ValueError(f"precision must be 'fp32' or 'tf32', got {precision!r}")
    report = PatchReport()
    new_of = {}
    for name, module in model.named_modules():
        if isinstance(module, Conv2d):
            report.left_alone.append((name, "already a convsteps.Conv2d"))
        elif type(module) is not nn.Conv2d:
            if isinstance(module, nn.Conv2d):
                report.left_alone.append((name, f"{type(module).__name__}, a subclass of "
                                                "nn.Conv2d whose forward may differ"))
        elif name == "":
            report.left_alone.append((name, "the model is itself the convolution: use "
                                            "convsteps.Conv2d.from_conv(model)"))
        else:
            why = unsupported_reason(module)
            if why is not None:
                report.left_alone.append((name, why))
            else:
                new_of[id(module)] = Conv2d.from_conv(module, precision)
                report.replaced.append(name)
    for parent in model.modules():
        for child_name, child in list(parent._modules.items()):
            if child is not None and id(child) in new_of:
                setattr(parent, child_name, new_of[id(child)])
    return report
