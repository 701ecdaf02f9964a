package transformer

import "math"

// A model's attention window: how many layers attend locally, and the
// keys a query meets on average over them.

// WindowLayers is how many layers attend locally: through the sliding
// window, or within their chunk (Chunk).
func WindowLayers(m Spec) int {
	if m.Window == 0 && m.Chunk == 0 {
		return 0
	}
	if m.GlobalEvery > 0 {
		return m.Layers - m.Layers/m.GlobalEvery
	}
	every := max(1, m.WindowEvery)
	return (m.Layers + every - 1) / every
}

// CausalKeys is how many keys a query attends to, on average over the
// sequence's queries and the layers: s/2 in a causal layer (the causal
// half, as the attention kernels and Megatron-LM count it), and in a
// layer with a window of W < s the mean of min(i, W) over the queries
// i = 1..s, W - W(W-1)/(2s); in a layer of chunks of C < s the mean of
// a query's place in its chunk, (q C(C+1)/2 + r(r+1)/2) / s for the q
// whole chunks and the r tokens left of s = qC + r.
func CausalKeys(m Spec) float64 { return keys(m, 0) }

// TiledKeys is CausalKeys as a fused attention kernel computes its
// sliding-window layers: in tiles of tile queries by tile keys, each
// tile that holds any key of a query's window computed whole (masked
// within it) and only the tiles wholly outside every window of the
// query tile skipped. A query tile of rows r0..r1 (from 0) meets the
// keys max(0, r0-W+1)..r1, so every row of it computes the whole key
// tiles over that span: with W = 128 and tiles of 128 at 4,096 tokens the
// first tile 128 keys and the 31 others two tiles, 256, a mean of
// 252 (CausalKeys: 126.02). Causal and chunked layers are counted as
// CausalKeys: their diagonal tiles are in the measured causal rates the
// keys are priced at. tile <= 0: CausalKeys.
func TiledKeys(m Spec, tile int) float64 { return keys(m, tile) }

// keys is CausalKeys (tile <= 0) or TiledKeys (tile > 0).
func keys(m Spec, tile int) float64 {
	s := float64(m.Seq)
	full := s / 2
	if m.Bidirectional {
		full = s // every key of the sequence (encoder.go)
	}
	w := WindowLayers(m)
	local := 0.0
	switch {
	case w == 0:
		return full
	case m.Chunk > 0 && m.Chunk < m.Seq:
		C := float64(m.Chunk)
		q := math.Floor(s / C)
		r := s - q*C
		local = (q*C*(C+1)/2 + r*(r+1)/2) / s
	case m.Window > 0 && m.Window < m.Seq && tile > 0:
		local = tiledWindow(m.Seq, m.Window, tile)
	case m.Window > 0 && m.Window < m.Seq:
		W := float64(m.Window)
		local = W - W*(W-1)/(2*s)
	default:
		return full
	}
	l := float64(m.Layers)
	return (float64(w)*local + (l-float64(w))*full) / l
}

// tiledWindow is the keys a query of a sequence of seq tokens computes,
// on average, in a window of w keys (its own and the w-1 before it) run in
// tiles of tile queries by tile keys (TiledKeys).
func tiledWindow(seq, w, tile int) float64 {
	var sum float64
	for r0 := 0; r0 < seq; r0 += tile {
		r1 := min(seq, r0+tile) - 1
		lo := max(0, r0-w+1)
		first, last := lo/tile*tile, min(seq, (r1/tile+1)*tile)
		sum += float64(r1-r0+1) * float64(last-first)
	}
	return sum / float64(seq)
}
