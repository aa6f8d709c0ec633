package quantize

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/picolm/picolm-wasm/quant"
)

// FileType is what a whole model is quantised to: llama.cpp's llama_ftype,
// a default tensor type plus per-tensor rules (the "mix"). The names and ids
// are llama-quantize's, and ID is what the output records as
// general.file_type.
type FileType struct {
	Name    string     // as llama-quantize spells it, e.g. "Q4_K_M"
	ID      uint32     // llama.cpp's LLAMA_FTYPE_MOSTLY_* value
	Default quant.Type // the type of every quantisable tensor no rule moves
}

// fileTypes are the file types this package can write: those whose every
// possible tensor type has a quantiser in package quant. (The IQ1/IQ2/IQ3
// file types need an importance matrix or quantisers that do not exist yet.)
var fileTypes = [...]FileType{
	{"F32", 0, quant.F32},
	{"F16", 1, quant.F16},
	{"BF16", 32, quant.BF16},
	{"Q4_0", 2, quant.Q4_0},
	{"Q4_1", 3, quant.Q4_1},
	{"Q5_0", 8, quant.Q5_0},
	{"Q5_1", 9, quant.Q5_1},
	{"Q8_0", 7, quant.Q8_0},
	{"Q2_K", 10, quant.Q2_K},
	{"Q3_K_S", 11, quant.Q3_K},
	{"Q3_K_M", 12, quant.Q3_K},
	{"Q3_K_L", 13, quant.Q3_K},
	{"Q4_K_S", 14, quant.Q4_K},
	{"Q4_K_M", 15, quant.Q4_K},
	{"Q5_K_S", 16, quant.Q5_K},
	{"Q5_K_M", 17, quant.Q5_K},
	{"Q6_K", 18, quant.Q6_K},
	{"IQ4_NL", 25, quant.IQ4_NL},
	{"IQ4_XS", 30, quant.IQ4_XS},
	{"TQ1_0", 36, quant.TQ1_0},
	{"TQ2_0", 37, quant.TQ2_0},
	// picoLM's own E8/IQ3 container (3.0625 bpw); the id is not llama.cpp's
	// and the file carries quant.E8IQ3Key, so other tools refuse it loudly.
	{"E8_IQ3", 1001, quant.E8_IQ3},
}

// The llama_ftype ids the mix rules test.
const (
	ftQ2_K   = 10
	ftQ3_K_S = 11
	ftQ3_K_M = 12
	ftQ3_K_L = 13
	ftQ4_K_S = 14
	ftQ4_K_M = 15
	ftQ5_K_M = 17
	ftIQ4_NL = 25
	ftIQ4_XS = 30
	ftTQ1_0  = 36
	ftTQ2_0  = 37
)

// aliases are llama-quantize's short names for the medium mixes.
var aliases = map[string]string{"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M"}

// FileTypes returns the names ParseFileType accepts (besides the aliases
// Q3_K, Q4_K and Q5_K for the _M mixes).
func FileTypes() []string {
	s := make([]string, len(fileTypes))
	for i, f := range fileTypes {
		s[i] = f.Name
	}
	return s
}

// ParseFileType returns the file type with the given name (case-insensitive),
// or an error wrapping ErrUnknownType.
func ParseFileType(name string) (FileType, error) {
	n := strings.ToUpper(name)
	if a, ok := aliases[n]; ok {
		n = a
	}
	for _, f := range fileTypes {
		if f.Name == n {
			return f, nil
		}
	}
	return FileType{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownType, name, strings.Join(FileTypes(), ", "))
}

// Hyper are the model hyperparameters the mix rules look at.
type Hyper struct {
	Arch    string // general.architecture
	Layers  int    // block_count
	Heads   int    // attention.head_count
	KVHeads int    // attention.head_count_kv (Heads when absent)
	Experts int    // expert_count (0 when absent)
}

// gqa is llama.cpp's n_gqa(): query heads per KV head, 0 without KV heads.
func (h Hyper) gqa() int {
	if h.KVHeads == 0 {
		return 0
	}
	return h.Heads / h.KVHeads
}

// is70B is llama.cpp's LLM_TYPE_70B for the llama architecture.
func (h Hyper) is70B() bool {
	return h.Arch == "llama" && h.Layers == 80 && h.Heads != h.KVHeads
}

// category is the role of a tensor by its name (llama.cpp's tensor_category).
type category int

const (
	catOther category = iota
	catTokenEmbd
	catOutput
	catAttnQ
	catAttnK
	catAttnV // attn_v, attn_qkv and attn_kv_b: the rules treat them alike
	catAttnOutput
	catFFNUp
	catFFNGate
	catFFNDown
)

func categoryOf(name string) category {
	switch {
	case name == "output.weight":
		return catOutput
	case name == "token_embd.weight" || name == "per_layer_token_embd.weight":
		return catTokenEmbd
	case strings.Contains(name, "attn_qkv.weight"), strings.Contains(name, "attn_kv_b.weight"), strings.Contains(name, "attn_v.weight"):
		return catAttnV
	case strings.Contains(name, "attn_k.weight"):
		return catAttnK
	case strings.Contains(name, "attn_q.weight"):
		return catAttnQ
	case strings.Contains(name, "attn_output.weight"):
		return catAttnOutput
	case strings.Contains(name, "ffn_up"):
		return catFFNUp
	case strings.Contains(name, "ffn_gate"):
		return catFFNGate
	case strings.Contains(name, "ffn_down"):
		return catFFNDown
	}
	return catOther
}

// nDims is ggml_n_dims: the number of dimensions without trailing ones.
func nDims(dims []uint64) int {
	n := len(dims)
	for n > 1 && dims[n-1] == 1 {
		n--
	}
	return n
}

// quantizable reports whether llama-quantize converts a tensor at all (the
// others are copied as they are): weights of two or more dimensions, except
// norms, MoE routers and a few small tensors of other architectures.
func quantizable(name string, dims []uint64) bool {
	if nDims(dims) < 2 || !strings.HasSuffix(name, "weight") {
		return false
	}
	for _, s := range []string{"_norm.weight", "ffn_gate_inp.weight", "altup", "laurel", "per_layer_model_proj",
		"ssm_conv1d", "shortconv.conv.weight", "time_mix_", "attn_rel_b.weight", ".position_embd", ".rel_pos", ".patch_embd"} {
		if strings.Contains(name, s) {
			return false
		}
	}
	return name != "position_embd.weight" && name != "token_types.weight"
}

func isQuantized(t quant.Type) bool {
	return quant.TraitsOf(t).BlockSize > 1
}

// mixer chooses each tensor's type, visiting the tensors in llama-quantize's
// order (see order) because some rules count tensors of a kind.
//
// The rules are llama.cpp's llama_tensor_get_type (src/llama-quant.cpp) for
// the file types of this package. With n the layer count and
// moreBits(i) = i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2:
//
//   - norms, 1-D tensors and anything not named *weight keep their type.
//   - output.weight (and token_embd.weight when there is no output.weight):
//     Q8_0 if its rows are not a whole number of the default type's blocks,
//     else Q6_K unless the default is Q8_0.
//   - token_embd.weight: Q4_K for TQ1_0 and TQ2_0, else the default.
//   - attn_v, attn_qkv, attn_kv_b (the i-th of N): Q2_K: Q4_K if gqa >= 4 else Q3_K; Q3_K_M: Q5_K
//     for i < 2 else Q4_K; Q3_K_L: Q5_K; IQ4_NL/IQ4_XS: Q5_K if gqa >= 4;
//     Q4_K_M/Q5_K_M: Q6_K if moreBits(i) over N; Q4_K_S: Q5_K for i < 4.
//     Then a 70B llama bumps Q3_K/Q4_K to Q5_K, and 8 experts give Q8_0.
//   - attn_k: Q8_0 with 8 experts.
//   - ffn_down of layer i: Q2_K: Q3_K; Q3_K_M: Q5_K for i < n/16, else Q4_K
//     (Q3_K for falcon unless moreBits); Q3_K_L: Q5_K (falcon Q4_K);
//     Q4_K_M: Q6_K if moreBits(i) (falcon: Q6_K/Q5_K/Q4_K); IQ4_NL/IQ4_XS:
//     Q5_K for i < n/8; Q5_K_M: Q6_K if moreBits(i); Q4_K_S: Q5_K for
//     i < n/8 (not falcon).
//   - attn_output: with 8 experts Q5_K for Q2_K, Q3_K_S, Q3_K_M, IQ4_NL,
//     Q4_K_S, Q4_K_M, IQ4_XS; else Q2_K: Q3_K, Q3_K_M: Q4_K, Q3_K_L: Q5_K
//     (falcon: Q3_K_L gives Q4_K).
//
// None of this applies to F32/F16/BF16, nor with Options.Pure. Finally a
// tensor whose row length is not a multiple of the chosen type's block size
// falls back (llama.cpp's tensor_type_fallback): IQ4_XS to IQ4_NL; Q2_K,
// Q3_K, TQ1_0, TQ2_0 to Q4_0; Q4_K to Q5_0; Q5_K to Q5_1; Q6_K to Q8_0; and
// to F16 when even that does not fit. (llama.cpp refuses such a tensor for
// the 32-element types; here they fall back to F16 too. Older llama.cpp sent
// Q2_K and Q3_K to IQ4_NL.)
type mixer struct {
	ft   FileType
	h    Hyper
	pure bool
	tied bool // no output.weight: token_embd is also the output

	nAttnV, iAttnV int
	iFFNDown       int

	notes []string // fallbacks, for the user
}

func (m *mixer) moreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// layerOf is the layer a per-layer rule uses: the running count, or with
// experts the number in the tensor's name (experts are not consecutive).
func (m *mixer) layerOf(counter int, name string) int {
	if m.h.Experts > 1 {
		if rest, ok := strings.CutPrefix(name, "blk."); ok {
			if i := strings.IndexByte(rest, '.'); i > 0 {
				if n, err := strconv.Atoi(rest[:i]); err == nil {
					return n
				}
			}
		}
	}
	return counter
}

// typeOf returns the type of tensor t (name, dims, current type).
func (m *mixer) typeOf(name string, dims []uint64, cur quant.Type) quant.Type {
	if !quantizable(name, dims) {
		return cur
	}
	typ := m.ft.Default
	if !isQuantized(typ) {
		return typ
	}
	if !m.pure {
		typ = m.mix(name, dims, typ)
	}
	return m.fallback(name, dims, typ)
}

func (m *mixer) mix(name string, dims []uint64, typ quant.Type) quant.Type {
	ft, falcon, n := m.ft.ID, m.h.Arch == "falcon", m.h.Layers
	switch cat := categoryOf(name); {
	case cat == catOutput || (m.tied && cat == catTokenEmbd):
		if falcon || dims[0]%uint64(quant.TraitsOf(typ).BlockSize) != 0 {
			typ = quant.Q8_0
		} else if typ != quant.Q8_0 {
			typ = quant.Q6_K
		}
	case cat == catTokenEmbd:
		if ft == ftTQ1_0 || ft == ftTQ2_0 {
			typ = quant.Q4_K
		}
	case cat == catAttnV:
		i := m.iAttnV
		switch {
		case ft == ftQ2_K:
			typ = quant.Q3_K
			if m.h.gqa() >= 4 {
				typ = quant.Q4_K
			}
		case ft == ftQ3_K_M:
			typ = quant.Q4_K
			if i < 2 {
				typ = quant.Q5_K
			}
		case ft == ftQ3_K_L:
			typ = quant.Q5_K
		case (ft == ftIQ4_NL || ft == ftIQ4_XS) && m.h.gqa() >= 4:
			typ = quant.Q5_K
		case (ft == ftQ4_K_M || ft == ftQ5_K_M) && m.moreBits(i, m.nAttnV):
			typ = quant.Q6_K
		case ft == ftQ4_K_S && i < 4:
			typ = quant.Q5_K
		}
		if m.h.is70B() && (typ == quant.Q3_K || typ == quant.Q4_K) {
			typ = quant.Q5_K
		}
		if m.h.Experts == 8 {
			typ = quant.Q8_0
		}
		m.iAttnV++
	case cat == catAttnK:
		if m.h.Experts == 8 {
			typ = quant.Q8_0
		}
	case cat == catFFNDown:
		i := m.layerOf(m.iFFNDown, name)
		switch {
		case ft == ftQ2_K:
			typ = quant.Q3_K
		case ft == ftQ3_K_M:
			switch {
			case i < n/16:
				typ = quant.Q5_K
			case !falcon || m.moreBits(i, n):
				typ = quant.Q4_K
			default:
				typ = quant.Q3_K
			}
		case ft == ftQ3_K_L:
			typ = quant.Q5_K
			if falcon {
				typ = quant.Q4_K
			}
		case ft == ftQ4_K_M:
			if falcon {
				switch {
				case i < n/16:
					typ = quant.Q6_K
				case m.moreBits(i, n):
					typ = quant.Q5_K
				default:
					typ = quant.Q4_K
				}
			} else if m.moreBits(i, n) {
				typ = quant.Q6_K
			}
		case i < n/8 && (ft == ftIQ4_NL || ft == ftIQ4_XS):
			typ = quant.Q5_K
		case ft == ftQ5_K_M && m.moreBits(i, n):
			typ = quant.Q6_K
		case ft == ftQ4_K_S && !falcon && i < n/8:
			typ = quant.Q5_K
		}
		m.iFFNDown++
	case cat == catAttnOutput:
		switch {
		case falcon:
			if ft == ftQ3_K_L {
				typ = quant.Q4_K
			}
		case m.h.Experts == 8:
			switch ft {
			case ftQ2_K, ftQ3_K_S, ftQ3_K_M, ftIQ4_NL, ftQ4_K_S, ftQ4_K_M, ftIQ4_XS:
				typ = quant.Q5_K
			}
		case ft == ftQ2_K:
			typ = quant.Q3_K
		case ft == ftQ3_K_M:
			typ = quant.Q4_K
		case ft == ftQ3_K_L:
			typ = quant.Q5_K
		}
	}
	return typ
}

// fallback replaces a type whose block size does not divide the row length.
func (m *mixer) fallback(name string, dims []uint64, typ quant.Type) quant.Type {
	cols := dims[0]
	want := typ
	if cols%uint64(quant.TraitsOf(typ).BlockSize) == 0 {
		return typ
	}
	switch typ {
	case quant.IQ1_S, quant.IQ1_M, quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ4_XS, quant.E8_IQ3:
		typ = quant.IQ4_NL
	case quant.Q2_K, quant.Q3_K, quant.TQ1_0, quant.TQ2_0:
		typ = quant.Q4_0
	case quant.Q4_K:
		typ = quant.Q5_0
	case quant.Q5_K:
		typ = quant.Q5_1
	case quant.Q6_K:
		typ = quant.Q8_0
	}
	if cols%uint64(quant.TraitsOf(typ).BlockSize) != 0 {
		typ = quant.F16
	}
	m.notes = append(m.notes, fmt.Sprintf("%s: %d columns are not a multiple of %d (the block size of %v): falling back to %v",
		name, cols, quant.TraitsOf(want).BlockSize, want, typ))
	return typ
}
