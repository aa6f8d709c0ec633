//go:build !amd64

package quant

// Q6_K's order on this platform: ggml's generic order (q6_k_order_amd64.go
// says why amd64 differs).
var (
	q6KOrderRef     = dotQ6_KRef
	dotQ6_KPortable = dotQ6_KGo
)
