package handlers

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

func resourceServer() *Server {
	prio := 0.5
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddResource(Resource{Resource: mcp.Resource{URI: "file:///readme.md", Name: "readme", Title: "Read me", Description: "Docs.", MimeType: "text/markdown",
		Annotations: &mcp.Annotations{Audience: []string{"user"}, Priority: &prio, LastModified: "2026-01-01T00:00:00Z"},
		Size:        6, Icons: []mcp.Icon{{Src: "data:,r"}}},
	}, func(context.Context, *Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{Text: "# Hi\n"}}, nil
	})
	s.AddResource(Resource{Resource: mcp.Resource{URI: "file:///logo.png", Name: "logo", MimeType: "image/png"}},
		func(context.Context, *Request, string, map[string]string) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{{Blob: []byte{0x89, 'P', 'N', 'G'}}, {URI: "file:///logo.txt", MimeType: "text/plain", Text: "a logo"}}, nil
		})
	s.AddResource(Resource{Resource: mcp.Resource{URI: "file:///gone", Name: "gone"}}, func(context.Context, *Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return nil, fmt.Errorf("deleted meanwhile: %w", ErrResourceNotFound)
	})
	s.AddResource(Resource{Resource: mcp.Resource{URI: "file:///empty", Name: "empty"}}, noContents)
	s.AddResource(Resource{Resource: mcp.Resource{URI: "file:///broken", Name: "broken"}}, func(context.Context, *Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return nil, errors.New("disk on fire")
	})
	s.AddResourceTemplate(ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{
			URITemplate: "users://{id}/profile{?fields}",
			Name:        "profile",
			Title:       "Profile",
			MimeType:    "application/json",
			Annotations: &mcp.Annotations{LastModified: "2026-01-01T00:00:00Z"},
		},
	}, func(_ context.Context, _ *Request, uri string, vars map[string]string) ([]mcp.ResourceContents, error) {
		if vars["id"] == "nobody" {
			return nil, ErrResourceNotFound
		}
		return []mcp.ResourceContents{{Text: fmt.Sprintf(`{"id":%q,"fields":%q}`, vars["id"], vars["fields"])}}, nil
	})
	// Registered later: the first matching template wins.
	s.AddResourceTemplate(ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "users://{id}/{rest}", Name: "other"}}, func(context.Context, *Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{Text: "other"}}, nil
	})
	return s
}

func TestListResourcesPerEra(t *testing.T) {
	s := resourceServer()
	s.SetPageSize(1)
	const (
		old    = `{"resources":[{"uri":"file:///readme.md","name":"readme","description":"Docs.","mimeType":"text/markdown","annotations":{"audience":["user"],"priority":0.5},"size":6}],"nextCursor":"cjE"}`
		mid    = `{"resources":[{"uri":"file:///readme.md","name":"readme","title":"Read me","description":"Docs.","mimeType":"text/markdown","annotations":{"audience":["user"],"priority":0.5,"lastModified":"2026-01-01T00:00:00Z"},"size":6}],"nextCursor":"cjE"}`
		newest = `{"resources":[{"uri":"file:///readme.md","name":"readme","title":"Read me","description":"Docs.","mimeType":"text/markdown","annotations":{"audience":["user"],"priority":0.5,"lastModified":"2026-01-01T00:00:00Z"},"size":6,"icons":[{"src":"data:,r"}]}],"nextCursor":"cjE"}`
	)
	want := map[string]string{"2024-11-05": old, "2025-03-26": old, "2025-06-18": mid, "2025-11-25": newest, "2026-07-28": newest}
	for _, v := range eras {
		wantResult(t, run(t, s, v, "resources/list", `{}`), want[v])
	}
}

func TestListResourceTemplatesPerEra(t *testing.T) {
	s := resourceServer()
	const (
		other = `{"uriTemplate":"users://{id}/{rest}","name":"other"}`
		old   = `{"resourceTemplates":[{"uriTemplate":"users://{id}/profile{?fields}","name":"profile","mimeType":"application/json"},` + other + `]}`
		mid   = `{"resourceTemplates":[{"uriTemplate":"users://{id}/profile{?fields}","name":"profile","title":"Profile","mimeType":"application/json","annotations":{"lastModified":"2026-01-01T00:00:00Z"}},` + other + `]}`
	)
	want := map[string]string{"2024-11-05": old, "2025-03-26": old, "2025-06-18": mid, "2025-11-25": mid, "2026-07-28": mid}
	for _, v := range eras {
		wantResult(t, run(t, s, v, "resources/templates/list", `{}`), want[v])
	}
}

func TestReadResource(t *testing.T) {
	s := resourceServer()
	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			wantResult(t, run(t, s, v, "resources/read", `{"uri":"file:///readme.md"}`),
				`{"contents":[{"uri":"file:///readme.md","mimeType":"text/markdown","text":"# Hi\n"}]}`)
			wantResult(t, run(t, s, v, "resources/read", `{"uri":"file:///logo.png"}`),
				`{"contents":[{"uri":"file:///logo.png","mimeType":"image/png","blob":"iVBORw=="},{"uri":"file:///logo.txt","mimeType":"text/plain","text":"a logo"}]}`)
			wantResult(t, run(t, s, v, "resources/read", `{"uri":"users://ada/profile?fields=name,email"}`),
				`{"contents":[{"uri":"users://ada/profile?fields=name,email","mimeType":"application/json","text":"{\"id\":\"ada\",\"fields\":\"name,email\"}"}]}`)
			wantResult(t, run(t, s, v, "resources/read", `{"uri":"users://ada/settings"}`),
				`{"contents":[{"uri":"users://ada/settings","text":"other"}]}`)
			wantInternal(t, run(t, s, v, "resources/read", `{"uri":"file:///broken"}`), "disk on fire")
			for _, p := range []string{`{}`, `{"uri":""}`, `{"uri":7}`, `[]`} {
				wantError(t, run(t, s, v, "resources/read", p), jsonrpc.CodeInvalidParams, "Invalid params: resources/read needs a string uri", "")
			}
		})
	}
}

func TestReadResourceNotFoundPerEra(t *testing.T) {
	s := resourceServer()
	for _, v := range eras {
		code := jsonrpc.CodeResourceNotFound // -32002 up to 2025-11-25
		if v == "2026-07-28" {
			code = jsonrpc.CodeInvalidParams
		}
		for _, uri := range []string{
			"file:///nope",           // nothing registered
			"file:///gone",           // handler: ErrResourceNotFound, wrapped
			"file:///empty",          // handler: no contents
			"users://nobody/profile", // template matched, handler: not found
		} {
			wantError(t, run(t, s, v, "resources/read", `{"uri":"`+uri+`"}`), code, "Resource not found", `{"uri":"`+uri+`"}`)
		}
	}
}

func TestAddResourceRejects(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	for _, c := range []struct {
		name string
		add  func()
	}{
		{"resource without URI", func() { s.AddResource(Resource{Resource: mcp.Resource{Name: "a"}}, noContents) }},
		{"resource without name", func() { s.AddResource(Resource{Resource: mcp.Resource{URI: "x:a"}}, noContents) }},
		{"resource without handler", func() { s.AddResource(Resource{Resource: mcp.Resource{URI: "x:a", Name: "a"}}, nil) }},
		{"bad template", func() {
			s.AddResourceTemplate(ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "x:{a", Name: "a"}}, noContents)
		}},
		{"template without name", func() {
			s.AddResourceTemplate(ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "x:{a}"}}, noContents)
		}},
		{"completion of no variable", func() {
			s.AddResourceTemplate(ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "x:{a}", Name: "a"}, Complete: map[string]CompletionHandler{"b": CompleteFrom()}}, noContents)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			c.add()
		})
	}
	if len(s.Capabilities()) != 0 {
		t.Fatalf("rejected registrations changed capabilities: %v", s.Capabilities())
	}
}

func TestRemoveResources(t *testing.T) {
	s := resourceServer()
	if !s.RemoveResource("file:///readme.md") || s.RemoveResource("file:///readme.md") {
		t.Fatal("RemoveResource: want true then false")
	}
	if !s.RemoveResourceTemplate("users://{id}/profile{?fields}") || s.RemoveResourceTemplate("users://{id}/profile{?fields}") {
		t.Fatal("RemoveResourceTemplate: want true then false")
	}
	wantError(t, run(t, s, "2025-11-25", "resources/read", `{"uri":"file:///readme.md"}`), jsonrpc.CodeResourceNotFound, "Resource not found", `{"uri":"file:///readme.md"}`)
	// The other template now serves what the removed one did.
	wantResult(t, run(t, s, "2025-11-25", "resources/read", `{"uri":"users://ada/profile"}`), `{"contents":[{"uri":"users://ada/profile","text":"other"}]}`)
}
