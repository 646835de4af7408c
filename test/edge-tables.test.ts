/**
 * The CLI command table (src/cli/program.ts COMMANDS) and the MCP tool table
 * (src/server/mcp-tools.ts MCP_TOOLS) name their handlers: a reader goes from a command or a tool
 * to the function that calls the `Memory` facade in one step.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMANDS } from '../src/cli/program.js';
import { MCP_RESOURCES } from '../src/server/mcp.js';
import { MCP_TOOLS } from '../src/server/mcp-tools.js';

test('every CLI command names its handler; names are unique; groups come before their commands', () => {
  const seen = new Set<string>();
  const groups = new Set<string>();
  for (const c of COMMANDS) {
    if ('group' in c) {
      groups.add(c.group);
      continue;
    }
    assert.ok(!seen.has(c.name), `duplicate command ${c.name}`);
    seen.add(c.name);
    const fn = 'raw' in c ? c.raw : c.handler;
    assert.match(fn.name, /^[a-z][A-Za-z]+$/, `${c.name}: the handler is a named function`);
    const words = c.name.split(' ');
    if (words.length > 1) assert.ok(groups.has(words[0] as string), `${c.name}: its group comes first`);
  }
  for (const name of ['init', 'write', 'derive', 'authorize', 'audit verify', 'import', 'migrate', 'serve', 'mcp', 'token adopt']) assert.ok(seen.has(name), name);
});

test('every MCP tool and resource names its handler', () => {
  assert.deepEqual(
    MCP_TOOLS.map((t) => t.name),
    ['remember', 'recall', 'get_memory', 'supersede_memory', 'summarize_into_memory', 'check_action', 'authorize_action', 'forget', 'replay_decision', 'verify_audit'],
  );
  for (const t of MCP_TOOLS) assert.match(t.handler.name, /^[a-z][A-Za-z]+$/, t.name);
  for (const r of MCP_RESOURCES) assert.match(r.read.name, /^read[A-Z][A-Za-z]+$/, r.name);
});
