package quant

import (
	"math/rand/v2"
	"testing"
)

const (
	benchCols = 4096 // elements per row: a multiple of every block size
	benchRows = 64
)

// dotTypes lists every type with a Dot kernel, in id order.
func dotTypes() []Type {
	var ts []Type
	for id := range Type(64) {
		if TraitsOf(id).HasDot() {
			ts = append(ts, id)
		}
	}
	return ts
}

// benchData quantises a random benchRows x benchCols matrix to t and a
// random activation to t's VecDotType.
func benchData(tb testing.TB, t Type) (w, act []byte) {
	tr := TraitsOf(t)
	rng := rand.New(rand.NewPCG(uint64(t), 7))
	src := make([]float32, benchRows*benchCols)
	for i := range src {
		src[i] = float32(rng.NormFloat64())
	}
	rowBytes, err := RowSize(t, benchCols)
	if err != nil {
		tb.Fatal(err)
	}
	w = make([]byte, benchRows*rowBytes)
	if tr.HasFromFloat() {
		tr.FromFloat(w, src)
	} else {
		goldenTiled(tb, t, w)
	}
	vt := TraitsOf(tr.VecDotType)
	actBytes, _ := RowSize(tr.VecDotType, benchCols)
	act = make([]byte, actBytes)
	vt.FromFloat(act, src[:benchCols])
	return w, act
}

// BenchmarkDot measures each dot kernel as a matrix-vector product over
// benchRows rows; the reported MB/s is weight bytes read per second.
func BenchmarkDot(b *testing.B) {
	for _, t := range dotTypes() {
		b.Run(t.String(), func(b *testing.B) {
			benchDot(b, t, TraitsOf(t).Dot)
		})
	}
}

// benchDot runs dot as a matrix-vector product over benchRows rows of t;
// the reported MB/s is weight bytes read per second.
func benchDot(b *testing.B, t Type, dot func(n int, w, act []byte) float32) {
	w, act := benchData(b, t)
	rowBytes := len(w) / benchRows
	b.SetBytes(int64(len(w)))
	var sink float32
	for b.Loop() {
		for r := range benchRows {
			sink += dot(benchCols, w[r*rowBytes:(r+1)*rowBytes], act)
		}
	}
	_ = sink
}

// BenchmarkDotN measures DotEach with MaxDotN activations (a prefill
// batch) over benchRows rows, for the types with platform kernels (with a
// DotN kernel on SIMD builds, Dot per activation in portable ones); MB/s is
// weight bytes read per second, so the ratio to BenchmarkDot's MB/s is how
// many times faster than MaxDotN separate dots a batch is.
func BenchmarkDotN(b *testing.B) {
	for _, t := range simdTypes {
		tr := TraitsOf(t)
		b.Run(t.String(), func(b *testing.B) {
			w, act := benchData(b, t)
			acts := make([][]byte, MaxDotN)
			for i := range acts {
				acts[i] = act
			}
			out := make([]float32, MaxDotN)
			rowBytes := len(w) / benchRows
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				for r := range benchRows {
					tr.DotEach(benchCols, w[r*rowBytes:(r+1)*rowBytes], acts, out)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRows*MaxDotN), "ns/row-activation")
		})
	}
}

// BenchmarkDequantize measures each dequantiser; MB/s is encoded bytes read.
func BenchmarkDequantize(b *testing.B) {
	for id := range Type(64) {
		tr := TraitsOf(id)
		if !tr.HasDequantize() {
			continue
		}
		b.Run(id.String(), func(b *testing.B) {
			w, _ := benchData(b, id)
			dst := make([]float32, benchRows*benchCols)
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				tr.Dequantize(dst, w)
			}
		})
	}
}

// BenchmarkActivation measures quantising one activation vector.
func BenchmarkActivation(b *testing.B) {
	for _, t := range []Type{Q8_0, Q8_1, Q8_K} {
		b.Run(t.String(), func(b *testing.B) {
			src := make([]float32, benchCols)
			for i := range src {
				src[i] = float32(i%17) - 8
			}
			n, _ := RowSize(t, benchCols)
			dst := make([]byte, n)
			b.SetBytes(int64(4 * benchCols))
			for b.Loop() {
				TraitsOf(t).FromFloat(dst, src)
			}
		})
	}
}

// TestDotAllocs checks that no dot kernel allocates.
func TestDotAllocs(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		for _, typ := range dotTypes() {
			w, act := benchData(t, typ)
			tr := ks.traits(typ)
			dot := tr.Dot
			rowBytes := len(w) / benchRows
			if n := testing.AllocsPerRun(10, func() { dot(benchCols, w[:rowBytes], act) }); n != 0 {
				t.Errorf("%v: Dot allocates %v times", typ, n)
			}
			acts, out := [][]byte{act, act, act, act, act}, make([]float32, 5)
			if n := testing.AllocsPerRun(10, func() { tr.DotEach(benchCols, w[:rowBytes], acts, out) }); n != 0 {
				t.Errorf("%v: DotEach allocates %v times", typ, n)
			}
		}
	})
}

// goldenTiled fills w (benchRows rows of benchCols elements of t) with
// ggml's golden blocks of t, for types without a quantiser: row r repeats
// golden row r%8 along its length.
func goldenTiled(tb testing.TB, t Type, w []byte) {
	tb.Helper()
	blocks := readGolden(tb, t.String()+".blocks")
	const goldenRows = 8
	goldenRow := len(blocks) / goldenRows
	rowBytes := len(w) / benchRows
	if goldenRow == 0 || rowBytes%goldenRow != 0 {
		tb.Fatalf("%v: golden rows of %d bytes do not tile %d", t, goldenRow, rowBytes)
	}
	for r := range benchRows {
		g := blocks[r%goldenRows*goldenRow : (r%goldenRows+1)*goldenRow]
		for off := 0; off < rowBytes; off += goldenRow {
			copy(w[r*rowBytes+off:], g)
		}
	}
}
