package quant

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// wantQuantizer lists the types whose FromFloat must reproduce T.blocks.
var wantQuantizer = map[Type]bool{
	F16: true, BF16: true, Q4_0: true, Q4_1: true, Q5_0: true, Q5_1: true, Q8_0: true,
	Q2_K: true, Q3_K: true, Q4_K: true, Q5_K: true, Q6_K: true,
	TQ1_0: true, TQ2_0: true, IQ4_XS: true,
}

type manifestType struct {
	Name          string    `json:"name"`
	ID            uint32    `json:"ggml_type_id"`
	BlockSize     int       `json:"block_size"`
	TypeSize      int       `json:"type_size"`
	RowBytes      int       `json:"row_bytes"`
	Rows          int       `json:"rows"`
	Cols          int       `json:"cols"`
	VecDotTypeID  uint32    `json:"vec_dot_type_id"`
	VecBlockSize  int       `json:"vec_dot_block_size"`
	VecTypeSize   int       `json:"vec_dot_type_size"`
	ActBytes      int       `json:"act_bytes"`
	DotSumAbs     []float64 `json:"dot_sumabs_per_row"`
	RMSE          []float64 `json:"rmse_per_row"`
	RowReference  *bool     `json:"blocks_equal_row_reference_quantiser"`
	ActReference  *bool     `json:"act_blocks_equal_reference_quantiser"`
	GGUFPyMatches bool      `json:"gguf_py_dequant_bit_exact"`
}

func loadManifest(t testing.TB) []manifestType {
	t.Helper()
	b, err := os.ReadFile(shareddata.Path(t, "quant/manifest.json"))
	if err != nil {
		t.Fatalf("golden vectors: %v", err)
	}
	var m struct {
		Types []manifestType `json:"types"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(m.Types) != 23 {
		t.Fatalf("manifest.json has %d types, want 23", len(m.Types))
	}
	return m.Types
}

func readGolden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(shareddata.Path(t, "quant/"+name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func f32s(b []byte) []float32 {
	f := make([]float32, len(b)/4)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

func TestTraitsMatchManifest(t *testing.T) {
	for _, mt := range loadManifest(t) {
		typ := Type(mt.ID)
		tr := TraitsOf(typ)
		if !tr.Valid() {
			t.Errorf("%s: TraitsOf(%d) is not valid", mt.Name, mt.ID)
			continue
		}
		if tr.Name != mt.Name || typ.String() != mt.Name {
			t.Errorf("id %d: Name %q, String %q, want %q", mt.ID, tr.Name, typ.String(), mt.Name)
		}
		if tr.BlockSize != mt.BlockSize || tr.TypeSize != mt.TypeSize {
			t.Errorf("%s: block %d x %d bytes, want %d x %d", mt.Name, tr.BlockSize, tr.TypeSize, mt.BlockSize, mt.TypeSize)
		}
		if tr.VecDotType != Type(mt.VecDotTypeID) {
			t.Errorf("%s: VecDotType %v, want id %d", mt.Name, tr.VecDotType, mt.VecDotTypeID)
		}
		vt := TraitsOf(tr.VecDotType)
		if !vt.Valid() || vt.BlockSize != mt.VecBlockSize || vt.TypeSize != mt.VecTypeSize {
			t.Errorf("%s: vec_dot type %v has wrong sizes", mt.Name, tr.VecDotType)
		}
		if n, err := RowSize(typ, mt.Cols); err != nil || n != mt.RowBytes {
			t.Errorf("%s: RowSize(%d) = %d, %v; want %d", mt.Name, mt.Cols, n, err, mt.RowBytes)
		}
		if n, err := RowSize(tr.VecDotType, mt.Cols); err != nil || n != mt.ActBytes {
			t.Errorf("%s: RowSize(vec_dot, %d) = %d, %v; want %d", mt.Name, mt.Cols, n, err, mt.ActBytes)
		}
	}
}

// TestGolden runs one reference suite against every format in the
// manifest: dequantisation bit-exact, dot within 1e-5*sum|w*a|, and the
// weight and activation quantisers byte-exact.
func TestGolden(t *testing.T) {
	for _, mt := range loadManifest(t) {
		t.Run(mt.Name, func(t *testing.T) { testGoldenType(t, mt) })
	}
}

func testGoldenType(t *testing.T, mt manifestType) {
	typ := Type(mt.ID)
	tr := TraitsOf(typ)
	if !tr.Valid() {
		t.Fatalf("no traits for id %d", mt.ID)
	}
	vt := TraitsOf(tr.VecDotType)
	blocks := readGolden(t, mt.Name+".blocks")
	src := f32s(readGolden(t, mt.Name+".src.f32"))
	deq := f32s(readGolden(t, mt.Name+".deq.f32"))
	actF32 := f32s(readGolden(t, mt.Name+".act.f32"))
	actBlocks := readGolden(t, mt.Name+".act.blocks")
	dots := f32s(readGolden(t, mt.Name+".dot.f32"))
	if len(blocks) != mt.Rows*mt.RowBytes || len(deq) != mt.Rows*mt.Cols || len(actBlocks) != mt.ActBytes || len(dots) != mt.Rows {
		t.Fatalf("golden file sizes do not match the manifest")
	}
	t.Run("Dequantize", func(t *testing.T) {
		if !tr.HasDequantize() {
			t.Fatal("Dequantize is nil")
		}
		got := make([]float32, len(deq))
		tr.Dequantize(got, blocks)
		bad := 0
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(deq[i]) {
				if bad < 5 {
					t.Errorf("row %d col %d: got %g (%#08x), want %g (%#08x)", i/mt.Cols, i%mt.Cols,
						got[i], math.Float32bits(got[i]), deq[i], math.Float32bits(deq[i]))
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%d of %d values differ", bad, len(got))
		}
	})

	t.Run("Dot", func(t *testing.T) {
		if !tr.HasDot() {
			t.Fatal("Dot is nil")
		}
		for r := range mt.Rows {
			row := blocks[r*mt.RowBytes : (r+1)*mt.RowBytes]
			got := tr.Dot(mt.Cols, row, actBlocks)
			tol := 1e-5 * mt.DotSumAbs[r]
			if diff := math.Abs(float64(got) - float64(dots[r])); !(diff <= tol) {
				t.Errorf("row %d: got %g, want %g (diff %.3g > tol %.3g)", r, got, dots[r], diff, tol)
			}
		}
	})

	t.Run("ActFromFloat", func(t *testing.T) {
		if !vt.HasFromFloat() {
			t.Errorf("activation type %v has no FromFloat", tr.VecDotType)
			return
		}
		got := make([]byte, mt.ActBytes)
		vt.FromFloat(got, actF32)
		compareBlocks(t, got, actBlocks, vt.TypeSize)
	})

	t.Run("FromFloat", func(t *testing.T) {
		if !tr.HasFromFloat() {
			if wantQuantizer[typ] {
				t.Errorf("FromFloat is nil")
			} else {
				t.Skip("FromFloat not implemented")
			}
			return
		}
		if mt.RowReference == nil || !*mt.RowReference {
			t.Skip("T.blocks is not the row reference quantiser's output")
		}
		got := make([]byte, len(blocks))
		tr.FromFloat(got, src)
		compareBlocks(t, got, blocks, tr.TypeSize)
	})
}

func compareBlocks(t *testing.T, got, want []byte, typeSize int) {
	t.Helper()
	bad := 0
	for b := 0; b < len(want)/typeSize; b++ {
		g, w := got[b*typeSize:(b+1)*typeSize], want[b*typeSize:(b+1)*typeSize]
		if string(g) != string(w) {
			if bad < 3 {
				t.Errorf("block %d differs:\n got  %x\n want %x", b, g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d blocks differ", bad, len(want)/typeSize)
	}
}
