package policy

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/bounded"
)

// The policy file: a magic string, the format version, a JSON header with
// the hyperparameters (feature normalization included), the seed and the
// parameter list, the weights as little-endian float32 in header order,
// and a CRC-32 (IEEE) of everything before it.
//
//	offset 0   "PLACERPOLICY"          12 bytes
//	       12  version                 uint32
//	       16  header length H         uint32
//	       20  header                  H bytes of JSON
//	   20 + H  weights                 4 bytes each
//	     end-4 CRC-32                  uint32
const (
	fileMagic = "PLACERPOLICY"
	// FileVersion is the version of the policy file format this package
	// writes and reads.
	FileVersion = 1
)

type fileHeader struct {
	Seed   uint64      `json:"seed"`
	Config Config      `json:"config"`
	Params []fileParam `json:"params"`
}

type fileParam struct {
	Name string `json:"name"`
	Rows int    `json:"rows"`
	Cols int    `json:"cols"`
}

// Save writes the policy (hyperparameters, feature normalization, seed
// and weights) to path atomically: a reader never sees a partial file.
func (p *Policy) Save(path string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := p.WriteTo(w)
		return err
	})
}

// WriteTo writes the policy file to w.
func (p *Policy) WriteTo(w io.Writer) (int64, error) {
	h := fileHeader{Seed: p.seed, Config: p.cfg}
	for _, q := range p.net.params {
		h.Params = append(h.Params, fileParam{Name: q.Name, Rows: q.Rows, Cols: q.Cols})
	}
	hj, err := json.Marshal(&h)
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	buf.WriteString(fileMagic)
	binary.Write(&buf, binary.LittleEndian, uint32(FileVersion))
	binary.Write(&buf, binary.LittleEndian, uint32(len(hj)))
	buf.Write(hj)
	b4 := make([]byte, 4)
	for _, q := range p.net.params {
		for _, v := range q.W {
			binary.LittleEndian.PutUint32(b4, math.Float32bits(v))
			buf.Write(b4)
		}
	}
	binary.Write(&buf, binary.LittleEndian, crc32.ChecksumIEEE(buf.Bytes()))
	return buf.WriteTo(w)
}

// Clone returns an independent copy of the policy (configuration, seed,
// feature normalization and weights): training the copy leaves p as it
// was.
func (p *Policy) Clone() (*Policy, error) {
	var buf bytes.Buffer
	if _, err := p.WriteTo(&buf); err != nil {
		return nil, err
	}
	return decode(buf.Bytes(), "clone")
}

// Load reads a policy file written by Save. A file that is not a policy
// file, has another format version, is truncated or is corrupt is a
// one-line error naming path.
func Load(path string) (*Policy, error) {
	data, err := bounded.ReadFile(path, bounded.Model, "a policy file")
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return decode(data, path)
}

// Decode reads a policy file's bytes; name is used in errors.
func Decode(data []byte, name string) (*Policy, error) { return decode(data, name) }

// Read reads a policy file from r.
func Read(r io.Reader) (*Policy, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("policy: read: %w", err)
	}
	return decode(data, "input")
}

func decode(data []byte, name string) (*Policy, error) {
	const pre = len(fileMagic) + 8
	if len(data) < len(fileMagic) || string(data[:len(fileMagic)]) != fileMagic {
		return nil, fmt.Errorf("policy: %s is not a placer policy file", name)
	}
	if len(data) < pre {
		return nil, fmt.Errorf("policy: %s is truncated (%d bytes)", name, len(data))
	}
	if v := binary.LittleEndian.Uint32(data[len(fileMagic):]); v != FileVersion {
		return nil, fmt.Errorf("policy: %s has policy file format version %d; this placer reads version %d", name, v, FileVersion)
	}
	hl := int(binary.LittleEndian.Uint32(data[len(fileMagic)+4:]))
	if len(data) < pre+hl {
		return nil, fmt.Errorf("policy: %s is truncated (%d bytes, the header alone needs %d)", name, len(data), pre+hl)
	}
	var h fileHeader
	dec := json.NewDecoder(bytes.NewReader(data[pre : pre+hl]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("policy: %s has a bad header: %v", name, err)
	}
	weights := 0
	for _, q := range h.Params {
		if q.Rows < 0 || q.Cols < 0 || q.Rows*q.Cols > 1<<30 {
			return nil, fmt.Errorf("policy: %s has a bad header: parameter %s is %dx%d", name, q.Name, q.Rows, q.Cols)
		}
		weights += q.Rows * q.Cols
	}
	want := pre + hl + 4*weights + 4
	if len(data) < want {
		return nil, fmt.Errorf("policy: %s is truncated (%d bytes, want %d)", name, len(data), want)
	}
	if len(data) > want {
		return nil, fmt.Errorf("policy: %s has %d unexpected bytes at the end", name, len(data)-want)
	}
	if crc32.ChecksumIEEE(data[:want-4]) != binary.LittleEndian.Uint32(data[want-4:]) {
		return nil, fmt.Errorf("policy: %s is corrupt (checksum mismatch)", name)
	}
	p, err := New(&h.Config, h.Seed)
	if err != nil {
		return nil, fmt.Errorf("policy: %s: %v", name, err)
	}
	if p.cfg != h.Config {
		return nil, fmt.Errorf("policy: %s has an incomplete configuration", name)
	}
	if len(p.net.params) != len(h.Params) {
		return nil, fmt.Errorf("policy: %s has %d parameters, its configuration needs %d", name, len(h.Params), len(p.net.params))
	}
	off := pre + hl
	for i, q := range p.net.params {
		fq := h.Params[i]
		if fq.Name != q.Name || fq.Rows != q.Rows || fq.Cols != q.Cols {
			return nil, fmt.Errorf("policy: %s: parameter %d is %s %dx%d, its configuration needs %s %dx%d", name, i, fq.Name, fq.Rows, fq.Cols, q.Name, q.Rows, q.Cols)
		}
		for j := range q.W {
			q.W[j] = math.Float32frombits(binary.LittleEndian.Uint32(data[off:]))
			off += 4
		}
	}
	return p, nil
}
