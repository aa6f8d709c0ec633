module github.com/picolm/picolm-wasm

go 1.27

toolchain go1.27.3

require (
	github.com/andybalholm/brotli v1.2.0
	github.com/syumai/workers v0.32.0
	github.com/tetratelabs/wazero v1.12.0
	honnef.co/go/js/dom/v2 v2.0.0-20231112215516-51f43a291193
)

require golang.org/x/sys v0.50.0 // indirect
