// Package gguf reads and writes GGUF v2 and v3 files, the container format of
// llama.cpp models.
//
// A GGUF file is, in little-endian order:
//
//	magic        4 bytes  "GGUF"
//	version      u32      2 or 3 (v1 used u32 counts and lengths; it is rejected)
//	n_tensors    u64
//	n_kv         u64
//	kv[n_kv]     key string, value type u32, value
//	tensor info  name string, n_dims u32, dims u64[n_dims], type u32, offset u64
//	padding      to general.alignment (default 32)
//	tensor data  each tensor at data_offset + offset, offset a multiple of the alignment
//
// where a string is a u64 byte length followed by the bytes, and an array value
// is an element type u32, a u64 count and the elements (arrays may nest).
//
// Parse works over a []byte (the browser hands the engine an ArrayBuffer) and
// returns tensors as views into it, never copies. Open maps a file into memory
// where the platform allows (linux, darwin) and reads it otherwise (wasip1, js).
// A model split over several files by llama.cpp's gguf-split is opened as one
// File by OpenSet, ParseSet or ParseHeaderSet (see split.go).
//
// Malformed input never panics and never makes the parser allocate more than
// the file's size justifies: every count is checked against the bytes left
// before anything is allocated. Errors are *FormatError values that name the
// problem and its byte offset and match one of the sentinel errors below with
// errors.Is.
package gguf

import (
	"errors"
	"fmt"

	"github.com/picolm/picolm-wasm/quant"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the data alignment used when general.alignment is absent.
const DefaultAlignment = 32

// KeyAlignment is the metadata key that overrides DefaultAlignment.
const KeyAlignment = "general.alignment"

// MaxDims is the largest number of dimensions a tensor may have (GGML_MAX_DIMS).
const MaxDims = 4

// MaxReadBytes is the largest file (or split model, all its shards) Open and
// OpenSet read into memory on a platform without mmap when it is wasm: a
// wasm32 linear memory holds 4 GiB in all, and the rest is kept for the KV
// cache, activations and the runtime (the browser worker's limit,
// wasm/browser/host.MaxModelBytes, is the same).
const MaxReadBytes = 3<<30 + 128<<20 // 3.125 GiB

// maxNesting bounds how deeply arrays may nest inside arrays.
const maxNesting = 16

// Sentinel errors. Every error Parse returns is a *FormatError wrapping one of
// these; the typed lookups wrap ErrNotFound or ErrWrongType.
var (
	ErrBadMagic      = errors.New("bad magic")
	ErrVersion       = errors.New("unsupported version")
	ErrBigEndian     = errors.New("big-endian GGUF is not supported")
	ErrTruncated     = errors.New("truncated file")
	ErrLength        = errors.New("length beyond end of file")
	ErrValueType     = errors.New("unknown metadata value type")
	ErrNesting       = errors.New("arrays nested too deeply")
	ErrDuplicateKey  = errors.New("duplicate metadata key")
	ErrAlignment     = errors.New("bad alignment")
	ErrDuplicateName = errors.New("duplicate tensor name")
	ErrDims          = errors.New("bad tensor dimensions")
	ErrTensorType    = errors.New("unknown tensor type")
	ErrBlockSize     = errors.New("element count not a multiple of the block size")
	ErrMisaligned    = errors.New("misaligned tensor offset")
	ErrTensorBounds  = errors.New("tensor data beyond end of file")
	ErrOverlap       = errors.New("overlapping tensors")
	ErrNotFound      = errors.New("key not found")
	ErrWrongType     = errors.New("wrong value type")
)

// FormatError reports malformed GGUF input: which problem (Err, one of the
// sentinel errors), where (Offset, the absolute byte offset of the offending
// field) and the details (Msg).
type FormatError struct {
	Offset int64
	Err    error
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("gguf: %v at byte offset %d: %s", e.Err, e.Offset, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

func formatErr(off int, err error, format string, args ...any) error {
	return &FormatError{Offset: int64(off), Err: err, Msg: fmt.Sprintf(format, args...)}
}

// File is a parsed GGUF file.
type File struct {
	Version    uint32
	Alignment  uint64       // general.alignment or DefaultAlignment
	DataOffset uint64       // absolute file offset of the tensor data section (may be past EOF when there are no tensors)
	KV         []KeyValue   // in file order
	Tensors    []TensorInfo // in file order (a split model: the shards' tensors, shard by shard)

	// Shards are the files of a split model (Join), in order: this File's
	// header fields, KV and Bytes are the first shard's, its Tensors those
	// of all of them. Nil for a single file.
	Shards []*File

	data    []byte         // the whole file (a split model: the first shard)
	size    uint64         // the file's size (a split model: all the shards')
	keys    map[string]int // key -> index in KV
	names   map[string]int // tensor name -> index in Tensors
	release func() error   // unmaps the file (a split model: closes the shards); nil for Parse
}

// KeyValue is one metadata entry.
type KeyValue struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor and views its data.
type TensorInfo struct {
	Name   string
	Dims   []uint64 // ggml order: Dims[0] is the row length (ne0)
	Type   quant.Type
	Offset uint64 // relative to the DataOffset of the file holding it (a split model: Shards[Shard])
	Data   []byte // a view into the file bytes, exactly the tensor's size
	Shard  int    // a split model: the index in File.Shards of the shard holding it; 0 otherwise
}

// Elements returns the number of elements, the product of Dims.
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Bytes returns the whole file (a split model: the first shard; from
// ParseHeader: the prefix that was read).
func (f *File) Bytes() []byte { return f.data }

// Size returns the size of the file it was parsed from (a split model: the
// sum of its shards' sizes).
func (f *File) Size() int64 { return int64(f.size) }

// Parts returns the files the model is in: Shards for a split model, else f.
func (f *File) Parts() []*File {
	if f.Shards != nil {
		return f.Shards
	}
	return []*File{f}
}

// Pos returns where t's data starts in the bytes f was read from: for a
// single file DataOffset+Offset; for a split model the position in its shards
// laid end to end in order (as ParseSet and ParseHeaderSet read them).
func (f *File) Pos(t *TensorInfo) uint64 {
	if f.Shards == nil {
		return f.DataOffset + t.Offset
	}
	base := uint64(0)
	for _, s := range f.Shards[:t.Shard] {
		base += s.size
	}
	return base + f.Shards[t.Shard].DataOffset + t.Offset
}

// Close releases the file mapping made by Open. Tensor data views and Bytes
// must not be used afterwards. Close on a File from Parse does nothing.
func (f *File) Close() error {
	r := f.release
	f.release = nil
	f.data = nil
	for i := range f.Tensors {
		f.Tensors[i].Data = nil
	}
	if r != nil {
		return r()
	}
	return nil
}

// Lookup returns the value of a metadata key.
func (f *File) Lookup(key string) (Value, bool) {
	i, ok := f.keys[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// Tensor returns the tensor with the given name.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.names[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

func (f *File) lookup(key string, want string) (Value, error) {
	v, ok := f.Lookup(key)
	if !ok {
		return Value{}, fmt.Errorf("gguf: metadata key %q (%s): %w", key, want, ErrNotFound)
	}
	return v, nil
}

func wrongType(key string, v Value, want string) error {
	return fmt.Errorf("gguf: metadata key %q is %s, want %s: %w", key, v.describeType(), want, ErrWrongType)
}

// String returns a string value.
func (f *File) String(key string) (string, error) {
	v, err := f.lookup(key, "string")
	if err != nil {
		return "", err
	}
	s, ok := v.String()
	if !ok {
		return "", wrongType(key, v, "string")
	}
	return s, nil
}

// Uint returns a non-negative integer value of any integer type.
func (f *File) Uint(key string) (uint64, error) {
	v, err := f.lookup(key, "unsigned integer")
	if err != nil {
		return 0, err
	}
	u, ok := v.Uint()
	if !ok {
		return 0, wrongType(key, v, "non-negative integer")
	}
	return u, nil
}

// Int returns an integer value of any integer type that fits in an int64.
func (f *File) Int(key string) (int64, error) {
	v, err := f.lookup(key, "integer")
	if err != nil {
		return 0, err
	}
	i, ok := v.Int()
	if !ok {
		return 0, wrongType(key, v, "integer")
	}
	return i, nil
}

// Float32 returns a float32 or float64 value as a float32.
func (f *File) Float32(key string) (float32, error) {
	v, err := f.lookup(key, "float")
	if err != nil {
		return 0, err
	}
	x, ok := v.Float()
	if !ok {
		return 0, wrongType(key, v, "float")
	}
	return float32(x), nil
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.lookup(key, "bool")
	if err != nil {
		return false, err
	}
	b, ok := v.Bool()
	if !ok {
		return false, wrongType(key, v, "bool")
	}
	return b, nil
}

// Strings returns an array of strings. It decodes a 32k-entry vocabulary with
// two allocations.
func (f *File) Strings(key string) ([]string, error) {
	v, err := f.lookup(key, "array of string")
	if err != nil {
		return nil, err
	}
	s, ok := v.Strings()
	if !ok {
		return nil, wrongType(key, v, "array of string")
	}
	return s, nil
}

// StringsLen returns the length of an array of string without decoding
// it, refusing what Strings refuses with the same errors.
func (f *File) StringsLen(key string) (int, error) {
	v, err := f.lookup(key, "array of string")
	if err != nil {
		return 0, err
	}
	if v.typ != TypeArray || v.elem != TypeString {
		return 0, wrongType(key, v, "array of string")
	}
	return v.Len(), nil
}

// Float32s returns an array of float32.
func (f *File) Float32s(key string) ([]float32, error) {
	v, err := f.lookup(key, "array of float32")
	if err != nil {
		return nil, err
	}
	s, ok := v.Float32s()
	if !ok {
		return nil, wrongType(key, v, "array of float32")
	}
	return s, nil
}

// Int32s returns an array of integers that all fit in an int32 (any integer
// element type).
func (f *File) Int32s(key string) ([]int32, error) {
	v, err := f.lookup(key, "array of int32")
	if err != nil {
		return nil, err
	}
	s, ok := v.Int32s()
	if !ok {
		return nil, wrongType(key, v, "array of int32")
	}
	return s, nil
}
