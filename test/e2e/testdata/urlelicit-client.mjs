// Drives a call of an "auth": "user" backend through mcprt gateway -http
// with the official TypeScript SDK v2 client (@modelcontextprotocol/client,
// pinned in test/e2e/npm), declaring URL-mode elicitation, for
// TestOAuthGatewayUserURLElicitationTS. Arguments: the gateway's URL (or
// "stdio", the command that starts it being the arguments after era),
// the caller's access token, the tool, and "legacy" or "modern"
// (2026-07-28). It prints one JSON line per event on stdout and reads the
// test's answers on stdin, one per line: to an elicitation, "accept" or
// "decline"; after an accept, the confirmation code the sign-in page
// showed, which it enters with the backend's confirm_sign_in while the
// first call still waits, or "-" when there is none (over stdio).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import readline from 'node:readline';

const [url, token, tool, era, ...command] = process.argv.slice(2);
const prefix = tool.split('__')[0];
const out = (o) => console.log(JSON.stringify(o));
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => (await lines.next()).value;

const client = new Client({ name: 'mcprt-e2e-url-elicitation', version: '1.0.0' }, {
  capabilities: { elicitation: { url: {} } },
  ...(era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
});
const completed = [];
client.setNotificationHandler('notifications/elicitation/complete', (n) => { completed.push(n.params.elicitationId); });
let accepted = null;
let signedIn = () => {};
const confirmed = new Promise((resolve) => { signedIn = resolve; });
client.setRequestHandler('elicitation/create', async (request) => {
  out({ elicitation: request.params });
  const action = await next();
  if (action === 'accept') {
    accepted = request.params.elicitationId;
    // Like a client that opened the link: the user comes back with the
    // code, entered while this call waits.
    next().then(async (code) => {
      if (code !== '-') {
        const r = await client.callTool({ name: `${prefix}__confirm_sign_in`, arguments: { code } });
        out({ confirmed: r });
      }
      signedIn();
    });
  }
  return { action };
});
const transport = url === 'stdio'
  ? new StdioClientTransport({ command: command[0], args: command.slice(1), env: process.env, stderr: 'inherit' })
  : new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
await client.connect(transport);
try {
  const called = await client.callTool({ name: tool, arguments: {} }, { timeout: 120000 });
  if (accepted) await confirmed;
  out({ called, completed, accepted });
} catch (e) {
  out({ error: { code: e.code, message: e.message, data: e.data }, completed });
}
await client.close();
process.exit(0);
