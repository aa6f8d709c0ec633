//go:build js && wasm && !picolmfaults

package main

import "net/http"

// withFaults: the fault routes are only in the test bundle (faults_js.go).
func withFaults(h http.Handler) http.Handler { return h }
