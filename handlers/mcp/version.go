package mcp

import "slices"

// Protocol revisions mcprt speaks.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"
)

// LegacyVersions are the initialize-era revisions, newest first.
var LegacyVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

// ModernVersions are the per-request-_meta revisions, newest first.
var ModernVersions = []string{Version20260728}

// SupportedVersions lists every revision mcprt speaks, modern first: what
// server/discover and the -32022 error report, and what a client offers.
// The slice is the caller's.
func SupportedVersions() []string {
	return append(slices.Clone(ModernVersions), LegacyVersions...)
}
