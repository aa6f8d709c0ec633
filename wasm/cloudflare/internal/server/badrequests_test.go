package server

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/apitest"
)

// badRequestCase is one case of testdata/bad-requests.json: a request body
// for an endpoint ("chat" or "completions") that must be refused with a 400
// invalid_request_error naming param, with exactly this message. The browser
// JS API runs the same table (web/test/openai.test.mjs): the same bad input
// gets the same param and message from both.
type badRequestCase struct {
	Endpoint string          `json:"endpoint"`
	Body     json.RawMessage `json:"body"`
	Param    string          `json:"param"`
	Message  string          `json:"message"`
}

func TestBadRequestTable(t *testing.T) {
	b, err := os.ReadFile("testdata/bad-requests.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []badRequestCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Fatalf("%d cases", len(cases))
	}
	s, _ := newServer(t, Config{})
	for _, c := range cases {
		path := map[string]string{"chat": "/v1/chat/completions", "completions": "/v1/completions"}[c.Endpoint]
		if path == "" {
			t.Fatalf("%s: unknown endpoint %q", c.Body, c.Endpoint)
		}
		w := do(t, s, "POST", path, string(c.Body))
		if w.Code != 400 {
			t.Errorf("%s %s: status %d: %s", c.Endpoint, c.Body, w.Code, w.Body)
			continue
		}
		e, err := apitest.DecodeError(w.Body.Bytes())
		if err != nil {
			t.Errorf("%s %s: %v", c.Endpoint, c.Body, err)
			continue
		}
		if e.Error.Type != "invalid_request_error" || e.Param() != c.Param || e.Error.Message != c.Message {
			t.Errorf("%s %s:\n got %s %q: %s\nwant %q: %s", c.Endpoint, c.Body, e.Error.Type, e.Param(), e.Error.Message, c.Param, c.Message)
		}
	}
}
