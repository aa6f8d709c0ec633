package server

import (
	"encoding/json"
	"strconv"
)

// MaxJSONDepth is how deeply a request body may nest JSON arrays and objects,
// the body's own object being level 1. The deepest shape the API reads,
// messages[i].content[j], is level 4; 64 leaves room for anything a client
// sends in good faith.
//
// The limit is what keeps the Worker alive: encoding/json decodes nested
// values recursively, and under GOOS=js every Go call is a WebAssembly call
// on the JavaScript engine's own stack. A 9 KB body of 4,500 nested arrays
// overflowed that stack inside the decoder, which left the Go runtime
// unusable (issue 13). checkDepth refuses such a body in one linear pass,
// before anything recursive sees it.
const MaxJSONDepth = 64

// checkDepth scans body once, without recursion, and refuses it with a 400
// when its arrays and objects nest deeper than limit. Strings (and the
// brackets and escaped quotes in them) are skipped. The error names the
// top-level member the deep value is in, as param. Malformed JSON is left to
// the decoder: up to its first syntax error the text is a valid JSON prefix,
// so the depth counted here is the depth the decoder would reach.
func checkDepth(body []byte, limit int) *apiError {
	depth := 0
	var key []byte // the last top-level member name seen
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '"':
			start := i
			for i++; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' {
					i++
				}
			}
			if depth == 1 && isKey(body, i+1) {
				key = body[start:min(i+1, len(body))]
			}
		case '[', '{':
			depth++
			if depth > limit {
				name := memberName(key)
				where := ""
				if name != "" {
					where = " (in " + strconv.Quote(name) + ")"
				}
				return badRequest(name, "the request body nests JSON arrays and objects more than %d levels deep%s: the limit is %d levels", limit, where, limit)
			}
		case ']', '}':
			if depth--; depth < 0 {
				return nil
			}
		}
	}
	return nil
}

// isKey reports whether the string that ended just before body[i] is a
// member name: the next character that is not white space is a colon.
func isKey(body []byte, i int) bool {
	for ; i < len(body); i++ {
		switch body[i] {
		case ' ', '\t', '\n', '\r':
		case ':':
			return true
		default:
			return false
		}
	}
	return false
}

// memberName decodes a member name's JSON string literal (flat: nothing
// recursive); "" when it is not a well-formed string.
func memberName(lit []byte) string {
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return ""
	}
	return s
}
