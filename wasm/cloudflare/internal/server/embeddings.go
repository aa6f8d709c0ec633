package server

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/openai"
)

// maxEmbeddingInputs is the most inputs one embeddings request may have
// (OpenAI's limit).
const maxEmbeddingInputs = 2048

// embeddings answers POST /v1/embeddings: {"input", "model",
// "encoding_format", "dimensions", "user"}. input is a string, an array of
// strings, an array of token ids or an array of arrays of them; each is
// embedded on its own (BOS first for text, as for a prompt) with
// engine.Session.Embed: the model's pooling (Model.Pooling: mean unless the
// GGUF's <arch>.pooling_type says otherwise) of the final norm's output,
// L2-normalised.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	inputs, base64Out, aerr := s.parseEmbeddings(w, r)
	if aerr != nil {
		aerr.write(w)
		return
	}
	sess, err := s.pool.acquire(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "server_error", "", "unavailable", "no session: "+err.Error())
		return
	}
	defer s.pool.release(sess)
	s.active.Add(1)
	defer s.active.Add(-1)

	res := openai.Embeddings{Object: "list", Model: s.cfg.ModelID, Data: make([]openai.Embedding, len(inputs))}
	vec := make([]float32, s.m.Config.Dim)
	for i, toks := range inputs {
		if r.Context().Err() != nil {
			return
		}
		if err := sess.Embed(toks, vec); err != nil {
			writeError(w, http.StatusInternalServerError, "server_error", "", "embedding_failed", fmt.Sprintf("input %d: %v", i, err))
			return
		}
		e := openai.Embedding{Object: "embedding", Index: i}
		if base64Out {
			b := make([]byte, 4*len(vec))
			for k, v := range vec {
				binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(v))
			}
			e.Embedding = base64.StdEncoding.EncodeToString(b)
		} else {
			e.Embedding = append([]float32(nil), vec...)
		}
		res.Data[i] = e
		res.Usage.PromptTokens += len(toks)
	}
	res.Usage.TotalTokens = res.Usage.PromptTokens
	writeJSON(w, http.StatusOK, res)
}

// parseEmbeddings reads and checks an embeddings request: its inputs as
// token ids, and whether the vectors go out in base64.
func (s *Server) parseEmbeddings(w http.ResponseWriter, r *http.Request) ([][]int, bool, *apiError) {
	body, aerr := s.readBody(w, r)
	if aerr != nil {
		return nil, false, aerr
	}
	top, aerr := decodeBody(body)
	if aerr != nil {
		return nil, false, aerr
	}
	if aerr := top.only("input", "model", "encoding_format", "dimensions", "user"); aerr != nil {
		return nil, false, aerr
	}
	model, aerr := top.str("model")
	if aerr != nil {
		return nil, false, aerr
	}
	if model != nil && *model != "" && *model != s.cfg.ModelID {
		return nil, false, &apiError{http.StatusNotFound, "invalid_request_error", "model", "model_not_found",
			fmt.Sprintf("the model %q does not exist here; this Worker serves %q (GET /v1/models)", *model, s.cfg.ModelID)}
	}
	if _, aerr := top.str("user"); aerr != nil {
		return nil, false, aerr
	}
	base64Out := false
	format, aerr := top.str("encoding_format")
	if aerr != nil {
		return nil, false, aerr
	}
	if format != nil {
		switch *format {
		case "float":
		case "base64":
			base64Out = true
		default:
			return nil, false, badRequest("encoding_format", "encoding_format %q is not supported: use \"float\" or \"base64\"", *format)
		}
	}
	dims, aerr := top.intValue("dimensions")
	if aerr != nil {
		return nil, false, aerr
	}
	if dims != nil && *dims != s.m.Config.Dim {
		return nil, false, badRequest("dimensions", "dimensions must be %d, this model's embedding size (the vectors are not shortened)", s.m.Config.Dim)
	}
	if p, err := s.m.Pooling(); err != nil {
		code := "embeddings_not_supported"
		if !errors.Is(err, engine.ErrNoEmbedding) {
			code = ""
		}
		return nil, false, &apiError{http.StatusBadRequest, "invalid_request_error", "model", code,
			fmt.Sprintf("the model %q cannot make embeddings: %v (pooling %s)", s.cfg.ModelID, err, p)}
	}
	raw, ok := top.get("input")
	if !ok {
		return nil, false, badRequest("input", "input is required")
	}
	inputs, aerr := s.readInputs(raw)
	if aerr != nil {
		return nil, false, aerr
	}
	return inputs, base64Out, nil
}

// readInputs reads input: a string, an array of strings, an array of token
// ids, or an array of arrays of token ids.
func (s *Server) readInputs(raw json.RawMessage) ([][]int, *apiError) {
	tk := s.m.Tokenizer
	check := func(param string, toks []int) *apiError {
		if len(toks) == 0 {
			return badRequest(param, "%s is empty", param)
		}
		if len(toks) > s.cfg.Context {
			return &apiError{http.StatusBadRequest, "invalid_request_error", param, "context_length_exceeded",
				fmt.Sprintf("%s is %d tokens; this model's context holds %d", param, len(toks), s.cfg.Context)}
		}
		for _, t := range toks {
			if t < 0 || t >= s.m.Config.VocabSize {
				return badRequest(param, "%s: token id %d is outside the vocabulary (0 to %d)", param, t, s.m.Config.VocabSize-1)
			}
		}
		return nil
	}
	text := func(param, str string) ([]int, *apiError) {
		if str == "" {
			return nil, badRequest(param, "%s is an empty string", param)
		}
		toks := tk.Encode(str, true)
		return toks, check(param, toks)
	}
	switch raw[0] {
	case '"':
		var str string
		if json.Unmarshal(raw, &str) != nil {
			return nil, wrongType("input", raw, "a string")
		}
		toks, aerr := text("input", str)
		return [][]int{toks}, aerr
	case '[':
	default:
		return nil, wrongType("input", raw, "a string, an array of strings or an array of token ids")
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, badRequest("input", "malformed input array")
	}
	if len(items) == 0 {
		return nil, badRequest("input", "input is an empty array")
	}
	if len(items) > maxEmbeddingInputs {
		return nil, badRequest("input", "at most %d inputs are allowed (got %d)", maxEmbeddingInputs, len(items))
	}
	// An array of numbers is one input of token ids.
	if kindOf(items[0]) == "a number" {
		toks, aerr := tokenIDs("input", items)
		if aerr != nil {
			return nil, aerr
		}
		return [][]int{toks}, check("input", toks)
	}
	out := make([][]int, len(items))
	for i, it := range items {
		param := "input[" + strconv.Itoa(i) + "]"
		switch kindOf(it) {
		case "a string":
			var str string
			if json.Unmarshal(it, &str) != nil {
				return nil, wrongType(param, it, "a string")
			}
			toks, aerr := text(param, str)
			if aerr != nil {
				return nil, aerr
			}
			out[i] = toks
		case "an array":
			var ids []json.RawMessage
			if json.Unmarshal(it, &ids) != nil {
				return nil, wrongType(param, it, "an array of token ids")
			}
			toks, aerr := tokenIDs(param, ids)
			if aerr != nil {
				return nil, aerr
			}
			if aerr := check(param, toks); aerr != nil {
				return nil, aerr
			}
			out[i] = toks
		default:
			return nil, wrongType(param, it, "a string or an array of token ids")
		}
	}
	return out, nil
}

// tokenIDs reads an array of integers.
func tokenIDs(param string, items []json.RawMessage) ([]int, *apiError) {
	toks := make([]int, len(items))
	for i, it := range items {
		n, err := strconv.Atoi(string(it))
		if err != nil {
			return nil, wrongType(param+"["+strconv.Itoa(i)+"]", it, "a token id (an integer)")
		}
		toks[i] = n
	}
	return toks, nil
}
