// config-client.mjs CONFIG NAME — an MCP host as Claude Desktop and other
// SDK-based hosts are: it reads an MCP client configuration (mcpServers),
// starts server NAME with exactly its command, args, env and cwd through the
// official SDK's StdioClientTransport (which, without "env", passes only
// HOME LOGNAME PATH SHELL TERM USER), and runs the ops in $MCP_OPS as
// client.mjs does: {"op":"list"} -> {"tools":[names...]},
// {"op":"call","name":N,"args":{...}} -> {"isError":b,"text":"..."}.
// Needs node_modules with @modelcontextprotocol/sdk beside it.
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [config, name] = process.argv.slice(2);
const entry = JSON.parse(readFileSync(config, 'utf8')).mcpServers[name];
const ops = JSON.parse(process.env.MCP_OPS || '[]');
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const client = new Client({ name: 'cordon-example-host', version: '1.0.0' }, { capabilities: {} });
const transport = new StdioClientTransport({
	command: entry.command,
	args: entry.args || [],
	env: entry.env,
	cwd: entry.cwd,
	stderr: 'inherit',
});
try {
	await client.connect(transport);
	for (const op of ops) {
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
