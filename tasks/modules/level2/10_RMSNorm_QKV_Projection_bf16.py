import torch
import torch.nn as nn


class Model(nn.Module):
    """Pre-norm attention input in bf16: RMSNorm (learned scale) then the fused QKV projection of Llama-3-8B (4096 -> 6144)."""

    def __init__(self, hidden: int, qkv_out: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden, dtype=torch.bfloat16))
        self.qkv = nn.Linear(hidden, qkv_out, bias=False, dtype=torch.bfloat16)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        normed = xf * torch.rsqrt(torch.mean(xf * xf, dim=-1, keepdim=True) + self.eps)
        return self.qkv(normed.to(x.dtype) * self.weight)


tokens = 4096
hidden = 4096
qkv_out = 6144
eps = 1e-5


def get_inputs():
    x = torch.randn(tokens, hidden, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return [hidden, qkv_out, eps]
