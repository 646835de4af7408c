/**
 * What the MCP server shows the model: invisible, bidi and line-breaking characters in stored
 * text are written as visible `\uXXXX` escapes (the JSON stays valid and decodes to the original),
 * and `tools/list` stays small, with a description on every input property.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { openMemory } from '../src/api/open.js';
import { createMcpServer } from '../src/server/mcp.js';
import { markInvisible, modelJson } from '../src/server/mcp-text.js';

const HIDDEN = ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad', '\u202e', '\u2066', '\u061c', '\u2028', '\ufe0f', '\u{e0041}', '\u{e007f}'];

test('every invisible, bidi and line-breaking character is escaped; the JSON still decodes to the original', () => {
  for (const c of HIDDEN) {
    const text = `pay ACCT${c}-1`;
    const out = modelJson({ content: text });
    assert.ok(![...out].includes(c), `U+${c.codePointAt(0)?.toString(16)} is escaped`);
    assert.equal((JSON.parse(out) as { content: string }).content, text);
    assert.match(markInvisible(text), /\\u[0-9a-f]{4}/);
  }
  assert.equal(markInvisible('plain text, café ✓'), 'plain text, café ✓', 'visible text is untouched');
});

test('MCP: recalled text with hidden characters reaches the model escaped; tools/list is small and fully described', async () => {
  const mem = await openMemory({ path: ':memory:' });
  try {
    const principal = await mem.registerPrincipal({ tenant: 't', id: 'a', kind: 'agent', domain: 'd' });
    await mem.registerPrincipal({ tenant: 't', id: 'web', kind: 'tool', domain: 'browser' });
    const hidden = 'Acme invoice\u200b\u{e0049}\u{e0047}\u{e004e}\u202e settles to ACCT-9';
    await mem.write({ tenant: 't', scope: 'v', principal: 'web', source: 'https://evil.example/', content: hidden });
    const server = createMcpServer({ mem, tenant: 't', principal, session: 's', context: 'session', config: { maxContentChars: 1000 }, version: '0' } as never);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const c = new Client({ name: 'test', version: '1' });
    await c.connect(b);
    const r = await c.callTool({ name: 'recall', arguments: { scope: 'v', query: 'Acme invoice' } });
    const text = (r.content as Array<{ text: string }>).map((x) => x.text).join('\n');
    for (const ch of ['\u200b', '\u202e', '\u{e0049}']) assert.ok(!text.includes(ch), `U+${ch.codePointAt(0)?.toString(16)} not raw in the text`);
    assert.match(text, /\\u200b/);
    assert.match(text, /\\udb40\\udc49/, 'a tag character as its escaped surrogate pair');
    const list = await c.listTools();
    const size = Buffer.byteLength(JSON.stringify(list));
    assert.ok(size < 10_000, `tools/list is ${size} bytes`);
    for (const t of list.tools)
      for (const [k, v] of Object.entries((t.inputSchema.properties ?? {}) as Record<string, { description?: string }>)) assert.ok(v.description, `${t.name}.${k} has a description`);
    await c.close();
  } finally {
    await mem.close();
  }
});
