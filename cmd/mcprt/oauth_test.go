package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/runtime"
)

// TestOAuthFlagsUsage: -http-oauth-* flags that cannot work are usage
// errors (2) said at once, before anything is bound or fetched, for both
// verbs that serve; an issuer that cannot be reached is a failure (1).
func TestOAuthFlagsUsage(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("tok"), 0o600)
	creds := filepath.Join(dir, "creds.json")
	os.WriteFile(creds, []byte(`{"client_id":"a"}`), 0o600)
	goodCreds := filepath.Join(dir, "good.json")
	os.WriteFile(goodCreds, []byte(`{"client_id":"a","client_secret":"b"}`), 0o600)
	gwConfig := filepath.Join(dir, "gw.json")
	os.WriteFile(gwConfig, []byte(`{"mcpServers":{"a":{"command":"true"}}}`), 0o600)
	const iss, res = "https://127.0.0.1:1", "https://mcp.example.com/mcp"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-http-oauth-resource", res}, runtime.ExitUsage, "need -http-oauth-issuer"},
		{[]string{"-http-oauth-scopes", "a"}, runtime.ExitUsage, "need -http-oauth-issuer"},
		{[]string{"-http-oauth-issuer", iss}, runtime.ExitUsage, "needs -http-oauth-resource"},
		{[]string{"-http-oauth-issuer", "http://auth.example.com", "-http-oauth-resource", res}, runtime.ExitUsage, "must be https"},
		{[]string{"-http-oauth-issuer", iss, "-http-oauth-resource", "mcp.example.com"}, runtime.ExitUsage, "absolute https URL"},
		{[]string{"-http-oauth-issuer", iss, "-http-oauth-resource", res, "-http-oauth-scopes", `a"b`}, runtime.ExitUsage, "not a scope token"},
		{[]string{"-http-oauth-issuer", iss, "-http-oauth-resource", res, "-http-token-file", tokenFile}, runtime.ExitUsage, "choose one"},
		{[]string{"-http-oauth-issuer", iss, "-http-oauth-resource", res, "-http-oauth-introspection-client", creds}, runtime.ExitUsage, "client_secret"},
		{[]string{"-http-oauth-issuer", iss, "-http-oauth-resource", res}, runtime.ExitFailure, "no authorization server metadata"},
		{[]string{"-http-oauth-introspection-endpoint", iss + "/introspect"}, runtime.ExitUsage, "need -http-oauth-issuer"},
		// The password is not said back (issue 31 item 11).
		{[]string{"-http-oauth-issuer", "https://admin:hunter2@auth.example.com", "-http-oauth-resource", res}, runtime.ExitUsage, `issuer "https://auth.example.com": user info not allowed`},
		{[]string{"-http-oauth-issuer", iss, "-http-oauth-resource", res, "-http-oauth-introspection-endpoint", iss + "/i"}, runtime.ExitUsage, "needs -http-oauth-introspection-client"},
		{[]string{"-http-oauth-issuer", iss, "-http-oauth-resource", res, "-http-oauth-introspection-client", goodCreds, "-http-oauth-introspection-endpoint", "http://auth.example.com/i"}, runtime.ExitUsage, "must be https"},
	} {
		for _, verb := range [][]string{{"serve"}, {"gateway", "-config", gwConfig}} {
			args := append(append(append([]string{}, verb...), "-http", "127.0.0.1:0"), tc.args...)
			_, errs, code := runMcprt(args...)
			if code != tc.code || !strings.Contains(errs, tc.want) || strings.Contains(errs, "hunter2") {
				t.Errorf("mcprt %s: exit %d, stderr %q; want %d and %q", strings.Join(args, " "), code, errs, tc.code, tc.want)
			}
		}
	}
}
