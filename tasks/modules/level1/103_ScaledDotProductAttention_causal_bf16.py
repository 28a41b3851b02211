import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Causal scaled dot-product attention in bf16: softmax(Q K^T / sqrt(d) + causal mask) V, 4x32 heads of 4096 tokens x 128."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


batch_size = 4
num_heads = 32
sequence_length = 4096
head_dim = 128


def get_inputs():
    q = torch.randn(batch_size, num_heads, sequence_length, head_dim, dtype=torch.bfloat16)
    k = torch.randn(batch_size, num_heads, sequence_length, head_dim, dtype=torch.bfloat16)
    v = torch.randn(batch_size, num_heads, sequence_length, head_dim, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []
