package skills

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/skillmd"
)

const pdfSkill = "---\nname: pdf\ndescription: Works with PDF files.\nmetadata:\n  author: t\n---\n\nRead FORMS.md.\n"

func tree() fstest.MapFS {
	return fstest.MapFS{
		"pdf/SKILL.md":               {Data: []byte(pdfSkill)},
		"pdf/references/FORMS.md":    {Data: []byte("# Forms\n")},
		"pdf/logo.png":               {Data: []byte{0x89, 'P', 'N', 'G', 0}},
		"acme/git/SKILL.md":          {Data: []byte("---\nname: git\ndescription: \"Git: safely.\"\n---\nbody\n")},
		"not-a-skill/notes.txt":      {Data: []byte("stray")},
		"acme/git/scripts/undo.sh":   {Data: []byte("git reflog\n")},
		"acme/git/scripts/deep/x.md": {Data: []byte("x")},
	}
}

// call runs a method of srv as the session would, and returns its result
// as JSON or its protocol error.
func call(t *testing.T, srv *handlers.Server, method, params string) (string, *jsonrpc.Error) {
	t.Helper()
	m, ok := srv.Method(method)
	if !ok {
		t.Fatalf("%s is not served", method)
	}
	res, err := m.Run(context.Background(), &handlers.Request{Method: method, Params: json.RawMessage(params), Version: "2026-07-28", Modern: true})
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return "", je
	}
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	b, _ := json.Marshal(res)
	return string(b), nil
}

// TestServe: what a host sees of a skills tree: the extension declared
// with directoryRead; each skill's entry (its SKILL.md's URI, the
// frontmatter as JSON, every file once with its digest and size, sorted);
// the SKILL.md listed as a resource and every file readable; directories
// listed with subdirectories as inode/directory; unknown skills and
// directories refused with -32602.
func TestServe(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	c, err := read(tree(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.register(srv)
	ext, _ := json.Marshal(srv.Capabilities()["extensions"])
	if string(ext) != `{"io.modelcontextprotocol/skills":{"directoryRead":true}}` {
		t.Errorf("extensions %s", ext)
	}
	entries := c.skills()
	if len(entries) != 2 || entries[0].URI != "skill://acme/git/SKILL.md" || entries[1].URI != "skill://pdf/SKILL.md" {
		t.Fatalf("skills %+v", entries)
	}
	pdf := entries[1]
	if string(pdf.Frontmatter) != `{"description":"Works with PDF files.","metadata":{"author":"t"},"name":"pdf"}` {
		t.Errorf("frontmatter %s", pdf.Frontmatter)
	}
	var uris []string
	for _, f := range pdf.Resources {
		uris = append(uris, f.URI)
	}
	if strings.Join(uris, " ") != "skill://pdf/SKILL.md skill://pdf/logo.png skill://pdf/references/FORMS.md" {
		t.Errorf("resources %v", uris)
	}
	if f := pdf.Resources[0]; f.Digest != skillmd.Digest([]byte(pdfSkill)) || f.Size != int64(len(pdfSkill)) {
		t.Errorf("SKILL.md entry %+v", f)
	}

	list, _ := call(t, srv, "skills/list", `{}`)
	if !strings.Contains(list, `"ttlMs":0`) || !strings.Contains(list, `"cacheScope":"public"`) || strings.Contains(list, "nextCursor") {
		t.Errorf("skills/list %s", list)
	}
	if got, _ := call(t, srv, "skills/get", `{"uri":"skill://pdf/SKILL.md"}`); !strings.Contains(got, `"skill":{"uri":"skill://pdf/SKILL.md"`) {
		t.Errorf("skills/get %s", got)
	}
	for _, p := range []string{`{"uri":"skill://pdf/FORMS.md"}`, `{}`} {
		if _, je := call(t, srv, "skills/get", p); je == nil || je.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("skills/get %s: %v", p, je)
		}
	}

	if got, _ := call(t, srv, "resources/list", `{}`); !strings.Contains(got, `"uri":"skill://pdf/SKILL.md","name":"pdf","description":"Works with PDF files.","mimeType":"text/markdown"`) {
		t.Errorf("resources/list %s", got)
	}
	for uri, want := range map[string]string{
		"skill://pdf/SKILL.md":            `"text":"---\nname: pdf`,
		"skill://pdf/references/FORMS.md": `"mimeType":"text/markdown","text":"# Forms\n"`,
		"skill://pdf/logo.png":            `"mimeType":"image/png","blob":"iVBORwA="`,
	} {
		got, je := call(t, srv, "resources/read", `{"uri":"`+uri+`"}`)
		if je != nil || !strings.Contains(got, strings.ReplaceAll(want, "\n", `\n`)) {
			t.Errorf("read %s: %s %v", uri, got, je)
		}
	}
	if _, je := call(t, srv, "resources/read", `{"uri":"skill://not-a-skill/notes.txt"}`); je == nil {
		t.Error("a file outside every skill was read")
	}

	dir, je := call(t, srv, "resources/directory/read", `{"uri":"skill://acme/git"}`)
	if je != nil || !strings.Contains(dir, `{"uri":"skill://acme/git/scripts","name":"scripts","mimeType":"inode/directory"}`) ||
		!strings.Contains(dir, `{"uri":"skill://acme/git/SKILL.md","name":"SKILL.md","mimeType":"text/markdown","size":`) {
		t.Errorf("directory %s %v", dir, je)
	}
	for _, p := range []string{`{"uri":"skill://acme/git/SKILL.md"}`, `{"uri":"skill://acme"}`, `{"uri":"skill://acme/git","cursor":"nonsense!"}`} {
		if _, je := call(t, srv, "resources/directory/read", p); je == nil || je.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("directory read %s: %v", p, je)
		}
	}
}

// TestListPages: skills/list pages by URI, never splitting an entry.
func TestListPages(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	if err := Serve(srv, tree(), Options{PageSize: 1, TTL: 60e9, Scope: "private"}); err != nil {
		t.Fatal(err)
	}
	var seen []string
	params := `{}`
	for range 3 {
		got, je := call(t, srv, "skills/list", params)
		if je != nil {
			t.Fatal(je)
		}
		var page struct {
			Skills     []entry
			NextCursor string
			TTLMs      int64  `json:"ttlMs"`
			CacheScope string `json:"cacheScope"`
		}
		json.Unmarshal([]byte(got), &page)
		if len(page.Skills) != 1 || page.TTLMs != 60000 || page.CacheScope != "private" {
			t.Fatalf("page %s", got)
		}
		seen = append(seen, page.Skills[0].URI)
		if page.NextCursor == "" {
			break
		}
		params = `{"cursor":"` + page.NextCursor + `"}`
	}
	if strings.Join(seen, " ") != "skill://acme/git/SKILL.md skill://pdf/SKILL.md" {
		t.Errorf("pages %v", seen)
	}
}

// TestRefused: skills that break a rule are Serve's error, not left out.
func TestRefused(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"name not the directory's": {"pdf/SKILL.md": {Data: []byte("---\nname: other\ndescription: d\n---\n")}},
		"bad name":                 {"PDF/SKILL.md": {Data: []byte("---\nname: PDF\ndescription: d\n---\n")}},
		"no description":           {"pdf/SKILL.md": {Data: []byte("---\nname: pdf\n---\n")}},
		"no frontmatter":           {"pdf/SKILL.md": {Data: []byte("# pdf\n")}},
		"at the root":              {"SKILL.md": {Data: []byte("---\nname: x\ndescription: d\n---\n")}},
		"reserved metadata":        {"pdf/SKILL.md": {Data: []byte("---\nname: pdf\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: y\n---\n")}},
		"nested": {
			"pdf/SKILL.md":       {Data: []byte("---\nname: pdf\ndescription: d\n---\n")},
			"pdf/inner/SKILL.md": {Data: []byte("---\nname: inner\ndescription: d\n---\n")},
		},
		"too big": {
			"pdf/SKILL.md": {Data: []byte("---\nname: pdf\ndescription: d\n---\n")},
			"pdf/big.bin":  {Data: make([]byte, maxBytes)},
		},
	} {
		if _, err := read(fsys, Options{}); err == nil {
			t.Errorf("%s: served", name)
		}
	}
}
