package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ValueType is the type id of a metadata value (gguf_type).
type ValueType uint32

// Metadata value types, with the ids the file format uses.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
	numTypes              = 13
)

var typeNames = [numTypes]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// fixedSize is the encoded size of each scalar type; 0 for variable-size types.
var fixedSize = [numTypes]int{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// minSize is the smallest encoding of a value of each type: a string is at
// least its u64 length, an array its u32 element type and u64 count.
var minSize = [numTypes]int{1, 1, 2, 2, 4, 4, 4, 1, 8, 12, 8, 8, 8}

func (t ValueType) String() string {
	if t < numTypes {
		return typeNames[t]
	}
	return fmt.Sprintf("ValueType(%d)", uint32(t))
}

func (t ValueType) valid() bool { return t < numTypes }

// Value is a typed metadata value. Arrays keep their elements as the file's
// raw bytes and decode them on access, so a 32k-entry vocabulary costs no
// per-element allocation until it is read.
type Value struct {
	typ  ValueType
	elem ValueType // arrays: the element type
	num  uint64    // scalars: the value's bits, zero-extended
	str  string    // TypeString
	n    int       // arrays: element count
	raw  []byte    // arrays: the encoded elements
	offs []int     // arrays of strings or arrays: start of each element in raw
}

// Type returns the value's type.
func (v Value) Type() ValueType { return v.typ }

// ElemType returns the element type of an array.
func (v Value) ElemType() ValueType { return v.elem }

// Len returns the number of elements of an array, 0 for other values.
func (v Value) Len() int {
	if v.typ != TypeArray {
		return 0
	}
	return v.n
}

// Elem returns element i of an array. It panics if v is not an array or i is
// out of range, as indexing a slice would.
func (v Value) Elem(i int) Value {
	if v.typ != TypeArray || i < 0 || i >= v.n {
		panic(fmt.Sprintf("gguf: Elem(%d) of %s", i, v.describeType()))
	}
	switch v.elem {
	case TypeString:
		o := v.offs[i]
		l := int(binary.LittleEndian.Uint64(v.raw[o:]))
		return Value{typ: TypeString, str: string(v.raw[o+8 : o+8+l])}
	case TypeArray:
		// Validated when the file was parsed; decoding again cannot fail.
		d := decoder{b: v.raw, off: v.offs[i]}
		e, err := d.array(0, true)
		if err != nil {
			panic("gguf: corrupted array element: " + err.Error())
		}
		return e
	}
	s := fixedSize[v.elem]
	return Value{typ: v.elem, num: scalarBits(v.elem, v.raw[i*s:])}
}

// scalarBits reads a scalar of type t from the front of b (which the caller
// has checked is long enough).
func scalarBits(t ValueType, b []byte) uint64 {
	switch fixedSize[t] {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	default:
		return binary.LittleEndian.Uint64(b)
	}
}

// String returns a string value.
func (v Value) String() (string, bool) {
	if v.typ != TypeString {
		return "", false
	}
	return v.str, true
}

// Int returns the value of any integer type that fits in an int64.
func (v Value) Int() (int64, bool) {
	switch v.typ {
	case TypeUint8, TypeUint16, TypeUint32:
		return int64(v.num), true
	case TypeUint64:
		if v.num > math.MaxInt64 {
			return 0, false
		}
		return int64(v.num), true
	case TypeInt8:
		return int64(int8(v.num)), true
	case TypeInt16:
		return int64(int16(v.num)), true
	case TypeInt32:
		return int64(int32(v.num)), true
	case TypeInt64:
		return int64(v.num), true
	}
	return 0, false
}

// Uint returns the value of any integer type that is not negative.
func (v Value) Uint() (uint64, bool) {
	if v.typ == TypeUint64 {
		return v.num, true
	}
	i, ok := v.Int()
	if !ok || i < 0 {
		return 0, false
	}
	return uint64(i), true
}

// Float returns a float32 or float64 value.
func (v Value) Float() (float64, bool) {
	switch v.typ {
	case TypeFloat32:
		return float64(math.Float32frombits(uint32(v.num))), true
	case TypeFloat64:
		return math.Float64frombits(v.num), true
	}
	return 0, false
}

// Bool returns a bool value (any non-zero byte is true).
func (v Value) Bool() (bool, bool) {
	if v.typ != TypeBool {
		return false, false
	}
	return v.num != 0, true
}

// Strings decodes an array of strings: one allocation for the text of all
// elements and one for the slice.
func (v Value) Strings() ([]string, bool) {
	if v.typ != TypeArray || v.elem != TypeString {
		return nil, false
	}
	all := string(v.raw)
	out := make([]string, v.n)
	for i, o := range v.offs {
		l := int(binary.LittleEndian.Uint64(v.raw[o:]))
		out[i] = all[o+8 : o+8+l]
	}
	return out, true
}

// Float32s decodes an array of float32.
func (v Value) Float32s() ([]float32, bool) {
	if v.typ != TypeArray || v.elem != TypeFloat32 {
		return nil, false
	}
	out := make([]float32, v.n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(v.raw[4*i:]))
	}
	return out, true
}

// Int32s decodes an array of integers that all fit in an int32.
func (v Value) Int32s() ([]int32, bool) {
	if v.typ != TypeArray || v.elem == TypeString || v.elem == TypeArray {
		return nil, false
	}
	out := make([]int32, v.n)
	if v.elem == TypeInt32 {
		for i := range out {
			out[i] = int32(binary.LittleEndian.Uint32(v.raw[4*i:]))
		}
		return out, true
	}
	for i := range out {
		x, ok := v.Elem(i).Int()
		if !ok || x < math.MinInt32 || x > math.MaxInt32 {
			return nil, false
		}
		out[i] = int32(x)
	}
	return out, true
}

func (v Value) describeType() string {
	if v.typ == TypeArray {
		return fmt.Sprintf("array of %d %s", v.n, v.elem)
	}
	return v.typ.String()
}

// GoString formats the value for debugging, e.g. in test failures.
func (v Value) GoString() string {
	switch v.typ {
	case TypeString:
		return fmt.Sprintf("%q", v.str)
	case TypeArray:
		s := "["
		for i := 0; i < v.n && i < 8; i++ {
			if i > 0 {
				s += " "
			}
			s += v.Elem(i).GoString()
		}
		if v.n > 8 {
			s += fmt.Sprintf(" ... (%d %s)", v.n, v.elem)
		}
		return s + "]"
	case TypeBool:
		return fmt.Sprint(v.num != 0)
	case TypeFloat32, TypeFloat64:
		f, _ := v.Float()
		return fmt.Sprint(f)
	case TypeUint64:
		return fmt.Sprint(v.num)
	}
	i, _ := v.Int()
	return fmt.Sprint(i)
}
