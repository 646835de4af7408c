/**
 * Parser of mem0 exports (JSON) into import items. Pure.
 */
import { z } from 'zod';
import { MemauthError } from '../core/errors.js';
import { type ImportItem, type ImportProblem, MAX_CONTENT, type Parsed, describeIssues, refPart } from './items.js';

/**
 * A mem0 memory as its `get_all` / `GET /v1/memories/` return it (and as exports of those are
 * saved): `{id, memory, hash?, metadata?, created_at?, updated_at?, user_id?, agent_id?, run_id?,
 * actor_id?, role?, expiration_date?, …}`. mem0's memories are facts an LLM extracted from
 * conversations: their origin is at best model inference, whoever the conversation was with.
 * Unknown fields are ignored.
 */
const Mem0Item = z.looseObject({
  id: z.union([z.string().min(1), z.number()]).optional(),
  memory: z.string(),
  created_at: z.string().nullish(),
  expiration_date: z.string().nullish(),
  // typed claims an application stored in mem0's free-form metadata; another shape there is ignored
  metadata: z
    .looseObject({
      claims: z
        .array(z.strictObject({ subject: z.string(), field: z.string(), value: z.string() }))
        .optional()
        .catch(undefined),
    })
    .nullish()
    .catch(undefined),
});

/** Where the list of memories is in a mem0 export: the document itself, or `results`, or `memories`. */
function memoriesOf(doc: unknown): unknown[] | null {
  if (Array.isArray(doc)) return doc;
  if (doc !== null && typeof doc === 'object') {
    for (const key of ['results', 'memories'] as const) {
      const v = (doc as Record<string, unknown>)[key];
      if (Array.isArray(v)) return v;
    }
  }
  return null;
}

/**
 * Parse a mem0 export (JSON) into import items. Pure.
 *
 * Accepted shapes: a bare array of memories (`get_all` v1), `{"results": [...]}` (`get_all`
 * v1.1+/v2, paginated `{count, next, previous, results}`), or `{"memories": [...]}`. Each
 * memory's text is `memory`; its ref is its `id` (or `item:<n>` without one); `created_at`,
 * `expiration_date` and the typed claims in `metadata.claims` (`[{subject, field, value}]`) are
 * carried for the writer to validate. An item without a string `memory`,
 * or with an empty one, is a problem naming its position; the rest go on.
 *
 * @throws MemauthError `INVALID_ARGUMENT` when the file is not JSON or has none of these shapes.
 */
export function parseMem0(text: string): Parsed {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new MemauthError('INVALID_ARGUMENT', `import: a mem0 export must be a JSON document: ${(e as Error).message}`, { field: 'file' });
  }
  const list = memoriesOf(doc);
  if (list === null) {
    throw new MemauthError('INVALID_ARGUMENT', 'import: a mem0 export must be an array of memories, or an object with a "results" or "memories" array', { field: 'file' });
  }
  const items: ImportItem[] = [];
  const problems: ImportProblem[] = [];
  list.forEach((raw, i) => {
    const index = i + 1;
    const p = Mem0Item.safeParse(raw);
    const rawId = raw !== null && typeof raw === 'object' ? (raw as { id?: unknown }).id : undefined;
    const ref = typeof rawId === 'string' && rawId !== '' ? refPart(rawId) : typeof rawId === 'number' ? String(rawId) : `item:${index}`;
    if (!p.success) {
      problems.push({ line: null, index, ref, reason: 'invalid_item', detail: describeIssues(p.error.issues) });
      return;
    }
    const content = p.data.memory;
    if (content.trim() === '') {
      problems.push({ line: null, index, ref, reason: 'empty_content', detail: 'empty memory' });
      return;
    }
    if (content.length > MAX_CONTENT) {
      problems.push({ line: null, index, ref, reason: 'too_long', detail: `memory of ${content.length} characters` });
      return;
    }
    items.push({
      ref,
      line: null,
      index,
      content,
      ...(p.data.created_at ? { createdAt: p.data.created_at } : {}),
      ...(p.data.expiration_date ? { expiresAt: p.data.expiration_date } : {}),
      ...(p.data.metadata?.claims?.length ? { claims: p.data.metadata.claims } : {}),
    });
  });
  return { items, problems };
}
