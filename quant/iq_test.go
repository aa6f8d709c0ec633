package quant

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
)

func manifestEntry(t *testing.T, typ Type) manifestType {
	t.Helper()
	for _, mt := range loadManifest(t) {
		if Type(mt.ID) == typ {
			return mt
		}
	}
	t.Fatalf("%v not in the manifest", typ)
	return manifestType{}
}

// TestIQ4_NLChunkQuantizer checks that quantizeIQ4_NL reproduces the
// golden IQ4_NL.blocks, which come from ggml_quantize_chunk's scale search
// (not from ggml's row reference quantiser, so TestGolden skips it).
func TestIQ4_NLChunkQuantizer(t *testing.T) {
	blocks := readGolden(t, "IQ4_NL.blocks")
	src := f32s(readGolden(t, "IQ4_NL.src.f32"))
	got := make([]byte, len(blocks))
	quantizeIQ4_NL(got, src)
	compareBlocks(t, got, blocks, iq4_NLBytes)
}

// TestQuantizerQuality applies the README's quality rule to every
// quantiser of a codebook format: rmse_go[r] <= 1.01*rmse_ggml[r] + 1e-7
// on each golden row.
func TestQuantizerQuality(t *testing.T) {
	for _, typ := range []Type{IQ4_NL, IQ4_XS, TQ1_0, TQ2_0} {
		t.Run(typ.String(), func(t *testing.T) {
			mt := manifestEntry(t, typ)
			tr := TraitsOf(typ)
			src := f32s(readGolden(t, mt.Name+".src.f32"))
			q := make([]byte, mt.Rows*mt.RowBytes)
			tr.FromFloat(q, src)
			deq := make([]float32, len(src))
			tr.Dequantize(deq, q)
			for r := range mt.Rows {
				var s float64
				for i := r * mt.Cols; i < (r+1)*mt.Cols; i++ {
					e := float64(deq[i]) - float64(src[i])
					s += e * e
				}
				rmse := math.Sqrt(s / float64(mt.Cols))
				if lim := 1.01*mt.RMSE[r] + 1e-7; !(rmse <= lim) {
					t.Errorf("row %d: rmse %.6g > %.6g (ggml %.6g)", r, rmse, lim, mt.RMSE[r])
				}
			}
		})
	}
}

// TestGridsMatchJSON decodes grids.json independently of scripts/gengrids
// and compares every table entry (the generator's own test checks that
// grids_gen.go is byte-identical to its output).
func TestGridsMatchJSON(t *testing.T) {
	var g map[string]json.RawMessage
	if err := json.Unmarshal(readGolden(t, "grids.json"), &g); err != nil {
		t.Fatal(err)
	}
	words := func(key string) []uint64 {
		var raw []json.RawMessage
		if err := json.Unmarshal(g[key], &raw); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		out := make([]uint64, len(raw))
		for i, r := range raw {
			s := string(r)
			if uq, err := strconv.Unquote(s); err == nil {
				s = uq
			}
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("%s[%d]: %v", key, i, err)
			}
			out[i] = v
		}
		return out
	}
	check := func(key string, n, width int, at func(i, k int) uint8) {
		w := words(key)
		if len(w) != n {
			t.Fatalf("%s: %d entries, table has %d", key, len(w), n)
		}
		for i, v := range w {
			for k := range width {
				if got, want := at(i, k), uint8(v>>(8*k)); got != want {
					t.Fatalf("%s[%d] byte %d: table %d, json %d", key, i, k, got, want)
				}
			}
		}
	}
	check("iq2xxs_grid", len(iq2xxsGrid), 8, func(i, k int) uint8 { return iq2xxsGrid[i][k] })
	check("iq2xs_grid", len(iq2xsGrid), 8, func(i, k int) uint8 { return iq2xsGrid[i][k] })
	check("iq2s_grid", len(iq2sGrid), 8, func(i, k int) uint8 { return iq2sGrid[i][k] })
	check("iq3xxs_grid", len(iq3xxsGrid), 4, func(i, k int) uint8 { return iq3xxsGrid[i][k] })
	check("iq3s_grid", len(iq3sGrid), 4, func(i, k int) uint8 { return iq3sGrid[i][k] })
	check("iq1s_grid", len(iq1sGrid), 8, func(i, k int) uint8 { return uint8(iq1sGrid[i][k]) })
	check("ksigns_iq2xs", len(ksignsIQ2XS), 1, func(i, _ int) uint8 { return ksignsIQ2XS[i] })
	var kv []int8
	if err := json.Unmarshal(g["kvalues_iq4nl"], &kv); err != nil || len(kv) != 16 {
		t.Fatalf("kvalues_iq4nl: %v", err)
	}
	for i, v := range kv {
		if kvaluesIQ4NL[i] != v {
			t.Errorf("kvaluesIQ4NL[%d] = %d, json %d", i, kvaluesIQ4NL[i], v)
		}
	}
	var delta float64
	if err := json.Unmarshal(g["IQ1S_DELTA"], &delta); err != nil || delta != iq1sDelta {
		t.Errorf("IQ1S_DELTA %v (%v), table %v", delta, err, iq1sDelta)
	}
}
