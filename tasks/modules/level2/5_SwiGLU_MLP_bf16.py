import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Llama-style SwiGLU MLP in bf16: down(silu(gate(x)) * up(x)), projections without bias."""

    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate = nn.Linear(hidden, intermediate, bias=False, dtype=torch.bfloat16)
        self.up = nn.Linear(hidden, intermediate, bias=False, dtype=torch.bfloat16)
        self.down = nn.Linear(intermediate, hidden, bias=False, dtype=torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


tokens = 2048
hidden = 4096
intermediate = 14336


def get_inputs():
    x = torch.randn(tokens, hidden, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return [hidden, intermediate]
