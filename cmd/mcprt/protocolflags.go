package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// The protocol flags, -era and -protocol, are the same on every verb that
// talks to a server (list, call, read, get, ping, bench, chaos): defined
// here once, with one help text; only the defaults differ, and each verb's
// usage says why.

const eraUsage = "protocol `era`: auto (try server/discover, fall back to initialize), " +
	"legacy (the initialize handshake) or modern (2026-07-28: server/discover, _meta on every request)"

func protocolUsage(defaults string) string {
	var legacy, modern []string
	for _, v := range mcp.SupportedVersions() {
		if era, _ := client.VersionEra(v); era == client.EraModern {
			modern = append(modern, v)
		} else {
			legacy = append(legacy, v)
		}
	}
	return fmt.Sprintf("protocol `revision` to speak (it implies its era: %s modern; %s legacy); "+
		"a server that answers another fails (default: %s)",
		strings.Join(modern, ", "), strings.Join(legacy, ", "), defaults)
}

// protocolFlags are one verb's -era and -protocol.
type protocolFlags struct {
	fs       *flag.FlagSet
	era      *string
	protocol *string
}

// addProtocolFlags defines -era, defaulting to defaultEra, and -protocol,
// whose default (none: chosen by era) protocolDefault describes.
func addProtocolFlags(fs *flag.FlagSet, defaultEra client.Era, protocolDefault string) *protocolFlags {
	return &protocolFlags{
		fs:       fs,
		era:      fs.String("era", defaultEra.String(), eraUsage),
		protocol: fs.String("protocol", "", protocolUsage(protocolDefault)),
	}
}

// settle checks the flags after parsing: the era, and the revision asked
// for ("" when none was). A -protocol given without -era sets the era; given
// with an -era of the other era, it is an error. Errors are for the user,
// naming the flag.
func (p *protocolFlags) settle() (client.Era, string, error) {
	var era client.Era
	switch *p.era {
	case "auto":
		era = client.EraAuto
	case "legacy":
		era = client.EraLegacy
	case "modern":
		era = client.EraModern
	default:
		return 0, "", fmt.Errorf("-era %q: want auto, legacy or modern", *p.era)
	}
	v := *p.protocol
	if v == "" {
		return era, "", nil
	}
	vEra, ok := client.VersionEra(v)
	if !ok {
		return 0, "", fmt.Errorf("-protocol %q: want one of %s", v, strings.Join(mcp.SupportedVersions(), ", "))
	}
	eraSet := false
	p.fs.Visit(func(f *flag.Flag) { eraSet = eraSet || f.Name == "era" })
	if eraSet && era != client.EraAuto && era != vEra {
		return 0, "", fmt.Errorf("-protocol %s is not of the %s era", v, era)
	}
	return vEra, v, nil
}

// probeEra settles -era auto for the verbs that speak one era throughout
// (bench, chaos): one session with the server, opened as the client verbs
// open theirs, says which era and revision it speaks, and is closed.
func probeEra(ctx context.Context, argv, env []string, timeout time.Duration) (client.Era, string, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("no handshake within %v", timeout))
	defer cancel()
	c, err := client.Connect(ctx, client.Command{Path: argv[0], Args: argv[1:], Env: env},
		&client.Options{ClientInfo: mcp.Implementation{Name: "mcprt", Version: version},
			Logger: slog.New(slog.DiscardHandler), CloseGrace: time.Second, TermGrace: time.Second})
	if err != nil {
		return 0, "", fmt.Errorf("-era auto: %w", err)
	}
	era, v := c.Era(), c.ProtocolVersion()
	_ = c.Close()
	return era, v, nil
}
