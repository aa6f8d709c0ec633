// A module of its own so that the main module (go build ./..., go vet ./...,
// staticcheck ./...) and its users never need cgo or libwasmtime: only this
// runner, its tests, wasm/cli's wasmtime tests and the bench build it.
module github.com/picolm/picolm-wasm/scripts/wasmtime

go 1.27

require github.com/bytecodealliance/wasmtime-go/v39 v39.0.1
