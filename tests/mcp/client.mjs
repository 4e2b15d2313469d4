// client.mjs — the official MCP SDK client, driven by the integration tests
// and bench/mcp.sh: connects to `argv[2..]` over stdio and runs the ops in
// $MCP_OPS (a JSON array), printing one JSON line per op on stdout.
//   {"op":"list"}                          -> {"tools":[names...]}
//   {"op":"call","name":N,"args":{...}}    -> {"isError":b,"text":"..."} or {"error":"..."}
//   {"op":"bench","name":N,"args":{},"n":1000} -> {"ms":[...per call...]}
// $MCP_ROOTS (a JSON array of file:// URIs) makes the client declare roots.
// Before an op, "sleep":MS waits that long and "wait_for":PATH until PATH
// exists (the test creates it when what the op must follow has happened;
// up to 60 s, then {"error":"wait_for ..."} and the op is not run).
import { existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [cmd, ...args] = process.argv.slice(2);
const ops = JSON.parse(process.env.MCP_OPS || '[]');
const roots = process.env.MCP_ROOTS ? JSON.parse(process.env.MCP_ROOTS) : null;
const caps = roots ? { roots: { listChanged: true } } : {};
const client = new Client({ name: 'cordon-test', version: '1.0.0' }, { capabilities: caps });
if (roots)
	client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.map((uri) => ({ uri })) }));
const transport = new StdioClientTransport({ command: cmd, args, env: process.env, stderr: 'inherit' });
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
try {
	await client.connect(transport);
	for (const op of ops) {
		if (op.sleep) await new Promise((r) => setTimeout(r, op.sleep));
		if (op.wait_for) {
			let n = 0;
			while (!existsSync(op.wait_for) && n++ < 1200) await new Promise((r) => setTimeout(r, 50));
			if (!existsSync(op.wait_for)) {
				out({ error: 'wait_for ' + op.wait_for + ': not there after 60 s' });
				continue;
			}
		}
		try {
			if (op.op === 'list') {
				const names = [];
				let cursor;
				do {
					const r = await client.listTools(cursor ? { cursor } : {});
					names.push(...r.tools.map((t) => t.name));
					cursor = r.nextCursor;
				} while (cursor);
				out({ tools: names.sort() });
			} else if (op.op === 'call') {
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
		} catch (e) {
			out({ error: String(e && e.message ? e.message : e) });
		}
	}
} catch (e) {
	out({ error: 'connect: ' + String(e && e.message ? e.message : e) });
}
await client.close().catch(() => {});
process.exit(0);
