import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """bf16 causal attention, the output projection and the residual add of one Llama-style block."""

    def __init__(self, num_heads: int, head_dim: int):
        super().__init__()
        hidden = num_heads * head_dim
        self.num_heads = num_heads
        self.o_proj = nn.Linear(hidden, hidden, bias=False, dtype=torch.bfloat16)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                residual: torch.Tensor) -> torch.Tensor:
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        b, h, s, d = attn.shape
        attn = attn.transpose(1, 2).reshape(b, s, h * d)
        return residual + self.o_proj(attn)


batch_size = 4
num_heads = 32
sequence_length = 2048
head_dim = 128


def get_inputs():
    q = torch.randn(batch_size, num_heads, sequence_length, head_dim, dtype=torch.bfloat16)
    k = torch.randn(batch_size, num_heads, sequence_length, head_dim, dtype=torch.bfloat16)
    v = torch.randn(batch_size, num_heads, sequence_length, head_dim, dtype=torch.bfloat16)
    residual = torch.randn(batch_size, sequence_length, num_heads * head_dim, dtype=torch.bfloat16)
    return [q, k, v, residual]


def get_init_inputs():
    return [num_heads, head_dim]
