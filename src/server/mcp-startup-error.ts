/**
 * When `memauth mcp` cannot start (a database path that does not exist, a corrupted file, an
 * invalid policy, a missing or revoked token), the MCP client would only see its stdio pipe close.
 * Instead the process answers every JSON-RPC request on stdio — `initialize` first — with one
 * error naming the cause, until the client closes stdin; the caller then reports it on stderr and
 * exits with its code as usual. Imports the SDK's stdio transport and core errors only.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MemauthError } from '../core/errors.js';
import { HttpError } from './errors.js';

/** JSON-RPC's implementation-defined server error (-32000..-32099): the server could not start. */
export const STARTUP_ERROR_CODE = -32000;

/** The error a client gets: `memauth mcp could not start: CODE: message`, and `{code, details}` as data. */
export function startupError(err: unknown): { code: number; message: string; data: { code: string; details: Record<string, unknown> } } {
  const known = err instanceof MemauthError || err instanceof HttpError;
  const code = known ? err.code : 'UNEXPECTED';
  const text = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return { code: STARTUP_ERROR_CODE, message: `memauth mcp could not start: ${code}: ${text}`, data: { code, details: known ? (err.details as Record<string, unknown>) : {} } };
}

/**
 * Answer every request that arrives on stdio with {@link startupError} of `err` (notifications
 * get nothing), until stdin ends or the client closes the transport.
 * @returns when the client has gone.
 */
export async function answerStartupError(err: unknown): Promise<void> {
  const transport = new StdioServerTransport();
  const error = startupError(err);
  const done = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  transport.onmessage = (m: JSONRPCMessage) => {
    if ('method' in m && 'id' in m) void transport.send({ jsonrpc: '2.0', id: m.id, error });
  };
  await transport.start();
  await done;
  await transport.close();
}
