package synth

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/picolm/picolm-wasm/gguf/tools/quantize"
	"github.com/picolm/picolm-wasm/quant"
)

// Codebook file types. Package quant has no quantiser for the IQ1, IQ2 and
// IQ3 formats (llama.cpp's need an importance matrix and a codebook search),
// so a model in one of them is written with random codes instead: every
// weight matrix (output and token_embd included: no mix rules) is blocks
// whose bytes are uniformly random, except the super-block scale d, which is
// set so that the block's weights have the tensor's standard deviation
// (WeightStd, OutputStd for output.weight). Every code of these formats is
// valid (grid indices, signs and sub-block scales all index full tables), so
// the blocks use the whole codebook. The codes are a function of (seed,
// tensor name, row) only, like the weights of the other types; unlike them
// they are held in memory, a whole tensor at a time (fine for the small
// shapes the reference tests use).
var codebookTypes = [...]quantize.FileType{
	{Name: "IQ2_XXS", ID: 19, Default: quant.IQ2_XXS},
	{Name: "IQ2_XS", ID: 20, Default: quant.IQ2_XS},
	{Name: "IQ3_XXS", ID: 23, Default: quant.IQ3_XXS},
	{Name: "IQ1_S", ID: 24, Default: quant.IQ1_S},
	{Name: "IQ3_S", ID: 26, Default: quant.IQ3_S},
	{Name: "IQ2_S", ID: 28, Default: quant.IQ2_S},
	{Name: "IQ1_M", ID: 31, Default: quant.IQ1_M},
}

// FileTypes returns the file types ParseFileType accepts: quantize's and the
// codebook types.
func FileTypes() []string {
	names := quantize.FileTypes()
	for _, ft := range codebookTypes {
		names = append(names, ft.Name)
	}
	return names
}

// ParseFileType returns the file type with the given name (case-insensitive):
// one of quantize's, or a codebook type (see codebookTypes).
func ParseFileType(name string) (quantize.FileType, error) {
	ft, err := quantize.ParseFileType(name)
	if err == nil {
		return ft, nil
	}
	for _, c := range codebookTypes {
		if strings.EqualFold(c.Name, name) {
			return c, nil
		}
	}
	return quantize.FileType{}, fmt.Errorf("%w %q (known: %s)", quantize.ErrUnknownType, name, strings.Join(FileTypes(), ", "))
}

// isCodebook reports whether ft's format is one of the codebook types'.
func isCodebook(ft quantize.FileType) bool { return codebookFormat(ft.Default) }

func codebookFormat(t quant.Type) bool {
	return slices.ContainsFunc(codebookTypes[:], func(ft quantize.FileType) bool { return ft.Default == t })
}

// withCodes returns ts with every weight matrix replaced by random codes of
// type t (whose block size must divide the rows: checkCodes).
func (m *Model) withCodes(ts []quantize.Tensor, t quant.Type) []quantize.Tensor {
	out := make([]quantize.Tensor, len(ts))
	for i, x := range ts {
		out[i] = x
		if len(x.Dims) >= 2 {
			std := WeightStd
			if x.Name == "output.weight" {
				std = OutputStd
			}
			out[i].Type, out[i].Raw, out[i].Rows = t, m.codes(x.Name, std, x.Dims, t), nil
		}
	}
	return out
}

// checkCodes reports a shape whose weight rows are not whole blocks of t.
func checkCodes(ts []quantize.Tensor, t quant.Type) error {
	bs := uint64(quant.TraitsOf(t).BlockSize)
	for _, x := range ts {
		if len(x.Dims) >= 2 && x.Dims[0]%bs != 0 {
			return fmt.Errorf("%w: %s has rows of %d weights, not whole %v blocks of %d", ErrShape, x.Name, x.Dims[0], t, bs)
		}
	}
	return nil
}

// codes returns the random codes of one tensor (see Codes), row r from the
// stream hash(name) + r.
func (m *Model) codes(name string, std float64, dims []uint64, t quant.Type) []byte {
	rows := 1
	for _, d := range dims[1:] {
		rows *= int(d)
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return Codes(t, int(dims[0]), rows, std, m.Seed, h.Sum64())
}

// Codes returns rows random rows of cols weights in codebook type t (cols a
// multiple of its block size), nil if t is not one of the codebook types'
// formats: row r's blocks are drawn from a PCG seeded with (seed, stream + r),
// and each block's d makes the root mean square of its weights std.
func Codes(t quant.Type, cols, rows int, std float64, seed, stream uint64) []byte {
	if !codebookFormat(t) {
		return nil
	}
	tr := quant.TraitsOf(t)
	rowBytes := cols / tr.BlockSize * tr.TypeSize
	out := make([]byte, rows*rowBytes)
	w := make([]float32, tr.BlockSize)
	src := rand.NewPCG(0, 0)
	for r := range rows {
		src.Seed(seed, stream+uint64(r))
		row := out[r*rowBytes : (r+1)*rowBytes]
		for i := 0; i < len(row); i += 8 {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], src.Uint64())
			copy(row[i:], b[:])
		}
		for off := 0; off < len(row); off += tr.TypeSize {
			b := row[off : off+tr.TypeSize]
			setCodeScale(t, b, quant.FP32ToFP16(1))
			tr.Dequantize(w, b)
			var ss float64
			for _, v := range w {
				ss += float64(v) * float64(v)
			}
			d := float32(0)
			if ss > 0 {
				d = float32(std / math.Sqrt(ss/float64(len(w))))
			}
			setCodeScale(t, b, quant.FP32ToFP16(d))
		}
	}
	return out
}

// setCodeScale sets the fp16 super-block scale d of block b of codebook
// type t (the layouts are in package quant: iq1_m.go spreads d over the top
// nibbles of its four scale words at offset 48; every other codebook format
// begins with d).
func setCodeScale(t quant.Type, b []byte, d uint16) {
	if t == quant.IQ1_M {
		for k := range 4 {
			w := binary.LittleEndian.Uint16(b[48+2*k:])
			binary.LittleEndian.PutUint16(b[48+2*k:], w&0x0fff|(d>>(4*k)&0xf)<<12)
		}
		return
	}
	binary.LittleEndian.PutUint16(b, d)
}
