package fault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// outKind is what a server wrote on one line.
type outKind int

const (
	outResponse outKind = iota + 1
	outNotification
	outRequest // servers may ask the client things (ping, sampling…)
)

// outMsg is one line of a server's output, checked and decoded.
type outMsg struct {
	kind    outKind
	id      json.RawMessage
	key     string // canonical id: what the campaign files answers under
	method  string
	result  json.RawMessage
	isError bool
	code    int // the error's code
}

// parseOut checks that line (without its '\n') is exactly one valid
// JSON-RPC 2.0 message that a server may send, and decodes it. Batches are
// refused: a campaign never sends one, so it is never owed one.
func parseOut(line []byte) (*outMsg, error) {
	if !utf8.Valid(line) {
		return nil, errors.New("not valid UTF-8")
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, errors.New("blank line")
	}
	if !json.Valid(line) {
		return nil, errors.New("not a single JSON value")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		return nil, errors.New("not a JSON object")
	}
	if string(obj["jsonrpc"]) != `"2.0"` {
		return nil, fmt.Errorf(`jsonrpc is %s, want "2.0"`, obj["jsonrpc"])
	}
	m := &outMsg{}
	if method, ok := obj["method"]; ok {
		if err := json.Unmarshal(method, &m.method); err != nil || method[0] != '"' {
			return nil, errors.New("method is not a string")
		}
		if p, ok := obj["params"]; ok && p[0] != '{' && p[0] != '[' {
			return nil, errors.New("params is neither an object nor an array")
		}
		m.kind = outNotification
		if id, ok := obj["id"]; ok {
			if !validID(id, false) {
				return nil, fmt.Errorf("request id %s is not a string or an integer", id)
			}
			m.kind, m.id, m.key = outRequest, id, idKey(id)
		}
		for k := range obj {
			if k != "jsonrpc" && k != "method" && k != "params" && k != "id" {
				return nil, fmt.Errorf("unexpected member %q", k)
			}
		}
		return m, nil
	}
	for k := range obj {
		if k != "jsonrpc" && k != "id" && k != "result" && k != "error" {
			return nil, fmt.Errorf("response has unexpected member %q", k)
		}
	}
	id, ok := obj["id"]
	if !ok {
		return nil, errors.New("response without id")
	}
	if !validID(id, true) {
		return nil, fmt.Errorf("response id %s is not a string, an integer or null", id)
	}
	m.kind, m.id, m.key = outResponse, id, idKey(id)
	res, hasRes := obj["result"]
	e, hasErr := obj["error"]
	if hasRes == hasErr {
		return nil, errors.New("response needs exactly one of result and error")
	}
	if hasRes {
		if res[0] != '{' {
			return nil, errors.New("result is not an object")
		}
		m.result = res
		return m, nil
	}
	if err := checkErrorObject(e); err != nil {
		return nil, err
	}
	m.isError = true
	var eobj struct {
		Code int `json:"code"`
	}
	_ = json.Unmarshal(e, &eobj)
	m.code = eobj.Code
	return m, nil
}

func checkErrorObject(raw json.RawMessage) error {
	var eobj map[string]json.RawMessage
	if json.Unmarshal(raw, &eobj) != nil || eobj == nil {
		return errors.New("error is not an object")
	}
	for k := range eobj {
		if k != "code" && k != "message" && k != "data" {
			return fmt.Errorf("error has unexpected member %q", k)
		}
	}
	code := eobj["code"]
	if code == nil || !(code[0] == '-' || (code[0] >= '0' && code[0] <= '9')) || bytes.ContainsAny(code, ".eE") {
		return fmt.Errorf("error code %s is not an integer", code)
	}
	if msg := eobj["message"]; msg == nil || msg[0] != '"' {
		return errors.New("error message is not a string")
	}
	return nil
}

// validID accepts a JSON string or integer, and null where allowNull (a
// response to a message whose id could not be read).
func validID(id json.RawMessage, allowNull bool) bool {
	switch c := id[0]; {
	case c == '"':
		return true // json.Valid has checked the string
	case c == 'n':
		return allowNull
	case c == '-' || (c >= '0' && c <= '9'):
		return !bytes.ContainsAny(id, ".eE")
	}
	return false
}

// idKey files an id by value, not spelling: "a\u0062" is the id "ab".
func idKey(id json.RawMessage) string {
	if id[0] == '"' {
		var s string
		_ = json.Unmarshal(id, &s)
		return "s:" + s
	}
	return "n:" + string(id)
}

// isToolError reports whether a tools/call result has isError set.
func isToolError(result json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(result, &r) == nil && r.IsError
}

// echoText returns the text of a tools/call result holding one text block.
func echoText(result json.RawMessage) (string, error) {
	var r struct {
		Content []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return "", err
	}
	if r.IsError {
		return "", errors.New("isError result")
	}
	for _, c := range r.Content {
		if c.Type == "text" && c.Text != nil {
			return *c.Text, nil
		}
	}
	return "", errors.New("no text block")
}
