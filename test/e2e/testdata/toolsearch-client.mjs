// Drives mcprt gateway -tool-search with the official TypeScript SDK v2
// client (@modelcontextprotocol/client, pinned in test/e2e/npm): it lists
// the tools, searches with search_tools, and calls the first tool found
// through call_tool, then prints what it saw as one JSON line for
// TestGatewayToolSearchTSClient. Its first argument is the gateway's URL
// (Streamable HTTP), or the command that starts it (stdio) and its
// arguments after.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [target, ...args] = process.argv.slice(2);
const transport = target.startsWith('http')
  ? new StreamableHTTPClientTransport(new URL(target))
  : new StdioClientTransport({ command: target, args, stderr: 'inherit' });
const client = new Client({ name: 'mcprt-e2e-toolsearch', version: '1.0.0' });
await client.connect(transport);
const listed = await client.listTools();
// The SDK checks structuredContent against search_tools' outputSchema.
const found = await client.callTool({ name: 'search_tools', arguments: { query: 'add two numbers', limit: 3 } });
const first = found.structuredContent.tools[0];
const called = await client.callTool({ name: 'call_tool', arguments: { name: first.name, arguments: { a: 2, b: 3 } } });
console.log(JSON.stringify({
  listed: listed.tools.map((t) => t.name),
  found: found.structuredContent.tools.map((t) => t.name),
  foundSchema: first.inputSchema,
  called,
}));
await client.close();
