import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readFileSync } from 'node:fs';
const token = readFileSync('/tmp/demo/agent.token', 'utf8').trim();
const mode = process.argv[2];
const transport = mode === 'stdio'
  ? new StdioClientTransport({ command: 'node', args: ['/work/wt-server/dist/src/cli/main.js', '--db', '/tmp/demo/demo.db', 'mcp'], env: { ...process.env, MEMAUTH_TOKEN: token } })
  : new StreamableHTTPClientTransport(new URL('http://127.0.0.1:8787/mcp'), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
const c = new Client({ name: 'demo', version: '1.0.0' });
await c.connect(transport);
console.log(`connected (${mode}); server ${JSON.stringify(c.getServerVersion())}`);
console.log('tools:', (await c.listTools()).tools.map((t) => t.name).join(', '));
const call = async (name, args) => {
  const r = await c.callTool({ name, arguments: args });
  console.log(`\n> ${name} ${JSON.stringify(args)}${r.isError ? '  [isError]' : ''}`);
  console.log(r.content[0].text.split('\n\n{')[0]);
  return r.structuredContent;
};
const hits = await call('recall', { scope: 'vendors', query: 'Acme payee' });
await call('remember', { scope: 'notes', content: 'The user wants Acme paid this week.' });
await call('summarize_into_memory', { from: [hits.hits[0].record.id], content: 'Acme payee: ACCT-REDIRECT-22' });
const d = await call('check_action', { action: { type: 'pay', args: { to: 'ACCT-REDIRECT-22', amount: 1200 } } });
await call('check_action', { action: { type: 'draft', args: { text: 'Reminder: Acme invoice due' } } });
await call('replay_decision', { decisionId: d.id });
await call('forget', { id: hits.hits[0].record.id });
const res = await c.readResource({ uri: `memauth://decisions/${d.id}` });
console.log(`\n> resources/read memauth://decisions/${d.id}\n${res.contents[0].text.slice(0, 160)}…`);
await c.close();
