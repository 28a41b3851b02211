import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Scaled dot-product attention in fp16: softmax(Q K^T / sqrt(d)) V, 32x32 heads of 512 tokens x 128."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=False)


batch_size = 32
num_heads = 32
sequence_length = 512
head_dim = 128


def get_inputs():
    q = torch.randn(batch_size, num_heads, sequence_length, head_dim, dtype=torch.float16)
    k = torch.randn(batch_size, num_heads, sequence_length, head_dim, dtype=torch.float16)
    v = torch.randn(batch_size, num_heads, sequence_length, head_dim, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []
