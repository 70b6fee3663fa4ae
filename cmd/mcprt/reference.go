package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// referenceServer is the server `mcprt serve` runs: the tools the benchmark
// and fault-injection harnesses drive, each small enough to read at a glance.
func referenceServer() *handlers.Server {
	s := handlers.NewServer(handlers.Implementation{Name: "mcprt-reference", Title: "mcprt reference server", Version: version},
		"Reference server of the mcprt runtime: echo, CPU work, sleep, and tools that misbehave on purpose (panic, print).")
	s.AddTool(handlers.Tool{
		Name:        "echo",
		Description: "Returns its text argument unchanged.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		text, ok := handlers.StringArg(args, "text")
		if !ok {
			return nil, fmt.Errorf("echo needs a string argument \"text\"")
		}
		return handlers.TextResult(text), nil
	})
	s.AddTool(handlers.Tool{
		Name:        "work",
		Description: "Burns about us microseconds of CPU as a fixed amount of work, then returns \"ok\".",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"us":{"type":"integer","minimum":0}},"required":["us"]}`),
	}, func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		us, ok := handlers.IntArg(args, "us")
		if !ok || us < 0 {
			return nil, fmt.Errorf("work needs a non-negative integer argument \"us\"")
		}
		burn(us)
		return handlers.TextResult("ok"), nil
	})
	s.AddTool(handlers.Tool{
		Name:        "sleep",
		Description: "Sleeps ms milliseconds (returns early when cancelled), then returns \"slept\". Reports progress every tenth of the time when given a progressToken. Runs as a task when asked and mcprt serve has -tasks or -tasks-dir; with -tasks-dir, a sleep task a crash cut short is run again by the next server on the directory.",
		// A long call is what a task is for; without -tasks the server
		// offers no tasks capability, and clients ask for none.
		Execution: json.RawMessage(`{"taskSupport":"optional"}`),
		// Sleeping again is harmless: with -tasks-dir, a sleep task that
		// a crash cut short is run again (the whole ms) by the next
		// server on the directory, as a resumable tool's is.
		Resumable:   true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"]}`),
	}, func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		ms, ok := handlers.IntArg(args, "ms")
		if !ok || ms < 0 {
			return nil, fmt.Errorf("sleep needs a non-negative integer argument \"ms\"")
		}
		if err := sleep(ctx, req, time.Duration(ms)*time.Millisecond); err != nil {
			return nil, err
		}
		return handlers.TextResult("slept"), nil
	})
	s.AddTool(handlers.Tool{
		Name:        "panic",
		Description: "Panics, to show that a crashing handler is answered with an error and replaced.",
	}, func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
		panic("the panic tool panicked, as asked")
	})
	s.AddTool(handlers.Tool{
		Name:        "print",
		Description: "Writes its text to stdout with fmt.Println (which mcprt captures: it reaches stderr and, as a notifications/message, a client that accepts info), then returns \"printed\". count repeats it from each of goroutines goroutines (lines are suffixed \" g<i> n<j>\"); child: true prints through a child process that inherited fd 1.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"count":{"type":"integer","minimum":1},"goroutines":{"type":"integer","minimum":1,"maximum":256},"child":{"type":"boolean"}},"required":["text"]}`),
	}, func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		var a struct {
			Text              string
			Count, Goroutines int
			Child             bool
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, fmt.Errorf("print needs a string argument \"text\"")
		}
		if a.Child {
			cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `printf '%s\n' "$1"`, "sh", a.Text)
			cmd.Stdout = os.Stdout // the captured fd 1, as any child would inherit it
			if err := cmd.Run(); err != nil {
				return nil, err
			}
			return handlers.TextResult("printed"), nil
		}
		if a.Count <= 0 {
			fmt.Println(a.Text)
			return handlers.TextResult("printed"), nil
		}
		var wg sync.WaitGroup
		for g := range max(a.Goroutines, 1) {
			wg.Go(func() {
				for n := range a.Count {
					fmt.Printf("%s g%d n%d\n", a.Text, g, n)
				}
			})
		}
		wg.Wait()
		return handlers.TextResult("printed"), nil
	})
	addFeatures(s)
	return s
}

// addFeatures registers one of each other kind of thing a server can offer,
// so that clients and tests can exercise them against the real binary.
func addFeatures(s *handlers.Server) {
	handlers.AddTool(s, handlers.Tool{
		Name:        "add",
		Title:       "Add",
		Description: "Adds two numbers; the result is structured: {\"sum\": a+b}.",
		Annotations: &handlers.ToolAnnotations{ReadOnlyHint: &yes, IdempotentHint: &yes, OpenWorldHint: &no},
	}, func(_ context.Context, _ *handlers.Request, in addIn) (addOut, error) {
		return addOut{Sum: in.A + in.B}, nil
	})
	handlers.AddTool(s, handlers.Tool{
		Name:        "log",
		Description: "Sends message as a notifications/message at each level given (when the client asked for that level), then returns how many were sent.",
	}, func(_ context.Context, req *handlers.Request, in logIn) (logOut, error) {
		msg := cmp.Or(in.Message, "hello")
		sent := 0
		for _, level := range in.Levels {
			if req.Log(level, "reference", msg) {
				sent++
			}
		}
		return logOut{Sent: sent}, nil
	})
	handlers.AddTool(s, handlers.Tool{
		Name:        "elicit",
		Description: "Asks the user (elicitation) for a name and greets it. Legacy clients get an elicitation/create request; 2026-07-28 clients an input_required result.",
	}, func(ctx context.Context, req *handlers.Request, _ struct{}) (greetOut, error) {
		res, err := req.Elicit(ctx, "What is your name?", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`))
		if err != nil {
			return greetOut{}, err
		}
		if res.Action != "accept" {
			return greetOut{Greeting: "no name given (" + res.Action + ")"}, nil
		}
		name, _ := res.Content["name"].(string)
		return greetOut{Greeting: "Hello, " + name + "!"}, nil
	})
	handlers.AddTool(s, handlers.Tool{
		Name:        "sample",
		Description: "Asks the client's model (sampling) to complete prompt and returns its text.",
	}, func(ctx context.Context, req *handlers.Request, in sampleIn) (sampleOut, error) {
		res, err := req.CreateMessage(ctx, []handlers.SamplingMessage{{Role: "user", Content: handlers.TextContent(in.Prompt)}}, 100)
		if err != nil {
			return sampleOut{}, err
		}
		return sampleOut{Text: res.Content.Text, Model: res.Model}, nil
	})
	s.AddTool(handlers.Tool{
		Name:        "slow-timeout",
		Description: "Like sleep, but with a per-tool timeout of 500ms: longer sleeps are answered with a timeout error.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"]}`),
		Timeout:     500 * time.Millisecond,
	}, func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		ms, ok := handlers.IntArg(args, "ms")
		if !ok || ms < 0 {
			return nil, fmt.Errorf("slow-timeout needs a non-negative integer argument \"ms\"")
		}
		if err := sleep(ctx, req, time.Duration(ms)*time.Millisecond); err != nil {
			return nil, err
		}
		return handlers.TextResult("slept"), nil
	})

	s.AddResource(handlers.Resource{
		URI:         "mcprt://reference/readme",
		Name:        "readme",
		Title:       "About the reference server",
		Description: "What this server offers, in Markdown.",
		MimeType:    "text/markdown",
	}, func(context.Context, *handlers.Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		o, err := offersOf(s)
		if err != nil {
			return nil, err
		}
		return []mcp.ResourceContents{{Text: readmeIntro + o.markdown()}}, nil
	})
	s.AddResource(handlers.Resource{
		URI:         "mcprt://reference/pixel.png",
		Name:        "pixel",
		Description: "A 2x2 PNG image: binary content, sent base64-encoded.",
		MimeType:    "image/png",
		Size:        int64(len(pixelPNG)),
	}, func(context.Context, *handlers.Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{Blob: pixelPNG}}, nil
	})
	s.AddResourceTemplate(handlers.ResourceTemplate{
		URITemplate: "mcprt://reference/greeting/{name}",
		Name:        "greeting",
		Description: "A greeting for name.",
		MimeType:    "text/plain",
		Complete:    map[string]handlers.CompletionHandler{"name": handlers.CompleteFrom(greetees...)},
	}, func(_ context.Context, _ *handlers.Request, _ string, vars map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{Text: "Hello, " + vars["name"] + "!"}}, nil
	})

	s.AddPrompt(handlers.Prompt{
		Name:        "review",
		Title:       "Code review",
		Description: "Asks for a review of a piece of code.",
		Arguments: []handlers.PromptArgument{
			{Name: "code", Description: "The code to review.", Required: true},
			{Name: "language", Description: "The language it is written in.", Complete: handlers.CompleteFrom(languages...)},
		},
	}, func(_ context.Context, _ *handlers.Request, args map[string]string) (*handlers.GetPromptResult, error) {
		what := "this code"
		if l := args["language"]; l != "" {
			what = "this " + l + " code"
		}
		return &handlers.GetPromptResult{
			Description: "Review of " + what,
			Messages: []handlers.PromptMessage{{
				Role:    "user",
				Content: handlers.TextContent("Please review " + what + ". Point out bugs first, then style.\n\n" + args["code"]),
			}},
		}, nil
	})
}

var yes, no = true, false

type addIn struct {
	A float64 `json:"a" description:"The first addend."`
	B float64 `json:"b" description:"The second addend."`
}

type addOut struct {
	Sum float64 `json:"sum" description:"a + b"`
}

type logIn struct {
	Levels  []string `json:"levels" description:"The levels to log at, one message each." enum:"debug,info,notice,warning,error,critical,alert,emergency"`
	Message string   `json:"message,omitempty" description:"The message (default: \"hello\")." jsonschema:"default=hello"`
}

type logOut struct {
	Sent int `json:"sent" description:"How many messages the client's log level let through."`
}

var greetees = []string{"Ada", "Alan", "Barbara", "Edsger", "Grace", "Ken", "Margaret", "Rob"}

var languages = []string{"Go", "C", "C++", "Elixir", "Erlang", "Java", "JavaScript", "Python", "Rust", "TypeScript"}

// readmeIntro opens the readme resource; the list of what the server
// offers follows, made from its registry when the resource is read.
const readmeIntro = `# mcprt reference server

The server that ` + "`mcprt serve`" + ` runs: tools that the benchmark and
fault-injection harnesses drive, tools that misbehave on purpose, and one of
each other kind of thing an MCP server can offer.
`

// pixelPNG is a 2x2 PNG (red, green / blue, white), as image/png encodes it.
var pixelPNG = []byte{0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd, 0xd4, 0x9a,
	0x73, 0x00, 0x00, 0x00, 0x1b, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x62, 0xfa, 0xcf, 0xc0, 0xc0,
	0xf0, 0x9f, 0x81, 0x85, 0x91, 0xe1, 0xff, 0x7f, 0x06, 0x06, 0x40, 0x00, 0x00, 0x00, 0xff, 0xff,
	0x1d, 0x2f, 0x04, 0x04, 0xf0, 0x91, 0x5d, 0x15, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44,
	0xae, 0x42, 0x60, 0x82,
}

// sleep waits d or until ctx is done. When the client asked for progress it
// reports it each tenth of d, in milliseconds slept out of the total.
func sleep(ctx context.Context, req *handlers.Request, d time.Duration) error {
	done := time.NewTimer(d)
	defer done.Stop()
	var tick <-chan time.Time
	if req.ProgressToken != nil && d >= 10*time.Millisecond {
		t := time.NewTicker(d / 10)
		defer t.Stop()
		tick = t.C
	}
	start, total := time.Now(), float64(d.Milliseconds())
	for {
		select {
		case <-done.C:
			return nil
		case <-tick:
			slept := min(float64(time.Since(start).Milliseconds()), total)
			req.Progress(slept, total, fmt.Sprintf("slept %.0f of %.0f ms", slept, total))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// itersPerMicro matches the benchmark harness's worktool: xorshift rounds
// that take about 1 µs on the reference machine, so every server compared
// does the same work per call.
const itersPerMicro = 680

var burnSink atomic.Uint64

func burn(us int) {
	x := uint64(88172645463325252) + uint64(us)
	for n := us * itersPerMicro; n > 0; n-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	burnSink.Store(x)
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

type sampleIn struct {
	Prompt string `json:"prompt" description:"What to ask the client's model"`
}

type sampleOut struct {
	Text  string `json:"text"`
	Model string `json:"model"`
}

// addWhoami adds whoami, which the reference server offers when it is an
// OAuth resource server (-http-oauth-issuer): who the request's token
// says the caller is, as handlers.Caller has it, and never the token.
// What a gateway acting for each user (auth "exchange") is checked by.
func addWhoami(s *handlers.Server) {
	s.AddTool(handlers.Tool{
		Name:        "whoami",
		Description: "Who the caller's access token says it is: its subject, client, issuer and audience.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(_ context.Context, req *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
		c := req.Caller
		if c == nil {
			return handlers.TextResult("nobody"), nil
		}
		b, err := json.Marshal(map[string]any{"sub": c.Subject, "client_id": c.ClientID, "iss": c.Issuer, "aud": c.Audience, "scopes": c.Scopes, "act": c.Claims["act"]})
		if err != nil {
			return nil, err
		}
		return handlers.TextResult(string(b)), nil
	})
}
