import torch
import torch.nn as nn


class Model(nn.Module):
    """Refuses float64, as a module with a half-only custom op would: the truth falls back to fp32."""

    def forward(self, x):
        if x.dtype == torch.float64:
            raise RuntimeError("this op has no float64 kernel")
        return x * 3.0


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
