package quant

// The traits table: every format once, with its portable kernels, and the
// platform tables that replace some of them on the CPUs that run them.
//
// The kernels of a format on one platform have distinct names: dotQ4_KRef
// is the readable reference (ggml's generic C, or for Q2_K, Q3_K and Q5_K
// the float order of ggml's x86 kernels, kx86.go; the definition every
// other kernel must equal bit for bit), dotQ4_KGo the portable kernel (always
// compiled: the fallback on every platform), dotQ4_KSIMD128 the wasm SIMD128
// one (kernels_wasm.go), dotQ4_KAVX2 and dotRowsNQ4_KVNNI the amd64 ones
// (kernels_amd64.go). A kernel with no twins has no suffix. Which kernels
// run is decided once, when the table is built: the platform tables whose
// CPU features are present are laid over the portable table in order.

// formats is the table of ggml's formats with their portable kernels,
// indexed by type id. An entry with an empty Name is not a valid type.
var formats = [...]Traits{
	F32:  {Name: "F32", BlockSize: 1, TypeSize: 4, VecDotType: F32, kernels: kernels{dequantize: dequantizeF32, fromFloat: fromFloatF32, dot: dotF32Ref}},
	F16:  {Name: "F16", BlockSize: 1, TypeSize: 2, VecDotType: F16, kernels: kernels{dequantize: dequantizeF16, fromFloat: fromFloatF16, dot: dotF16Ref}},
	BF16: {Name: "BF16", BlockSize: 1, TypeSize: 2, VecDotType: BF16, kernels: kernels{dequantize: dequantizeBF16, fromFloat: fromFloatBF16, dot: dotBF16Ref}},
	F64:  {Name: "F64", BlockSize: 1, TypeSize: 8, VecDotType: F64},
	I8:   {Name: "I8", BlockSize: 1, TypeSize: 1, VecDotType: I8},
	I16:  {Name: "I16", BlockSize: 1, TypeSize: 2, VecDotType: I16},
	I32:  {Name: "I32", BlockSize: 1, TypeSize: 4, VecDotType: I32},
	I64:  {Name: "I64", BlockSize: 1, TypeSize: 8, VecDotType: I64},

	Q4_0: {Name: "Q4_0", BlockSize: qk, TypeSize: q4_0Bytes, VecDotType: Q8_0, kernels: kernels{dequantize: dequantizeQ4_0, fromFloat: quantizeQ4_0, dot: dotQ4_0Go}},
	Q4_1: {Name: "Q4_1", BlockSize: qk, TypeSize: q4_1Bytes, VecDotType: Q8_1, kernels: kernels{dequantize: dequantizeQ4_1, fromFloat: quantizeQ4_1, dot: dotQ4_1Go}},
	Q5_0: {Name: "Q5_0", BlockSize: qk, TypeSize: q5_0Bytes, VecDotType: Q8_0, kernels: kernels{dequantize: dequantizeQ5_0, fromFloat: quantizeQ5_0, dot: dotQ5_0Go}},
	Q5_1: {Name: "Q5_1", BlockSize: qk, TypeSize: q5_1Bytes, VecDotType: Q8_1, kernels: kernels{dequantize: dequantizeQ5_1, fromFloat: quantizeQ5_1, dot: dotQ5_1Go}},
	Q8_0: {Name: "Q8_0", BlockSize: qk, TypeSize: q8_0Bytes, VecDotType: Q8_0, kernels: kernels{dequantize: dequantizeQ8_0, fromFloat: quantizeQ8_0Ref, dot: dotQ8_0Go}},
	Q8_1: {Name: "Q8_1", BlockSize: qk, TypeSize: q8_1Bytes, VecDotType: Q8_1, kernels: kernels{fromFloat: quantizeQ8_1}},

	Q2_K: {Name: "Q2_K", BlockSize: qkK, TypeSize: q2_KBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeQ2_K, fromFloat: quantizeQ2_K, dot: dotQ2_KGo}},
	Q3_K: {Name: "Q3_K", BlockSize: qkK, TypeSize: q3_KBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeQ3_K, fromFloat: quantizeQ3_K, dot: dotQ3_KGo}},
	Q4_K: {Name: "Q4_K", BlockSize: qkK, TypeSize: q4_KBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeQ4_K, fromFloat: quantizeQ4_K, dot: dotQ4_KGo}},
	Q5_K: {Name: "Q5_K", BlockSize: qkK, TypeSize: q5_KBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeQ5_K, fromFloat: quantizeQ5_K, dot: dotQ5_KGo}},
	Q6_K: {Name: "Q6_K", BlockSize: qkK, TypeSize: q6_KBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeQ6_K, fromFloat: quantizeQ6_K, dot: dotQ6_KGo}},
	Q8_K: {Name: "Q8_K", BlockSize: qkK, TypeSize: q8_KBytes, VecDotType: Q8_K, kernels: kernels{fromFloat: quantizeQ8_KRef}},

	IQ2_XXS: {Name: "IQ2_XXS", BlockSize: qkK, TypeSize: iq2_XXSBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeIQ2_XXS, dot: dotIQ2_XXSRef}},
	IQ2_XS:  {Name: "IQ2_XS", BlockSize: qkK, TypeSize: iq2_XSBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeIQ2_XS, dot: dotIQ2_XSRef}},
	IQ2_S:   {Name: "IQ2_S", BlockSize: qkK, TypeSize: iq2_SBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeIQ2_S, dot: dotIQ2_SRef}},
	IQ3_XXS: {Name: "IQ3_XXS", BlockSize: qkK, TypeSize: iq3_XXSBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeIQ3_XXS, dot: dotIQ3_XXSRef}},
	IQ3_S:   {Name: "IQ3_S", BlockSize: qkK, TypeSize: iq3_SBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeIQ3_S, dot: dotIQ3_SRef}},
	IQ1_S:   {Name: "IQ1_S", BlockSize: qkK, TypeSize: iq1_SBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeIQ1_S, dot: dotIQ1_SRef}},
	IQ1_M:   {Name: "IQ1_M", BlockSize: qkK, TypeSize: iq1_MBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeIQ1_M, dot: dotIQ1_MRef}},
	IQ4_NL:  {Name: "IQ4_NL", BlockSize: qk, TypeSize: iq4_NLBytes, VecDotType: Q8_0, kernels: kernels{dequantize: dequantizeIQ4_NL, fromFloat: quantizeIQ4_NL, dot: dotIQ4_NLGo}},
	IQ4_XS:  {Name: "IQ4_XS", BlockSize: qkK, TypeSize: iq4_XSBytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeIQ4_XS, fromFloat: quantizeIQ4_XS, dot: dotIQ4_XSGo}},
	TQ1_0:   {Name: "TQ1_0", BlockSize: qkK, TypeSize: tq1_0Bytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeTQ1_0, fromFloat: quantizeTQ1_0, dot: dotTQ1_0Go}},
	TQ2_0:   {Name: "TQ2_0", BlockSize: qkK, TypeSize: tq2_0Bytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeTQ2_0, fromFloat: quantizeTQ2_0, dot: dotTQ2_0Ref}},
}

// extensions are picoLM's own types, whose ids lie outside ggml's range
// (see ExtensionKey); they are looked up by id.
var extensions = [...]struct {
	id Type
	Traits
}{
	{E8_IQ3, Traits{Name: "E8_IQ3", BlockSize: qkK, TypeSize: e8iq3Bytes, VecDotType: Q8_K, kernels: kernels{dequantize: dequantizeE8IQ3, fromFloat: quantizeE8IQ3, dot: dotE8IQ3}}}, // see e8iq3.go
}

// A kernelTable is one platform's kernels (kernels_wasm.go,
// kernels_amd64.go): for each type it lists, the kernels that replace the
// ones below it (a nil kernel keeps the one below), and whether the
// platform's vector kernels (simdVec) replace the portable ones.
type kernelTable struct {
	name    string      // what the kernels use, e.g. "AVX2"
	cpu     func() bool // whether this CPU runs them (nil: every CPU of the platform)
	formats []formatKernels
	simdVec bool
}

// formatKernels is one line of a kernelTable: a type and its kernels.
type formatKernels struct {
	t Type
	kernels
}

// traitsTable is the traits of every type and the choice of vector
// kernels, as newTable lays them out.
type traitsTable struct {
	ggml [len(formats)]Traits
	ext  [len(extensions)]Traits
	vec  vecSet
}

// table is the process's one traits table: the portable kernels, overlaid
// with the platform tables this CPU runs. Built at start-up (the only
// place CPU features are read) and never written again.
var table = newTable(cpuTables())

// cpuTables returns the platform tables the CPU runs, in order.
func cpuTables() []kernelTable {
	var ts []kernelTable
	for _, kt := range platformTables() {
		if kt.cpu == nil || kt.cpu() {
			ts = append(ts, kt)
		}
	}
	return ts
}

// newTable returns the portable table overlaid with the kernel tables ts,
// in order.
func newTable(ts []kernelTable) *traitsTable {
	tab := &traitsTable{ggml: formats}
	for i, e := range extensions {
		tab.ext[i] = e.Traits
	}
	for _, kt := range ts {
		for _, line := range kt.formats {
			tab.entry(line.t).kernels.overlay(line.kernels)
		}
		tab.vec.simd = tab.vec.simd || kt.simdVec
	}
	return tab
}

// entry returns where t's traits are in tab, or nil if t is not a type.
func (tab *traitsTable) entry(t Type) *Traits {
	if int(t) < len(tab.ggml) {
		if tr := &tab.ggml[t]; tr.Valid() {
			return tr
		}
		return nil
	}
	for i, e := range extensions {
		if e.id == t {
			return &tab.ext[i]
		}
	}
	return nil
}

// traits returns t's traits in tab, the zero Traits if t is not a type.
func (tab *traitsTable) traits(t Type) Traits {
	if tr := tab.entry(t); tr != nil {
		return *tr
	}
	return Traits{}
}

// TraitsOf returns the traits of t; they are not Valid if t is not a type.
func TraitsOf(t Type) Traits { return table.traits(t) }

// overlay replaces k's kernels with the non-nil ones of o.
func (k *kernels) overlay(o kernels) {
	set(&k.dequantize, o.dequantize)
	set(&k.fromFloat, o.fromFloat)
	set(&k.dot, o.dot)
	set(&k.dotN, o.dotN)
	set(&k.dotRows, o.dotRows)
	set(&k.dotRowsN, o.dotRowsN)
}

// set sets *dst to f unless f is nil.
func set[F kernelFunc](dst *F, f F) {
	if f != nil {
		*dst = f
	}
}

// kernelFunc is the signature of any kernel of the tables.
type kernelFunc interface {
	func([]float32, []byte) | func([]byte, []float32) | func(int, []byte, []byte) float32 |
		func(int, []byte, [][]byte, []float32) | func(int, []byte, []byte, []float32) |
		func(int, []byte, [][]byte, [][]float32, int)
}
