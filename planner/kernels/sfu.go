package kernels

// Attention's exponentials. A flash-attention kernel computes one
// exponential per score in its forward (softmax's exp(S - max)) and one
// more in its backward (it recomputes P = exp(S - LSE)); they run on the
// SM's special-function units (SASS MUFU.EX2), whose rate per SM per
// clock is far below the tensor cores': FlashAttention-3 (Shah et al.,
// arXiv 2407.08608, section 3.1) gives the H100 SXM5 989 TFLOP/s of BF16
// matmul against 3.9 TFLOP/s of special functions.
//
// MUFU.EX2 results per clock per SM: 16 on compute capability 8.0, 9.0
// and 10.0 (the CUDA C++ Programming Guide's arithmetic-instruction
// throughput table, "base-2 exponential (exp2f)"; FlashAttention-4,
// Zadouri et al., arXiv 2603.05451, section 2: the exponential unit
// "16 ops/clock/SM", unchanged from Hopper to Blackwell), 32 on
// Blackwell Ultra (NVIDIA, "Making Softmax More Efficient with NVIDIA
// Blackwell Ultra", developer blog 2025: Blackwell Ultra doubles the
// SFU's MUFU.EX2 throughput over Blackwell).
const (
	MUFUHopper         = 16
	MUFUBlackwell      = 16
	MUFUBlackwellUltra = 32
)

// Dense BF16 tensor-core FLOPs per clock per SM: Hopper's 4,096 (the
// H100 SXM's 989.4 TFLOP/s over 132 SMs at its 1,830 MHz boost), twice
// that on Blackwell's fifth-generation tensor cores (FlashAttention-4,
// section 2: B200's 2.25 PFLOP/s over 148 SMs; its feeds-and-speeds
// analysis has a 128 x 128 tile's two GEMMs at head dimension 128 take
// as many cycles as its 16,384 exponentials: 4 x 128^3 / 8,192 = 16,384 /
// 16 = 1,024).
const (
	TensorPerClockHopper    = 4096
	TensorPerClockBlackwell = 8192
)

// ExpRate is a GPU's exponentials a second (MUFU.EX2 over all its SMs)
// from its dense BF16 tensor peak and the two per-clock rates of one SM:
// peak x mufu / tensor (the clock and the SM count cancel). H100:
// 989.4e12 x 16 / 4,096 = 3.865e12 (FlashAttention-3's "3.9 TFLOPS");
// B200 2.25e15 x 16 / 8,192 = 4.395e12; GB300 (Blackwell Ultra at
// 2.5e15) 2.5e15 x 32 / 8,192 = 9.766e12.
func ExpRate(bf16Peak float64, mufu, tensorPerClock int) float64 {
	return bf16Peak * float64(mufu) / float64(tensorPerClock)
}

// h100Peak and h100Exp are the H100 SXM's dense BF16 peak (roofline's
// h100) and its exponentials a second (ExpRate).
const h100Peak = 989.4e12

var h100Exp = ExpRate(h100Peak, MUFUHopper, TensorPerClockHopper)

// expSplit splits a measured kernel's time per score at head dimensions
// 64 and 128 (one direction of r, whose FLOPs per score are mul x 4 d: 4 d
// forward, Q K^T and P V at 2 d each; 10 d backward) into a part that
// runs with the tensor cores and one that runs with the exponentials:
//
//	t(d) = a x mul 4 d / peak + b / exp
//
// solved exactly at d = 64 and 128. a is the kernel's time per unit of
// tensor work (the GEMMs and what grows with d: shared-memory traffic), b
// its time per exponential (MUFU.EX2 with the softmax's other per-score
// work: the max, the scale, the conversions) in units of the GPU's pure
// exponential time. On the H100's cuDNN fit: forward a 0.878, b 1.229
// (TestExpSplit: both positive; the softmax is hardly overlapped with the GEMMs: a + b ~ 2.1 where a
// full overlap would give max(a, b)); backward a 1.372, b 1.871.
func expSplit(r AttentionRate, mul, peak, exp float64) (a, b float64) {
	t := func(d int) float64 { return mul * 4 * float64(d) / r.Rate(d) }
	g := func(d int) float64 { return mul * 4 * float64(d) / peak }
	a = (t(128) - t(64)) / (g(128) - g(64))
	b = (t(64) - a*g(64)) * exp
	return a, b
}
