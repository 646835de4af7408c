/**
 * MCP over HTTP (the SDK's Streamable HTTP transport) at `/mcp`: one MCP session per initialize,
 * bound to the token that opened it, within the per-principal and per-tenant session limits
 * (session-limits.ts); every later request of the session must carry the same token. Its tools
 * share the REST API's decision and write budgets and expensive-request slots.
 */
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Memory } from '../api/memory.js';
import type { ServerConfig } from './config.js';
import type { Principal } from '../core/types.js';
import type { DecisionBudget } from './decision-budget.js';
import { HttpError } from './errors.js';
import type { TenantSlots } from './fairness.js';
import type { WriteBudget } from './write-budget.js';
import { type SessionLimits, type SessionRef, sessionLimitVerdict } from './session-limits.js';
import { createMcpServer, type McpBinding, mcpPrincipal } from './mcp.js';
import type { Identity } from './tokens.js';

/** The server's limits an MCP session shares with the REST API (the same objects, so HTTP and MCP count together). */
export interface McpLimits {
  readonly decisionBudget: DecisionBudget;
  readonly writeBudget: WriteBudget;
  readonly expensive: TenantSlots;
}

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: McpServer;
  readonly tenant: string;
  readonly principalId: string;
  lastSeen: number;
}

/**
 * MCP over Streamable HTTP at `/mcp`, under the same server and the same bearer-token auth as the
 * REST API. `initialize` opens a stateful MCP session bound to the token's principal (agent, tool
 * or external) and to a memauth session `mcp_<id>`; every later request of that MCP session must
 * carry a token of the same principal (`FORBIDDEN`, 403, otherwise) — and each request is
 * authenticated again, so a revoked token is refused at once. Idle sessions are closed after
 * `mcpIdleTimeoutMs`.
 *
 * Limits are per principal and per tenant, so that one principal cannot take the sessions of
 * another tenant or of its own tenant's agent ({@link sessionLimitVerdict}): a principal holds
 * at most `mcpMaxSessionsPerPrincipal`, a tenant `mcpMaxSessionsPerTenant`, the server
 * `mcpMaxSessions` (a last resort far above the per-tenant limit). When a tenant (or the server)
 * is full, the least recently used session of the principal (or tenant) holding the most is
 * closed to make room; a principal at its own limit is refused with `TOO_MANY_SESSIONS` naming
 * that limit.
 */
export class McpHttp {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly mem: Memory,
    private readonly config: ServerConfig,
    private readonly version: string,
    private readonly limits?: McpLimits,
  ) {
    this.sweeper = setInterval(() => void this.sweep(), Math.min(60_000, config.mcpIdleTimeoutMs)).unref();
  }

  /** Open sessions (for tests and health). */
  get size(): number {
    return this.sessions.size;
  }

  private async sweep(): Promise<void> {
    const cutoff = Date.now() - this.config.mcpIdleTimeoutMs;
    for (const [id, s] of this.sessions) if (s.lastSeen < cutoff) await this.drop(id);
  }

  private async drop(id: string): Promise<void> {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    try {
      await s.transport.close();
      await s.server.close();
    } catch {
      // already closed
    }
  }

  /** Handle one request to `/mcp` (POST, GET or DELETE) of an authenticated caller. */
  async handle(req: FastifyRequest, reply: FastifyReply, identity: Identity): Promise<void> {
    const { tenant, principal } = mcpPrincipal(identity);
    const header = req.headers['mcp-session-id'];
    const sid = Array.isArray(header) ? header[0] : header;
    if (sid !== undefined) {
      const s = this.sessions.get(sid);
      if (!s) throw new HttpError(404, 'NOT_FOUND', 'unknown or closed MCP session; initialize a new one', { sessionId: sid });
      if (s.tenant !== tenant || s.principalId !== principal.id) throw new HttpError(403, 'FORBIDDEN', 'this MCP session is bound to another principal', { sessionId: sid });
      s.lastSeen = Date.now();
      reply.hijack();
      await s.transport.handleRequest(req.raw, reply.raw, req.body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
      throw new HttpError(400, 'INVALID_ARGUMENT', 'no MCP session: send an initialize request first, then the mcp-session-id header it returns', { field: 'mcp-session-id' });
    }
    await this.makeRoom(tenant, principal.id);
    const id = randomUUID();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => id });
    const server = createMcpServer({ mem: this.mem, tenant, principal, session: `mcp_${id}`, config: this.config, version: this.version, ...this.bound(tenant, principal) });
    transport.onclose = () => {
      this.sessions.delete(id);
    };
    await server.connect(transport);
    this.sessions.set(id, { transport, server, tenant, principalId: principal.id, lastSeen: Date.now() });
    reply.hijack();
    await transport.handleRequest(req.raw, reply.raw, req.body);
    if (transport.sessionId === undefined) await this.drop(id);
  }

  /**
   * Make room for one more session of `principalId` in `tenant`: close expired sessions; refuse
   * a principal at its own limit; when the tenant (or the server) is full, close the least
   * recently used session of the heaviest holder there.
   *
   * @throws HttpError `TOO_MANY_SESSIONS` (429) with details `{limit: 'principal', max, principal, tenant}`.
   */
  private async makeRoom(tenant: string, principalId: string): Promise<void> {
    const list = (): SessionRef[] => [...this.sessions].map(([id, s]) => ({ id, tenant: s.tenant, principalId: s.principalId, lastSeen: s.lastSeen }));
    let v = sessionLimitVerdict(list(), tenant, principalId, this.sessionLimits());
    if (v.kind !== 'open') await this.sweep();
    for (let guard = 0; guard < 3; guard++) {
      v = sessionLimitVerdict(list(), tenant, principalId, this.sessionLimits());
      if (v.kind === 'open') return;
      if (v.kind === 'refuse') {
        throw new HttpError(
          429,
          'TOO_MANY_SESSIONS',
          `principal ${JSON.stringify(principalId)} already has ${v.open} open MCP sessions; its limit is ${v.max}: close one (DELETE /mcp) or let one idle out`,
          { limit: 'principal', max: v.max, principal: principalId, tenant },
        );
      }
      await this.drop(v.evict);
    }
  }

  /** The server's budgets and expensive-request slots, bound to one connection's principal (the same as over HTTP). */
  private bound(tenant: string, principal: Principal): Pick<McpBinding, 'admitDecision' | 'storingBytes' | 'admitWrite' | 'reading' | 'expensive'> {
    const l = this.limits;
    if (l === undefined) return {};
    const slots = l.expensive.for(principal);
    return {
      admitDecision: (stores) => {
        if (stores) l.writeBudget.admitStoring(tenant, principal);
        l.decisionBudget.admit(tenant, principal);
      },
      storingBytes: (bytes, field) => l.writeBudget.storing(tenant, principal, bytes, field),
      admitWrite: (content, claims) => l.writeBudget.admit(tenant, principal, content, claims),
      reading: (most, read, marked) => l.writeBudget.reading(tenant, principal, most, read, marked),
      expensive: (operation, fn) => slots.run(tenant, operation, fn),
    };
  }

  private sessionLimits(): SessionLimits {
    return { perPrincipal: this.config.mcpMaxSessionsPerPrincipal, perTenant: this.config.mcpMaxSessionsPerTenant, total: this.config.mcpMaxSessions };
  }

  /** Close every session (on shutdown: ends their event streams so in-flight HTTP can drain). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    for (const id of [...this.sessions.keys()]) await this.drop(id);
  }
}
