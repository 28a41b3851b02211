import torch
import torch.nn as nn


class Model(nn.Module):
    """Attention scores: softmax(scale * Q @ K^T) over the last dim, per batch and head (no V)."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        return torch.softmax(scores, dim=-1)


batch_size = 8
num_heads = 16
sequence_length = 1024
head_dim = 64
scale = 0.125


def get_inputs():
    q = torch.randn(batch_size, num_heads, sequence_length, head_dim)
    k = torch.randn(batch_size, num_heads, sequence_length, head_dim)
    return [q, k]


def get_init_inputs():
    return [scale]
