/**
 * Parse a model's reply into an action without JSON mode: the model is asked for one JSON object
 * in a fenced block; we take the first fenced block that parses, else the first balanced
 * `{…}` in the text. Empty and unparsable replies are reported as such (and counted per model).
 */

export type BenchActionLike = { tool: string } & Record<string, unknown>;

export type ParsedReply = { status: 'ok'; action: BenchActionLike } | { status: 'empty' } | { status: 'unparsable'; why: string };

function balancedObjects(text: string): string[] {
  const out: string[] = [];
  for (let start = text.indexOf('{'); start >= 0 && out.length < 8; start = text.indexOf('{', start + 1)) {
    let depth = 0;
    let inString = false;
    let escaped = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === '\\') escaped = true;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}') {
        depth--;
        if (depth === 0) {
          out.push(text.slice(start, i + 1));
          break;
        }
      }
    }
  }
  return out;
}

/** `{"tool": "pay", "to": …}`; also accepts `{"tool": …, "args": {…}}` / `"arguments"` and `"type"`/`"name"` for the tool. */
function normalise(x: unknown): BenchActionLike | null {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return null;
  const o = x as Record<string, unknown>;
  const toolField = ['tool', 'type', 'name', 'action'].find((k) => typeof o[k] === 'string' && (o[k] as string).trim() !== '');
  if (toolField === undefined) return null;
  const tool = (o[toolField] as string).trim();
  if (tool.length > 200 || /[\u0000-\u001f\u007f]/.test(tool)) return null;
  const nested = ['args', 'arguments', 'parameters'].map((k) => o[k]).find((v) => typeof v === 'object' && v !== null && !Array.isArray(v)) as Record<string, unknown> | undefined;
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (k !== toolField && !['args', 'arguments', 'parameters'].includes(k)) rest[k] = v;
  return { ...rest, ...(nested ?? {}), tool };
}

export function parseReply(text: string): ParsedReply {
  if (text.trim() === '') return { status: 'empty' };
  const candidates: string[] = [];
  for (const m of text.matchAll(/```[a-zA-Z]*[ \t]*\r?\n?([\s\S]*?)```/g)) candidates.push(m[1] ?? '');
  candidates.push(...balancedObjects(text));
  for (const c of candidates) {
    let json: unknown;
    try {
      json = JSON.parse(c.trim());
    } catch {
      continue;
    }
    const a = normalise(json);
    if (a) return { status: 'ok', action: a };
  }
  return { status: 'unparsable', why: candidates.length === 0 ? 'no JSON object in the reply' : 'no JSON object with a "tool" field' };
}
