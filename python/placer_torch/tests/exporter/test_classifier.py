"""placer_torch.classifier: the image classifiers' channels-last model and
random inputs that tools/measure/timmbench and tools/measure/dle export."""

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from placer_torch.classifier import channels_last_in_place, image_inputs


def _net():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.Flatten(),
                               torch.nn.Linear(8 * 6 * 6, 10))


def _modes():
    """No grad, and a fake tensor mode where this torch's takes real inputs
    (Debian's 1.13 has no allow_non_fake_inputs: the real mode alone)."""
    yield False, torch.no_grad()
    try:
        yield True, FakeTensorMode(allow_non_fake_inputs=True)
    except TypeError:
        return


def test_channels_last_in_place():
    for fake, mode in _modes():
        with mode:
            m = _net()
            assert channels_last_in_place(m) is m
            w = m[0].weight
            # (8, 3, 3, 3) channels-last: strides (27, 1, 9, 3)
            assert w.stride() == (27, 1, 9, 3), (fake, w.stride())
            assert isinstance(w, torch.nn.Parameter)
            assert m[1].weight.stride() == (1,)          # 1-d: left alone
            assert m[3].weight.stride() == (288, 1)      # 2-d: left alone


def test_image_inputs():
    cases = [
        (2, 8, False, (192, 64, 8, 1)),   # NCHW: 3 x 8 x 8 a sample
        (2, 8, True, (192, 1, 24, 3)),    # NHWC
    ]
    for batch, img, cl, strides in cases:
        x, t = image_inputs(batch, img, cl)()
        assert x.shape == (batch, 3, img, img) and x.stride() == strides, (cl, x.stride())
        assert t.dtype == torch.long and t.tolist() == [0] * batch
