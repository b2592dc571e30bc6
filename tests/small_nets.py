"""Small networks shaped like torchvision's (the pooling layers of resnet, densenet,
inception, squeezenet and mobilenet), written in plain torch: random weights, for NNCF's
post-training quantization in the LPT tests.  (torchvision's wheels on PyPI are built against
torch's CUDA build and do not load with the CPU build the project pins.)"""

from __future__ import annotations

from typing import Any


def nets(torch: Any) -> dict[str, Any]:
    nn = torch.nn

    def cbr(i: int, o: int, k: int = 3, s: int = 1) -> Any:
        return nn.Sequential(
            nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o), nn.ReLU()
        )

    class Basic(nn.Module):
        def __init__(self, c: int) -> None:
            super().__init__()
            self.a, self.b = cbr(c, c), nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.BatchNorm2d(c))

        def forward(self, x: Any) -> Any:
            return torch.relu(self.b(self.a(x)) + x)

    class ResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(cbr(3, 16, 7, 2), nn.MaxPool2d(3, 2, 1))
            self.body = nn.Sequential(Basic(16), Basic(16))
            self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))

        def forward(self, x: Any) -> Any:
            return self.head(self.body(self.stem(x)))

    class Dense(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(cbr(3, 16, 7, 2), nn.MaxPool2d(3, 2, 1))
            self.l1, self.l2 = cbr(16, 8), cbr(24, 8)
            self.trans = nn.Sequential(
                nn.BatchNorm2d(32), nn.ReLU(), nn.Conv2d(32, 16, 1), nn.AvgPool2d(2, 2)
            )
            self.l3 = cbr(16, 8)
            self.head = nn.Linear(24, 10)

        def forward(self, x: Any) -> Any:
            x = self.stem(x)
            x = torch.cat([x, self.l1(x)], 1)
            x = torch.cat([x, self.l2(x)], 1)
            x = self.trans(x)
            x = torch.cat([x, self.l3(x)], 1)
            x = torch.relu(x)
            return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    class Inception(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(cbr(3, 16, 3, 2), nn.MaxPool2d(3, 2))
            self.b1 = cbr(16, 8, 1)
            self.b2 = nn.Sequential(nn.AvgPool2d(3, 1, 1), cbr(16, 8, 1))
            self.b3 = nn.Sequential(nn.MaxPool2d(3, 1, 1), cbr(16, 8, 1))
            self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(24, 10))

        def forward(self, x: Any) -> Any:
            x = self.stem(x)
            return self.head(torch.cat([self.b1(x), self.b2(x), self.b3(x)], 1))

    class Squeeze(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.f = nn.Sequential(
                nn.Conv2d(3, 16, 3, 2),
                nn.ReLU(),
                nn.MaxPool2d(3, 2, ceil_mode=True),
                nn.Conv2d(16, 16, 1),
                nn.ReLU(),
                nn.MaxPool2d(3, 2, ceil_mode=True),
                nn.Conv2d(16, 10, 1),
                nn.ReLU(),
                nn.AvgPool2d(5, 1, ceil_mode=True),
            )

        def forward(self, x: Any) -> Any:
            return torch.flatten(self.f(x).mean((2, 3), keepdim=True), 1)

    class Mobile(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.f = nn.Sequential(cbr(3, 16, 3, 2), cbr(16, 32, 3, 2), nn.Conv2d(32, 32, 1))
            self.head = nn.Linear(32, 10)

        def forward(self, x: Any) -> Any:
            return self.head(torch.relu(self.f(x)).mean((2, 3)))

    return {
        "resnet": ResNet,
        "densenet": Dense,
        "inception": Inception,
        "squeezenet": Squeeze,
        "mobilenet": Mobile,
    }


def quantized(ov: Any, torch: Any, nncf: Any, name: str, size: int = 64, seed: int = 0) -> Any:
    """The net `name` with random weights, converted by openvino and quantized by NNCF on
    random calibration data: an openvino Model."""
    import numpy as np

    torch.manual_seed(seed)
    net = nets(torch)[name]().eval()
    model = ov.convert_model(
        net, example_input=torch.randn(1, 3, size, size), input=[1, 3, size, size]
    )
    rng = np.random.default_rng(seed)
    data = [rng.standard_normal((1, 3, size, size)).astype(np.float32) for _ in range(4)]
    return nncf.quantize(model, nncf.Dataset(data), subset_size=4)
