package synth

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/gguf/tools/quantize"
	"github.com/picolm/picolm-wasm/quant"
)

// blockScales are where the fp16 scales of each block sit in the formats
// random blocks are written in (ggml's layouts: Q4_K and Q5_K d then dmin
// first, Q6_K d last, Q4_0, Q5_0 and Q8_0 d first), with the value each
// gets: the weights' root mean square is then about WeightStd (a Q4_K
// weight is d·sc·q − dmin·m, sc, m 6-bit and q 4-bit, uniform).
var blockScales = map[quant.Type][]struct {
	off int
	val float32
}{
	quant.Q4_K: {{0, 1.0 / 4096}, {2, 7.5 / 4096}},
	quant.Q5_K: {{0, 1.0 / 8192}, {2, 15.5 / 8192}},
	quant.Q6_K: {{208, 1.0 / 16384}},
	quant.Q4_0: {{0, 1.0 / 64}},
	quant.Q5_0: {{0, 1.0 / 128}},
	quant.Q8_0: {{0, 1.0 / 1024}},
}

// randomBlocks is a quantize.Tensor's Blocks for tensor name: each chunk of
// rows is random bytes from a PCG seeded with (seed, hash(name) + first),
// every block's scales then set to blockScales' finite values. No float is
// quantized, so an 8B-parameter model writes as fast as the disk takes it.
func (m *Model) randomBlocks(name string) func(quant.Type, []byte, int) error {
	h := fnv.New64a()
	h.Write([]byte(name))
	stream := h.Sum64()
	return func(typ quant.Type, dst []byte, first int) error {
		scales, ok := blockScales[typ]
		if !ok {
			return fmt.Errorf("%w: random blocks of %v (only Q4_K, Q5_K, Q6_K, Q4_0, Q5_0 and Q8_0)", ErrShape, typ)
		}
		rng := rand.NewPCG(m.Seed, stream+uint64(first))
		i := 0
		for ; i+8 <= len(dst); i += 8 {
			binary.LittleEndian.PutUint64(dst[i:], rng.Uint64())
		}
		for ; i < len(dst); i++ {
			dst[i] = byte(rng.Uint64())
		}
		size := quant.TraitsOf(typ).TypeSize
		for b := 0; b+size <= len(dst); b += size {
			for _, s := range scales {
				binary.LittleEndian.PutUint16(dst[b+s.off:], quant.FP32ToFP16(s.val))
			}
		}
		return nil
	}
}

// errHeaderDone stops quantize.Write after the header (Header).
var errHeaderDone = errors.New("synth: header written")

// headerOnly keeps the first Write (quantize.Write's header) and stops.
type headerOnly struct{ b []byte }

func (h *headerOnly) Write(p []byte) (int, error) {
	if h.b != nil {
		return 0, errHeaderDone
	}
	h.b = append([]byte(nil), p...)
	return len(p), nil
}

// Header returns the header the model's file in type ft would start with
// (up to its data section) and that file's size, without generating a
// weight: a planner's input for a model of any size (scripts/synth
// -sparse writes it with the data left a hole).
func (m *Model) Header(ft quantize.FileType) ([]byte, int64, error) {
	p, kv, err := m.Plan(ft, quantize.Options{})
	if err != nil {
		return nil, 0, err
	}
	var h headerOnly
	if _, err := quantize.Write(&h, kv, p, quantize.Options{}); !errors.Is(err, errHeaderDone) {
		return nil, 0, fmt.Errorf("synth: writing the header: %v", err)
	}
	f, err := gguf.ParseHeaderPrefix(h.b, 1<<50)
	if err != nil {
		return nil, 0, err
	}
	end := int64(f.DataOffset)
	for i := range f.Tensors {
		t := &f.Tensors[i]
		tr := quant.TraitsOf(t.Type)
		end = max(end, int64(f.Pos(t))+int64(t.Elements())/int64(tr.BlockSize)*int64(tr.TypeSize))
	}
	return h.b, end, nil
}
