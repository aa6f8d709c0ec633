package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// The kernel tables, and the twin tests of every line of them: each kernel
// of a platform table the CPU runs against the portable kernel it replaces,
// in one binary. The tests of the other files run on every kernelSet.

// A kernelSet is a traits table the tests run: the portable kernels alone
// ("Go"), then with each platform table the CPU runs laid over them in
// turn; the last one is the process's table.
type kernelSet struct {
	name string
	*traitsTable
}

func kernelSets() []kernelSet {
	ts := cpuTables()
	sets := []kernelSet{{"Go", newTable(nil)}}
	for i, kt := range ts {
		sets = append(sets, kernelSet{sets[i].name + "+" + kt.name, newTable(ts[:i+1])})
	}
	return sets
}

// forEachSet runs f as a subtest for every kernel set.
func forEachSet(t *testing.T, f func(t *testing.T, ks kernelSet)) {
	t.Helper()
	for _, ks := range kernelSets() {
		t.Run(ks.name, func(t *testing.T) { f(t, ks) })
	}
}

// funcPtr identifies a kernel (nil: 0).
func funcPtr(f any) uintptr { return reflect.ValueOf(f).Pointer() }

// TestKernelTables: every line of every platform table of this build names
// a type and replaces a kernel; a line that gives a type a DotN
// kernel gives it a DotRowsN kernel too (MatMul does not use DotN);
// TraitsOf reads the last kernel set, in which the last table's kernels are
// in use.
func TestKernelTables(t *testing.T) {
	var names []string
	for _, kt := range platformTables() {
		run := kt.cpu == nil || kt.cpu()
		names = append(names, kt.name+map[bool]string{true: "", false: " (not on this CPU)"}[run])
		for _, line := range kt.formats {
			if !TraitsOf(line.t).Valid() {
				t.Errorf("%s: line for %v, not a type", kt.name, line.t)
			}
			if sameKernels(line.kernels, kernels{}) {
				t.Errorf("%s: line for %v replaces nothing", kt.name, line.t)
			}
			if line.dotN != nil && line.dotRowsN == nil {
				t.Errorf("%s: %v has a DotN kernel but no DotRowsN kernel", kt.name, line.t)
			}
		}
	}
	t.Logf("platform tables: %s", strings.Join(names, ", "))
	sets := kernelSets()
	last := sets[len(sets)-1]
	for id := range Type(64) {
		if got, want := TraitsOf(id), last.traits(id); !sameKernels(got.kernels, want.kernels) || got.Name != want.Name {
			t.Errorf("%v: TraitsOf is not the last kernel set's %s", id, last.name)
		}
	}
	if got := TraitsOf(E8_IQ3); !got.HasDot() || funcPtr(got.dot) != funcPtr(dotE8IQ3) {
		t.Errorf("E8_IQ3's traits: %+v", got)
	}
	if ts := cpuTables(); len(ts) > 0 {
		for _, line := range ts[len(ts)-1].formats {
			got := TraitsOf(line.t).kernels
			for _, k := range []struct{ line, got any }{
				{line.dequantize, got.dequantize}, {line.fromFloat, got.fromFloat}, {line.dot, got.dot},
				{line.dotN, got.dotN}, {line.dotRows, got.dotRows}, {line.dotRowsN, got.dotRowsN},
			} {
				if p := funcPtr(k.line); p != 0 && p != funcPtr(k.got) {
					t.Errorf("%v: a kernel of the last table is not in use", line.t)
				}
			}
		}
	}
}

// sameKernels reports whether a and b have the same kernels.
func sameKernels(a, b kernels) bool {
	return funcPtr(a.dequantize) == funcPtr(b.dequantize) && funcPtr(a.fromFloat) == funcPtr(b.fromFloat) &&
		funcPtr(a.dot) == funcPtr(b.dot) && funcPtr(a.dotN) == funcPtr(b.dotN) &&
		funcPtr(a.dotRows) == funcPtr(b.dotRows) && funcPtr(a.dotRowsN) == funcPtr(b.dotRowsN)
}

// TestTableTwins: every kernel of every platform table the CPU runs gives
// the bits of the portable kernel it replaces (its Dot, Dot per activation,
// per row, per row and activation), on random blocks, blocks of extreme
// quants and blocks with special fp16 scales, for row lengths around the
// kernels' group sizes.
func TestTableTwins(t *testing.T) {
	portable := newTable(nil)
	for _, kt := range cpuTables() {
		for _, line := range kt.formats {
			t.Run(kt.name+"/"+line.t.String(), func(t *testing.T) {
				checkLineTwins(t, line, portable.traits(line.t))
			})
		}
	}
}

func checkLineTwins(t *testing.T, line formatKernels, p Traits) {
	rng := rand.New(rand.NewPCG(uint64(line.t), 99))
	vt := TraitsOf(p.VecDotType)
	k := line.kernels
	for iter := range 40 {
		nb := []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 64, 65}[iter%12]
		if p.BlockSize == 1 {
			nb *= 8
		}
		n := nb * p.BlockSize
		rowBytes := nb * p.TypeSize
		rows := 1 + iter%13
		w := randBlocks(rng, line.t, nb*rows)
		switch iter % 4 {
		case 1: // extreme quants
			for i := range w[:len(w)/2] {
				w[i] |= 0x80
			}
		case 2: // a special scale
			if off, ok := scaleOffset[line.t]; ok {
				binary.LittleEndian.PutUint16(w[rng.IntN(nb*rows)*p.TypeSize+off:], specialHalves[rng.IntN(len(specialHalves))])
			}
		}
		acts := make([][]byte, 1+iter%MaxDotN)
		for i := range acts {
			acts[i] = randBlocks(rng, p.VecDotType, n/vt.BlockSize)
		}
		row := func(r int) []byte { return w[r*rowBytes : (r+1)*rowBytes] }
		if k.dot != nil {
			for r := range rows {
				if got, want := k.dot(n, row(r), acts[0]), p.dot(n, row(r), acts[0]); !sameFloat(got, want) {
					t.Fatalf("n=%d iter %d row %d: dot %g, portable %g", n, iter, r, got, want)
				}
			}
		}
		if k.dotN != nil {
			out := make([]float32, len(acts))
			k.dotN(n, row(0), acts, out)
			for i, a := range acts {
				if want := p.dot(n, row(0), a); !sameFloat(out[i], want) {
					t.Fatalf("n=%d iter %d activation %d of %d: dotN %g, portable %g", n, iter, i, len(acts), out[i], want)
				}
			}
		}
		if k.dotRows != nil {
			out := make([]float32, rows)
			k.dotRows(n, w, acts[0], out)
			for r := range rows {
				if want := p.dot(n, row(r), acts[0]); !sameFloat(out[r], want) {
					t.Fatalf("n=%d iter %d row %d of %d: dotRows %g, portable %g", n, iter, r, rows, out[r], want)
				}
			}
		}
		if k.dotRowsN != nil {
			outs := make([][]float32, len(acts))
			for i := range outs {
				outs[i] = make([]float32, rows+1)
			}
			k.dotRowsN(n, w, acts, outs, 1)
			for i, a := range acts {
				for r := range rows {
					if want := p.dot(n, row(r), a); !sameFloat(outs[i][1+r], want) {
						t.Fatalf("n=%d iter %d row %d activation %d of %d: dotRowsN %g, portable %g", n, iter, r, i, len(acts), outs[i][1+r], want)
					}
				}
			}
		}
		if k.fromFloat != nil {
			x := randActivation(rng, n, iter)
			got, want := make([]byte, nb*p.TypeSize), make([]byte, nb*p.TypeSize)
			k.fromFloat(got, x)
			p.fromFloat(want, x)
			if i := firstDiff(got, want); i >= 0 {
				t.Fatalf("n=%d shape %d: fromFloat byte %d = %#x, portable %#x", n, iter%6, i, got[i], want[i])
			}
		}
	}
}

// scaleOffset is where the fp16 scale of a block of the types with platform
// dots is (Q4_K, Q5_K, Q4_1, Q5_1: d, their dmin or m at 2; Q2_K: d, its dmin at 82).
var scaleOffset = map[Type]int{F16: 0, Q4_0: 0, Q4_1: 0, Q5_0: 0, Q5_1: 0, Q8_0: 0, Q2_K: 80, Q3_K: 108, Q4_K: 0, Q5_K: 0, Q6_K: 208, IQ4_NL: 0, IQ4_XS: 0,
	IQ2_XXS: 0, IQ2_XS: 0, IQ2_S: 0, IQ3_XXS: 0, IQ3_S: 0, TQ2_0: 64, TQ1_0: 52, IQ1_S: 0, E8_IQ3: 96}

// specialHalves are fp16 scales outside the kernels' fast paths: zeros,
// subnormals, infinities and NaNs.
var specialHalves = []uint16{0x0000, 0x8000, 0x0001, 0x83ff, 0x0200, 0x7c00, 0xfc00, 0x7e00, 0x7c01}

// sameFloat reports whether a and b are the same float32 (any two NaNs
// count as the same: their payloads depend on operand order).
func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// firstDiff returns the first index where a and b differ, or -1.
func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
