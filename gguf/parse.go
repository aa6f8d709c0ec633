package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/picolm/picolm-wasm/quant"
)

// Minimum encoded sizes, used to reject counts the file cannot hold before
// allocating anything for them.
const (
	minKVSize     = 8 + 4 + 1     // key length, value type, smallest value
	minTensorSize = 8 + 4 + 4 + 8 // name length, n_dims, type, offset

	// preallocMax caps how many metadata entries and tensor infos are
	// allocated ahead of reading them; beyond it the slices grow with what
	// the file actually holds.
	preallocMax = 4096
)

// decoder reads little-endian fields from b, reporting errors at the offset
// of the field being read. kind, name and idx say what is being read
// ("tensor info", "blk.0.attn_q.weight", 3) for the messages; they are only
// formatted when an error occurs, so reading allocates nothing.
type decoder struct {
	b    []byte
	off  int
	kind string
	name string
	idx  int
}

func (d *decoder) left() int { return len(d.b) - d.off }

// at sets what is being read.
func (d *decoder) at(kind, name string, idx int) { d.kind, d.name, d.idx = kind, name, idx }

// errf returns a FormatError at offset off, its message prefixed with what
// is being read.
func (d *decoder) errf(off int, err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	switch {
	case d.name != "":
		msg = d.kind + " " + strconv.Quote(d.name) + ": " + msg
	case d.idx >= 0 && d.kind != "":
		msg = d.kind + " " + strconv.Itoa(d.idx) + ": " + msg
	case d.kind != "":
		msg = d.kind + ": " + msg
	}
	return &FormatError{Offset: int64(off), Err: err, Msg: msg}
}

func (d *decoder) need(n int, what string) error {
	if d.left() < n {
		return d.errf(d.off, ErrTruncated, "%s needs %d bytes, %d left", what, n, d.left())
	}
	return nil
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.need(4, what); err != nil {
		return 0, err
	}
	x := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return x, nil
}

func (d *decoder) u64(what string) (uint64, error) {
	if err := d.need(8, what); err != nil {
		return 0, err
	}
	x := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return x, nil
}

// str reads a u64 length and that many bytes.
func (d *decoder) str(what string) ([]byte, error) {
	at := d.off
	if d.left() < 8 {
		return nil, d.errf(d.off, ErrTruncated, "%s length needs 8 bytes, %d left", what, d.left())
	}
	n := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	if n > uint64(d.left()) {
		return nil, d.errf(at, ErrLength, "%s length %d exceeds the %d bytes left", what, n, d.left())
	}
	s := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return s, nil
}

// value reads a value of type t.
func (d *decoder) value(t ValueType) (Value, error) {
	switch t {
	case TypeString:
		s, err := d.str("string")
		if err != nil {
			return Value{}, err
		}
		return Value{typ: TypeString, str: string(s)}, nil
	case TypeArray:
		return d.array(0, true)
	}
	size := fixedSize[t]
	if err := d.need(size, t.String()); err != nil {
		return Value{}, err
	}
	v := Value{typ: t, num: scalarBits(t, d.b[d.off:])}
	d.off += size
	return v, nil
}

// array reads an array's element type, count and elements. Elements are
// validated and kept as raw bytes; for strings and nested arrays, build also
// records where each element starts. Nested arrays are only validated
// (build false): Elem decodes them again on demand. depth counts the arrays
// around this one.
func (d *decoder) array(depth int, build bool) (Value, error) {
	if depth >= maxNesting {
		return Value{}, d.errf(d.off, ErrNesting, "more than %d levels of arrays", maxNesting)
	}
	at := d.off
	et, err := d.u32("array element type")
	if err != nil {
		return Value{}, err
	}
	if !ValueType(et).valid() {
		return Value{}, d.errf(at, ErrValueType, "array element type %d", et)
	}
	elem := ValueType(et)
	at = d.off
	n, err := d.u64("array element count")
	if err != nil {
		return Value{}, err
	}
	least := uint64(minSize[elem])
	if n > uint64(d.left())/least {
		return Value{}, d.errf(at, ErrLength, "array of %d %s needs at least %d bytes per element, %d bytes left",
			n, elem, least, d.left())
	}
	start := d.off
	if size := fixedSize[elem]; size > 0 {
		d.off += int(n) * size
	} else {
		// Validate every element before allocating anything for them, so
		// memory stays proportional to the bytes the elements really use.
		for range n {
			if elem == TypeString {
				_, err = d.str("array element")
			} else {
				_, err = d.array(depth+1, false)
			}
			if err != nil {
				return Value{}, err
			}
		}
	}
	if !build {
		return Value{}, nil
	}
	v := Value{typ: TypeArray, elem: elem, n: int(n), raw: d.b[start:d.off:d.off]}
	if fixedSize[elem] == 0 {
		v.offs = make([]int, n)
		e := decoder{b: v.raw}
		for i := range v.offs {
			v.offs[i] = e.off
			if elem == TypeString {
				e.off += 8 + int(binary.LittleEndian.Uint64(v.raw[e.off:]))
			} else {
				e.array(depth+1, false) // validated above
			}
		}
	}
	return v, nil
}

// Parse parses a GGUF file held in b. The tensors' Data are views into b,
// which must not change while the File is in use.
func Parse(b []byte) (*File, error) { return parse(b, uint64(len(b))) }

// parse parses the file whose first len(b) bytes are b and whose size is
// size: when b is the whole file, the tensors' Data view it; when b is a
// prefix (ParseHeader), Data stay nil and only the bounds are checked.
func parse(b []byte, size uint64) (*File, error) {
	d := &decoder{b: b}
	d.at("header", "", -1)
	f := &File{data: b, size: size}

	// Header.
	if err := d.need(4, "magic"); err != nil {
		return nil, err
	}
	if string(b[:4]) != Magic {
		return nil, formatErr(0, ErrBadMagic, "got %q, want %q", b[:4], Magic)
	}
	d.off = 4
	version, err := d.u32("version")
	if err != nil {
		return nil, err
	}
	switch {
	case version == 2 || version == 3:
	case version == 1:
		return nil, formatErr(4, ErrVersion, "GGUF v1 (32-bit counts and lengths) is not supported; only v2 and v3 are (re-convert the model with a current llama.cpp)")
	case bits.ReverseBytes32(version) >= 1 && bits.ReverseBytes32(version) <= 3:
		return nil, formatErr(4, ErrBigEndian, "version field reads %#x little-endian, i.e. a big-endian GGUF v%d", version, bits.ReverseBytes32(version))
	default:
		return nil, formatErr(4, ErrVersion, "version %d; only v2 and v3 are supported", version)
	}
	f.Version = version

	at := d.off
	nTensors, err := d.u64("tensor count")
	if err != nil {
		return nil, err
	}
	atKV := d.off
	nKV, err := d.u64("metadata count")
	if err != nil {
		return nil, err
	}
	if nKV > uint64(d.left())/minKVSize {
		return nil, formatErr(atKV, ErrLength, "%d metadata entries need at least %d bytes each, %d bytes left", nKV, minKVSize, d.left())
	}
	if nTensors > uint64(d.left())/minTensorSize {
		return nil, formatErr(at, ErrLength, "%d tensor infos need at least %d bytes each, %d bytes left", nTensors, minTensorSize, d.left())
	}

	// Metadata.
	f.KV = make([]KeyValue, 0, min(int(nKV), preallocMax))
	f.keys = make(map[string]int, min(int(nKV), preallocMax))
	alignAt := 0 // offset of general.alignment's value type, for errors
	for i := 0; i < int(nKV); i++ {
		at := d.off
		d.at("metadata entry", "", i)
		k, err := d.str("key")
		if err != nil {
			return nil, err
		}
		key := string(k)
		if _, dup := f.keys[key]; dup {
			return nil, d.errf(at, ErrDuplicateKey, "key %q appears twice", key)
		}
		d.at("metadata", key, i)
		at = d.off
		t, err := d.u32("value type")
		if err != nil {
			return nil, err
		}
		if !ValueType(t).valid() {
			return nil, d.errf(at, ErrValueType, "value type %d", t)
		}
		v, err := d.value(ValueType(t))
		if err != nil {
			return nil, err
		}
		if key == KeyAlignment {
			alignAt = at
		}
		f.keys[key] = len(f.KV)
		f.KV = append(f.KV, KeyValue{Key: key, Value: v})
	}

	f.Alignment = DefaultAlignment
	if v, ok := f.Lookup(KeyAlignment); ok {
		a, ok := v.Uint()
		if !ok {
			return nil, formatErr(alignAt, ErrAlignment, "%s is %s, want an unsigned integer", KeyAlignment, v.describeType())
		}
		if a == 0 || a&(a-1) != 0 || a > 1<<30 {
			return nil, formatErr(alignAt, ErrAlignment, "%s = %d is not a power of two in [1, 2^30]", KeyAlignment, a)
		}
		f.Alignment = a
	}

	// Tensor infos.
	f.Tensors = make([]TensorInfo, 0, min(int(nTensors), preallocMax))
	f.names = make(map[string]int, min(int(nTensors), preallocMax))
	spans := make([]span, 0, min(int(nTensors), preallocMax))
	for i := 0; i < int(nTensors); i++ {
		at := d.off
		d.at("tensor info", "", i)
		nm, err := d.str("name")
		if err != nil {
			return nil, err
		}
		name := string(nm)
		if _, dup := f.names[name]; dup {
			return nil, d.errf(at, ErrDuplicateName, "tensor %q appears twice", name)
		}
		d.at("tensor", name, i)
		atDims := d.off
		nd, err := d.u32("dimension count")
		if err != nil {
			return nil, err
		}
		if nd > MaxDims {
			return nil, d.errf(atDims, ErrDims, "%d dimensions, at most %d allowed", nd, MaxDims)
		}
		if err := d.need(8*int(nd), "dimensions"); err != nil {
			return nil, err
		}
		dims := make([]uint64, nd)
		elems := uint64(1)
		for j := range dims {
			dims[j] = binary.LittleEndian.Uint64(d.b[d.off:])
			d.off += 8
			hi, lo := bits.Mul64(elems, dims[j])
			if hi != 0 || lo > math.MaxInt64 {
				return nil, d.errf(atDims, ErrDims, "dimensions %v: element count overflows", dims[:j+1])
			}
			elems = lo
		}
		atType := d.off
		typ, err := d.u32("type")
		if err != nil {
			return nil, err
		}
		tr := quant.TraitsOf(quant.Type(typ))
		if !tr.Valid() {
			return nil, d.errf(atType, ErrTensorType, "type id %d", typ)
		}
		if key, own := quant.ExtensionKey(quant.Type(typ)); own {
			// picoLM's own types use ids outside ggml's range; a file must name
			// the extension too, so another tool's use of the id is not misread.
			if _, ok := f.keys[key]; !ok {
				return nil, d.errf(atType, ErrTensorType, "type id %d (%s) without the metadata key %s", typ, tr.Name, key)
			}
		}
		if elems%uint64(tr.BlockSize) != 0 {
			return nil, d.errf(atDims, ErrBlockSize, "dimensions %v: %d elements are not a whole number of %s blocks of %d",
				dims, elems, tr.Name, tr.BlockSize)
		}
		atOff := d.off
		off, err := d.u64("data offset")
		if err != nil {
			return nil, err
		}
		if off%f.Alignment != 0 {
			return nil, d.errf(atOff, ErrMisaligned, "data offset %d is not a multiple of the alignment %d", off, f.Alignment)
		}
		hi, size := bits.Mul64(elems/uint64(tr.BlockSize), uint64(tr.TypeSize))
		if hi != 0 || size > math.MaxInt64 {
			return nil, d.errf(atDims, ErrDims, "dimensions %v: byte size overflows", dims)
		}
		f.names[name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, TensorInfo{Name: name, Dims: dims, Type: quant.Type(typ), Offset: off})
		spans = append(spans, span{info: at, start: off, size: size})
	}

	// Data section: starts at the next multiple of the alignment. Files
	// without tensors may end before it.
	end, ok := alignUp(uint64(d.off), f.Alignment)
	if !ok {
		return nil, formatErr(d.off, ErrAlignment, "data offset overflows")
	}
	f.DataOffset = end
	for i := range spans {
		s := &spans[i]
		t := &f.Tensors[i]
		start, c1 := bits.Add64(f.DataOffset, s.start, 0)
		stop, c2 := bits.Add64(start, s.size, 0)
		if c1 != 0 || c2 != 0 {
			return nil, formatErr(s.info, ErrTensorBounds, "tensor %q: data offset %d + %d bytes overflows", t.Name, s.start, s.size)
		}
		if stop > size {
			return nil, formatErr(s.info, ErrTensorBounds, "tensor %q (%s %v, %d bytes) spans file bytes [%d, %d), the file has %d",
				t.Name, typeName(t.Type), t.Dims, s.size, f.DataOffset+s.start, f.DataOffset+s.start+s.size, size)
		}
		if stop <= uint64(len(b)) && size == uint64(len(b)) {
			t.Data = b[start:stop:stop]
		}
	}

	// No two tensors may share bytes.
	order := make([]int, 0, len(spans))
	for i := range spans {
		if spans[i].size > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmpUint64(spans[a].start, spans[b].start)
	})
	last := -1 // the tensor reaching furthest so far
	for _, k := range order {
		q := &spans[k]
		if last >= 0 && q.start < spans[last].start+spans[last].size {
			p := &spans[last]
			return nil, formatErr(q.info, ErrOverlap, "tensor %q at data offset %d overlaps tensor %q at [%d, %d)",
				f.Tensors[k].Name, q.start, f.Tensors[last].Name, p.start, p.start+p.size)
		}
		if last < 0 || q.start+q.size > spans[last].start+spans[last].size {
			last = k
		}
	}
	return f, nil
}

// span is where a tensor's info was read and where its data lies.
type span struct {
	info        int    // file offset of the tensor info
	start, size uint64 // data offset relative to DataOffset, and byte size
}

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// alignUp rounds x up to a multiple of the power of two a.
func alignUp(x, a uint64) (uint64, bool) {
	y, carry := bits.Add64(x, a-1, 0)
	return y &^ (a - 1), carry == 0
}

func typeName(t quant.Type) string {
	if tr := quant.TraitsOf(t); tr.Valid() {
		return tr.Name
	}
	return "type " + strconv.FormatUint(uint64(t), 10)
}
