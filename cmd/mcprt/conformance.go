package main

import (
	"context"
	"embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/skills"
)

// conformanceSkills are the skills the fixture serves (the skills
// extension scenarios, sep-2640-*).
//
//go:embed conformance_skills
var conformanceSkills embed.FS

// conformanceServer is the server `mcprt serve -fixture conformance` runs:
// the tools, resources, prompts and completions that the server scenarios
// of the official MCP conformance suite (@modelcontextprotocol/conformance
// 0.2.0-alpha.12, see test/conformance) call, by the names and with the behaviour
// each scenario checks. It mirrors the suite's own "everything server";
// nothing else belongs here (the reference server is for everything else).
func conformanceServer() *handlers.Server {
	s := handlers.NewServer(mcp.Implementation{Name: "mcprt-conformance", Title: "mcprt conformance fixture", Version: version},
		"Fixture for the MCP conformance suite's server scenarios: test_* tools, test:// resources and test_* prompts.")
	w := &watched{}
	addConformanceTools(s, w)
	addConformanceResources(s, w)
	addConformancePrompts(s)
	addConformanceModernTools(s)
	addConformanceModernPrompts(s)
	addConformanceTaskTools(s)
	// sep-2640-skills-*: the skills extension, served by the runtime
	// (handlers/skills) from the skills in conformance_skills/.
	skillsDir, err := fs.Sub(conformanceSkills, "conformance_skills")
	if err == nil {
		_, err = skills.Serve(s, skillsDir, skills.Options{})
	}
	if err != nil {
		panic(err) // the fixture's own files
	}
	return s
}

// Content the scenarios ask for by value.
const (
	confSimpleText     = "This is a simple text response for testing."
	confErrorText      = "This tool intentionally returns an error for testing"
	confEmbeddedText   = "This is an embedded resource content."
	confStaticText     = "This is the content of the static text resource."
	confWatchedText    = "Watched resource content"
	confPromptText     = "This is a simple prompt for testing."
	confPromptResource = "Embedded resource content for testing."
	confWatchedURI     = "test://watched-resource"
)

// confWAV is a minimal WAV file: 16-bit mono PCM at 8 kHz, one silent sample.
var confWAV = wav(8000, []int16{0})

// wav encodes samples as a RIFF/WAVE file (16-bit mono PCM at rate Hz).
func wav(rate uint32, samples []int16) []byte {
	data := 2 * uint32(len(samples))
	b := make([]byte, 0, 44+data)
	le := binary.LittleEndian
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, 36+data)
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)     // fmt chunk size
	b = le.AppendUint16(b, 1)      // PCM
	b = le.AppendUint16(b, 1)      // channels
	b = le.AppendUint32(b, rate)   // sample rate
	b = le.AppendUint32(b, rate*2) // byte rate
	b = le.AppendUint16(b, 2)      // block align
	b = le.AppendUint16(b, 16)     // bits per sample
	b = append(b, "data"...)
	b = le.AppendUint32(b, data)
	for _, s := range samples {
		b = le.AppendUint16(b, uint16(s))
	}
	return b
}

// confResult is a tool result of the given blocks.
func confResult(blocks ...handlers.Content) *handlers.CallToolResult {
	return &handlers.CallToolResult{Content: blocks}
}

// pause waits d, or less when ctx ends first (then it returns ctx's error).
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// addSimpleText registers test_simple_text (scenario
// tools-call-simple-text), or registers it again.
func addSimpleText(s *handlers.Server) {
	s.AddTool(handlers.Tool{Name: "test_simple_text", Description: "Returns one text block (scenario tools-call-simple-text)."},
		func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
			return handlers.TextResult(confSimpleText), nil
		})
}

// addSimplePrompt registers test_simple_prompt (scenario
// prompts-get-simple), or registers it again.
func addSimplePrompt(s *handlers.Server) {
	s.AddPrompt(handlers.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A prompt without arguments (scenario prompts-get-simple)."},
		func(context.Context, *handlers.Request, map[string]string) (*handlers.GetPromptResult, error) {
			return &handlers.GetPromptResult{Messages: []handlers.PromptMessage{{Role: "user", Content: handlers.TextContent(confPromptText)}}}, nil
		})
}

func addConformanceTools(s *handlers.Server, w *watched) {
	addSimpleText(s)
	// tools-call-image
	s.AddTool(handlers.Tool{Name: "test_image_content", Description: "Returns one image block, a PNG (scenario tools-call-image)."},
		func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
			return confResult(handlers.ImageContent(pixelPNG, "image/png")), nil
		})
	// tools-call-audio
	s.AddTool(handlers.Tool{Name: "test_audio_content", Description: "Returns one audio block, a WAV (scenario tools-call-audio)."},
		func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
			return confResult(handlers.AudioContent(confWAV, "audio/wav")), nil
		})
	// tools-call-embedded-resource
	s.AddTool(handlers.Tool{Name: "test_embedded_resource", Description: "Returns one embedded text resource (scenario tools-call-embedded-resource)."},
		func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
			return confResult(handlers.EmbeddedResource(mcp.ResourceContents{
				URI: "test://embedded-resource", MimeType: "text/plain", Text: confEmbeddedText,
			})), nil
		})
	// tools-call-mixed-content
	s.AddTool(handlers.Tool{Name: "test_multiple_content_types", Description: "Returns a text, an image and an embedded resource block (scenario tools-call-mixed-content)."},
		func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
			return confResult(
				handlers.TextContent("Multiple content types test:"),
				handlers.ImageContent(pixelPNG, "image/png"),
				handlers.EmbeddedResource(mcp.ResourceContents{
					URI: "test://mixed-content-resource", MimeType: "application/json", Text: `{"test":"data","value":123}`,
				}),
			), nil
		})
	// tools-call-with-logging: three info messages, 50 ms apart, before
	// the result.
	s.AddTool(handlers.Tool{Name: "test_tool_with_logging", Description: "Sends three info notifications/message 50 ms apart while it runs (scenario tools-call-with-logging)."},
		func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					if err := pause(ctx, 50*time.Millisecond); err != nil {
						return nil, err
					}
				}
				req.Log("info", "conformance", msg)
			}
			return handlers.TextResult("Tool with logging executed successfully"), nil
		})
	// tools-call-with-progress: 0, 50 and 100 of 100, 50 ms apart (only
	// sent when the request has a progressToken).
	s.AddTool(handlers.Tool{Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100, 50 ms apart, when given a progressToken (scenario tools-call-with-progress)."},
		func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					if err := pause(ctx, 50*time.Millisecond); err != nil {
						return nil, err
					}
				}
				req.Progress(p, 100, fmt.Sprintf("Completed step %.0f of 100", p))
			}
			return handlers.TextResult("Tool with progress executed successfully"), nil
		})
	// tools-call-error: a failure of the tool, so a result with isError.
	s.AddTool(handlers.Tool{Name: "test_error_handling", Description: "Always fails: a result with isError (scenario tools-call-error)."},
		func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
			return nil, errors.New(confErrorText)
		})
	// tools-call-sampling
	s.AddTool(handlers.Tool{
		Name:        "test_sampling",
		Description: "Asks the client's model (sampling/createMessage, maxTokens 100) to answer prompt, and returns \"LLM response: <its text>\" (scenario tools-call-sampling).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`),
	}, func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		prompt, _ := handlers.StringArg(args, "prompt")
		res, err := req.CreateMessage(ctx, []handlers.SamplingMessage{{Role: "user", Content: handlers.TextContent(prompt)}}, 100)
		if err != nil {
			return nil, err
		}
		return handlers.TextResult("LLM response: " + res.Content.Text), nil
	})
	// tools-call-elicitation
	s.AddTool(handlers.Tool{
		Name:        "test_elicitation",
		Description: "Asks the user (elicitation/create) for a username and an email, showing message, and returns the answer (scenario tools-call-elicitation).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
	}, func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		message, _ := handlers.StringArg(args, "message")
		return elicitText(ctx, req, "User response", message, confUserSchema)
	})
	// elicitation-sep1034-defaults
	s.AddTool(handlers.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Elicits a form whose string, integer, number, enum and boolean fields have defaults (scenario elicitation-sep1034-defaults, SEP-1034)."},
		func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
			return elicitText(ctx, req, "Elicitation completed", "Please review and update the form fields with defaults", confDefaultsSchema)
		})
	// elicitation-sep1330-enums
	s.AddTool(handlers.Tool{Name: "test_elicitation_sep1330_enums", Description: "Elicits a form with the five kinds of enum field: untitled and titled single-select, legacy enumNames, untitled and titled multi-select (scenario elicitation-sep1330-enums, SEP-1330)."},
		func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
			return elicitText(ctx, req, "Elicitation completed", "Please select options from the enum fields", confEnumsSchema)
		})
	// json-schema-2020-12: the input schema must be listed as written:
	// $schema, $defs, additionalProperties (SEP-1613), and allOf/anyOf,
	// if/then/else and an $anchor (SEP-2106), all of which it enforces.
	s.AddTool(handlers.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "Has an input schema of JSON Schema 2020-12 with $schema, $defs, $anchor, $ref, allOf/anyOf, if/then/else and additionalProperties, listed as written (scenario json-schema-2020-12, SEP-1613, SEP-2106).",
		InputSchema: json.RawMessage(confJSONSchema202012),
	}, func(_ context.Context, _ *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		return handlers.TextResult("JSON Schema 2020-12 tool called with: " + string(args)), nil
	})
	// server-sse-polling (a pending scenario) calls this tool and expects
	// the transport to close the request's SSE stream mid-call and the
	// result to reach the client after it reconnects with Last-Event-ID;
	// the tool itself only takes a little time.
	s.AddTool(handlers.Tool{Name: "test_reconnection", Description: "Waits 100 ms, then returns text: the call the SSE polling scenario (server-sse-polling, SEP-1699) makes while it checks stream resumption."},
		func(ctx context.Context, _ *handlers.Request, _ json.RawMessage) (*handlers.CallToolResult, error) {
			if err := pause(ctx, 100*time.Millisecond); err != nil {
				return nil, err
			}
			return handlers.TextResult("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil
		})
	// No scenario calls this one: it gives resources-subscribe and
	// resources-unsubscribe something to observe.
	s.AddTool(handlers.Tool{Name: "test_update_watched_resource", Description: "Changes the content of " + confWatchedURI + " and tells subscribed clients (notifications/resources/updated); returns the new content."},
		func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
			w.updates.Add(1)
			text := w.content()
			s.NotifyResourceUpdated(confWatchedURI)
			return handlers.TextResult(text), nil
		})
}

// elicitText elicits schema with message and returns "<prefix>:
// action=<action>, content=<content as JSON>", as the scenarios expect.
func elicitText(ctx context.Context, req *handlers.Request, prefix, message, schema string) (*handlers.CallToolResult, error) {
	res, err := req.Elicit(ctx, message, json.RawMessage(schema))
	if err != nil {
		return nil, err
	}
	content, err := json.Marshal(res.Content)
	if err != nil || res.Content == nil {
		content = []byte("{}")
	}
	return handlers.TextResult(fmt.Sprintf("%s: action=%s, content=%s", prefix, res.Action, content)), nil
}

// The requested schemas of the elicitation tools, as the scenarios check
// them field by field.
const (
	confUserSchema = `{"type":"object","properties":{` +
		`"username":{"type":"string","description":"User's response"},` +
		`"email":{"type":"string","description":"User's email address"}},` +
		`"required":["username","email"]}`
	confDefaultsSchema = `{"type":"object","properties":{` +
		`"name":{"type":"string","description":"User name","default":"John Doe"},` +
		`"age":{"type":"integer","description":"User age","default":30},` +
		`"score":{"type":"number","description":"User score","default":95.5},` +
		`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","description":"Verification status","default":true}},` +
		`"required":[]}`
	confEnumsSchema = `{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[` +
		`{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],` +
		`"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,` +
		`"items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,` +
		`"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},` +
		`"required":[]}`
	confJSONSchema202012 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
		`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},` +
		`"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
		`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
		`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},` +
		`"then":{"required":["phone"]},"else":{"required":["email"]},` +
		`"additionalProperties":false}`
)

// watched is the state of test://watched-resource: how many times
// test_update_watched_resource changed it.
type watched struct{ updates atomic.Int64 }

func (w *watched) content() string {
	if n := w.updates.Load(); n > 0 {
		return fmt.Sprintf("%s (update %d)", confWatchedText, n)
	}
	return confWatchedText
}

func addConformanceResources(s *handlers.Server, w *watched) {
	// resources-read-text
	s.AddResource(handlers.Resource{
		URI: "test://static-text", Name: "static-text", Title: "Static Text Resource",
		Description: "A static text resource (scenario resources-read-text).", MimeType: "text/plain",
	}, func(context.Context, *handlers.Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{Text: confStaticText}}, nil
	})
	// resources-read-binary
	s.AddResource(handlers.Resource{
		URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource",
		Description: "A static binary resource, a PNG image (scenario resources-read-binary).", MimeType: "image/png",
		Size: int64(len(pixelPNG)),
	}, func(context.Context, *handlers.Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{Blob: pixelPNG}}, nil
	})
	// resources-subscribe, resources-unsubscribe
	s.AddResource(handlers.Resource{
		URI: confWatchedURI, Name: "watched-resource", Title: "Watched Resource",
		Description: "A resource to subscribe to (scenarios resources-subscribe and resources-unsubscribe); test_update_watched_resource changes it.",
		MimeType:    "text/plain",
	}, func(context.Context, *handlers.Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{Text: w.content()}}, nil
	})
	// resources-templates-read
	s.AddResourceTemplate(handlers.ResourceTemplate{
		URITemplate: "test://template/{id}/data", Name: "template", Title: "Resource Template",
		Description: "JSON data for id (scenario resources-templates-read).", MimeType: "application/json",
		Complete: map[string]handlers.CompletionHandler{"id": handlers.CompleteFrom("123", "456", "789")},
	}, func(_ context.Context, _ *handlers.Request, _ string, vars map[string]string) ([]mcp.ResourceContents, error) {
		b, err := json.Marshal(struct {
			ID           string `json:"id"`
			TemplateTest bool   `json:"templateTest"`
			Data         string `json:"data"`
		}{vars["id"], true, "Data for ID: " + vars["id"]})
		if err != nil {
			return nil, err
		}
		return []mcp.ResourceContents{{Text: string(b)}}, nil
	})
}

func addConformancePrompts(s *handlers.Server) {
	addSimplePrompt(s)
	// prompts-get-with-args, completion-complete
	s.AddPrompt(handlers.Prompt{
		Name: "test_prompt_with_arguments", Title: "Prompt With Arguments",
		Description: "A prompt with two required arguments (scenarios prompts-get-with-args and completion-complete).",
		Arguments: []handlers.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true, Complete: handlers.CompleteFrom("paris", "park", "party")},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
	}, func(_ context.Context, _ *handlers.Request, args map[string]string) (*handlers.GetPromptResult, error) {
		text := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])
		return &handlers.GetPromptResult{Messages: []handlers.PromptMessage{{Role: "user", Content: handlers.TextContent(text)}}}, nil
	})
	// prompts-get-embedded-resource
	s.AddPrompt(handlers.Prompt{
		Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource",
		Description: "A prompt that embeds a text resource at resourceUri (scenario prompts-get-embedded-resource).",
		Arguments:   []handlers.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
	}, func(_ context.Context, _ *handlers.Request, args map[string]string) (*handlers.GetPromptResult, error) {
		return &handlers.GetPromptResult{Messages: []handlers.PromptMessage{
			{Role: "user", Content: handlers.EmbeddedResource(mcp.ResourceContents{URI: args["resourceUri"], MimeType: "text/plain", Text: confPromptResource})},
			{Role: "user", Content: handlers.TextContent("Please process the embedded resource above.")},
		}}, nil
	})
	// prompts-get-with-image
	s.AddPrompt(handlers.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt with an image, a PNG (scenario prompts-get-with-image)."},
		func(context.Context, *handlers.Request, map[string]string) (*handlers.GetPromptResult, error) {
			return &handlers.GetPromptResult{Messages: []handlers.PromptMessage{
				{Role: "user", Content: handlers.ImageContent(pixelPNG, "image/png")},
				{Role: "user", Content: handlers.TextContent("Please analyze the image above.")},
			}}, nil
		})
}
