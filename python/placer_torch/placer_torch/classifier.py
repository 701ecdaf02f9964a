"""An image classifier's training step as the benchmarks that export one
set it up (tools/measure/timmbench, tools/measure/dle): the model made channels-last in
place under fake tensors, and its random inputs.

Both tools build a torchvision or timm network, optionally channels-last
(NHWC), and feed it a batch of random images of one size with class 0 as
every target; they differ in the network, the optimizer and the
execution settings, which stay theirs.
"""

import torch


def channels_last_in_place(m):
    """Makes m's 4-d parameters and buffers channels-last, in place, and
    returns m: what m.to(memory_format=torch.channels_last) does. Under
    fake tensors Module._apply's swap of a parameter fails ("Couldn't swap
    Conv2d.weight"), so the tensors' data is replaced instead."""
    with torch.no_grad():
        for t in list(m.parameters()) + list(m.buffers()):
            if t.dim() == 4:
                t.data = t.data.contiguous(memory_format=torch.channels_last)
    return m


def image_inputs(batch, img, channels_last):
    """make_inputs for export_training_step: a function returning a batch
    of batch random img x img RGB images (channels-last when asked) and
    their targets, class 0 each."""
    def make_inputs():
        x = torch.randn(batch, 3, img, img)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return x, torch.zeros(batch, dtype=torch.long)
    return make_inputs
