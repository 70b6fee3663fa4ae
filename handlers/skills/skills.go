// Package skills serves Agent Skills over MCP: the skills extension
// (io.modelcontextprotocol/skills, SEP-2640). A skill is a directory
// holding a SKILL.md (YAML frontmatter with its name and description, then
// instructions) and any files beside it; Serve reads every skill of a file
// system and offers them on a handlers.Server:
//
//   - skills/list and skills/get return a skill's entry: the URI of its
//     SKILL.md (skill://<path>/SKILL.md), its frontmatter as JSON,
//     verbatim, and every file with its SHA-256 digest and size, which a
//     host verifies what it reads against;
//   - the files are resources: each SKILL.md is listed (text/markdown),
//     the others are read through the template skill://{+path};
//   - resources/directory/read lists a skill directory's children
//     (subdirectories as inode/directory), which the capability declares
//     (directoryRead).
//
// The catalog is read once, by Serve: skills are files a server ships,
// not state. What breaks a rule of the extension or of Agent Skills (a
// name that is not the directory's, a frontmatter the YAML subset of
// skillmd cannot read, more than 512 files or 16 MiB in a skill) is an
// error from Serve, not a skill left out quietly.
package skills

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/skillmd"
)

// Identifiers of the extension (its own id is mcp.SkillsExtension, which
// the client reads too).
const (
	directoryMIMEType = "inode/directory"
	// maxFiles and maxBytes are what a skill may hold (its SKILL.md
	// included): hosts may decline more.
	maxFiles = 512
	maxBytes = 16 << 20
)

// Options adjust a catalog. The zero value is ready to use.
type Options struct {
	// TTL is the ttlMs of skills/list, skills/get and directory results:
	// how long a host may keep them (0: do not cache). Scope is their
	// cacheScope, "public" (default) or "private".
	TTL   time.Duration
	Scope string
	// PageSize bounds the skills of one skills/list page (0: 100).
	PageSize int
}

// entry is a skill as skills/list and skills/get carry it.
type entry struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []skillFile     `json:"resources"`
}

// skillFile is one file of a skill, with what a host verifies it by.
type skillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// catalog is the skills Serve found, by URI.
type catalog struct {
	opts    Options
	entries []entry                 // sorted by URI
	byURI   map[string]*entry       // by the URI of the SKILL.md
	files   map[string]file         // every file of every skill, by URI
	dirs    map[string][]dirChild   // every directory of every skill, by URI
	meta    map[string]frontmatterM // each skill's name and description
}

type file struct {
	data     []byte
	mimeType string
}

type dirChild struct {
	URI      string `json:"uri"`
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     *int64 `json:"size,omitempty"`
}

type frontmatterM struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Metadata    map[string]string `json:"metadata"`
}

// skills returns the entries, sorted by URI.
func (c *catalog) skills() []entry { return slices.Clone(c.entries) }

// Serve reads the skills of fsys (every directory holding a SKILL.md;
// the path from fsys's root is the skill's path, its last segment the
// skill's name) and offers them on srv, with the extension declared.
func Serve(srv *handlers.Server, fsys fs.FS, opts Options) error {
	c, err := read(fsys, opts)
	if err != nil {
		return err
	}
	c.register(srv)
	return nil
}

// read reads the skills of fsys as Serve does, without serving them.
func read(fsys fs.FS, opts Options) (*catalog, error) {
	if opts.Scope == "" {
		opts.Scope = "public"
	}
	if opts.Scope != "public" && opts.Scope != "private" {
		return nil, fmt.Errorf("skills: cacheScope %q: want public or private", opts.Scope)
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 100
	}
	c := &catalog{opts: opts, byURI: map[string]*entry{}, files: map[string]file{}, dirs: map[string][]dirChild{}, meta: map[string]frontmatterM{}}
	var roots []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "SKILL.md" {
			roots = append(roots, path.Dir(p))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	var problems []error
	for _, root := range roots {
		if err := c.readSkill(fsys, root, roots); err != nil {
			problems = append(problems, fmt.Errorf("skill %q: %w", root, err))
		}
	}
	if err := errors.Join(problems...); err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	slices.SortFunc(c.entries, func(a, b entry) int { return strings.Compare(a.URI, b.URI) })
	for i := range c.entries {
		c.byURI[c.entries[i].URI] = &c.entries[i]
	}
	return c, nil
}

// uriOf is the skill:// URI of a path under the root, each segment
// escaped as a URI path segment.
func uriOf(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "skill://" + strings.Join(segs, "/")
}

func (c *catalog) readSkill(fsys fs.FS, root string, all []string) error {
	if root == "." {
		return errors.New("a SKILL.md at the root has no skill directory, hence no name")
	}
	name := path.Base(root)
	if !validName(name) {
		return fmt.Errorf("name %q: 1-64 lowercase letters, digits and single hyphens", name)
	}
	if authority := strings.SplitN(root, "/", 2)[0]; !validRegName(authority) {
		return fmt.Errorf("the first segment %q of its path is the URI's authority and must be a host name (letters, digits, - . _ ~)", authority)
	}
	manifest, err := fs.ReadFile(fsys, path.Join(root, "SKILL.md"))
	if err != nil {
		return err
	}
	front, _, err := skillmd.Parse(string(manifest))
	if err != nil {
		return err
	}
	var fm frontmatterM
	if err := json.Unmarshal(front, &fm); err != nil {
		return fmt.Errorf("frontmatter: %w", err)
	}
	switch {
	case fm.Name != name:
		return fmt.Errorf("frontmatter name %q is not the directory's name %q", fm.Name, name)
	case fm.Description == "" || utf8.RuneCountInString(fm.Description) > 1024:
		return errors.New("frontmatter description must be a string of 1 to 1024 characters")
	}
	for k := range fm.Metadata {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			return fmt.Errorf("frontmatter metadata key %q: the io.modelcontextprotocol/ prefix is reserved for MCP extensions", k)
		}
	}
	entry := entry{URI: uriOf(root + "/SKILL.md"), Frontmatter: front}
	var total int64
	err = fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && slices.Contains(all, p) {
				return fmt.Errorf("skill %q is inside it: skills do not nest", p)
			}
			c.addDir(fsys, p, root)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // a link or device is no file of a skill
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		uri := uriOf(p)
		c.files[uri] = file{data: data, mimeType: mimeTypeOf(p, data)}
		entry.Resources = append(entry.Resources, skillFile{URI: uri, Digest: skillmd.Digest(data), Size: int64(len(data))})
		total += int64(len(data))
		return nil
	})
	if err != nil {
		return err
	}
	if len(entry.Resources) > maxFiles || total > maxBytes {
		return fmt.Errorf("%d files, %d bytes: more than the %d files or %d bytes a skill may hold", len(entry.Resources), total, maxFiles, maxBytes)
	}
	slices.SortFunc(entry.Resources, func(a, b skillFile) int { return strings.Compare(a.URI, b.URI) })
	c.entries = append(c.entries, entry)
	c.meta[entry.URI] = fm
	return nil
}

// addDir records a directory of a skill and its children.
func (c *catalog) addDir(fsys fs.FS, p, root string) {
	entries, err := fs.ReadDir(fsys, p)
	if err != nil {
		return
	}
	var children []dirChild
	for _, e := range entries {
		cp := path.Join(p, e.Name())
		switch {
		case e.IsDir():
			children = append(children, dirChild{URI: uriOf(cp), Name: e.Name(), MimeType: directoryMIMEType})
		case e.Type().IsRegular():
			info, err := e.Info()
			if err != nil {
				continue
			}
			data, _ := fs.ReadFile(fsys, cp)
			size := info.Size()
			children = append(children, dirChild{URI: uriOf(cp), Name: e.Name(), MimeType: mimeTypeOf(cp, data), Size: &size})
		}
	}
	slices.SortFunc(children, func(a, b dirChild) int { return strings.Compare(a.URI, b.URI) })
	c.dirs[uriOf(p)] = children
}

// validName is the Agent Skills name rule.
func validName(n string) bool {
	if n == "" || len(n) > 64 || n[0] == '-' || n[len(n)-1] == '-' || strings.Contains(n, "--") {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validRegName accepts an RFC 3986 reg-name of unreserved characters.
func validRegName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0) {
			return false
		}
	}
	return true
}

// mimeTypeOf names a file's type by its extension, or as text or bytes.
func mimeTypeOf(p string, data []byte) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".txt":
		return "text/plain"
	case ".json":
		return "application/json"
	case ".py":
		return "text/x-python"
	case ".sh":
		return "text/x-shellscript"
	case ".html", ".htm":
		return "text/html"
	case ".png":
		return "image/png"
	case ".pdf":
		return "application/pdf"
	}
	if utf8.Valid(data) && !bytes.ContainsRune(data, 0) {
		return "text/plain"
	}
	return "application/octet-stream"
}

// register offers the catalog on srv.
func (c *catalog) register(srv *handlers.Server) {
	srv.SetExtension(mcp.SkillsExtension, json.RawMessage(`{"directoryRead":true}`))
	for _, e := range c.entries {
		fm, f := c.meta[e.URI], c.files[e.URI]
		srv.AddResource(handlers.Resource{Resource: mcp.Resource{URI: e.URI, Name: fm.Name, Description: fm.Description, MimeType: "text/markdown", Size: int64(len(f.data))}},
			c.readFile)
	}
	srv.AddResourceTemplate(handlers.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{
			URITemplate: "skill://{+path}",
			Name:        "skill-files",
			Description: "The files of the skills this server serves: skills/list names them, with their digests.",
		},
	}, c.readFile)
	srv.AddMethod("skills/list", c.list, true)
	srv.AddMethod("skills/get", c.get, true)
	srv.AddMethod("resources/directory/read", c.readDirectory, true)
}

func (c *catalog) readFile(_ context.Context, _ *handlers.Request, uri string, _ map[string]string) ([]mcp.ResourceContents, error) {
	f, ok := c.files[uri]
	if !ok {
		return nil, handlers.ErrResourceNotFound
	}
	if strings.HasPrefix(f.mimeType, "text/") || f.mimeType == "application/json" {
		return []mcp.ResourceContents{{URI: uri, MimeType: f.mimeType, Text: string(f.data)}}, nil
	}
	return []mcp.ResourceContents{{URI: uri, MimeType: f.mimeType, Blob: f.data}}, nil
}

// cache adds a result's caching attributes, which the extension asks for
// in every revision.
func (c *catalog) cache(res map[string]any) map[string]any {
	res["ttlMs"] = c.opts.TTL.Milliseconds()
	res["cacheScope"] = c.opts.Scope
	return res
}

func invalidParams(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + msg}
}

// cursor is the opaque cursor after the entry or child of this URI.
func cursor(uri string) string { return base64.RawURLEncoding.EncodeToString([]byte("after:" + uri)) }

func after(cur string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cur)
	uri, ok := strings.CutPrefix(string(b), "after:")
	return uri, err == nil && ok
}

func (c *catalog) list(_ context.Context, req *handlers.Request) (any, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, invalidParams("skills/list takes an optional string cursor")
	}
	start := 0
	if p.Cursor != nil {
		uri, ok := after(*p.Cursor)
		if !ok {
			return nil, invalidParams("unknown cursor")
		}
		start, _ = slices.BinarySearchFunc(c.entries, uri, func(e entry, u string) int { return strings.Compare(e.URI, u) })
		if start < len(c.entries) && c.entries[start].URI == uri {
			start++
		}
	}
	end := min(len(c.entries), start+c.opts.PageSize)
	res := map[string]any{"skills": append([]entry{}, c.entries[start:end]...)}
	if end < len(c.entries) {
		res["nextCursor"] = cursor(c.entries[end-1].URI)
	}
	return c.cache(res), nil
}

func (c *catalog) get(_ context.Context, req *handlers.Request) (any, error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.URI == nil {
		return nil, invalidParams("skills/get needs the uri of a skill's SKILL.md")
	}
	e, ok := c.byURI[*p.URI]
	if !ok {
		return nil, invalidParams(fmt.Sprintf("%q is not a skill this server serves", *p.URI))
	}
	return c.cache(map[string]any{"skill": e}), nil
}

func (c *catalog) readDirectory(_ context.Context, req *handlers.Request) (any, error) {
	var p struct {
		URI    *string `json:"uri"`
		Cursor *string `json:"cursor"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.URI == nil {
		return nil, invalidParams("resources/directory/read needs the uri of a directory")
	}
	children, ok := c.dirs[strings.TrimSuffix(*p.URI, "/")]
	if !ok {
		return nil, invalidParams(fmt.Sprintf("%q is not a directory this server serves", *p.URI))
	}
	start := 0
	if p.Cursor != nil {
		uri, ok := after(*p.Cursor)
		if !ok {
			return nil, invalidParams("unknown cursor")
		}
		start, _ = slices.BinarySearchFunc(children, uri, func(d dirChild, u string) int { return strings.Compare(d.URI, u) })
		if start < len(children) && children[start].URI == uri {
			start++
		}
	}
	end := min(len(children), start+c.opts.PageSize)
	res := map[string]any{"resources": append([]dirChild{}, children[start:end]...)}
	if end < len(children) {
		res["nextCursor"] = cursor(children[end-1].URI)
	}
	return c.cache(res), nil
}
