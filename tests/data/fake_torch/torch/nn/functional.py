from .. import _op as gelu, _op as silu, _op as leaky_relu, _op as hardsigmoid  # noqa: F401
from .. import _op as softplus, _op as elu, _op as hardtanh  # noqa: F401
