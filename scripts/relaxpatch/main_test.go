package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// markerBytes is the marker as Go's assembler writes
// "I64Const $0x52454c4158454421; Drop" (i64.const, the signed LEB128 of
// the constant, drop), worked out by hand.
var markerBytes = []byte{0x42, 0xa1, 0x88, 0x95, 0xc2, 0x95, 0x88, 0xd3, 0xa2, 0xd2, 0x00, 0x1a}

func TestMarker(t *testing.T) {
	if got := marker(); !bytes.Equal(got, markerBytes) {
		t.Fatalf("marker % x, want % x", got, markerBytes)
	}
}

// module returns a wasm module of a custom section holding data, then a
// code section holding code.
func module(data, code []byte) []byte {
	m := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	m = append(m, 0, byte(len(data)))
	m = append(m, data...)
	m = append(m, 10, byte(len(code)))
	return append(m, code...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

var (
	wrongDot = []byte{0xfd, 0x93, 0x01, 0x02} // Go's i32x4.relaxed_dot_i8x16_i7x16_add_s
	rightDot = []byte{0xfd, 0x93, 0x02, 0x01} // the op and a nop
	nops     = bytes.Repeat([]byte{0x01}, len(markerBytes))
)

func TestPatch(t *testing.T) {
	swizzle := []byte{0xfd, 0x80, 0x01, 0x02} // i8x16.relaxed_swizzle as Go writes it
	madd := []byte{0xfd, 0x85, 0x01, 0x02}    // f32x4.relaxed_madd (0xFD 0x105) as Go writes it
	code := cat([]byte{0x20, 0x00}, markerBytes, wrongDot, wrongDot, markerBytes, swizzle, markerBytes, madd, []byte{0x0b})
	data := cat(markerBytes, wrongDot)
	mod := module(data, code)
	n, err := patch(mod)
	if err != nil || n != 3 {
		t.Fatalf("patch: %d, %v; want 3, nil", n, err)
	}
	want := module(data, cat([]byte{0x20, 0x00}, nops, rightDot, wrongDot, nops, []byte{0xfd, 0x80, 0x02, 0x01},
		nops, []byte{0xfd, 0x85, 0x02, 0x01}, []byte{0x0b}))
	if !bytes.Equal(mod, want) {
		t.Fatalf("patched\n% x\nwant\n% x", mod, want)
	}
}

func TestPatchRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  []byte
		err  error
	}{
		{"not wasm", []byte("\x00asm\x02\x00\x00\x00"), errNotWasm},
		{"short", []byte("\x00as"), errNotWasm},
		{"no code section", module(cat(markerBytes, wrongDot), nil)[:8+2+len(markerBytes)+len(wrongDot)], errNoCode},
		{"section past the end", append([]byte{0, 'a', 's', 'm', 1, 0, 0, 0, 10, 0x7f}, wrongDot...), errNotWasm},
		{"right encoding", module(nil, cat(markerBytes, rightDot)), errEncoding},
		{"not a relaxed op", module(nil, cat(markerBytes, []byte{0xfd, 0x94, 0x01, 0x02})), errEncoding},
		{"marker at the end", module(nil, cat(markerBytes, wrongDot[:3])), errEncoding},
	} {
		if _, err := patch(c.mod); !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
	}
}

// TestMarkedCount: markedCount counts the relaxed instructions of a
// package's assembly that come right after a marker, and names one that
// does not (written without quant/relaxed_wasm.h's RELAXED).
func TestMarkedCount(t *testing.T) {
	for _, c := range []struct {
		body string
		want int
		err  error
	}{
		{"I64Const $0x52454c4158454421; Drop; F32x4RelaxedMadd\n\tI64Const $0x52454c4158454421; Drop; I16x8RelaxedDotI8x16I7x16S\n", 2, nil},
		{"I64Const $0x52454c4158454421; Drop; F32x4RelaxedMadd\n\tI32x4RelaxedDotI8x16I7x16AddS\n", 0, errUnmarked},
		{"I64Const $1; Drop; F32x4RelaxedMadd\n", 0, errUnmarked},
	} {
		dir := t.TempDir()
		write := func(name, text string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("go.mod", "module example.com/k\n\ngo 1.27\n")
		write("k.go", "package k\n\nfunc f()\n")
		write("k_wasm.s", "#include \"textflag.h\"\n\nTEXT ·f(SB), NOSPLIT, $0-0\n\t"+c.body+"\tRET\n")
		t.Chdir(dir)
		n, err := markedCount(".", "")
		if n != c.want || !errors.Is(err, c.err) {
			t.Errorf("%q: %d, %v; want %d, %v", c.body, n, err, c.want, c.err)
		}
	}
}
