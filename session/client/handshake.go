package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

type discoverResult struct {
	SupportedVersions []string                   `json:"supportedVersions"`
	Capabilities      map[string]json.RawMessage `json:"capabilities"`
	Instructions      string                     `json:"instructions"`
	Meta              struct {
		ServerInfo mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
}

type initializeResult struct {
	ProtocolVersion string                     `json:"protocolVersion"`
	Capabilities    map[string]json.RawMessage `json:"capabilities"`
	ServerInfo      mcp.Implementation         `json:"serverInfo"`
	Instructions    string                     `json:"instructions"`
}

// handshake settles the era and version, following the 2026-07-28 stdio
// backward-compatibility rules for EraAuto: a DiscoverResult means modern;
// UnsupportedProtocolVersion (-32022) means modern but another version, so
// initialize only if the server lists a legacy one; any other error, or
// silence until ProbeTimeout, means legacy. The fallback is deliberately
// not keyed to one error code: legacy servers answer unknown pre-initialize
// requests with -32601, -32602, something else, or nothing.
func (c *Client) handshake(ctx context.Context) error {
	switch c.opts.Era {
	case EraLegacy:
		v := c.opts.Version
		if v == "" {
			v = mcp.LegacyVersions[0]
		}
		return c.initialize(ctx, v, c.opts.Version != "")
	case EraModern:
		v := c.opts.Version
		if v == "" {
			v = mcp.ModernVersions[0]
		}
		res, err := c.discover(ctx, v, callOptions{})
		if supported, refused := unsupportedVersion(err); refused && slices.Contains(supported, v) {
			// Refused, yet listed among those the server supports: the
			// client retries with a version from the list, once.
			res, err = c.discover(ctx, v, callOptions{})
		}
		if err != nil {
			return err
		}
		if !slices.Contains(res.SupportedVersions, v) {
			return fmt.Errorf("server/discover: server does not list %s (it supports %s)", v, strings.Join(res.SupportedVersions, ", "))
		}
		c.useDiscover(res, v)
		return nil
	}
	probe := c.opts.ProbeTimeout
	if deadline, ok := ctx.Deadline(); ok {
		// The probe must not use up the connect's whole budget: a legacy
		// server that ignores it needs time left for initialize.
		probe = max(min(probe, time.Until(deadline)/2), time.Millisecond)
	}
	res, err := c.discover(ctx, mcp.ModernVersions[0], callOptions{timeout: probe})
	if err == nil && len(res.SupportedVersions) == 0 {
		// Some legacy servers answer any method with an empty result: that
		// is no DiscoverResult.
		c.log.Debug("server/discover answered without supportedVersions; falling back to initialize")
		return c.initialize(ctx, mcp.LegacyVersions[0], false)
	}
	if err == nil {
		if v := common(mcp.ModernVersions, res.SupportedVersions); v != "" {
			c.useDiscover(res, v)
			return nil
		}
		if v := common(mcp.LegacyVersions, res.SupportedVersions); v != "" {
			return c.initialize(ctx, v, false)
		}
		return fmt.Errorf("server/discover: no protocol version in common (server: %s; client: %s)",
			strings.Join(res.SupportedVersions, ", "), strings.Join(mcp.SupportedVersions(), ", "))
	}
	var ee *ExitError
	var ue *url.Error // over HTTP, the server could not be reached at all
	if ctx.Err() != nil || errors.As(err, &ee) || errors.Is(err, ErrClosed) || errors.As(err, &ue) {
		return err
	}
	var he *HTTPError
	if errors.As(err, &he) && he.Status != http.StatusBadRequest && he.Status != http.StatusNotFound && he.Status != http.StatusMethodNotAllowed {
		// Only those three mean "not a modern endpoint" (2026-07-28,
		// Backward Compatibility); 401, 403 or a 5xx would be the
		// initialize's answer too.
		return err
	}
	var re *RPCError
	if errors.As(err, &re) && (re.Err.Code == jsonrpc.CodeHeaderMismatch || re.Err.Code == jsonrpc.CodeMissingClientCapability) {
		// A modern server refused the probe itself: initialize would only
		// hide why.
		return err
	}
	if supported, refused := unsupportedVersion(err); refused {
		// The server speaks the era and says which versions: retry with
		// one of ours it lists (once), modern first.
		if v := common(mcp.ModernVersions, supported); v != "" {
			res, err := c.discover(ctx, v, callOptions{})
			if err != nil {
				return err
			}
			if !slices.Contains(res.SupportedVersions, v) {
				return fmt.Errorf("server/discover: server does not list %s (it supports %s)", v, strings.Join(res.SupportedVersions, ", "))
			}
			c.useDiscover(res, v)
			return nil
		}
		if v := common(mcp.LegacyVersions, supported); v != "" {
			return c.initialize(ctx, v, false)
		}
		return fmt.Errorf("server/discover: no protocol version in common (server: %s; client: %s)",
			strings.Join(supported, ", "), strings.Join(mcp.SupportedVersions(), ", "))
	}
	c.log.Debug("server/discover probe failed; falling back to initialize", "err", err)
	return c.initialize(ctx, mcp.LegacyVersions[0], false)
}

// unsupportedVersion reads err as an UnsupportedProtocolVersion error and
// returns the versions it says the server supports.
func unsupportedVersion(err error) (supported []string, ok bool) {
	var re *RPCError
	if !errors.As(err, &re) || re.Err.Code != jsonrpc.CodeUnsupportedProtocolVersion {
		return nil, false
	}
	return supportedFrom(re.Err.Data), true
}

// common returns the first of ours (newest first) that theirs contains.
func common(ours, theirs []string) string {
	for _, v := range ours {
		if slices.Contains(theirs, v) {
			return v
		}
	}
	return ""
}

// supportedFrom reads data.supported of a -32022 error.
func supportedFrom(data any) []string {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	var d struct {
		Supported []string `json:"supported"`
	}
	_ = json.Unmarshal(raw, &d)
	return d.Supported
}

func (c *Client) discover(ctx context.Context, version string, o callOptions) (*discoverResult, error) {
	raw, err := c.roundTrip(ctx, "server/discover", nil, nil, c.metaFor(version), o, false)
	if err != nil {
		return nil, err
	}
	var res discoverResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("server/discover: malformed result: %w", err)
	}
	return &res, nil
}

func (c *Client) useDiscover(res *discoverResult, version string) {
	c.era, c.version = EraModern, version
	c.caps = res.Capabilities
	c.serverInfo = res.Meta.ServerInfo
	c.instructions = res.Instructions
}

// initialize runs the legacy handshake. A pinned version must be the one
// the server answers; otherwise any legacy version this client speaks is
// accepted (the server's counter-offer).
func (c *Client) initialize(ctx context.Context, version string, pinned bool) error {
	params := map[string]json.RawMessage{
		"protocolVersion": mustMarshal(version),
		"capabilities":    c.clientCapsFor(version),
		"clientInfo":      mustMarshal(c.opts.ClientInfo),
	}
	raw, err := c.roundTrip(ctx, "initialize", mustMarshal(params), nil, nil, callOptions{}, false)
	if err != nil {
		return err
	}
	var res initializeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("initialize: malformed result: %w", err)
	}
	switch {
	case pinned && res.ProtocolVersion != version:
		return fmt.Errorf("initialize: server answered protocol version %q; %s was required", res.ProtocolVersion, version)
	case !slices.Contains(mcp.LegacyVersions, res.ProtocolVersion):
		return fmt.Errorf("initialize: server answered protocol version %q, which this client does not speak", res.ProtocolVersion)
	}
	c.era, c.version = EraLegacy, res.ProtocolVersion
	if c.h != nil {
		c.h.setVersion(res.ProtocolVersion) // MCP-Protocol-Version from now on
	}
	c.caps = res.Capabilities
	c.serverInfo = res.ServerInfo
	c.instructions = res.Instructions
	c.notify("notifications/initialized", nil)
	if _, logs := c.caps["logging"]; logs && c.opts.LogLevel != "" {
		if err := c.call(ctx, "logging/setLevel", map[string]string{"level": c.opts.LogLevel}, nil); err != nil {
			return err
		}
	}
	return nil
}

// clientCapsFor declares a capability only for the handlers that are set,
// in the shape the revision knows.
func (c *Client) clientCapsFor(version string) json.RawMessage {
	caps := map[string]any{}
	if c.opts.Roots != nil {
		if c.opts.RootsListChanged {
			caps["roots"] = map[string]any{"listChanged": true}
		} else {
			caps["roots"] = map[string]any{} // no listChanged: the roots never change
		}
	}
	if c.opts.Sampling != nil {
		caps["sampling"] = map[string]any{}
	}
	if ext := c.extensionsObject(); ext != nil {
		caps["extensions"] = ext
	}
	if c.opts.Elicitation != nil && version >= mcp.Version20250618 {
		if version >= mcp.Version20251125 {
			caps["elicitation"] = map[string]any{"form": map[string]any{}}
		} else {
			caps["elicitation"] = map[string]any{}
		}
	}
	return mustMarshal(caps)
}

// extensionsObject is Options.Extensions as a capabilities member (nil
// for none); a nil settings object is {}.
func (c *Client) extensionsObject() map[string]json.RawMessage {
	if len(c.opts.Extensions) == 0 {
		return nil
	}
	ext := make(map[string]json.RawMessage, len(c.opts.Extensions))
	for id, settings := range c.opts.Extensions {
		if len(settings) == 0 || string(settings) == "null" {
			settings = json.RawMessage("{}")
		}
		ext[id] = settings
	}
	return ext
}

// Era is the era the session speaks (EraLegacy or EraModern).
func (c *Client) Era() Era { return c.era }

// ProtocolVersion is the negotiated protocol revision.
func (c *Client) ProtocolVersion() string { return c.version }

// ServerInfo is the server's serverInfo (from initialize, or from the
// server/discover _meta).
func (c *Client) ServerInfo() mcp.Implementation { return c.serverInfo }

// Instructions are the server's instructions, if it gave any.
func (c *Client) Instructions() string { return c.instructions }

// Capabilities are the server's capabilities, by name ("tools",
// "resources", "prompts", "completions", "logging", ...), each raw.
func (c *Client) Capabilities() map[string]json.RawMessage { return maps.Clone(c.caps) }

// fulfil answers the inputRequests of an input_required result with the
// Options handlers, and returns the params to add to the retry:
// inputResponses, and requestState exactly as received (absent if it was).
func (c *Client) fulfil(ctx context.Context, requests map[string]json.RawMessage, state *string) (map[string]json.RawMessage, error) {
	extra := map[string]json.RawMessage{}
	if len(requests) > 0 {
		responses := make(map[string]json.RawMessage, len(requests))
		for _, key := range slices.Sorted(maps.Keys(requests)) {
			var r struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(requests[key], &r); err != nil {
				return nil, fmt.Errorf("input request %q is malformed: %w", key, err)
			}
			res, err := c.answerInput(ctx, r.Method, r.Params)
			if err != nil {
				return nil, fmt.Errorf("input request %q (%s): %w", key, r.Method, err)
			}
			b, err := json.Marshal(res)
			if err != nil {
				return nil, fmt.Errorf("input request %q (%s): encoding the answer: %w", key, r.Method, err)
			}
			responses[key] = b
		}
		extra["inputResponses"] = mustMarshal(responses)
	}
	if state != nil {
		extra["requestState"] = mustMarshal(*state)
	}
	return extra, nil
}

// answerInput runs the handler for one server request for input.
func (c *Client) answerInput(ctx context.Context, method string, params json.RawMessage) (any, error) {
	notFound := &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method}
	switch method {
	case "ping":
		return struct{}{}, nil
	case "roots/list":
		if c.opts.Roots == nil {
			return nil, notFound
		}
		roots, err := c.opts.Roots(ctx)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = []mcp.Root{}
		}
		return map[string]any{"roots": roots}, nil
	case "sampling/createMessage":
		if c.opts.Sampling == nil {
			return nil, notFound
		}
		return c.opts.Sampling(ctx, params)
	case "elicitation/create":
		if c.opts.Elicitation == nil {
			return nil, notFound
		}
		return c.opts.Elicitation(ctx, params)
	}
	return nil, notFound
}

// serverRequest answers a request the server sent (legacy era) on its own
// goroutine, so a slow handler (a human answering an elicitation) never
// holds up the reading of stdout. A request the server cancels gets no
// answer, as the specification asks.
func (c *Client) serverRequest(m *jsonrpc.Message) {
	ctx, cancel := context.WithCancel(c.bg)
	key := string(m.ID)
	c.mu.Lock()
	c.inbound[key] = cancel
	c.mu.Unlock()
	id, method, params := m.ID, m.Method, m.Params
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() {
			c.mu.Lock()
			delete(c.inbound, key)
			c.mu.Unlock()
			cancel()
		}()
		res, err := c.answerInput(ctx, method, params)
		if ctx.Err() != nil {
			return
		}
		var line []byte
		if err == nil {
			b, merr := json.Marshal(res)
			if merr != nil {
				err = merr
			} else {
				if rt, ok := relatedTask(params); ok && len(b) > 0 && b[0] == '{' {
					// A question a 2025-11-25 task asks: its answer
					// is related to the task too, and says so.
					b = appendObject(nil, b, nil, []member{{mcp.MetaRelatedTask, rt}})
				}
				line = jsonrpc.AppendResult(nil, id, b)
			}
		}
		if err != nil {
			var je *jsonrpc.Error
			if !errors.As(err, &je) {
				je = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
			line = jsonrpc.AppendError(nil, id, je)
		}
		c.send(0, line)
	}()
}
