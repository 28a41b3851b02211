import torch
import torch.nn as nn


class Model(nn.Module):
    """einsum('bijl,lk->bijk') of A(b, i, j, l) and B(l, k) (twin of kb1/11_4d_tensor_matmul)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bijl,lk->bijk", A, B)


b = 8
i = 256
j = 512
l = 256
k = 768


def get_inputs():
    A = torch.rand(b, i, j, l)
    B = torch.rand(l, k)
    return [A, B]


def get_init_inputs():
    return []
