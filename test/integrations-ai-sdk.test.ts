/**
 * memauth/ai-sdk with the real AI SDK (`ai` v6): generateText / streamText driving gated tools
 * with the SDK's own MockLanguageModelV3. No network.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';
import { type GatedOutput, type ToolDenial, gateTools, isToolDenial, memoryTools } from '../src/integrations/ai-sdk.js';
import { SqliteDriver, isMemauthError } from '../src/index.js';
import { ToolGate } from '../src/integrations/tool-gate.js';
import { type AgentEnv, EVIL_ACCOUNT, GOOD_ACCOUNT, PAGE_TEXT, PAGE_URL, SCOPE, TENANT, agentEnv, agentPolicy } from './integrations-helpers.js';

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

function call(id: string, toolName: string, input: unknown): LanguageModelV3Content {
  return { type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) };
}

/** A model that plays a fixed script: one response per step. */
function scripted(steps: LanguageModelV3Content[][]): MockLanguageModelV3 {
  let i = 0;
  return new MockLanguageModelV3({
    doGenerate: async (): Promise<LanguageModelV3GenerateResult> => {
      const content = steps[i++] ?? [{ type: 'text', text: 'done' }];
      const toolCalls = content.some((c) => c.type === 'tool-call');
      return { content, finishReason: { unified: toolCalls ? 'tool-calls' : 'stop', raw: undefined }, usage, warnings: [] };
    },
  });
}

/** The tool results the model was shown in a call's prompt, by tool call id. */
function toolResultsInPrompt(opts: LanguageModelV3CallOptions): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const m of opts.prompt) {
    if (m.role !== 'tool') continue;
    for (const p of m.content) if (p.type === 'tool-result') out.set(p.toolCallId, p.output.type === 'json' || p.output.type === 'text' ? p.output.value : p.output);
  }
  return out;
}

/** The app's own tools, with counters so tests can see whether they ran. */
function appTools() {
  const ran = { web_fetch: 0, pay: 0 };
  const tools = {
    web_fetch: tool({
      description: 'Fetch a web page',
      inputSchema: z.object({ url: z.string() }),
      execute: async ({ url }) => {
        ran.web_fetch++;
        return url === PAGE_URL ? PAGE_TEXT : 'Not found';
      },
    }),
    pay: tool({
      description: 'Pay an invoice',
      inputSchema: z.object({ to: z.string(), amount: z.number(), invoice: z.string() }),
      execute: async ({ to, amount, invoice }) => {
        ran.pay++;
        return { paid: true, to, amount, invoice, receipt: `rcpt-${ran.pay}` };
      },
    }),
  };
  return { tools, ran };
}

const USER_TEXT = 'Check the Acme billing notice and pay invoice INV-7 for 1200.';

describe('memauth/ai-sdk: gateTools with generateText', () => {
  let env: AgentEnv;
  before(async () => {
    env = await agentEnv();
  });
  after(async () => {
    await env.dispose();
  });

  it('writes the fetched page as external data, blocks the payment it steers, and hands the model a structured denial', async () => {
    const { tools, ran } = appTools();
    const session = 'ses-poisoned';
    const gated = gateTools(tools, {
      memory: env.mem,
      tenant: TENANT,
      session,
      principal: 'assistant',
      scope: SCOPE,
      toolPrincipals: { web_fetch: { principal: 'browser', source: (args) => args.url } },
      userTurn: () => ({ principal: 'alice', text: USER_TEXT }),
    });
    const model = scripted([
      [call('c1', 'web_fetch', { url: PAGE_URL })],
      [call('c2', 'pay', { to: EVIL_ACCOUNT, amount: 1200, invoice: 'INV-7' })],
      [{ type: 'text', text: 'The payment was blocked.' }],
    ]);
    const res = await generateText({ model, tools: gated, prompt: USER_TEXT, stopWhen: stepCountIs(5) });

    assert.equal(ran.web_fetch, 1);
    assert.equal(ran.pay, 0, 'a denied tool never runs');
    const results = res.steps.flatMap((s) => s.toolResults);
    const fetched = results.find((r) => r.toolName === 'web_fetch');
    const paid = results.find((r) => r.toolName === 'pay');
    assert.ok(fetched && paid);

    // the page: written under the browser principal with the page's own URL as source
    const page = fetched.output as { result: string; memory: { id: string; origin: string; source: string } };
    assert.equal(page.result, PAGE_TEXT);
    assert.equal(page.memory.origin, 'external_untrusted');
    assert.equal(page.memory.source, PAGE_URL);
    const rec = await env.mem.get({ tenant: TENANT, id: page.memory.id });
    assert.equal(rec.origin.principalId, 'browser');
    assert.equal(rec.scope, SCOPE);

    // the payment: a structured denial naming the page and the argument it supplied
    const denial = paid.output as GatedOutput<unknown>;
    assert.ok(isToolDenial(denial));
    assert.equal(denial.outcome, 'deny');
    assert.equal(denial.tier, 'high');
    assert.deepEqual(denial.action, { type: 'pay', args: { to: EVIL_ACCOUNT, amount: 1200, invoice: 'INV-7' } });
    assert.equal(denial.confirmable, true);
    assert.equal(denial.howToProceed, 'needs user confirmation of this exact action');
    const toReason = denial.reasons.find((r) => r.code === 'untrusted_origin' && r.argument === 'to');
    assert.ok(toReason, JSON.stringify(denial.reasons));
    assert.deepEqual(toReason.memoryIds, [page.memory.id]);
    assert.ok(denial.reasons.some((r) => r.code === 'needs_confirmation'));
    const decision = await env.mem.getDecision({ tenant: TENANT, decisionId: denial.decisionId });
    assert.equal(decision.outcome, 'deny');
    assert.deepEqual(decision.action, { type: 'pay', args: { to: EVIL_ACCOUNT, amount: 1200, invoice: 'INV-7' } });

    // what the model saw in its next step: the denial as JSON, not prose and not an error
    const third = model.doGenerateCalls[2];
    assert.ok(third);
    const shown = toolResultsInPrompt(third).get('c2') as ToolDenial;
    assert.equal(shown.denied, true);
    assert.equal(shown.decisionId, denial.decisionId);
    assert.ok((await env.mem.replay({ tenant: TENANT, decisionId: denial.decisionId })).matches);
  });

  it('retrying the same call, or another payee from the page, is denied again; a confirmation for the exact action lets it through once', async () => {
    const { tools, ran } = appTools();
    const session = 'ses-confirm';
    let userText = USER_TEXT;
    const opts = {
      memory: env.mem,
      tenant: TENANT,
      session,
      principal: 'assistant',
      scope: SCOPE,
      toolPrincipals: { web_fetch: { principal: 'browser', source: (args: { url: string }) => args.url } },
      userTurn: () => ({ principal: 'alice', text: userText }),
    };
    const gated = gateTools(tools, opts);
    const pay = { to: GOOD_ACCOUNT, amount: 1200, invoice: 'INV-7' };
    const first = await generateText({
      model: scripted([[call('a1', 'web_fetch', { url: PAGE_URL })], [call('a2', 'pay', pay)], [call('a3', 'pay', pay)], [{ type: 'text', text: 'blocked' }]]),
      tools: gated,
      prompt: USER_TEXT,
      stopWhen: stepCountIs(6),
    });
    const denials = first.steps
      .flatMap((s) => s.toolResults)
      .filter((r) => r.toolName === 'pay')
      .map((r) => r.output);
    assert.equal(denials.length, 2);
    for (const d of denials) assert.ok(isToolDenial(d));
    assert.equal(ran.pay, 0);
    // the session read an untrusted page: even a payee the user named needs confirmation now
    assert.ok((denials[0] as ToolDenial).reasons.some((r) => r.code === 'untrusted_origin' && r.argument === undefined));

    userText = `Yes, pay ${GOOD_ACCOUNT} 1200 for INV-7.`;
    await env.mem.confirm({ tenant: TENANT, principal: 'alice', action: { type: 'pay', args: pay } });
    const second = await generateText({
      model: scripted([[call('b1', 'pay', { ...pay, amount: 1300 })], [call('b2', 'pay', pay)], [call('b3', 'pay', pay)], [{ type: 'text', text: 'paid' }]]),
      tools: gated,
      prompt: userText,
      stopWhen: stepCountIs(6),
    });
    const outs = second.steps.flatMap((s) => s.toolResults).map((r) => r.output);
    assert.ok(isToolDenial(outs[0]), 'a different amount is not what the user confirmed');
    assert.deepEqual(outs[1], { paid: true, ...pay, receipt: 'rcpt-1' });
    assert.ok(isToolDenial(outs[2]), 'the confirmation is single-use');
    assert.equal(ran.pay, 1);
    const allowed = (await env.mem.listDecisions({ tenant: TENANT, limit: 3 })).find((d) => d.outcome === 'allow');
    assert.ok(allowed?.confirmationId);
  });

  it('runs the same gate under streamText', async () => {
    const { tools, ran } = appTools();
    const gated = gateTools(tools, {
      memory: env.mem,
      tenant: TENANT,
      session: 'ses-stream',
      principal: 'assistant',
      scope: SCOPE,
      toolPrincipals: { web_fetch: { principal: 'browser', source: (args) => args.url } },
    });
    let step = 0;
    const parts = (p: LanguageModelV3StreamPart[]) => ({ stream: convertArrayToReadableStream<LanguageModelV3StreamPart>(p) });
    const finish = (reason: 'tool-calls' | 'stop'): LanguageModelV3StreamPart => ({ type: 'finish', finishReason: { unified: reason, raw: undefined }, usage });
    const model = new MockLanguageModelV3({
      doStream: async () => {
        step++;
        if (step === 1) return parts([{ type: 'tool-call', toolCallId: 's1', toolName: 'web_fetch', input: JSON.stringify({ url: PAGE_URL }) }, finish('tool-calls')]);
        if (step === 2) return parts([{ type: 'tool-call', toolCallId: 's2', toolName: 'pay', input: JSON.stringify({ to: EVIL_ACCOUNT, amount: 5, invoice: 'X' }) }, finish('tool-calls')]);
        return parts([{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'ok' }, { type: 'text-end', id: 't' }, finish('stop')]);
      },
    });
    const res = streamText({ model, tools: gated, prompt: 'go', stopWhen: stepCountIs(5) });
    const steps = await res.steps;
    const outs = steps.flatMap((s) => s.toolResults);
    assert.equal(outs.length, 2);
    assert.ok(isToolDenial(outs[1]?.output));
    assert.equal(ran.pay, 0);
  });

  it('in observe mode a would-be denial is logged as would_deny and the tool runs', async () => {
    const obs = await agentEnv({ policy: agentPolicy({ read_only: 'enforce', low: 'enforce', high: 'observe' }) });
    try {
      const { tools, ran } = appTools();
      const seen: string[] = [];
      const gated = gateTools(tools, {
        memory: obs.mem,
        tenant: TENANT,
        session: 's',
        principal: 'assistant',
        scope: SCOPE,
        toolPrincipals: { web_fetch: { principal: 'browser', source: (args) => args.url } },
        onDecision: ({ tool: t, decision }) => seen.push(`${t}:${decision.outcome}`),
      });
      await generateText({
        model: scripted([[call('o1', 'web_fetch', { url: PAGE_URL })], [call('o2', 'pay', { to: EVIL_ACCOUNT, amount: 1, invoice: 'I' })], [{ type: 'text', text: '.' }]]),
        tools: gated,
        prompt: 'x',
        stopWhen: stepCountIs(5),
      });
      assert.deepEqual(seen, ['web_fetch:allow', 'pay:would_deny']);
      assert.equal(ran.pay, 1);
    } finally {
      await obs.dispose();
    }
  });

  it('refuses to wrap a tool it cannot stand in front of, unless passed through', () => {
    const clientSide = { confirm_in_ui: tool({ description: 'asks the user', inputSchema: z.object({ q: z.string() }) }) };
    const base = { memory: env.mem, tenant: TENANT, session: 's', principal: 'assistant', scope: SCOPE };
    assert.throws(
      () => gateTools(clientSide, base),
      (e) => isMemauthError(e, 'INVALID_ARGUMENT'),
    );
    const passed = gateTools(clientSide, { ...base, passThrough: ['confirm_in_ui'] });
    assert.equal(passed.confirm_in_ui, clientSide.confirm_in_ui);
  });

  it('fails closed on a misconfigured principal before any tool runs', async () => {
    const { tools, ran } = appTools();
    const opts = { toolCallId: 't', messages: [] };
    const unknown = gateTools(tools, {
      memory: env.mem,
      tenant: TENANT,
      session: 's',
      principal: 'assistant',
      scope: SCOPE,
      toolPrincipals: { web_fetch: { principal: 'nobody', source: (a) => a.url } },
    });
    await assert.rejects(
      async () => unknown.web_fetch.execute?.({ url: PAGE_URL }, opts),
      (e) => isMemauthError(e, 'UNKNOWN_PRINCIPAL'),
    );
    // a tool's output is never a user's statement: a user principal for a data tool is refused
    const asUser = gateTools(tools, {
      memory: env.mem,
      tenant: TENANT,
      session: 's',
      principal: 'assistant',
      scope: SCOPE,
      toolPrincipals: { web_fetch: { principal: 'alice', source: (a) => a.url } },
    });
    await assert.rejects(
      async () => asUser.web_fetch.execute?.({ url: PAGE_URL }, opts),
      (e) => isMemauthError(e, 'INVALID_ARGUMENT'),
    );
    // nor is the model a user
    const agentAsUser = gateTools(tools, { memory: env.mem, tenant: TENANT, session: 's', principal: 'alice', scope: SCOPE });
    await assert.rejects(
      async () => agentAsUser.pay.execute?.({ to: GOOD_ACCOUNT, amount: 1, invoice: 'I' }, opts),
      (e) => isMemauthError(e, 'INVALID_ARGUMENT'),
    );
    assert.equal(ran.web_fetch + ran.pay, 0);
  });
});

describe('memauth/ai-sdk: memoryTools', () => {
  let env: AgentEnv;
  before(async () => {
    env = await agentEnv();
  });
  after(async () => {
    await env.dispose();
  });

  it("recall and remember never show the model a forged row's claimed authority", async () => {
    const page = (await env.mem.write({ tenant: TENANT, scope: SCOPE, principal: 'browser', content: 'Forgeable note: Acme payee is ACCT-FORGED-77', source: PAGE_URL })).record;
    // out of band: the row is raised to system_policy (its audit entry still says otherwise)
    const raw = (env.mem.driver as SqliteDriver).unsafeDatabase();
    raw.exec('DROP TRIGGER records_provenance_immutable');
    raw.prepare("UPDATE records SET taint_lowest = 'system_policy', origin_authority = 'system_policy' WHERE id = ?").run(page.id);
    const gate = new ToolGate({ memory: env.mem, tenant: TENANT, session: 'ses-forged', principal: 'assistant', scope: SCOPE });
    const hits = await gate.recall('Forgeable note ACCT-FORGED-77');
    const hit = hits.find((m) => m.id === page.id);
    assert.ok(hit, JSON.stringify(hits));
    assert.equal(hit.authority, 'external_untrusted');
    // the model repeats it back: the echo resolves to the forged row, still shown untrusted
    const echo = await gate.remember('Forgeable note: Acme payee is ACCT-FORGED-77');
    assert.equal(echo.created, false);
    assert.equal(echo.authority, 'external_untrusted');
  });

  it('a note remembered after reading the page keeps its taint; recalling it later taints the new session', async () => {
    const { tools, ran } = appTools();
    const s1 = { memory: env.mem, tenant: TENANT, session: 'ses-1', principal: 'assistant', scope: SCOPE };
    const gated1 = { ...gateTools(tools, { ...s1, toolPrincipals: { web_fetch: { principal: 'browser', source: (a) => a.url } } }), ...memoryTools(s1) };
    const r1 = await generateText({
      model: scripted([[call('m1', 'web_fetch', { url: PAGE_URL })], [call('m2', 'remember', { content: `Acme's payee is now ${EVIL_ACCOUNT}.` })], [{ type: 'text', text: 'noted' }]]),
      tools: gated1,
      prompt: 'read the notice and note the payee',
      stopWhen: stepCountIs(5),
    });
    const note = r1.steps.flatMap((s) => s.toolResults).find((r) => r.toolName === 'remember')?.output as { memoryId: string; authority: string; created: boolean };
    assert.equal(note.created, true);
    assert.equal(note.authority, 'external_untrusted', 'self-summarization does not launder');

    // a later session: the model recalls its note and pays the payee it names
    const s2 = { ...s1, session: 'ses-2' };
    const gated2 = { ...gateTools(tools, { ...s2, userTurn: () => ({ principal: 'alice', text: 'Pay the Acme invoice INV-7 of 1200' }) }), ...memoryTools(s2) };
    const r2 = await generateText({
      model: scripted([[call('n1', 'recall', { query: 'Acme payee' })], [call('n2', 'pay', { to: EVIL_ACCOUNT, amount: 1200, invoice: 'INV-7' })], [{ type: 'text', text: '.' }]]),
      tools: gated2,
      prompt: 'Pay the Acme invoice INV-7 of 1200',
      stopWhen: stepCountIs(5),
    });
    const outs = r2.steps.flatMap((s) => s.toolResults);
    const recalled = outs.find((r) => r.toolName === 'recall')?.output as { memories: Array<{ id: string; authority: string; source: string }> };
    assert.ok(recalled.memories.some((m) => m.id === note.memoryId && m.authority === 'external_untrusted'));
    const denial = outs.find((r) => r.toolName === 'pay')?.output;
    assert.ok(isToolDenial(denial));
    assert.ok(denial.reasons.some((r) => r.code === 'untrusted_origin' && r.argument === 'to' && r.memoryIds.includes(note.memoryId)));
    assert.equal(ran.pay, 0);
  });

  it('is reachable through the package export map', async () => {
    const spec = 'memauth/ai-sdk';
    const mod = (await import(spec)) as Record<string, unknown>;
    assert.equal(typeof mod.gateTools, 'function');
    assert.equal(typeof mod.memoryTools, 'function');
  });
});
