package gguf

import (
	"encoding/binary"
)

// rawBuilder assembles GGUF bytes field by field, so tests can write
// exactly the malformation they want (the Writer refuses to).
type rawBuilder struct{ b []byte }

func (r *rawBuilder) pos() int64 { return int64(len(r.b)) }

func (r *rawBuilder) bytes(p ...byte) *rawBuilder { r.b = append(r.b, p...); return r }
func (r *rawBuilder) u8(x uint8) *rawBuilder      { r.b = append(r.b, x); return r }
func (r *rawBuilder) u32(x uint32) *rawBuilder {
	r.b = binary.LittleEndian.AppendUint32(r.b, x)
	return r
}
func (r *rawBuilder) u64(x uint64) *rawBuilder {
	r.b = binary.LittleEndian.AppendUint64(r.b, x)
	return r
}
func (r *rawBuilder) str(s string) *rawBuilder {
	r.u64(uint64(len(s)))
	r.b = append(r.b, s...)
	return r
}

// header writes magic, version 3 and the two counts.
func (r *rawBuilder) header(nTensors, nKV uint64) *rawBuilder {
	return r.bytes('G', 'G', 'U', 'F').u32(3).u64(nTensors).u64(nKV)
}

// kvU32 writes a uint32 metadata entry.
func (r *rawBuilder) kvU32(key string, x uint32) *rawBuilder {
	return r.str(key).u32(uint32(TypeUint32)).u32(x)
}

// tensor writes a tensor info.
func (r *rawBuilder) tensor(name string, typ uint32, off uint64, dims ...uint64) *rawBuilder {
	r.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		r.u64(d)
	}
	return r.u32(typ).u64(off)
}

// pad zero-fills to a multiple of a.
func (r *rawBuilder) pad(a int) *rawBuilder {
	for len(r.b)%a != 0 {
		r.b = append(r.b, 0)
	}
	return r
}

// zeros appends n zero bytes.
func (r *rawBuilder) zeros(n int) *rawBuilder {
	r.b = append(r.b, make([]byte, n)...)
	return r
}
