package gguf

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/picolm/picolm-wasm/quant"
)

// Scalar value constructors, for building metadata to Write.

func Uint8(x uint8) Value     { return Value{typ: TypeUint8, num: uint64(x)} }
func Int8(x int8) Value       { return Value{typ: TypeInt8, num: uint64(uint8(x))} }
func Uint16(x uint16) Value   { return Value{typ: TypeUint16, num: uint64(x)} }
func Int16(x int16) Value     { return Value{typ: TypeInt16, num: uint64(uint16(x))} }
func Uint32(x uint32) Value   { return Value{typ: TypeUint32, num: uint64(x)} }
func Int32(x int32) Value     { return Value{typ: TypeInt32, num: uint64(uint32(x))} }
func Uint64(x uint64) Value   { return Value{typ: TypeUint64, num: x} }
func Int64(x int64) Value     { return Value{typ: TypeInt64, num: uint64(x)} }
func Float32(x float32) Value { return Value{typ: TypeFloat32, num: uint64(math.Float32bits(x))} }
func Float64(x float64) Value { return Value{typ: TypeFloat64, num: math.Float64bits(x)} }
func String(s string) Value   { return Value{typ: TypeString, str: s} }

// Bool returns a bool value.
func Bool(b bool) Value {
	v := Value{typ: TypeBool}
	if b {
		v.num = 1
	}
	return v
}

// Strings returns an array of strings.
func Strings(s []string) Value {
	n := 0
	for _, x := range s {
		n += 8 + len(x)
	}
	v := Value{typ: TypeArray, elem: TypeString, n: len(s), raw: make([]byte, 0, n), offs: make([]int, len(s))}
	for i, x := range s {
		v.offs[i] = len(v.raw)
		v.raw = binary.LittleEndian.AppendUint64(v.raw, uint64(len(x)))
		v.raw = append(v.raw, x...)
	}
	return v
}

// Float32s returns an array of float32.
func Float32s(x []float32) Value {
	v := Value{typ: TypeArray, elem: TypeFloat32, n: len(x), raw: make([]byte, 0, 4*len(x))}
	for _, f := range x {
		v.raw = binary.LittleEndian.AppendUint32(v.raw, math.Float32bits(f))
	}
	return v
}

// Int32s returns an array of int32.
func Int32s(x []int32) Value {
	v := Value{typ: TypeArray, elem: TypeInt32, n: len(x), raw: make([]byte, 0, 4*len(x))}
	for _, i := range x {
		v.raw = binary.LittleEndian.AppendUint32(v.raw, uint32(i))
	}
	return v
}

// Array returns an array of elements of type elem, which may themselves be
// arrays (of any element types).
func Array(elem ValueType, elems ...Value) (Value, error) {
	if !elem.valid() {
		return Value{}, fmt.Errorf("gguf: array of %v: %w", elem, ErrValueType)
	}
	v := Value{typ: TypeArray, elem: elem, n: len(elems)}
	if fixedSize[elem] == 0 {
		v.offs = make([]int, len(elems))
	}
	for i, e := range elems {
		if e.typ != elem {
			return Value{}, fmt.Errorf("gguf: element %d of an array of %v is %v: %w", i, elem, e.typ, ErrWrongType)
		}
		if v.offs != nil {
			v.offs[i] = len(v.raw)
		}
		v.raw = appendValue(v.raw, e)
	}
	return v, nil
}

// appendValue appends the encoding of v (without its type id).
func appendValue(b []byte, v Value) []byte {
	switch v.typ {
	case TypeString:
		b = binary.LittleEndian.AppendUint64(b, uint64(len(v.str)))
		return append(b, v.str...)
	case TypeArray:
		b = binary.LittleEndian.AppendUint32(b, uint32(v.elem))
		b = binary.LittleEndian.AppendUint64(b, uint64(v.n))
		return append(b, v.raw...)
	}
	switch fixedSize[v.typ] {
	case 1:
		return append(b, byte(v.num))
	case 2:
		return binary.LittleEndian.AppendUint16(b, uint16(v.num))
	case 4:
		return binary.LittleEndian.AppendUint32(b, uint32(v.num))
	}
	return binary.LittleEndian.AppendUint64(b, v.num)
}

// Write writes a GGUF v3 file holding the metadata kv and the tensors, in
// order. Each tensor's Name, Dims, Type and Data are used; its Offset is
// ignored: data is laid out in order, each tensor padded to alignment (as
// llama.cpp and gguf-py write it).
// alignment 0 means general.alignment from kv if present, else 32; any other
// value not equal to 32 is recorded as general.alignment unless kv already
// holds that key with the same value.
func Write(w io.Writer, kv []KeyValue, tensors []TensorInfo, alignment uint64) error {
	align := uint64(DefaultAlignment)
	var have *Value
	for i := range kv {
		if kv[i].Key == KeyAlignment {
			have = &kv[i].Value
		}
	}
	if have != nil {
		a, ok := have.Uint()
		if !ok || a == 0 || a&(a-1) != 0 || a > 1<<30 {
			return fmt.Errorf("gguf: write: %s = %#v: %w", KeyAlignment, *have, ErrAlignment)
		}
		if alignment != 0 && a != alignment {
			return fmt.Errorf("gguf: write: alignment %d but %s = %d: %w", alignment, KeyAlignment, a, ErrAlignment)
		}
		align = a
	} else if alignment != 0 {
		if alignment&(alignment-1) != 0 || alignment > 1<<30 {
			return fmt.Errorf("gguf: write: alignment %d: %w", alignment, ErrAlignment)
		}
		align = alignment
		if align != DefaultAlignment {
			kv = append(kv[:len(kv):len(kv)], KeyValue{Key: KeyAlignment, Value: Uint32(uint32(align))})
		}
	}

	h := []byte(Magic)
	h = binary.LittleEndian.AppendUint32(h, 3)
	h = binary.LittleEndian.AppendUint64(h, uint64(len(tensors)))
	h = binary.LittleEndian.AppendUint64(h, uint64(len(kv)))
	seen := make(map[string]bool, len(kv))
	for _, e := range kv {
		if seen[e.Key] {
			return fmt.Errorf("gguf: write: key %q: %w", e.Key, ErrDuplicateKey)
		}
		seen[e.Key] = true
		if !e.Value.typ.valid() {
			return fmt.Errorf("gguf: write: key %q: %w", e.Key, ErrValueType)
		}
		h = appendValue(h, String(e.Key))
		h = binary.LittleEndian.AppendUint32(h, uint32(e.Value.typ))
		h = appendValue(h, e.Value)
	}
	clear(seen)
	off := uint64(0)
	for i := range tensors {
		t := &tensors[i]
		if seen[t.Name] {
			return fmt.Errorf("gguf: write: tensor %q: %w", t.Name, ErrDuplicateName)
		}
		seen[t.Name] = true
		size, err := tensorSize(t)
		if err != nil {
			return err
		}
		if uint64(len(t.Data)) != size {
			return fmt.Errorf("gguf: write: tensor %q (%v %v) has %d bytes of data, want %d", t.Name, t.Type, t.Dims, len(t.Data), size)
		}
		h = appendValue(h, String(t.Name))
		h = binary.LittleEndian.AppendUint32(h, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			h = binary.LittleEndian.AppendUint64(h, d)
		}
		h = binary.LittleEndian.AppendUint32(h, uint32(t.Type))
		h = binary.LittleEndian.AppendUint64(h, off)
		off, _ = alignUp(off+size, align)
	}
	if len(tensors) > 0 {
		end, _ := alignUp(uint64(len(h)), align)
		h = append(h, make([]byte, end-uint64(len(h)))...)
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	var pad [64]byte
	for i := range tensors {
		t := &tensors[i]
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
		for n, _ := alignUp(uint64(len(t.Data)), align); n > uint64(len(t.Data)); {
			k := min(n-uint64(len(t.Data)), uint64(len(pad)))
			if _, err := w.Write(pad[:k]); err != nil {
				return err
			}
			n -= k
		}
	}
	return nil
}

// tensorSize returns the byte size of a tensor from its dims and type.
func tensorSize(t *TensorInfo) (uint64, error) {
	tr := quant.TraitsOf(t.Type)
	if !tr.Valid() {
		return 0, fmt.Errorf("gguf: write: tensor %q: type id %d: %w", t.Name, uint32(t.Type), ErrTensorType)
	}
	if len(t.Dims) > MaxDims {
		return 0, fmt.Errorf("gguf: write: tensor %q has %d dimensions: %w", t.Name, len(t.Dims), ErrDims)
	}
	elems := uint64(1)
	for _, d := range t.Dims {
		if d != 0 && elems > math.MaxInt64/d {
			return 0, fmt.Errorf("gguf: write: tensor %q dimensions %v: %w", t.Name, t.Dims, ErrDims)
		}
		elems *= d
	}
	if elems%uint64(tr.BlockSize) != 0 {
		return 0, fmt.Errorf("gguf: write: tensor %q: %d elements of %s: %w", t.Name, elems, tr.Name, ErrBlockSize)
	}
	return elems / uint64(tr.BlockSize) * uint64(tr.TypeSize), nil
}
