// Package engine runs Llama-architecture GGUF models (llama, qwen2, phi3):
// it loads a parsed file (package gguf) into a read-only Model, and runs
// conversations on it in Sessions, each with its own fp16 KV cache.
//
// A token's way from the command line to the logits, in reading order:
//
//   - wasm/cli/run.go: the CLI opens the file (gguf.Open), loads it
//     (LoadWith), tokenizes the prompt or the chat (EncodeChat, chat.go) and
//     calls Session.Generate.
//   - model.go, config.go: LoadWith reads the hyperparameters (Config, one
//     archSpec per architecture) and views every weight matrix in the file
//     without copying; validate.go refuses NaN or infinite weights.
//   - session.go: NewSession makes every buffer the per-token path uses.
//   - generate.go: Generate prefills the prompt, then samples (package
//     sample), constrained by a grammar or JSON mode (package grammar) if
//     asked, one token at a time until a stop.
//   - forward.go: the one forward pass, over a batch of positions (a prompt
//     in batches of maxBatch; decoding is a batch of one): embeddings, then
//     per layer the norms (ops.go), q/k/v, RoPE and the KV-cache store,
//     attention (attention.go), the output projection, the SwiGLU FFN, and
//     the final norm and output matrix.
//   - products.go: every matrix product of that pass is one products.run over
//     a named group of matrices (q/k/v, gate/up), on the session's pool
//     (pool.go) and, in a model split over instances, its peers (shard.go).
//   - package quant: the kernels of each block format (quant/table.go and the
//     per-platform tables kernels_amd64.go, kernels_wasm.go) compute the dots.
//
// Beside that path: kvfile.go saves and restores a session's KV cache (the
// CLI's --cache); embed.go pools hidden states into embeddings (Session.Embed);
// logprobs.go reports each token's log probabilities; stop.go cuts text at
// stop sequences (Stopper).
package engine
