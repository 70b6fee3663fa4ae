// Package gateway puts one MCP server in front of many: a handlers.Server
// whose tools, prompts, resources and resource templates are those of
// supervised backend servers (stdio processes), named with a prefix per
// backend so that they cannot collide, and whose handlers forward each
// request to the backend that offers it.
//
// The configuration is the "mcpServers" file that MCP clients write (see
// ParseConfig), with a few keys of the gateway's own per backend.
package gateway
