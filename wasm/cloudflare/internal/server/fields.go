package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A request body is read one object at a time: object holds one JSON
// object's members, undecoded, so that every member can be checked against
// the fields the API knows (fieldSpecs) and read with the type it must have.
// A field that is absent and one that is null are the same: not given.
type object struct {
	path string // where the object is in the request: "" (the body), "stream_options", "messages[2]", ...
	m    map[string]json.RawMessage
}

// asObject decodes raw as a JSON object found at path. ok is false for
// absent and null.
func asObject(raw json.RawMessage, path string) (o object, ok bool, aerr *apiError) {
	if isNull(raw) {
		return object{path: path}, false, nil
	}
	if raw[0] != '{' {
		return o, false, wrongType(path, raw, "an object")
	}
	o = object{path: path}
	if err := json.Unmarshal(raw, &o.m); err != nil {
		return o, false, badRequest(path, "malformed JSON in %s: %v", path, err)
	}
	return o, true, nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// param is the name of member name, as an OpenAI error's param.
func (o object) param(name string) string {
	if o.path == "" {
		return name
	}
	return o.path + "." + name
}

// get returns member name, unless it is absent or null.
func (o object) get(name string) (json.RawMessage, bool) {
	raw, ok := o.m[name]
	if !ok || isNull(raw) {
		return nil, false
	}
	return raw, true
}

// names returns the object's member names, sorted: errors come in a
// deterministic order.
func (o object) names() []string {
	names := make([]string, 0, len(o.m))
	for k := range o.m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// only refuses a member of o that is not one of known.
func (o object) only(known ...string) *apiError {
	for _, k := range o.names() {
		if !slices.Contains(known, k) {
			return unknownField(o.param(k))
		}
	}
	return nil
}

func unknownField(param string) *apiError {
	return badRequest(param, "unknown field %s: this API does not implement it", param)
}

// kindOf names the JSON type of a value, for error messages.
func kindOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func wrongType(param string, raw json.RawMessage, want string) *apiError {
	return badRequest(param, "wrong type for %s: got %s, want %s", param, kindOf(raw), want)
}

// scalar reads member name as a T, a JSON value of kind (kindOf).
func scalar[T any](o object, name, kind string) (*T, *apiError) {
	raw, ok := o.get(name)
	if !ok {
		return nil, nil
	}
	var v T
	if kindOf(raw) != kind || json.Unmarshal(raw, &v) != nil {
		return nil, wrongType(o.param(name), raw, kind)
	}
	return &v, nil
}

func (o object) str(name string) (*string, *apiError) { return scalar[string](o, name, "a string") }

func (o object) boolean(name string) (*bool, *apiError) { return scalar[bool](o, name, "a boolean") }

// member reads member name as an object (ok false: not given) whose
// members are among known and pass checks.
func (o object) member(name string, known []string, checks ...namedCheck) (v object, ok bool, aerr *apiError) {
	raw, _ := o.get(name)
	v, ok, aerr = asObject(raw, o.param(name))
	if ok && aerr == nil {
		aerr = v.only(known...)
	}
	if ok && aerr == nil {
		aerr = v.checkGiven(checks...)
	}
	return v, ok, aerr
}

// subField reads member field of the object member name as a T, a JSON
// value of kind; the object's members must be among known and pass checks.
// given reports whether the object was.
func subField[T any](o object, name, field, kind string, known []string, checks ...namedCheck) (given bool, v *T, aerr *apiError) {
	sub, given, aerr := o.member(name, known, checks...)
	if given && aerr == nil {
		v, aerr = scalar[T](sub, field, kind)
	}
	return given, v, aerr
}

// namedCheck is the check of one member.
type namedCheck struct {
	name  string
	check check
}

// checkGiven runs the checks of the members that are given.
func (o object) checkGiven(checks ...namedCheck) *apiError {
	for _, c := range checks {
		if _, given := o.get(c.name); given {
			if aerr := c.check(o, c.name); aerr != nil {
				return aerr
			}
		}
	}
	return nil
}

// float reads member name, a JSON number, as a float64 (±Inf when too
// large for one); want names the type the member must have, for errors.
func (o object) float(name, want string) (json.RawMessage, *float64, *apiError) {
	raw, ok := o.get(name)
	if !ok {
		return nil, nil, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if kindOf(raw) != "a number" || (err != nil && !isRange(err)) {
		return raw, nil, wrongType(o.param(name), raw, want)
	}
	return raw, &f, nil
}

// number reads a JSON number as a float64. One too large for a float64
// (1e309) is out of range; one too small (1e-400) is 0, as in JSON parsers
// everywhere.
func (o object) number(name string) (*float64, *apiError) {
	raw, f, aerr := o.float(name, "a number")
	if f != nil && math.IsInf(*f, 0) {
		return nil, badRequest(o.param(name), "%s: %s is out of range: a number here must be within ±1.8e308 (a float64)", o.param(name), clip(raw))
	}
	return f, aerr
}

// integer reads a JSON number that is a whole number: 3, -7, 1e3 and 2.0
// are, 1.5 is not. One outside the 64-bit range is out of range.
func (o object) integer(name string) (*int64, *apiError) {
	raw, f, aerr := o.float(name, "an integer")
	if f == nil {
		return nil, aerr
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return &n, nil // exact, beyond float64's 2^53 too
	}
	if !math.IsInf(*f, 0) && *f != math.Trunc(*f) {
		return nil, badRequest(o.param(name), "%s must be an integer, not %s", o.param(name), clip(raw))
	}
	if math.IsInf(*f, 0) || *f < math.MinInt64 || *f >= math.MaxInt64 {
		return nil, badRequest(o.param(name), "%s: %s is out of range: an integer here must fit in 64 bits (±9.2e18)", o.param(name), clip(raw))
	}
	n := int64(*f)
	return &n, nil
}

// intValue reads an integer that must fit in an int.
func (o object) intValue(name string) (*int, *apiError) {
	n, aerr := o.integer(name)
	if n == nil || aerr != nil {
		return nil, aerr
	}
	if int64(int(*n)) != *n {
		return nil, badRequest(o.param(name), "%s: %d is out of range", o.param(name), *n)
	}
	v := int(*n)
	return &v, nil
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// clip shortens a number's text for an error message.
func clip(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:37]) + "..."
	}
	return string(raw)
}

// The fields of the two request bodies. A field is either implemented (parse
// reads it) or one OpenAI defines that this API does not implement, with the
// values that ask for nothing this server leaves undone: those are accepted
// (a client library that sends a field's default works), every other value
// is refused with a 400 naming the field and saying why. A field this table
// does not know, or one of the other endpoint's, is refused too.
type fieldSpec struct {
	chat, completions bool // the endpoints that take it
	// harmless checks a field that is not implemented; nil for one parse reads.
	harmless check
}

// A check refuses a given (not null) member's value.
type check func(o object, name string) *apiError

const (
	noFunctions = "the deprecated functions API is not implemented: use tools"
	noStore     = "this server stores no completions"
)

var fieldSpecs = map[string]fieldSpec{
	// Implemented, on both endpoints (top_k and min_p are llama.cpp's
	// extensions, response_format on completions is ours).
	"model":           {true, true, nil},
	"max_tokens":      {true, true, nil},
	"temperature":     {true, true, nil},
	"top_p":           {true, true, nil},
	"top_k":           {true, true, nil},
	"min_p":           {true, true, nil},
	"seed":            {true, true, nil},
	"stop":            {true, true, nil},
	"stream":          {true, true, nil},
	"stream_options":  {true, true, nil},
	"response_format": {true, true, nil},
	"n":               {true, true, nil},
	"grammar":         {true, true, nil}, // extension (llama.cpp server): a GBNF grammar
	// Implemented on one endpoint.
	"prompt":                {false, true, nil},
	"messages":              {true, false, nil},
	"max_completion_tokens": {true, false, nil},
	"top_logprobs":          {true, false, nil},
	"tools":                 {true, false, nil},
	"tool_choice":           {true, false, nil},
	"parallel_tool_calls":   {true, false, nil},

	// Not implemented: the harmless values.
	"frequency_penalty": {true, true, zeroPenalty},
	"presence_penalty":  {true, true, zeroPenalty},
	"logit_bias":        {true, true, emptyObject("the sampler takes no logit biases")},
	"user":              {true, true, anyString}, // an end-user id for abuse monitoring
	// logprobs is on both: a boolean for chat, an integer (the
	// alternatives per token) for completions.
	"logprobs": {true, true, nil},
	// Completions only.
	"best_of": {false, true, oneOnly("one candidate is generated per request")},
	"echo":    {false, true, falseOnly("the prompt is not echoed")},
	"suffix":  {false, true, emptyString("there is no insertion mode")},
	// Chat only.
	"functions":          {true, false, emptyArray(noFunctions)},
	"function_call":      {true, false, noneOrAuto},
	"store":              {true, false, falseOnly(noStore)},
	"metadata":           {true, false, stringMap}, // tags for stored completions; none are stored
	"service_tier":       {true, false, oneOf("there is one service tier", "auto", "default")},
	"modalities":         {true, false, textModality},
	"audio":              {true, false, nullOnly("there is no audio output")},
	"prediction":         {true, false, nullOnly("there are no predicted outputs")},
	"reasoning_effort":   {true, false, nullOnly("the model does not reason")},
	"verbosity":          {true, false, nullOnly("the model has no verbosity setting")},
	"web_search_options": {true, false, nullOnly("there is no web search")},
	"prompt_cache_key":   {true, false, anyString}, // a cache routing hint; sessions already reuse prompts
	"safety_identifier":  {true, false, anyString},
}

// checkFields refuses a member of the body that the endpoint does not take,
// and a value of a field it does not implement that is not harmless.
func checkFields(o object, chat bool) *apiError {
	for _, name := range o.names() {
		spec, known := fieldSpecs[name]
		if !known {
			return unknownField(name)
		}
		if _, given := o.get(name); !given {
			continue // null is not given, on any endpoint
		}
		switch {
		case chat && !spec.chat:
			if name == "prompt" {
				return badRequest("prompt", "chat completions take messages, not prompt")
			}
			return badRequest(name, "%s is a completions field: chat completions do not take it", name)
		case !chat && !spec.completions:
			switch name {
			case "messages":
				return badRequest("messages", "completions take prompt, not messages (use chat completions)")
			case "max_completion_tokens":
				return badRequest(name, "max_completion_tokens is a chat completions field: completions take max_tokens")
			}
			return badRequest(name, "%s is a chat completions field: completions do not take it", name)
		}
		if c := spec.harmless; c != nil {
			if aerr := c(o, name); aerr != nil {
				return aerr
			}
		}
	}
	return nil
}

// notSupported refuses param's value: why, and what may be sent instead.
func notSupported(param, why, instead string) *apiError {
	return badRequest(param, "%s is not supported: %s (send %s or leave it out)", param, why, instead)
}

func nullOnly(why string) check {
	return func(o object, name string) *apiError { return notSupported(o.param(name), why, "null") }
}

func anyString(o object, name string) *apiError {
	_, aerr := o.str(name)
	return aerr
}

// onlyValue accepts a member whose value, as read, is harmless.
func onlyValue[T comparable](read func(object, string) (*T, *apiError), harmless T, why, instead string) check {
	return func(o object, name string) *apiError {
		v, aerr := read(o, name)
		if aerr == nil && *v != harmless {
			aerr = notSupported(o.param(name), why, instead)
		}
		return aerr
	}
}

func falseOnly(why string) check { return onlyValue(object.boolean, false, why, "false") }

func oneOnly(why string) check { return onlyValue(object.integer, 1, why, "1") }

func emptyString(why string) check { return onlyValue(object.str, "", why, `""`) }

func zeroPenalty(o object, name string) *apiError {
	f, aerr := o.number(name)
	if aerr != nil {
		return aerr
	}
	if *f < -2 || *f > 2 {
		return badRequest(o.param(name), "%s must be between -2 and 2", o.param(name))
	}
	if *f != 0 {
		return notSupported(o.param(name), "the sampler has no penalties", "0")
	}
	return nil
}

func emptyObject(why string) check {
	return func(o object, name string) *apiError {
		raw, _ := o.get(name)
		v, _, aerr := asObject(raw, o.param(name))
		if aerr == nil && len(v.m) > 0 {
			aerr = notSupported(o.param(name), why, "{}")
		}
		return aerr
	}
}

func emptyArray(why string) check {
	return func(o object, name string) *apiError {
		raw, _ := o.get(name)
		if raw[0] != '[' {
			return wrongType(o.param(name), raw, "an array")
		}
		if !bytes.Equal(bytes.Join(bytes.Fields(raw), nil), []byte("[]")) {
			return notSupported(o.param(name), why, "[]")
		}
		return nil
	}
}

func noneOrAuto(o object, name string) *apiError {
	raw, _ := o.get(name)
	if raw[0] == '{' {
		return notSupported(o.param(name), noFunctions, `"none"`)
	}
	return oneOf(noFunctions, "none", "auto")(o, name)
}

func oneOf(why string, values ...string) check {
	return func(o object, name string) *apiError {
		s, aerr := o.str(name)
		if aerr == nil && !slices.Contains(values, *s) {
			aerr = notSupported(o.param(name), fmt.Sprintf("%s (got %q)", why, *s), strings.Join(quoted(values), " or "))
		}
		return aerr
	}
}

func quoted(values []string) []string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return q
}

func stringMap(o object, name string) *apiError {
	raw, _ := o.get(name)
	v, _, aerr := asObject(raw, o.param(name))
	if aerr != nil {
		return aerr
	}
	for _, k := range v.names() {
		if _, aerr := v.str(k); aerr != nil {
			return aerr
		}
	}
	return nil
}

func textModality(o object, name string) *apiError {
	raw, _ := o.get(name)
	var mods []string
	if raw[0] != '[' || json.Unmarshal(raw, &mods) != nil {
		return wrongType(o.param(name), raw, "an array of strings")
	}
	for _, m := range mods {
		if m != "text" {
			return notSupported(o.param(name), "text is the only output", `["text"]`)
		}
	}
	return nil
}
