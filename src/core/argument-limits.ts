/**
 * The size limits of an action's arguments (docs/design.md § Action gate, § Known limits): at most
 * {@link MAX_ARGUMENT_VALUES} values and {@link MAX_ARGUMENT_BYTES} bytes of canonical JSON per
 * action, for every caller (library, HTTP, MCP, CLI) and for a confirmation's action alike. The
 * gate traces every value against every text of the session and stores each value's suppliers: the
 * work and the stored decision grow with values × records, so an unbounded argument list would
 * let one request keep the process busy for seconds and put hundreds of megabytes on disk.
 *
 * Pure; imports ./canonical.js, ./errors.js and ./values.js.
 */
import { canonicalJson } from './canonical.js';
import { MemauthError } from './errors.js';
import { PLAIN_KEY } from './values.js';

/**
 * Most values an action may carry: leaf strings, numbers, booleans and nulls, object keys that are
 * not plain identifiers (the gate checks those as values, src/core/values.ts), and its `resource`.
 */
export const MAX_ARGUMENT_VALUES = 256;
/** Most UTF-8 bytes of an action's arguments as canonical JSON (RFC 8785), its `resource` added. */
export const MAX_ARGUMENT_BYTES = 16 * 1024;

/**
 * How many values `args` holds (leaves and keys that are not plain identifiers), counting stops
 * past `stopAfter`. Iterative: a deep value cannot overflow the stack.
 */
function countValues(args: unknown, stopAfter: number): number {
  let n = 0;
  const stack: unknown[] = [args];
  while (stack.length > 0 && n <= stopAfter) {
    const v = stack.pop();
    if (Array.isArray(v)) for (const x of v) stack.push(x);
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (!PLAIN_KEY.test(k)) n++;
        stack.push(x);
      }
    } else n++;
  }
  return n;
}

/**
 * Refuse an action whose arguments exceed the limits. `args` is plain JSON (already validated).
 *
 * @param action - `{args, resource?}` of a decision, dry run or confirmation.
 * @param op - the operation, for the message (`authorize`, `evaluate`, `confirm`).
 * @throws MemauthError `ARGS_TOO_LARGE` naming the limit: details `{field: 'action.args', unit:
 *   'values' | 'bytes', length, max}` (`length` is a lower bound for `values`, counting stops
 *   just past the limit). Nothing is stored or decided.
 */
export function assertArgumentsWithinLimits(action: { readonly args?: unknown; readonly resource?: string | undefined }, op: string): void {
  const args = action.args ?? {};
  const resource = action.resource !== undefined ? 1 : 0;
  const values = countValues(args, MAX_ARGUMENT_VALUES) + resource;
  if (values > MAX_ARGUMENT_VALUES) throw tooLarge(op, 'values', values, MAX_ARGUMENT_VALUES);
  const bytes = Buffer.byteLength(canonicalJson(args), 'utf8') + (action.resource !== undefined ? Buffer.byteLength(action.resource, 'utf8') : 0);
  if (bytes > MAX_ARGUMENT_BYTES) throw tooLarge(op, 'bytes', bytes, MAX_ARGUMENT_BYTES);
}

function tooLarge(op: string, unit: 'values' | 'bytes', length: number, max: number): MemauthError {
  const what = unit === 'values' ? `more than ${max} values (leaves and keys)` : `${length} bytes of canonical JSON, more than ${max}`;
  return new MemauthError(
    'ARGS_TOO_LARGE',
    `${op}: the action's arguments hold ${what}; an action carries at most ${MAX_ARGUMENT_VALUES} values in ${MAX_ARGUMENT_BYTES} bytes — pass bulk data by reference (a record id, a URL, a file name), not inline`,
    { field: 'action.args', unit, length, max },
  );
}
