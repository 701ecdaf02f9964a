"""placer_torch.inference: one inference step recorded (eval mode, no
grad, no backward or update), what tools/measure/dle predicts the
examples' inference latency from."""

import torch

from placer_torch.inference import export_inference_step, topk_accuracy


def _net():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                               torch.nn.Dropout(0.5), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 10))


def _inputs():
    return torch.randn(2, 3, 8, 8), torch.zeros(2, dtype=torch.long)


def _types(g):
    return [o["type"] for o in g["ops"] if o["type"] not in ("Input", "Parameter", "Buffer")]


def test_forward_only_eval():
    for fake in (False, True):
        g, meta = export_inference_step(_net, _inputs, fake=fake, execution={"device": "cuda"})
        types = _types(g)
        # eval mode: no dropout; the batch norm a forward op; nothing backward
        assert "native_dropout" not in types and "bernoulli_" not in types, types
        assert types.count("convolution") == 1 and types.count("addmm") == 1, types
        assert not any(o.get("backward") for o in g["ops"]), fake
        assert "optimizer_from" not in g["execution"] and "optimizer" not in g["execution"]
        assert meta["inference"] is True
        # 3 inputs' worth of state: the image, the target; 6 parameters, 3 buffers
        kinds = [o["type"] for o in g["ops"]]
        assert (kinds.count("Input"), kinds.count("Parameter"), kinds.count("Buffer")) == (2, 6, 3), kinds
        assert all(p["grad_bytes"] == 0 and p["state_bytes"] == 0 for p in meta["params"])
        # the conv weight: 4 x 3 x 3 x 3 floats
        assert meta["params"][0]["bytes"] == 4 * 27 * 4


def test_autocast_and_after():
    def after(out, target):
        topk_accuracy(out, target, (1, 5))
    g, _ = export_inference_step(_net, _inputs, after, fake=True, execution={"device": "cuda", "autocast": "f16"})
    types = _types(g)
    assert g["execution"]["autocast"] == "f16"
    # casts to half for the convolution's input and weight, the linear's input, weight and bias
    assert types.count("_to_copy") >= 4, types
    assert "topk" in types and "eq" in types and types.count("sum") == 2, types


def test_topk_accuracy():
    out = torch.tensor([[0.1, 0.9, 0.0], [0.8, 0.1, 0.3], [0.2, 0.3, 0.5]])
    target = torch.tensor([1, 2, 0])
    # top-1: only the first is right (1 of 3); top-2: the first and the second (2 of 3)
    top1, top2 = topk_accuracy(out, target, (1, 2))
    assert abs(top1.item() - 100 / 3) < 1e-4 and abs(top2.item() - 200 / 3) < 1e-4
