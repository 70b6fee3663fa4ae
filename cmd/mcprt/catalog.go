package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// offers is what a server registered, as its list methods show it: the
// texts that describe the reference server (serve --help, the readme
// resource) are made from it, so they cannot drift from the registry.
type offers struct {
	Tools     []handlers.Tool
	Resources []handlers.Resource
	Templates []handlers.ResourceTemplate
	Prompts   []handlers.Prompt
}

// offersOf lists everything s offers, through its own list methods (every
// page), as a client of the newest initialize-era revision sees it.
func offersOf(s *handlers.Server) (offers, error) {
	var o offers
	for _, l := range []struct {
		method, key string
		into        any
	}{
		{"tools/list", "tools", &o.Tools},
		{"resources/list", "resources", &o.Resources},
		{"resources/templates/list", "resourceTemplates", &o.Templates},
		{"prompts/list", "prompts", &o.Prompts},
	} {
		if err := listAll(s, l.method, l.key, l.into); err != nil {
			return o, err
		}
	}
	return o, nil
}

// listAll runs a list method until it has no next page and appends each
// page's items (under key) to the slice into points to.
func listAll(s *handlers.Server, method, key string, into any) error {
	m, ok := s.Method(method)
	if !ok {
		return nil // nothing of this kind was ever registered
	}
	params := []byte(`{}`)
	var items []json.RawMessage
	for {
		res, err := m.Run(context.Background(), &handlers.Request{Method: method, Params: params, Version: mcp.Version20251125})
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(b, &page); err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		var these []json.RawMessage
		if err := json.Unmarshal(page[key], &these); err != nil {
			return fmt.Errorf("%s: %s: %w", method, key, err)
		}
		items = append(items, these...)
		var next string
		if json.Unmarshal(page["nextCursor"], &next) != nil || next == "" {
			break
		}
		params, _ = json.Marshal(map[string]string{"cursor": next})
	}
	b, _ := json.Marshal(items)
	return json.Unmarshal(b, into)
}

// toolArgs shows a tool's arguments as {a, b?}: the properties of its
// input schema in the schema's order, optional ones with a question mark.
func toolArgs(t handlers.Tool) string {
	var s struct {
		Properties json.RawMessage
		Required   []string
	}
	if json.Unmarshal(t.InputSchema, &s) != nil {
		return "{}"
	}
	var names []string
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			name, _ := tok.(string)
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				break
			}
			if !slices.Contains(s.Required, name) {
				name += "?"
			}
			names = append(names, name)
		}
	}
	return "{" + strings.Join(names, ", ") + "}"
}

// firstSentence is the start of a description, up to its first full stop.
func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// offerSection is one kind of offer, a row per item: what names it (with
// its arguments) and its description.
type offerSection struct {
	title string
	rows  [][2]string
}

// sections groups o by kind, leaving out the kinds it has none of.
func (o offers) sections() []offerSection {
	var out []offerSection
	add := func(title string, rows [][2]string) {
		if len(rows) > 0 {
			out = append(out, offerSection{title, rows})
		}
	}
	var rows [][2]string
	for _, t := range o.Tools {
		rows = append(rows, [2]string{t.Name + " " + toolArgs(t), t.Description})
	}
	add("Tools", rows)
	rows = nil
	for _, r := range o.Resources {
		rows = append(rows, [2]string{r.URI, r.Description})
	}
	add("Resources", rows)
	rows = nil
	for _, t := range o.Templates {
		rows = append(rows, [2]string{t.URITemplate, t.Description})
	}
	add("Resource templates", rows)
	rows = nil
	for _, p := range o.Prompts {
		var as []string
		for _, a := range p.Arguments {
			if !a.Required {
				a.Name += "?"
			}
			as = append(as, a.Name)
		}
		rows = append(rows, [2]string{p.Name + " {" + strings.Join(as, ", ") + "}", p.Description})
	}
	add("Prompts", rows)
	return out
}

// text describes o for a terminal: each kind under a heading, a line per
// item in two columns, the first sentence of each description wrapped to 78 columns. A name too
// long for the first column has its description on the next line.
func (o offers) text() string {
	const maxName, lineWidth = 24, 78
	var b strings.Builder
	for i, sec := range o.sections() {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s:\n", sec.title)
		width := 0
		for _, r := range sec.rows {
			if len(r[0]) <= maxName {
				width = max(width, len(r[0]))
			}
		}
		hang := strings.Repeat(" ", 2+width+2)
		for _, r := range sec.rows {
			if firstSentence(r[1]) == "" {
				fmt.Fprintf(&b, "  %s\n", r[0])
				continue
			}
			if len(r[0]) <= width {
				fmt.Fprintf(&b, "  %-*s  ", width, r[0])
			} else {
				fmt.Fprintf(&b, "  %s\n%s", r[0], hang)
			}
			col := len(hang)
			for j, word := range strings.Fields(firstSentence(r[1])) {
				if j > 0 && col+1+len(word) > lineWidth {
					b.WriteString("\n" + hang)
					col = len(hang)
				} else if j > 0 {
					b.WriteByte(' ')
					col++
				}
				b.WriteString(word)
				col += len(word)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// markdown describes o in Markdown: a section per kind, a list item per
// item.
func (o offers) markdown() string {
	var b strings.Builder
	for _, sec := range o.sections() {
		fmt.Fprintf(&b, "\n## %s\n\n", sec.title)
		for _, r := range sec.rows {
			fmt.Fprintf(&b, "- `%s`: %s\n", r[0], r[1])
		}
	}
	return b.String()
}
