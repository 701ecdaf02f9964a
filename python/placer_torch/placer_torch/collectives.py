"""The collectives of tensor, sequence and expert parallelism, with
autograd, written once: the runners of a placer-transformer-plan
(transformer, experts: CPU checks of placer's arithmetic, on torch 1.13's
gloo too) and the layers placer profile times (profile.layers, on NCCL
or a recent torch's gloo) call the same functions.

A tensor-parallel layer's column-parallel input goes through
CopyToTensorGroup (identity forward, all-reduce backward) and its
row-parallel output through ReduceFromTensorGroup (all-reduce forward,
identity backward), after Shoeybi et al. 2019 (Megatron-LM); with
sequence parallelism GatherFromSequence and ReduceScatterToSequence
instead (Korthikanti et al. 2022), along dimension 0. AllToAll is the
experts' dispatch and combine (all_to_all_single; gloo runs it since
torch 1.7).
"""

import torch
import torch.distributed as dist


class Comm:
    """A process group and this rank's place in it (size 1: no calls).

    wire: the dtype activations cross the network in, cast there and back
    (placer profile's layers: BF16, as in BF16 mixed precision, whatever
    the compute's precision); None: their own.
    fused: gather and reduce-scatter with all_gather_into_tensor and
    reduce_scatter_tensor, the kernels NCCL runs; else as torch 1.13's
    gloo can (which has neither, nor a reduce-scatter): a list
    all_gather, and an all-reduce and this rank's slice."""

    def __init__(self, group, size, index, wire=None, fused=False):
        self.group, self.size, self.index = group, size, index
        self.wire, self.fused = wire, fused


def _on_wire(x, comm):
    return (x if comm.wire is None else x.to(comm.wire)).contiguous()


def all_reduce(x, comm, op=None):
    """The sum (or op) over the group, in a new tensor unless x is already
    in the wire's dtype (then x itself, reduced in place)."""
    if comm.size == 1:
        return x
    y = x.clone().contiguous() if comm.wire is None else _on_wire(x, comm)
    dist.all_reduce(y, op=op or dist.ReduceOp.SUM, group=comm.group)
    return y.to(x.dtype)


def all_gather(x, comm):
    """Concatenation along dimension 0 (the sequence) in group order."""
    if comm.size == 1:
        return x
    y = _on_wire(x, comm)
    if comm.fused:
        out = torch.empty((y.shape[0] * comm.size,) + tuple(y.shape[1:]), dtype=y.dtype, device=y.device)
        dist.all_gather_into_tensor(out, y, group=comm.group)
    else:
        parts = [torch.empty_like(y) for _ in range(comm.size)]
        dist.all_gather(parts, y, group=comm.group)
        out = torch.cat(parts, 0)
    return out.to(x.dtype)


def reduce_scatter(x, comm):
    """The sum over the group, this rank's chunk of dimension 0."""
    if comm.size == 1:
        return x
    if not comm.fused:
        return all_reduce(x, comm).chunk(comm.size, 0)[comm.index].contiguous()
    y = _on_wire(x, comm)
    out = torch.empty((y.shape[0] // comm.size,) + tuple(y.shape[1:]), dtype=y.dtype, device=y.device)
    dist.reduce_scatter_tensor(out, y, group=comm.group)
    return out.to(x.dtype)


def all_to_all(x, comm, send=None, recv=None):
    """all_to_all_single of x [n, ...] over the group: send[r] rows to
    each rank r (in group order) and recv[r] rows from it, or equal
    splits where send is None."""
    if comm.size == 1:
        return x.contiguous().clone()
    y = _on_wire(x, comm)
    if send is None:
        out = torch.empty_like(y)
        dist.all_to_all_single(out, y, group=comm.group)
    else:
        out = y.new_empty((sum(recv),) + tuple(y.shape[1:]))
        dist.all_to_all_single(out, y, output_split_sizes=list(recv), input_split_sizes=list(send), group=comm.group)
    return out.to(x.dtype)


class CopyToTensorGroup(torch.autograd.Function):
    """Input of a column-parallel layer: identity forward, all-reduce backward."""

    @staticmethod
    def forward(ctx, x, comm):
        ctx.comm = comm
        return x

    @staticmethod
    def backward(ctx, g):
        return all_reduce(g, ctx.comm), None


class ReduceFromTensorGroup(torch.autograd.Function):
    """Output of a row-parallel layer: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx, x, comm):
        return all_reduce(x, comm)

    @staticmethod
    def backward(ctx, g):
        return g, None


class GatherFromSequence(torch.autograd.Function):
    """Sequence parallel, input of a column-parallel layer: all-gather the
    sequence forward, reduce-scatter backward."""

    @staticmethod
    def forward(ctx, x, comm):
        ctx.comm = comm
        return all_gather(x, comm)

    @staticmethod
    def backward(ctx, g):
        return reduce_scatter(g, ctx.comm), None


class ReduceScatterToSequence(torch.autograd.Function):
    """Sequence parallel, output of a row-parallel layer: reduce-scatter
    along the sequence forward, all-gather backward."""

    @staticmethod
    def forward(ctx, x, comm):
        ctx.comm = comm
        return reduce_scatter(x, comm)

    @staticmethod
    def backward(ctx, g):
        return all_gather(g, ctx.comm), None


class AllToAll(torch.autograd.Function):
    """all_to_all (send and recv: None for equal splits) with autograd:
    the backward sends the gradients back the other way."""

    @staticmethod
    def forward(ctx, x, comm, send=None, recv=None):
        ctx.comm, ctx.send, ctx.recv = comm, send, recv
        return all_to_all(x, comm, send, recv)

    @staticmethod
    def backward(ctx, g):
        return all_to_all(g, ctx.comm, ctx.recv, ctx.send), None, None, None
