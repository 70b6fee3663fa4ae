package gateway

import (
	"slices"
	"strings"
	"testing"
)

func TestParseConfigServer(t *testing.T) {
	data := []byte(`{"servers": {
		"a": {"command": "x", "args": ["serve"], "envFile": ".env"},
		"bad": {"args": []}, // no command
		"off": {"command": "y", "disabled": true},
	}}`)
	names, err := ConfigServerNames(data)
	if err != nil || !slices.Equal(names, []string{"a", "bad", "off"}) {
		t.Fatalf("names %q, %v", names, err)
	}
	cfg, err := ParseConfigServer(data, "a", nil)
	if err != nil || len(cfg.Backends) != 1 || cfg.Backends[0].Command != "x" || cfg.Backends[0].EnvFile != ".env" {
		t.Fatalf("a: %+v, %v", cfg, err)
	}
	for name, want := range map[string]string{
		"bad":  `backend "bad": key "command": missing`,
		"off":  `backend "off": key "disabled": the server is disabled in this file`,
		"nope": `key "servers": no server "nope"`,
	} {
		if _, err := ParseConfigServer(data, name, nil); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
	if _, err := ConfigServerNames([]byte(`{"mcpServers": [`)); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a syntax error: %v", err)
	}
}
