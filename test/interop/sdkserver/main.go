// Command sdkserver is a small MCP server written with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), served over stdio, or over
// Streamable HTTP with -http ADDR (with sessions, or -stateless), so that
// mcprt's client can be tested against an implementation it shares no code
// with. It offers one of each kind of thing: tools (greet, add, progress,
// ask: elicitation and roots, sample: sampling, region: an x-mcp-header
// argument), a resource, a resource template, a prompt, and completion.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

type progressIn struct {
	Steps int `json:"steps"`
}

type sampleIn struct {
	Prompt string `json:"prompt"`
}

type regionIn struct {
	Region string `json:"region"`
}

var colors = []string{"red", "green", "blue", "black", "brown"}

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP on this address (endpoint /mcp) instead of stdio")
	stateless := flag.Bool("stateless", false, "with -http, serve without sessions (2026-07-28 needs it)")
	flag.Parse()
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk-server", Version: "1.0.0"}, &mcp.ServerOptions{
		Instructions: "A Go SDK server for interop tests.",
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			var values []string
			for _, c := range colors {
				if strings.HasPrefix(c, req.Params.Argument.Value) {
					values = append(values, c)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
		},
	})

	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, greetOut, error) {
			return nil, greetOut{Greeting: "Hi " + in.Name}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports steps of progress, then says done."},
		func(ctx context.Context, req *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= in.Steps; i++ {
					err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i),
					})
					if err != nil {
						return nil, nil, err
					}
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
	// ask uses the multi round-trip style, which the SDK turns into
	// server→client requests for legacy clients.
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user for a name and the client for its roots."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if len(req.Params.InputResponses) == 0 {
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{
						"name": &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{
							"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
						}},
						"roots": &mcp.ListRootsParams{},
					},
					RequestState: "asked-once",
				}, nil, nil
			}
			name, _ := req.Params.InputResponses["name"].(*mcp.ElicitResult)
			roots, _ := req.Params.InputResponses["roots"].(*mcp.ListRootsResult)
			if name == nil || roots == nil || len(roots.Roots) == 0 {
				return nil, nil, fmt.Errorf("missing input responses: %v", req.Params.InputResponses)
			}
			text := fmt.Sprintf("%s %v in %s state=%q", name.Action, name.Content["name"], roots.Roots[0].URI, req.Params.RequestState)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks the client's model to answer a prompt."},
		func(_ context.Context, req *mcp.CallToolRequest, in sampleIn) (*mcp.CallToolResult, any, error) {
			if len(req.Params.InputResponses) == 0 {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"llm": &mcp.CreateMessageParams{
					MaxTokens: 50,
					Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
				}}}, nil, nil
			}
			var text string
			switch r := req.Params.InputResponses["llm"].(type) {
			case *mcp.CreateMessageResult:
				if t, ok := r.Content.(*mcp.TextContent); ok {
					text = t.Text + " (" + r.Model + ")"
				}
			case *mcp.CreateMessageWithToolsResult:
				for _, c := range r.Content {
					if t, ok := c.(*mcp.TextContent); ok {
						text = t.Text + " (" + r.Model + ")"
					}
				}
			default:
				return nil, nil, fmt.Errorf("unexpected sampling answer %T", r)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})

	// Over HTTP in 2026-07-28 the SDK checks that the client mirrored
	// region into the Mcp-Param-Region header.
	mcp.AddTool(s, &mcp.Tool{Name: "region", Description: "Names the region it was called for.",
		InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"region"}, Properties: map[string]*jsonschema.Schema{
			"region": {Type: "string", Extra: map[string]any{"x-mcp-header": "Region"}},
		}}},
		func(_ context.Context, _ *mcp.CallToolRequest, in regionIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "region " + in.Region}}}, nil, nil
		})

	s.AddResource(&mcp.Resource{URI: "sdk://hello", Name: "hello", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello from the SDK"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "sdk://colors/{color}", Name: "color"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "a color: " + strings.TrimPrefix(req.Params.URI, "sdk://colors/")}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "haiku", Description: "A haiku about a color.", Arguments: []*mcp.PromptArgument{{Name: "color", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Write a haiku about " + req.Params.Arguments["color"]}}}}, nil
		})

	if *httpAddr != "" {
		serveHTTP(s, *httpAddr, *stateless)
		return
	}
	fmt.Fprintln(os.Stderr, "sdkserver: serving on stdio")
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// serveHTTP serves s at /mcp until SIGINT or SIGTERM.
func serveHTTP(s *mcp.Server, addr string, stateless bool) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: stateless}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "sdkserver: serving Streamable HTTP on http://%s/mcp\n", ln.Addr())
	select {
	case err := <-served:
		log.Fatal(err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Open streams (a session's GET) never end by themselves: close what
	// is left when the grace is up.
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Print(err)
	}
	srv.Close()
}
