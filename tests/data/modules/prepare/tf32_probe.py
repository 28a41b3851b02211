import torch
import torch.nn as nn


class Model(nn.Module):
    """Tells in its output whether TF32 was allowed (matmul and cuDNN): x * 2 if both were,
    x * 3 if only one, x otherwise."""

    def forward(self, x):
        n = int(torch.backends.cuda.matmul.allow_tf32) + int(torch.backends.cudnn.allow_tf32)
        return x * float((1, 3, 2)[n])


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
