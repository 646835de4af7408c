/**
 * memauth/langchain with the real @langchain/core (v1): gated tools bound to LangChain's own fake
 * chat model, driven by the usual tool-calling loop. No network.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AIMessageChunk, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { type StructuredToolInterface, tool } from '@langchain/core/tools';
import { FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { z } from 'zod';
import { type ToolDenial, gateTools, isToolDenial, memoryTools } from '../src/integrations/langchain.js';
import { type AgentEnv, EVIL_ACCOUNT, GOOD_ACCOUNT, PAGE_TEXT, PAGE_URL, SCOPE, TENANT, agentEnv } from './integrations-helpers.js';

type Call = { id: string; name: string; args: Record<string, unknown> };

/**
 * The standard LangChain tool-calling loop over a scripted model: each step is one model turn
 * (LangChain's FakeStreamingChatModel answering with the given tool calls), then every tool call
 * is invoked and its ToolMessage appended.
 */
async function runAgent(tools: StructuredToolInterface[], prompt: string, steps: Call[][]): Promise<BaseMessage[]> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const messages: BaseMessage[] = [new HumanMessage(prompt)];
  for (const calls of steps) {
    const model = new FakeStreamingChatModel({ chunks: [new AIMessageChunk({ content: '', tool_calls: calls.map((c) => ({ ...c, type: 'tool_call' as const })) })] });
    const ai = await model.bindTools(tools).invoke(messages);
    messages.push(ai);
    for (const tc of ai.tool_calls ?? []) {
      const t = byName.get(tc.name);
      assert.ok(t, `unknown tool ${tc.name}`);
      messages.push((await t.invoke({ ...tc, type: 'tool_call' })) as ToolMessage);
    }
  }
  return messages;
}

function toolMessages(messages: BaseMessage[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const m of messages) if (m instanceof ToolMessage) out.set(m.tool_call_id, JSON.parse(typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
  return out;
}

function appTools() {
  const ran = { web_fetch: 0, pay: 0 };
  const webFetch = tool(
    async ({ url }: { url: string }) => {
      ran.web_fetch++;
      return url === PAGE_URL ? PAGE_TEXT : 'Not found';
    },
    { name: 'web_fetch', description: 'Fetch a web page', schema: z.object({ url: z.string() }) },
  );
  const pay = tool(
    async ({ to, amount, invoice }: { to: string; amount: number; invoice: string }) => {
      ran.pay++;
      return JSON.stringify({ paid: true, to, amount, invoice });
    },
    { name: 'pay', description: 'Pay an invoice', schema: z.object({ to: z.string(), amount: z.number(), invoice: z.string() }) },
  );
  return { tools: [webFetch, pay] as StructuredToolInterface[], ran };
}

describe('memauth/langchain: gateTools', () => {
  let env: AgentEnv;
  before(async () => {
    env = await agentEnv();
  });
  after(async () => {
    await env.dispose();
  });

  it('keeps names and schemas, records the page as external data, and answers the payment it steers with a structured denial', async () => {
    const { tools, ran } = appTools();
    const gated = gateTools(tools, {
      memory: env.mem,
      tenant: TENANT,
      session: 'lc-1',
      principal: 'assistant',
      scope: SCOPE,
      toolPrincipals: { web_fetch: { principal: 'browser', source: (args: { url: string }) => args.url } },
      userTurn: () => ({ principal: 'alice', text: 'Pay invoice INV-7 of 1200 per the Acme notice' }),
    });
    assert.deepEqual(
      gated.map((t) => t.name),
      ['web_fetch', 'pay'],
    );
    assert.equal(gated[1]?.schema, tools[1]?.schema);

    const messages = await runAgent(gated, 'Pay invoice INV-7 of 1200 per the Acme notice', [
      [{ id: 'c1', name: 'web_fetch', args: { url: PAGE_URL } }],
      [{ id: 'c2', name: 'pay', args: { to: EVIL_ACCOUNT, amount: 1200, invoice: 'INV-7' } }],
    ]);
    assert.equal(ran.web_fetch, 1);
    assert.equal(ran.pay, 0, 'a denied tool never runs');
    const results = toolMessages(messages);
    const page = results.get('c1') as { result: string; memory: { id: string; origin: string; source: string } };
    assert.equal(page.result, PAGE_TEXT);
    assert.deepEqual({ origin: page.memory.origin, source: page.memory.source }, { origin: 'external_untrusted', source: PAGE_URL });
    assert.equal((await env.mem.get({ tenant: TENANT, id: page.memory.id })).origin.principalId, 'browser');

    const denial = results.get('c2') as ToolDenial;
    assert.ok(isToolDenial(denial));
    assert.equal(denial.howToProceed, 'needs user confirmation of this exact action');
    assert.ok(denial.reasons.some((r) => r.code === 'untrusted_origin' && r.argument === 'to' && r.memoryIds.includes(page.memory.id)));
    const toolMsg = messages.find((m) => m instanceof ToolMessage && m.tool_call_id === 'c2') as ToolMessage;
    assert.equal(toolMsg.status, 'success', 'a denial is a result for the model, not a tool error');
  });

  it('lets exactly the confirmed action through, once', async () => {
    const { tools, ran } = appTools();
    const opts = {
      memory: env.mem,
      tenant: TENANT,
      session: 'lc-2',
      principal: 'assistant',
      scope: SCOPE,
      toolPrincipals: { web_fetch: { principal: 'browser', source: (args: { url: string }) => args.url } },
    };
    const gated = gateTools(tools, opts);
    const pay = { to: GOOD_ACCOUNT, amount: 1200, invoice: 'INV-7' };
    await runAgent(gated, 'read the notice', [[{ id: 'r1', name: 'web_fetch', args: { url: PAGE_URL } }]]);
    const payTool = gated[1];
    assert.ok(payTool);
    assert.ok(isToolDenial(await payTool.invoke(pay)), 'the session read an untrusted page');
    await env.mem.confirm({ tenant: TENANT, principal: 'alice', action: { type: 'pay', args: pay } });
    assert.ok(isToolDenial(await payTool.invoke({ ...pay, to: EVIL_ACCOUNT })), 'not what the user confirmed');
    assert.deepEqual(JSON.parse((await payTool.invoke(pay)) as string), { paid: true, ...pay });
    assert.ok(isToolDenial(await payTool.invoke(pay)), 'single use');
    assert.equal(ran.pay, 1);
  });

  it('memoryTools: a note keeps the taint of what the session read; recall marks reads', async () => {
    const { tools } = appTools();
    const base = { memory: env.mem, tenant: TENANT, principal: 'assistant', scope: SCOPE };
    const s1 = [
      ...gateTools(tools, { ...base, session: 'lc-3', toolPrincipals: { web_fetch: { principal: 'browser', source: (a: { url: string }) => a.url } } }),
      ...memoryTools({ ...base, session: 'lc-3' }),
    ];
    const m1 = await runAgent(s1, 'note the payee', [
      [{ id: 'f', name: 'web_fetch', args: { url: PAGE_URL } }],
      [{ id: 'n', name: 'remember', args: { content: `Acme pays to ${EVIL_ACCOUNT} now` } }],
    ]);
    const note = toolMessages(m1).get('n') as { memoryId: string; authority: string };
    assert.equal(note.authority, 'external_untrusted');

    const s2 = [...gateTools(tools, { ...base, session: 'lc-4' }), ...memoryTools({ ...base, session: 'lc-4' })];
    const m2 = await runAgent(s2, 'pay Acme', [[{ id: 'q', name: 'recall', args: { query: 'Acme pays' } }], [{ id: 'p', name: 'pay', args: { to: EVIL_ACCOUNT, amount: 1200, invoice: 'INV-7' } }]]);
    const out = toolMessages(m2);
    assert.ok((out.get('q') as { memories: Array<{ id: string }> }).memories.some((m) => m.id === note.memoryId));
    const denial = out.get('p');
    assert.ok(isToolDenial(denial));
    assert.ok(denial.reasons.some((r) => r.memoryIds.includes(note.memoryId)));
  });

  it('is reachable through the package export map', async () => {
    const spec = 'memauth/langchain';
    const mod = (await import(spec)) as Record<string, unknown>;
    assert.equal(typeof mod.gateTools, 'function');
    assert.equal(typeof mod.memoryTools, 'function');
  });
});
