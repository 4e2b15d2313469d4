// http-client.mjs — the official MCP SDK client over Streamable HTTP
// (StreamableHTTPClientTransport), for `cordon mcp --listen`: connects to
// $MCP_URL with "Authorization: Bearer $MCP_TOKEN" and runs the ops in
// $MCP_OPS as client.mjs does ({"op":"list"}, {"op":"call",...}), one JSON
// line per op on stdout.  Run from a directory whose node_modules is the
// test cache's (the test links it).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const ops = JSON.parse(process.env.MCP_OPS || '[]');
const client = new Client({ name: 'cordon-test-http', version: '1.0.0' }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
	requestInit: { headers: { Authorization: 'Bearer ' + (process.env.MCP_TOKEN || '') } },
});
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
try {
	await client.connect(transport);
	for (const op of ops) {
		try {
			if (op.op === 'list') {
				const r = await client.listTools({});
				out({ tools: r.tools.map((t) => t.name).sort() });
			} else if (op.op === 'call') {
				const r = await client.callTool({ name: op.name, arguments: op.args || {} });
				out({ isError: !!r.isError, text: (r.content || []).map((c) => c.text || '').join('') });
			}
		} catch (e) {
			out({ error: String(e && e.message ? e.message : e) });
		}
	}
	await transport.terminateSession().catch(() => {});
} catch (e) {
	out({ error: 'connect: ' + String(e && e.message ? e.message : e) });
}
await client.close().catch(() => {});
process.exit(0);
