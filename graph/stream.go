package graph

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"unsafe"
)

// The native format's fast path. decodeRef (encoding/json into fileGraph,
// then the Builder) needs the whole file in memory, a copy of it in the
// JSON decoder's buffer, and every op and tensor twice (fileOp, then Op):
// a 2,000,000-op chain (500 MB) took 28 s to decode, 3.4 GiB resident.
// fastDecoder reads the same format in one pass from a small buffer
// straight into the Builder (6 to 8 s, 0.8 GiB).
//
// It handles the files placer writes, and any file laid out like them:
// "ops" before "tensors" and "control", keys spelled exactly as
// docs/graph-format.md has them, each at most once per object, no null
// values. On anything else, and on any error at all (syntax, types,
// unknown keys, names that do not resolve, duplicate names), it gives up
// (errSlow) and the caller decodes the whole input with decodeRef, so
// that every result and every error message is decodeRef's own. The
// checks of Builder.Build are shared: both paths end in it, with the same
// Builder contents. FuzzFastDecode holds the two paths to the same
// result.

// errSlow says that the fast path cannot decode the input; decodeRef must.
var errSlow = fmt.Errorf("graph: input needs the reference decoder")

// fastDecoder is one decoding of the native format from src (nil: buf
// holds the whole input).
type fastDecoder struct {
	src io.Reader
	buf []byte // buf[r:] is read and not yet consumed
	r   int
	eof bool  // src is exhausted
	err error // read error from src (not io.EOF)

	b       *Builder
	ops     chunked[Op]
	tensors chunked[Tensor]
	intern  map[string]string // op types and co-location groups: few distinct values
	ints    []int             // storage the tensors' consumer lists are cut from

	batchDims bool // a tensor has a batch_dim other than -1
}

// chunked collects values in blocks, so that collecting n of them moves
// none (appending to one slice copies each op five times over, and holds
// up to 2.25 times the slice at once), then hands them over in a slice of
// exactly n.
type chunked[T any] struct {
	full [][]T
	cur  []T
	n    int
}

// add returns a new zero value at the end.
func (c *chunked[T]) add() *T {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]T, 0, min(4096, max(8, 2*cap(c.cur))))
	}
	c.cur = c.cur[:len(c.cur)+1]
	c.n++
	return &c.cur[len(c.cur)-1]
}

// slice returns the values collected (nil when none) and empties c.
// When the blocks are large it collects garbage (runtime.GC) before
// copying them, so that no collection is under way during the copy (its
// write barriers made the copies of a 2,000,000-op chain's ops and tensors
// take 1.1 s), and after, so that the blocks are freed at once: otherwise
// the next allocations of a large graph (its tensors, its adjacency, a
// simulator's state) come on top of them, not in their place (the
// 2,000,000-op chain decoded and evaluated: 1,085 MiB resident at the end
// of decoding and 1,380 MiB at the peak without the collections, 833 and
// 1,166 MiB with them).
func (c *chunked[T]) slice() []T {
	if c.n == 0 {
		return nil
	}
	var v T
	big := uintptr(c.n)*unsafe.Sizeof(v) >= gcAfter
	if big {
		runtime.GC()
	}
	s := make([]T, 0, c.n)
	for _, b := range c.full {
		s = append(s, b...)
	}
	s = append(s, c.cur...)
	*c = chunked[T]{}
	if big {
		runtime.GC()
	}
	return s
}

// gcAfter is the size of chunked blocks from which slice collects
// garbage.
const gcAfter = 64 << 20

const (
	fastBufSize   = 64 << 10 // bytes read at a time
	fastArenaSize = 16 << 10 // consumer indices per block
	maxIntern     = 1 << 16  // distinct strings interned, at most
)

// fastDecode decodes the native format from src (or data when src is
// nil). It returns errSlow when decodeRef must decode the input, a
// "graph: read:" error when src fails, else Build's result.
func fastDecode(src io.Reader, data []byte) (*Graph, error) {
	d := &fastDecoder{src: src, buf: data, intern: map[string]string{}}
	if src != nil {
		d.buf = make([]byte, 0, fastBufSize)
	}
	if !d.file() {
		if d.err != nil {
			return nil, fmt.Errorf("graph: read: %w", d.err)
		}
		return nil, errSlow
	}
	return d.b.Build()
}

// fill reads more input, keeping the unconsumed bytes (moved to the
// front of buf). It reports whether any bytes were added.
func (d *fastDecoder) fill() bool {
	if d.src == nil || d.eof || d.err != nil {
		return false
	}
	if d.r > 0 {
		n := copy(d.buf, d.buf[d.r:])
		d.buf = d.buf[:n]
		d.r = 0
	}
	if len(d.buf) == cap(d.buf) {
		nb := make([]byte, len(d.buf), 2*cap(d.buf))
		copy(nb, d.buf)
		d.buf = nb
	}
	for range 100 {
		n, err := d.src.Read(d.buf[len(d.buf):cap(d.buf)])
		d.buf = d.buf[:len(d.buf)+n]
		if err == io.EOF {
			d.eof = true
		} else if err != nil {
			d.err = err
		}
		if n > 0 || d.eof || d.err != nil {
			return n > 0
		}
	}
	d.err = io.ErrNoProgress
	return false
}

// ws skips JSON white space and reports whether a byte follows.
func (d *fastDecoder) ws() bool {
	for {
		for d.r < len(d.buf) {
			switch d.buf[d.r] {
			case ' ', '\n', '\t', '\r':
				d.r++
			default:
				return true
			}
		}
		if !d.fill() {
			return false
		}
	}
}

// next skips white space and returns the next byte without consuming it
// (0 at the end of the input).
func (d *fastDecoder) next() byte {
	if !d.ws() {
		return 0
	}
	return d.buf[d.r]
}

// eat consumes the next non-space byte if it is c.
func (d *fastDecoder) eat(c byte) bool {
	if d.next() != c {
		return false
	}
	d.r++
	return true
}

// str reads a string (after white space) and returns the literal, quotes
// included, valid until the next read, and whether it holds an escape or
// a non-ASCII byte (and so needs unquoting).
func (d *fastDecoder) str() (lit []byte, slow, ok bool) {
	if d.next() != '"' {
		return nil, false, false
	}
	i := d.r + 1
	for {
		for i < len(d.buf) {
			c := d.buf[i]
			switch {
			case c == '"':
				lit = d.buf[d.r : i+1]
				d.r = i + 1
				return lit, slow, true
			case c == '\\':
				slow = true
				i += 2
				continue
			case c < 0x20:
				return nil, false, false
			case c >= 0x80:
				slow = true
			}
			i++
		}
		off := i - d.r
		if !d.fill() {
			return nil, false, false
		}
		i = d.r + off
	}
}

// text reads a string value as a Go string, unquoted exactly as
// encoding/json does (escapes, invalid UTF-8), interned when in is set.
func (d *fastDecoder) text(in bool) (string, bool) {
	lit, slow, ok := d.str()
	if !ok {
		return "", false
	}
	if slow {
		var v string
		if json.Unmarshal(lit, &v) != nil {
			return "", false
		}
		return v, true
	}
	s := lit[1 : len(lit)-1]
	if !in {
		return string(s), true
	}
	if v, ok := d.intern[string(s)]; ok {
		return v, true
	}
	v := string(s)
	if len(d.intern) < maxIntern {
		d.intern[v] = v
	}
	return v, true
}

// number reads a number (after white space) and returns its text, valid
// until the next read. The text follows JSON's grammar.
func (d *fastDecoder) number() ([]byte, bool) {
	if !d.ws() {
		return nil, false
	}
	i := d.r
	for {
		for i < len(d.buf) {
			c := d.buf[i]
			if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
				break
			}
			i++
		}
		if i < len(d.buf) {
			break
		}
		off := i - d.r
		if !d.fill() {
			i = d.r + off
			break
		}
		i = d.r + off
	}
	lit := d.buf[d.r:i]
	if !validNumber(lit) {
		return nil, false
	}
	d.r = i
	return lit, true
}

// validNumber reports whether lit is a JSON number.
func validNumber(lit []byte) bool {
	i, n := 0, len(lit)
	digits := func() bool {
		j := i
		for i < n && lit[i] >= '0' && lit[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < n && lit[i] == '-' {
		i++
	}
	switch {
	case i < n && lit[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < n && lit[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < n && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		if i < n && (lit[i] == '+' || lit[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == n
}

// smallUint returns lit as a number when it is at most 15 decimal digits
// (exact in an int64 and in a float64).
func smallUint(lit []byte) (int64, bool) {
	if len(lit) == 0 || len(lit) > 15 {
		return 0, false
	}
	var v int64
	for _, c := range lit {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// int64 reads a number into an int64 as encoding/json does (an integer
// literal that fits; anything else is its error).
func (d *fastDecoder) int64() (int64, bool) {
	lit, ok := d.number()
	if !ok {
		return 0, false
	}
	if v, ok := smallUint(lit); ok {
		return v, true
	}
	v, err := strconv.ParseInt(string(lit), 10, 64)
	return v, err == nil
}

// float64 reads a number into a float64 as encoding/json does.
func (d *fastDecoder) float64() (float64, bool) {
	lit, ok := d.number()
	if !ok {
		return 0, false
	}
	if v, ok := smallUint(lit); ok {
		return float64(v), true
	}
	v, err := strconv.ParseFloat(string(lit), 64)
	return v, err == nil
}

// bool reads true or false.
func (d *fastDecoder) bool() (v, ok bool) {
	if !d.ws() {
		return false, false
	}
	for _, w := range [...]string{"true", "false"} {
		if d.literal(w) {
			return w == "true", true
		}
	}
	return false, false
}

// literal consumes w if the input continues with it.
func (d *fastDecoder) literal(w string) bool {
	for len(d.buf)-d.r < len(w) {
		if !d.fill() {
			return false
		}
	}
	if string(d.buf[d.r:d.r+len(w)]) != w {
		return false
	}
	d.r += len(w)
	return true
}

// array reads an array (after white space), calling elem for each
// element.
func (d *fastDecoder) array(elem func() bool) bool {
	if !d.eat('[') {
		return false
	}
	if d.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch d.next() {
		case ',':
			d.r++
		case ']':
			d.r++
			return true
		default:
			return false
		}
	}
}

// object reads an object (after white space), calling field for each key
// (raw, unescaped keys only: others go to the reference decoder) with the
// reader at its value. A key seen twice is refused.
func (d *fastDecoder) object(keys []string, field func(k int) bool) bool {
	if !d.eat('{') {
		return false
	}
	if d.eat('}') {
		return true
	}
	var seen uint32
	for {
		lit, slow, ok := d.str()
		if !ok || slow {
			return false
		}
		s := lit[1 : len(lit)-1]
		k := -1
		for i, name := range keys {
			if string(s) == name {
				k = i
				break
			}
		}
		if k < 0 || seen&(1<<k) != 0 || !d.eat(':') {
			return false
		}
		seen |= 1 << k
		if d.next() == 'n' || !field(k) { // null: encoding/json's rules differ by type
			return false
		}
		switch d.next() {
		case ',':
			d.r++
		case '}':
			d.r++
			return true
		default:
			return false
		}
	}
}

var (
	fileKeys    = []string{"format", "version", "name", "ops", "tensors", "control", "batch", "execution"}
	opKeys      = []string{"name", "type", "class", "dtype", "shape", "flops", "bytes_read", "bytes_written", "param_bytes", "temp_bytes", "time_s", "colocation", "backward", "alias", "fixed_flops", "fixed_bytes_read", "fixed_bytes_written", "fixed_temp_bytes", "dispatch_s", "launches"}
	tensorKeys  = []string{"name", "producer", "consumers", "bytes", "transfer_s", "batch_dim"}
	controlKeys = []string{"from", "to"}
)

// file reads the whole input into d.b.
func (d *fastDecoder) file() bool {
	var format string
	var version, batch int64
	var name string
	var ops bool
	var exec *fileExecution
	ok := d.object(fileKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			format, ok = d.text(false)
		case 1:
			version, ok = d.int64()
		case 2:
			name, ok = d.text(false)
		case 3:
			ops = true
			ok = d.array(d.op) && d.index()
		case 4:
			if ok = ops && d.array(d.tensor); ok {
				d.b.g.tensors = d.tensors.slice()
			}
		case 5:
			ok = ops && d.array(d.control)
		case 6:
			batch, ok = d.int64()
		case 7:
			exec = &fileExecution{}
			ok = d.execution(exec)
		}
		return ok
	})
	if !ok || !ops || format != FormatName || (version != FormatVersion && version != FormatVersionBatch) {
		return false
	}
	// Batch information: only in version 2, a batch_dim only with a
	// batch; the reference decoder words what is wrong.
	if (batch != 0 && version < FormatVersionBatch) || (batch == 0 && d.batchDims) || batch != int64(int(batch)) {
		return false
	}
	// Only white space may follow.
	if d.ws() {
		return false
	}
	if d.err != nil {
		return false
	}
	d.b.g.name = name
	d.b.g.batch = int(batch)
	if exec != nil {
		// An error is the reference decoder's to word.
		e, err := fromFileExec(exec, d.b.Lookup)
		if err != nil {
			return false
		}
		d.b.g.exec = e
	}
	return true
}

// execution reads the execution object into f.
func (d *fastDecoder) execution(f *fileExecution) bool {
	version := false
	ok := d.object(execKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			var v int64
			v, ok = d.int64()
			f.Version, version = int(v), true
			if int64(f.Version) != v {
				return false
			}
		case 1:
			f.Device, ok = d.text(false)
		case 2:
			f.Optimizer, ok = d.text(false)
		case 3:
			f.OptimizerImpl, ok = d.text(false)
		case 4:
			f.OptimizerFrom, ok = d.text(false)
		case 5:
			f.Autocast, ok = d.text(false)
		case 6:
			f.TF32MatMul, ok = d.bool()
		case 7:
			f.TF32CuDNN, ok = d.bool()
		case 8:
			f.CuDNNRNN, ok = d.bool()
		case 9:
			f.CUDAGraphs, ok = d.bool()
		case 10:
			f.Compile, ok = d.text(false)
		case 11:
			f.GradScaler, ok = d.bool()
		}
		return ok
	})
	return ok && version
}

// index makes the Builder of the ops read; a name twice is for the
// reference decoder to report.
func (d *fastDecoder) index() bool {
	d.b = NewBuilder("")
	d.b.g.ops = d.ops.slice()
	d.b.g.index.reserve(d.b.g.ops, len(d.b.g.ops))
	for i := range d.b.g.ops {
		if d.b.g.index.add(d.b.g.ops, i) {
			return false
		}
	}
	return true
}

// op reads one op.
func (d *fastDecoder) op() bool {
	op := d.ops.add()
	var cls, dt string
	ok := d.object(opKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			op.Name, ok = d.text(false)
		case 1:
			op.Type, ok = d.text(true)
		case 2:
			cls, ok = d.text(true)
		case 3:
			dt, ok = d.text(true)
		case 4:
			op.Shape = []int64{}
			ok = d.array(func() bool {
				v, ok := d.int64()
				op.Shape = append(op.Shape, v)
				return ok
			})
		case 5:
			op.FLOPs, ok = d.float64()
		case 6:
			op.BytesRead, ok = d.int64()
		case 7:
			op.BytesWritten, ok = d.int64()
		case 8:
			op.ParamBytes, ok = d.int64()
		case 9:
			op.TempBytes, ok = d.int64()
		case 10:
			op.Time, ok = d.float64()
			op.HasTime = true
		case 11:
			op.Colocation, ok = d.text(true)
		case 12:
			op.Backward, ok = d.bool()
		case 13:
			op.Alias, ok = d.bool()
		case 14:
			op.FixedFLOPs, ok = d.float64()
		case 15:
			op.FixedBytesRead, ok = d.int64()
		case 16:
			op.FixedBytesWritten, ok = d.int64()
		case 17:
			op.FixedTempBytes, ok = d.int64()
		case 18:
			op.Dispatch, ok = d.float64()
			op.HasDispatch = true
		case 19:
			var n int64
			n, ok = d.int64()
			op.Launches, op.HasLaunches = int(n), true
			ok = ok && n >= 0 && n <= MaxLaunches
		}
		return ok
	})
	if !ok || op.Name == "" {
		return false
	}
	var err error
	if cls != "" {
		if op.Class, err = ParseClass(cls); err != nil {
			return false
		}
	}
	if dt != "" {
		if op.DType, err = ParseDType(dt); err != nil {
			return false
		}
	}
	return true
}

// opIndex reads an op's name and returns its index.
func (d *fastDecoder) opIndex() (int, bool) {
	lit, slow, ok := d.str()
	if !ok {
		return 0, false
	}
	if slow {
		var v string
		if json.Unmarshal(lit, &v) != nil {
			return 0, false
		}
		return d.b.g.index.lookup(d.b.g.ops, v)
	}
	return d.b.g.index.lookupBytes(d.b.g.ops, lit[1:len(lit)-1])
}

// tensor reads one tensor.
func (d *fastDecoder) tensor() bool {
	t := d.tensors.add()
	t.BatchDim = NoBatch
	var producer bool
	ok := d.object(tensorKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			t.Name, ok = d.text(false)
		case 1:
			t.Producer, ok = d.opIndex()
			producer = true
		case 2:
			start := len(d.ints)
			ok = d.array(func() bool {
				c, ok := d.opIndex()
				if len(d.ints) == cap(d.ints) {
					// A new block; the list so far moves with it.
					nb := make([]int, len(d.ints)-start, max(fastArenaSize, 2*(len(d.ints)-start)))
					copy(nb, d.ints[start:])
					d.ints, start = nb, 0
				}
				d.ints = append(d.ints, c)
				return ok
			})
			t.Consumers = d.ints[start:len(d.ints):len(d.ints)]
		case 3:
			t.Bytes, ok = d.int64()
		case 4:
			t.TransferTime, ok = d.float64()
			t.HasTransferTime = true
		case 5:
			var v int64
			v, ok = d.int64()
			t.BatchDim = int(v)
			if int64(t.BatchDim) != v {
				return false // the reference decoder says it overflows int
			}
			if t.BatchDim != NoBatch {
				d.batchDims = true
			}
		}
		return ok
	})
	if !ok || !producer {
		return false
	}
	if t.Consumers == nil {
		t.Consumers = []int{}
	}
	return true
}

// control reads one control edge and adds it.
func (d *fastDecoder) control() bool {
	var from, to int
	var seen int
	ok := d.object(controlKeys, func(k int) bool {
		var ok bool
		if k == 0 {
			from, ok = d.opIndex()
		} else {
			to, ok = d.opIndex()
		}
		seen++
		return ok
	})
	if !ok || seen != 2 {
		return false
	}
	d.b.AddControl(from, to)
	return true
}
