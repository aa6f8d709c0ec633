package gguf

import (
	"encoding/binary"
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
)

// decoder reads little-endian fields from b, reporting errors at the offset
// of the field being read.
type decoder struct {
	b   []byte
	off int
}

func (d *decoder) left() int { return len(d.b) - d.off }

func (d *decoder) need(n int, what string) error {
	if d.left() < n {
		return formatErr(d.off, ErrTruncated, "%s needs %d bytes, %d left", what, n, d.left())
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
	n, err := d.u64(what + " length")
	if err != nil {
		return nil, err
	}
	if n > uint64(d.left()) {
		return nil, formatErr(at, ErrLength, "%s length %d exceeds the %d bytes left", what, n, d.left())
	}
	s := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return s, nil
}

// value reads a value of type t; what names it for error messages.
func (d *decoder) value(t ValueType, what string, depth int) (Value, error) {
	switch t {
	case TypeString:
		s, err := d.str(what)
		if err != nil {
			return Value{}, err
		}
		return Value{typ: TypeString, str: string(s)}, nil
	case TypeArray:
		return d.array(what, depth)
	}
	size := fixedSize[t]
	if err := d.need(size, what); err != nil {
		return Value{}, err
	}
	v := Value{typ: t, num: scalarBits(t, d.b[d.off:])}
	d.off += size
	return v, nil
}

// array reads an array's element type, count and elements. Elements are
// validated here and kept as raw bytes; strings and nested arrays also get
// the offset of each element.
func (d *decoder) array(what string, depth int) (Value, error) {
	if depth >= maxNesting {
		return Value{}, formatErr(d.off, ErrNesting, "%s: more than %d levels of arrays", what, maxNesting)
	}
	at := d.off
	et, err := d.u32(what + " element type")
	if err != nil {
		return Value{}, err
	}
	if !ValueType(et).valid() {
		return Value{}, formatErr(at, ErrValueType, "%s: array element type %d", what, et)
	}
	elem := ValueType(et)
	at = d.off
	n, err := d.u64(what + " element count")
	if err != nil {
		return Value{}, err
	}
	min := uint64(minSize[elem])
	if n > uint64(d.left())/min {
		return Value{}, formatErr(at, ErrLength, "%s: array of %d %s needs at least %d bytes per element, %d bytes left",
			what, n, elem, min, d.left())
	}
	v := Value{typ: TypeArray, elem: elem, n: int(n)}
	start := d.off
	if size := fixedSize[elem]; size > 0 {
		d.off += int(n) * size
		v.raw = d.b[start:d.off:d.off]
		return v, nil
	}
	v.offs = make([]int, n)
	for i := range v.offs {
		v.offs[i] = d.off - start
		if elem == TypeString {
			_, err = d.str(what + " element")
		} else {
			_, err = d.array(what+" element", depth+1)
		}
		if err != nil {
			return Value{}, err
		}
	}
	v.raw = d.b[start:d.off:d.off]
	return v, nil
}

// Parse parses a GGUF file held in b. The tensors' Data are views into b,
// which must not change while the File is in use.
func Parse(b []byte) (*File, error) {
	d := &decoder{b: b}
	f := &File{data: b}

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
	f.KV = make([]KeyValue, 0, nKV)
	f.keys = make(map[string]int, nKV)
	alignAt := 0 // offset of general.alignment's value type, for errors
	for i := 0; i < int(nKV); i++ {
		at := d.off
		k, err := d.str("metadata key")
		if err != nil {
			return nil, err
		}
		key := string(k)
		if _, dup := f.keys[key]; dup {
			return nil, formatErr(at, ErrDuplicateKey, "key %q appears twice", key)
		}
		at = d.off
		t, err := d.u32("value type of " + quoted(key))
		if err != nil {
			return nil, err
		}
		if !ValueType(t).valid() {
			return nil, formatErr(at, ErrValueType, "key %q has value type %d", key, t)
		}
		v, err := d.value(ValueType(t), "value of "+quoted(key), 0)
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
	f.Tensors = make([]TensorInfo, 0, nTensors)
	f.names = make(map[string]int, nTensors)
	spans := make([]span, 0, nTensors)
	for i := 0; i < int(nTensors); i++ {
		at := d.off
		nm, err := d.str("tensor name")
		if err != nil {
			return nil, err
		}
		name := string(nm)
		if _, dup := f.names[name]; dup {
			return nil, formatErr(at, ErrDuplicateName, "tensor %q appears twice", name)
		}
		atDims := d.off
		nd, err := d.u32("dimension count of tensor " + quoted(name))
		if err != nil {
			return nil, err
		}
		if nd > MaxDims {
			return nil, formatErr(atDims, ErrDims, "tensor %q has %d dimensions, at most %d allowed", name, nd, MaxDims)
		}
		if err := d.need(8*int(nd), "dimensions of tensor "+quoted(name)); err != nil {
			return nil, err
		}
		dims := make([]uint64, nd)
		elems := uint64(1)
		for j := range dims {
			dims[j] = binary.LittleEndian.Uint64(d.b[d.off:])
			d.off += 8
			hi, lo := bits.Mul64(elems, dims[j])
			if hi != 0 || lo > math.MaxInt64 {
				return nil, formatErr(atDims, ErrDims, "tensor %q dimensions %v: element count overflows", name, dims[:j+1])
			}
			elems = lo
		}
		atType := d.off
		typ, err := d.u32("type of tensor " + quoted(name))
		if err != nil {
			return nil, err
		}
		tr := quant.TraitsOf(quant.Type(typ))
		if tr == nil || tr.BlockSize <= 0 || tr.TypeSize <= 0 {
			return nil, formatErr(atType, ErrTensorType, "tensor %q has type id %d", name, typ)
		}
		if elems%uint64(tr.BlockSize) != 0 {
			return nil, formatErr(atDims, ErrBlockSize, "tensor %q dimensions %v: %d elements are not a whole number of %s blocks of %d",
				name, dims, elems, tr.Name, tr.BlockSize)
		}
		atOff := d.off
		off, err := d.u64("data offset of tensor " + quoted(name))
		if err != nil {
			return nil, err
		}
		if off%f.Alignment != 0 {
			return nil, formatErr(atOff, ErrMisaligned, "tensor %q has data offset %d, not a multiple of the alignment %d", name, off, f.Alignment)
		}
		hi, size := bits.Mul64(elems/uint64(tr.BlockSize), uint64(tr.TypeSize))
		if hi != 0 || size > math.MaxInt64 {
			return nil, formatErr(atDims, ErrDims, "tensor %q dimensions %v: byte size overflows", name, dims)
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
		if c1 != 0 || c2 != 0 || stop > uint64(len(b)) {
			return nil, formatErr(s.info, ErrTensorBounds, "tensor %q (%s %v, %d bytes) spans file bytes [%d, %d), the file has %d",
				t.Name, typeName(t.Type), t.Dims, s.size, f.DataOffset+s.start, f.DataOffset+s.start+s.size, len(b))
		}
		t.Data = b[start:stop:stop]
	}

	// No two tensors may share bytes.
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmpUint64(spans[a].start, spans[b].start)
	})
	for k := 1; k < len(order); k++ {
		p, q := &spans[order[k-1]], &spans[order[k]]
		if p.size > 0 && q.size > 0 && p.start+p.size > q.start {
			return nil, formatErr(q.info, ErrOverlap, "tensor %q at data offset %d overlaps tensor %q at [%d, %d)",
				f.Tensors[order[k]].Name, q.start, f.Tensors[order[k-1]].Name, p.start, p.start+p.size)
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
	if tr := quant.TraitsOf(t); tr != nil {
		return tr.Name
	}
	return "type " + strconv.FormatUint(uint64(t), 10)
}

func quoted(s string) string { return strconv.Quote(s) }
