import torch
import torch.nn as nn
import a_package_that_does_not_exist  # noqa: F401


class Model(nn.Module):
    def forward(self, x):
        return x
