module github.com/picolm/picolm-wasm

go 1.27

require (
	github.com/andybalholm/brotli v1.2.0 // indirect
	github.com/syumai/workers v0.32.0 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/sys v0.50.0 // indirect
	honnef.co/go/js/dom/v2 v2.0.0-20231112215516-51f43a291193 // indirect
)
