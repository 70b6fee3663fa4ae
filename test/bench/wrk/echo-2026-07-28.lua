-- wrk script: stateless 2026-07-28 tools/call echo {"text":"hi"}, the same
-- request on every connection (a 2026-07-28 server has no session, and
-- request ids are per request, so one id serves). wrk checks no answers:
-- cmd/compare -http checks one with Go before wrk runs, and reports wrk's
-- non-2xx count.
--
--   wrk -t2 -c256 -d5s -s wrk/echo-2026-07-28.lua http://127.0.0.1:PORT/mcp
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},' ..
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
  '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},' ..
  '"io.modelcontextprotocol/clientCapabilities":{}}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "echo"
