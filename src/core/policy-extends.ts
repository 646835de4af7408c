/**
 * A policy file that extends the built-in default (`"extends": "default"`): only what differs is
 * written, the rest comes from the default policy (docs/design.md § Action gate). Also the JSON
 * paths of policy validation errors. Pure; imports nothing (./policy.ts passes the default in).
 */

/** What a file that extends the default may say: `extends` plus any field of a policy (each optional). */
export type PolicyOverlay = { readonly extends: 'default' } & { readonly [field: string]: unknown };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Both objects merged one level deep (the overlay's keys win); anything else: the overlay's value as is, so validation reports it. */
function mergeShallow(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  return isObject(base) && isObject(over) ? { ...base, ...over } : over;
}

/**
 * The effective policy document of `input`: `input` itself unless it has `extends`; with
 * `"extends": "default"` the default policy with the file's fields applied —
 * `actions`: the file's rules added, a rule of the same name replaced whole; `sources`: the file's
 * rules first (first match wins), then the default's; `modes`, `corroboration`, `confirmation`:
 * merged field by field; every other field: the file's value, else the default's.
 *
 * @param input - the parsed policy JSON.
 * @param base - the built-in default policy (core/policy.ts `DEFAULT_POLICY`).
 * @returns the document to validate (the `extends` field removed), or `input` untouched when it
 *   does not extend; an `extends` other than `"default"` is left in place so validation names it.
 */
export function applyExtends(input: unknown, base: Readonly<Record<string, unknown>>): unknown {
  if (!isObject(input) || !('extends' in input) || input.extends !== 'default') return input;
  const { extends: _base, ...over } = input;
  const sources = Array.isArray(over.sources) ? [...over.sources, ...(base.sources as unknown[])] : (over.sources ?? base.sources);
  return {
    ...base,
    ...over,
    actions: mergeShallow(base.actions, over.actions),
    modes: mergeShallow(base.modes, over.modes),
    corroboration: mergeShallow(base.corroboration, over.corroboration),
    confirmation: mergeShallow(base.confirmation, over.confirmation),
    sources,
  };
}

/**
 * A JSON path for a validation issue: `$` for the root, `$.sources[0].authority`,
 * `$.actions["send email"].tier` for a key that is not an identifier.
 */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = '$';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else if (typeof k === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) out += `.${k}`;
    else out += `[${JSON.stringify(String(k))}]`;
  }
  return out;
}
