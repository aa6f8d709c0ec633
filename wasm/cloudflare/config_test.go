//go:build !js

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestReadSettings(t *testing.T) {
	env := map[string]string{"MAX_TOKENS_CAP": "64", "CONTEXT": "128", "SESSIONS": "2", "MAX_BODY_BYTES": "1000", "MODEL_ID": "tiny"}
	s, err := readSettings(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	c := s.cfg
	if c.MaxTokensCap != 64 || c.Context != 128 || c.Sessions != 2 || c.MaxBodyBytes != 1000 || c.ModelID != "tiny" || c.ModelSource != "embedded" || s.modelMaxBytes != defaultModelMaxBytes {
		t.Errorf("%+v", s)
	}
	for _, bad := range []map[string]string{
		{"MAX_TOKENS_CAP": "lots"}, {"CONTEXT": "-1"}, {"SESSIONS": "0"}, {"MAX_BODY_BYTES": "1e6"},
		{"MODEL_R2_BUCKET": "MODELS"}, {"MODEL_URL": "https://x/m.gguf", "MODEL_R2_BUCKET": "B", "MODEL_R2_KEY": "k"},
	} {
		if _, err := readSettings(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	s, _ = readSettings(func(k string) string {
		return map[string]string{"MODEL_R2_BUCKET": "MODELS", "MODEL_R2_KEY": "m.gguf"}[k]
	})
	if s.cfg.ModelSource != "r2:MODELS/m.gguf" {
		t.Errorf("source %q", s.cfg.ModelSource)
	}
}

// TestVarsInStep checks that wrangler.toml's [vars] and config.capnp's text
// bindings configure the Worker the same way, and that readSettings accepts them.
func TestVarsInStep(t *testing.T) {
	toml, err := os.ReadFile("wrangler.toml")
	if err != nil {
		t.Fatal(err)
	}
	// [vars], and [env.free.vars] (the free-plan bundle: the same plus MODEL_URL).
	vars, freeVars := map[string]string{}, map[string]string{}
	var in map[string]string
	for _, line := range strings.Split(string(toml), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			in = map[string]map[string]string{"[vars]": vars, "[env.free.vars]": freeVars}[line]
			continue
		}
		if k, v, ok := strings.Cut(line, "="); in != nil && ok && !strings.HasPrefix(line, "#") {
			in[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	if freeVars["MODEL_URL"] == "" || len(freeVars) != len(vars)+1 {
		t.Errorf("[env.free.vars] %v: want [vars] %v and MODEL_URL", freeVars, vars)
	}
	for k, v := range vars {
		if freeVars[k] != v {
			t.Errorf("%s: [vars] %q, [env.free.vars] %q", k, v, freeVars[k])
		}
	}
	// Both bundles' workerd configs (config-free.capnp adds MODEL_URL, a
	// fromEnvironment binding, not text).
	for _, name := range []string{"config.capnp", "config-free.capnp"} {
		capnp, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		bindings := map[string]string{}
		for _, m := range regexp.MustCompile(`\(name = "([A-Z_]+)", text = "([^"]*)"\)`).FindAllStringSubmatch(string(capnp), -1) {
			bindings[m[1]] = m[2]
		}
		if len(vars) == 0 || len(vars) != len(bindings) {
			t.Fatalf("wrangler.toml vars %v, %s bindings %v", vars, name, bindings)
		}
		for k, v := range vars {
			if bindings[k] != v {
				t.Errorf("%s: wrangler.toml %q, %s %q", k, v, name, bindings[k])
			}
		}
	}
	if _, err := readSettings(func(k string) string { return vars[k] }); err != nil {
		t.Error(err)
	}
}
