package gguf

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// malformedCase is a file built in the test, the sentinel error it must give
// and the byte offset the error must report.
type malformedCase struct {
	name   string
	err    error
	offset int64
	data   []byte
}

// malformedCases builds every malformation the parser must name. Each
// builder records the offset of the bad field as it writes it.
func malformedCases() []malformedCase {
	var cs []malformedCase
	add := func(name string, err error, build func(r *rawBuilder) int64) {
		r := &rawBuilder{}
		at := build(r)
		cs = append(cs, malformedCase{name, err, at, r.b})
	}

	add("empty file", ErrTruncated, func(r *rawBuilder) int64 { return 0 })
	add("bad magic", ErrBadMagic, func(r *rawBuilder) int64 {
		r.bytes('G', 'G', 'M', 'L').u32(3).u64(0).u64(0)
		return 0
	})
	add("version 1", ErrVersion, func(r *rawBuilder) int64 {
		r.bytes('G', 'G', 'U', 'F').u32(1).u32(0).u32(0)
		return 4
	})
	add("version 4", ErrVersion, func(r *rawBuilder) int64 {
		r.bytes('G', 'G', 'U', 'F').u32(4).u64(0).u64(0)
		return 4
	})
	add("big-endian v3", ErrBigEndian, func(r *rawBuilder) int64 {
		r.bytes('G', 'G', 'U', 'F', 0, 0, 0, 3).zeros(16)
		return 4
	})
	add("truncated header", ErrTruncated, func(r *rawBuilder) int64 {
		r.bytes('G', 'G', 'U', 'F').u32(3).u64(0).u32(0)
		return 16
	})
	add("kv count 2^60", ErrLength, func(r *rawBuilder) int64 {
		r.header(0, 1<<60).kvU32("a", 1)
		return 16
	})
	add("tensor count 2^60", ErrLength, func(r *rawBuilder) int64 {
		r.header(1<<60, 0)
		return 8
	})
	add("key length beyond file", ErrLength, func(r *rawBuilder) int64 {
		r.header(0, 1)
		at := r.pos()
		r.u64(1000).bytes('k', 'e', 'y').u32(uint32(TypeUint8)).u8(0)
		return at
	})
	add("truncated metadata value", ErrTruncated, func(r *rawBuilder) int64 {
		r.header(0, 1).str("llama.block_count").u32(uint32(TypeUint32))
		at := r.pos()
		r.bytes(5, 0)
		return at
	})
	add("unknown value type", ErrValueType, func(r *rawBuilder) int64 {
		r.header(0, 1).str("k")
		at := r.pos()
		r.u32(13).u64(0)
		return at
	})
	add("string value length beyond file", ErrLength, func(r *rawBuilder) int64 {
		r.header(0, 1).str("general.name").u32(uint32(TypeString))
		at := r.pos()
		r.u64(1 << 62).bytes('x')
		return at
	})
	add("unknown array element type", ErrValueType, func(r *rawBuilder) int64 {
		r.header(0, 1).str("k").u32(uint32(TypeArray))
		at := r.pos()
		r.u32(99).u64(0)
		return at
	})
	add("array count 2^60", ErrLength, func(r *rawBuilder) int64 {
		r.header(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint8))
		at := r.pos()
		r.u64(1 << 60).zeros(64)
		return at
	})
	add("string array count beyond file", ErrLength, func(r *rawBuilder) int64 {
		// 100 strings need at least 800 bytes; 10 empty strings are there.
		r.header(0, 1).str("tokenizer.ggml.tokens").u32(uint32(TypeArray)).u32(uint32(TypeString))
		at := r.pos()
		r.u64(100)
		for range 10 {
			r.str("")
		}
		return at
	})
	add("string array element beyond file", ErrLength, func(r *rawBuilder) int64 {
		r.header(0, 1).str("tokenizer.ggml.tokens").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(3)
		r.str("<unk>").str("<s>")
		at := r.pos()
		r.u64(9).bytes('<', '/', 's', '>')
		return at
	})
	add("arrays nested too deep", ErrNesting, func(r *rawBuilder) int64 {
		r.header(0, 1).str("deep").u32(uint32(TypeArray))
		for range maxNesting {
			r.u32(uint32(TypeArray)).u64(1)
		}
		at := r.pos()
		r.u32(uint32(TypeUint8)).u64(0)
		return at
	})
	add("duplicate key", ErrDuplicateKey, func(r *rawBuilder) int64 {
		r.header(0, 2).kvU32("llama.block_count", 5)
		at := r.pos()
		r.kvU32("llama.block_count", 6)
		return at
	})
	add("alignment zero", ErrAlignment, func(r *rawBuilder) int64 {
		r.header(0, 1).str(KeyAlignment)
		at := r.pos()
		r.u32(uint32(TypeUint32)).u32(0)
		return at
	})
	add("alignment not a power of two", ErrAlignment, func(r *rawBuilder) int64 {
		r.header(0, 2).kvU32("x", 1).str(KeyAlignment)
		at := r.pos()
		r.u32(uint32(TypeUint32)).u32(48)
		return at
	})
	add("alignment of type string", ErrAlignment, func(r *rawBuilder) int64 {
		r.header(0, 1).str(KeyAlignment)
		at := r.pos()
		r.u32(uint32(TypeString)).str("32")
		return at
	})
	add("truncated tensor table", ErrTruncated, func(r *rawBuilder) int64 {
		r.header(2, 0).tensor("a", 0, 0, 8)
		r.str("b").u32(1)
		at := r.pos()
		r.u32(8)
		return at
	})
	add("duplicate tensor name", ErrDuplicateName, func(r *rawBuilder) int64 {
		r.header(2, 0).tensor("w", 0, 0, 8)
		at := r.pos()
		r.tensor("w", 0, 32, 8).pad(32).zeros(64)
		return at
	})
	add("five dimensions", ErrDims, func(r *rawBuilder) int64 {
		r.header(1, 0).str("w")
		at := r.pos()
		r.u32(5).u64(1).u64(1).u64(1).u64(1).u64(1).u32(0).u64(0).pad(32).zeros(4)
		return at
	})
	add("dimension product overflows", ErrDims, func(r *rawBuilder) int64 {
		r.header(1, 0).str("w")
		at := r.pos()
		r.u32(2).u64(1 << 32).u64(1 << 32).u32(0).u64(0).pad(32).zeros(32)
		return at
	})
	add("byte size overflows", ErrDims, func(r *rawBuilder) int64 {
		// 2^62 elements fit in an int64, 2^64 bytes of F32 do not.
		r.header(1, 0).str("w")
		at := r.pos()
		r.u32(2).u64(1 << 31).u64(1 << 31).u32(0).u64(0).pad(32).zeros(32)
		return at
	})
	add("dimensions run past EOF", ErrTensorBounds, func(r *rawBuilder) int64 {
		at := r.header(1, 0).pos()
		r.tensor("w", 0, 0, 1<<20, 1<<20).pad(32).zeros(64)
		return at
	})
	add("removed tensor type Q4_2", ErrTensorType, func(r *rawBuilder) int64 {
		r.header(1, 0).str("w").u32(1).u64(32)
		at := r.pos()
		r.u32(4).u64(0).pad(32).zeros(64)
		return at
	})
	add("unknown tensor type 99", ErrTensorType, func(r *rawBuilder) int64 {
		r.header(1, 0).str("w").u32(1).u64(32)
		at := r.pos()
		r.u32(99).u64(0).pad(32).zeros(64)
		return at
	})
	add("not a whole number of blocks", ErrBlockSize, func(r *rawBuilder) int64 {
		r.header(1, 0).str("w")
		at := r.pos()
		r.u32(1).u64(33).u32(8).u64(0).pad(32).zeros(68)
		return at
	})
	add("misaligned tensor offset", ErrMisaligned, func(r *rawBuilder) int64 {
		r.header(2, 0).tensor("a", 0, 0, 4).str("b").u32(1).u64(4).u32(0)
		at := r.pos()
		r.u64(16).pad(32).zeros(64)
		return at
	})
	add("misaligned with general.alignment 64", ErrMisaligned, func(r *rawBuilder) int64 {
		r.header(1, 1).kvU32(KeyAlignment, 64).str("a").u32(1).u64(4).u32(0)
		at := r.pos()
		r.u64(32).pad(64).zeros(64)
		return at
	})
	add("truncated tensor data", ErrTensorBounds, func(r *rawBuilder) int64 {
		r.header(2, 0).tensor("a", 0, 0, 8)
		at := r.pos()
		r.tensor("b", 0, 32, 8).pad(32).zeros(32 + 31)
		return at
	})
	add("tensor offset overflows", ErrTensorBounds, func(r *rawBuilder) int64 {
		at := r.header(1, 0).pos()
		r.tensor("a", 0, 1<<64-32, 8).pad(32).zeros(32)
		return at
	})
	add("tensor data with no data section", ErrTensorBounds, func(r *rawBuilder) int64 {
		// A vocabulary-only style file (ends right after the header) that
		// nonetheless declares a tensor.
		at := r.header(1, 0).pos()
		r.tensor("a", 0, 0, 1)
		return at
	})
	add("overlapping tensors", ErrOverlap, func(r *rawBuilder) int64 {
		r.header(2, 0).tensor("a", 0, 0, 16)
		at := r.pos()
		r.tensor("b", 0, 32, 8).pad(32).zeros(64)
		return at
	})
	add("overlap hidden behind an empty tensor", ErrOverlap, func(r *rawBuilder) int64 {
		// Sorted by offset: a [0, 64), e (empty) at 32, b [32, 64). The
		// empty tensor between them must not hide the overlap.
		r.header(3, 0).tensor("a", 0, 0, 16).tensor("e", 0, 32, 0)
		at := r.pos()
		r.tensor("b", 0, 32, 8).pad(32).zeros(64)
		return at
	})
	return cs
}

func TestMalformed(t *testing.T) {
	cases := malformedCases()
	if len(cases) < 15 {
		t.Fatalf("only %d malformed cases", len(cases))
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			f, err := Parse(c.data)
			if err == nil {
				t.Fatalf("Parse succeeded: %d kv, %d tensors", len(f.KV), len(f.Tensors))
			}
			t.Log(err)
			if !errors.Is(err, c.err) {
				t.Errorf("error %q is not %q", err, c.err)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FormatError", err)
			}
			if fe.Offset != c.offset {
				t.Errorf("offset %d, want %d", fe.Offset, c.offset)
			}
			if want := fmt.Sprintf("at byte offset %d", c.offset); !strings.Contains(err.Error(), want) {
				t.Errorf("message %q does not contain %q", err, want)
			}
			// Every sentinel but one is matched: the error is specific.
			for _, other := range sentinels {
				if other != c.err && errors.Is(err, other) {
					t.Errorf("error also matches %q", other)
				}
			}
		})
	}
}

var sentinels = []error{ErrBadMagic, ErrVersion, ErrBigEndian, ErrTruncated, ErrLength, ErrValueType, ErrNesting,
	ErrDuplicateKey, ErrAlignment, ErrDuplicateName, ErrDims, ErrTensorType, ErrBlockSize, ErrMisaligned,
	ErrTensorBounds, ErrOverlap, ErrNotFound, ErrWrongType}

// TestTruncatedEverywhere cuts a valid file at every length: each prefix
// must fail cleanly (never panic), with an offset inside the prefix.
func TestTruncatedEverywhere(t *testing.T) {
	full := validSmallFile(t)
	if _, err := Parse(full); err != nil {
		t.Fatal(err)
	}
	for n := range len(full) {
		_, err := Parse(full[:n])
		if err == nil {
			t.Fatalf("prefix of %d/%d bytes parsed", n, len(full))
		}
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("prefix %d: %T %v", n, err, err)
		}
		if fe.Offset < 0 || fe.Offset > int64(n) {
			t.Fatalf("prefix %d: offset %d outside the input: %v", n, fe.Offset, err)
		}
		if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrLength) && !errors.Is(err, ErrTensorBounds) {
			t.Fatalf("prefix %d: unexpected error kind: %v", n, err)
		}
	}
}

// TestAllocationBounded parses large hostile inputs whose declared counts
// are as big as the remaining bytes allow (so they pass the up-front count
// checks) and checks Parse allocates no more than a small multiple of the
// input. A count of 2^60 is rejected before any allocation (TestMalformed).
func TestAllocationBounded(t *testing.T) {
	const size = 4 << 20
	build := map[string]func(r *rawBuilder){
		"kv count at the limit, content truncated": func(r *rawBuilder) {
			r.header(0, size/13-2).kvU32("a", 1)
		},
		"tensor count at the limit, content truncated": func(r *rawBuilder) {
			r.header(size/24-2, 0).tensor("a", 0, 0, 1)
		},
		"string array count at the limit, one long string": func(r *rawBuilder) {
			r.header(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(size/8 - 8)
			r.u64(size - 80)
		},
		"nested array counts at the limit at every level": func(r *rawBuilder) {
			r.header(0, 1).str("k").u32(uint32(TypeArray))
			for range maxNesting - 1 {
				r.u32(uint32(TypeArray)).u64(size/12 - 100)
			}
			r.u32(uint32(TypeString)).u64(size/8 - 100)
		},
	}
	for name, fn := range build {
		r := &rawBuilder{}
		fn(r)
		r.zeros(size - len(r.b)) // pad the input to its full size
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Parse(r.b)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: parsed", name)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes allocated for a %d-byte input: %v", name, alloc, len(r.b), err)
		if alloc > 2*size {
			t.Errorf("%s: %d bytes allocated for a %d-byte input", name, alloc, len(r.b))
		}
	}
}
