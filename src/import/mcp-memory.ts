/**
 * Parser of the MCP reference memory server's JSONL knowledge graph into import items. Pure.
 */
import { z } from 'zod';
import { CLAIM_FIELD } from '../core/claims.js';
import { type ImportItem, type ImportProblem, MAX_CONTENT, type Parsed, describeIssues, refPart } from './items.js';

/**
 * The MCP reference memory server (`@modelcontextprotocol/server-memory`) keeps a knowledge
 * graph in a JSONL file (`memory.jsonl`, formerly `memory.json`), one object a line:
 * `{"type":"entity","name","entityType","observations":[string]}` or
 * `{"type":"relation","from","to","relationType"}`. Entities, observations and relations are
 * written there by the model through the server's tools: their origin is at best model inference.
 */
const Entity = z.object({
  type: z.literal('entity'),
  name: z.string().min(1),
  entityType: z.string(),
  observations: z.array(z.string()),
});
const Relation = z.object({
  type: z.literal('relation'),
  from: z.string().min(1),
  to: z.string().min(1),
  relationType: z.string().min(1),
});

/**
 * Parse an MCP memory server JSONL file into import items. Pure; never throws on content.
 *
 * Each observation becomes one item, `"<name> (<entityType>): <observation>"`, with ref
 * `entity:<name>`; an entity without observations becomes `"<name> (<entityType>)"`; each
 * relation becomes `"<from> <relationType> <to>"` with ref `relation:<from>:<relationType>:<to>`
 * (parts URI-encoded), and, when `relationType` is a claim field (a lowercase identifier such as
 * `works_at`), the typed claim `{subject: from, field: relationType, value: to}`. Blank lines are ignored. A line that is not JSON, not an object of a known
 * `type`, or not of the documented shape is a problem naming its line number; the rest go on.
 */
export function parseMcpMemory(text: string): Parsed {
  const items: ImportItem[] = [];
  const problems: ImportProblem[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    const problem = (reason: ImportProblem['reason'], detail: string, ref: string | null = null): void => {
      problems.push({ line, index: null, ref, reason, detail });
    };
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (e) {
      problem('invalid_json', (e as Error).message);
      return;
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      problem('invalid_item', 'not a JSON object');
      return;
    }
    const type = (json as { type?: unknown }).type;
    if (type === 'entity') {
      const p = Entity.safeParse(json);
      if (!p.success) {
        problem('invalid_item', `entity: ${describeIssues(p.error.issues)}`);
        return;
      }
      const { name, entityType } = p.data;
      const ref = `entity:${refPart(name)}`;
      const head = entityType.trim() === '' ? name : `${name} (${entityType})`;
      if (p.data.observations.length === 0) {
        items.push({ ref, line, index: null, content: head });
        return;
      }
      for (const obs of p.data.observations) {
        if (obs.trim() === '') problem('empty_content', 'empty observation', ref);
        else if (head.length + obs.length + 2 > MAX_CONTENT) problem('too_long', `observation of ${obs.length} characters`, ref);
        else items.push({ ref, line, index: null, content: `${head}: ${obs}` });
      }
    } else if (type === 'relation') {
      const p = Relation.safeParse(json);
      if (!p.success) {
        problem('invalid_item', `relation: ${describeIssues(p.error.issues)}`);
        return;
      }
      const { from, to, relationType } = p.data;
      const content = `${from} ${relationType} ${to}`;
      const ref = `relation:${refPart(from)}:${refPart(relationType)}:${refPart(to)}`;
      if (content.length > MAX_CONTENT) problem('too_long', `relation of ${content.length} characters`, ref);
      else items.push({ ref, line, index: null, content, ...(CLAIM_FIELD.test(relationType) ? { claims: [{ subject: from, field: relationType, value: to }] } : {}) });
    } else {
      problem('unknown_type', `type ${JSON.stringify(type ?? null)}; expected "entity" or "relation"`);
    }
  });
  return { items, problems };
}
