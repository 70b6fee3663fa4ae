package mcp

import "slices"

// metaPrefix is the prefix of the _meta keys (and extension ids) the
// protocol reserves.
const metaPrefix = "io.modelcontextprotocol/"

// _meta keys of 2026-07-28 (MetaRelatedTask is 2025-11-25's too).
const (
	MetaProtocolVersion    = metaPrefix + "protocolVersion"
	MetaClientCapabilities = metaPrefix + "clientCapabilities"
	MetaClientInfo         = metaPrefix + "clientInfo"
	MetaLogLevel           = metaPrefix + "logLevel"
	MetaServerInfo         = metaPrefix + "serverInfo"
	MetaRelatedTask        = metaPrefix + "related-task"
)

// TasksExtension is the id of the 2026-07-28 tasks extension, which a
// server and a client each declare to run tool calls as tasks.
const TasksExtension = metaPrefix + "tasks"

// SkillsExtension is the id of the skills extension (SEP-2640): a server
// that declares it in capabilities.extensions serves skills/list and
// skills/get.
const SkillsExtension = metaPrefix + "skills"

// LogLevels are the levels of notifications/message, lowest first (RFC
// 5424's, as MCP names them).
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LevelAdmits reports whether a message at level passes a minimum level
// min ("" admits nothing: a client that asked for no level gets no
// messages).
func LevelAdmits(min, level string) bool {
	if min == "" {
		return false
	}
	mi, li := slices.Index(LogLevels, min), slices.Index(LogLevels, level)
	return mi >= 0 && li >= mi
}
