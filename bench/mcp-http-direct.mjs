// mcp-http-direct.mjs — bench/mcp-http.sh's direct side: the official SDK
// client over Streamable HTTP to URL (argv[2]), running the ops of
// $MCP_OPS as tests/mcp/client.mjs does ("call" and "bench" only).
// Copied next to the SDK install (tests/mcp/setup.sh's cache) to run.
// $MCP_TOKEN, when set, goes as "Authorization: Bearer" (cordon mcp --listen).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const ops = JSON.parse(process.env.MCP_OPS || '[]');
const client = new Client({ name: 'cordon-bench', version: '1.0.0' }, { capabilities: {} });
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const headers = process.env.MCP_TOKEN ? { Authorization: 'Bearer ' + process.env.MCP_TOKEN } : {};
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2]), { requestInit: { headers } }));
for (const op of ops) {
	if (op.op === 'call') {
		const r = await client.callTool({ name: op.name, arguments: op.args || {} });
		out({ isError: !!r.isError, text: (r.content || []).map((c) => c.text || '').join('') });
	} else if (op.op === 'bench') {
		const ms = [];
		for (let i = 0; i < op.n; i++) {
			const t0 = process.hrtime.bigint();
			await client.callTool({ name: op.name, arguments: op.args || {} });
			ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
		}
		out({ ms });
	}
}
await client.close().catch(() => {});
process.exit(0);
