import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Memory } from '../api/memory.js';
import type { ServerConfig } from './config.js';
import { HttpError } from './errors.js';
import { createMcpServer, mcpPrincipal } from './mcp.js';
import type { Identity } from './tokens.js';

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
 * `mcpIdleTimeoutMs`; at most `mcpMaxSessions` are open.
 */
export class McpHttp {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly mem: Memory,
    private readonly config: ServerConfig,
    private readonly version: string,
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
    if (this.sessions.size >= this.config.mcpMaxSessions) await this.sweep();
    if (this.sessions.size >= this.config.mcpMaxSessions) throw new HttpError(429, 'TOO_MANY_SESSIONS', `too many open MCP sessions (${this.config.mcpMaxSessions}); close one or retry later`, { max: this.config.mcpMaxSessions });
    const id = randomUUID();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => id });
    const server = createMcpServer({ mem: this.mem, tenant, principal, session: `mcp_${id}`, config: this.config, version: this.version });
    transport.onclose = () => {
      this.sessions.delete(id);
    };
    await server.connect(transport);
    this.sessions.set(id, { transport, server, tenant, principalId: principal.id, lastSeen: Date.now() });
    reply.hijack();
    await transport.handleRequest(req.raw, reply.raw, req.body);
    if (transport.sessionId === undefined) await this.drop(id);
  }

  /** Close every session (on shutdown: ends their event streams so in-flight HTTP can drain). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    for (const id of [...this.sessions.keys()]) await this.drop(id);
  }
}
