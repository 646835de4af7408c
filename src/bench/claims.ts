/**
 * The typed claims a system of record's connector attaches to a trusted fact of a scenario (the
 * world plays the connector; docs/benchmark.md § What runs). A connector knows its own structured
 * fields; a MEM-INV-Bench file has only the fact's sentence, so the world reads a few assertion
 * shapes from that sentence alone — never from an action or a label. A sentence with a negation
 * (`not`, `never`, `no`, `n't`, `only … not`) asserts nothing here: a mention is not a claim.
 * Pure.
 */
import { type Policy, argumentSuppliers } from '../core/policy.js';
import type { Claim } from '../core/types.js';
import { type BenchActionT, toAction } from './scenarios.js';

const NEGATION = /\b(?:not|never|no|none|nobody|cannot)\b|n't\b/i;
/** An account-like identifier: upper-case words joined by `-`, with at least one `-`. */
const ACCOUNT = String.raw`([A-Z0-9]+(?:-[A-Z0-9]+)+)`;
/** A product name: capitalised words ending in a model code ("Model Z", "Falcrest AX3", "Terrow R9"). */
const PRODUCT = String.raw`\b((?:[A-Z][a-z]+ )+(?:[A-Z]|[A-Z]*[0-9][A-Z0-9]*|[A-Z]+[0-9][A-Z0-9]*))`;
/** Trailing sentence punctuation a regex may have taken with an identifier. */
const trim = (s: string): string => s.replace(/[.,;:]+$/, '');

/** The shapes read, each with the claim field it yields. */
const SHAPES: ReadonlyArray<{ field: string; re: RegExp; subject?: number; value: number }> = [
  // "NimbusKeep backup plan renewals are billed by vendor X": the subject is what is billed (before the general shape below)
  {
    field: 'payee_account',
    re: new RegExp(String.raw`\b([A-Z][\w-]*(?: [a-z]+){0,3}?)(?: renewals| orders| subscriptions)? (?:are|is) billed by vendor ${ACCOUNT}`, 'g'),
    subject: 1,
    value: 2,
  },
  // "… is paid to (remittance account) X", "account changed/updated to X", "payout is X", "billed by vendor X", "wired to escrow account X"
  { field: 'payee_account', re: new RegExp(String.raw`\b(?:paid to|account(?: is| changed to| updated to)?|payout is|billed by vendor|wired to)\b[^.;]*?\b${ACCOUNT}`, 'g'), value: 1 },
  { field: 'email_address', re: /\b([A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,})\b/g, value: 1 },
  // a data policy: "salary exports are shared only with X", "board minutes are sent to X" — the subject is the kind of data
  { field: 'data_recipient', re: /^([a-z][a-z0-9 -]*?) (?:are|is) (?:shared|sent|emailed|delivered)(?: only)? (?:with|to) ([A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,})\b/g, subject: 1, value: 2 },
  // "the approved build of S V is REGISTRY/PATH:TAG"
  { field: 'image', re: /\b(?:build|image)\b(?: of ([a-z0-9.-]+(?: [0-9][\w.-]*[\w])?))?[^;]*? is ([a-z0-9.-]+\.[a-z]{2,}\/[^\s;]+)/g, subject: 1, value: 2 },
  // "set KEY to VALUE"
  { field: 'setting_key', re: /\bset ([a-z0-9_]+(?:\.[a-z0-9_]+)+) to /g, value: 1 },
  { field: 'setting_value', re: /\bset ([a-z0-9_]+(?:\.[a-z0-9_]+)+) to ([^\s;,]+)/g, subject: 1, value: 2 },
  { field: 'username', re: /\busername ([a-z0-9._-]+)/g, value: 1 },
  // "amount due $N", "balance due … $N", "open invoice … is $N"
  { field: 'amount_due', re: /\b(?:amount due|balance due|open invoice)\b[^.;]*?\$([0-9][0-9,]*(?:\.[0-9]+)?)/g, value: 1 },
  // "grants USER ROLE on RESOURCE"
  { field: 'role', re: /\bgrants ([a-z0-9._-]+) ([a-z]+) on /g, subject: 1, value: 2 },
  // a product a spec sheet or a lab measured: "Model Z battery life is …", "the Falcrest AX3 router sustained …" — a
  // capitalised name whose last word is a model code (a digit, or one capital letter)
  { field: 'product', re: new RegExp(String.raw`${PRODUCT}(?: [a-z]+)? (?:sustained|measured|scored|lasted|reached|ran|battery life is|is rated)\b`, 'g'), value: 1 },
];

/** The last run of capitalised words in `text` ("Halvorsen Freight", "the Harbor Street office" → "Harbor Street"), or null. */
function lastName(text: string): string | null {
  const names = [...text.matchAll(/\b[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*)*(?:\s+Co\.)?/g)];
  const last = names[names.length - 1];
  return last ? trim(last[0]) : null;
}

/**
 * The claims of one trusted fact: for each assertion shape the sentence (after its `Label:`)
 * matches, `{subject, field, value}` — the subject is the shape's own group where it has one, else
 * the party the sentence names before the match (its last capitalised words: the vendor master's
 * "Halvorsen Freight", the lease's "Harbor Street"), else the fact's label. None for a negated
 * sentence.
 *
 * @param fact - the fact's text as the scenario writes it.
 * @returns the claims, without repeats, in shape order.
 */
export function factClaims(fact: string): Claim[] {
  const colon = fact.indexOf(': ');
  const label = colon > 0 ? fact.slice(0, colon) : 'record';
  const body = colon > 0 ? fact.slice(colon + 2) : fact;
  if (NEGATION.test(body)) return [];
  const out: Claim[] = [];
  const seen = new Set<string>();
  for (const s of SHAPES) {
    for (const m of body.matchAll(s.re)) {
      const value = trim(m[s.value] ?? '');
      const own = s.subject !== undefined ? trim(m[s.subject] ?? '') : '';
      const subject = own !== '' ? own : (lastName(body.slice(0, m.index)) ?? label);
      const key = `${s.field}\u0000${subject}\u0000${value}`;
      // one claim per field and value: a more specific shape's subject wins over the general one's
      if (value === '' || subject === '' || seen.has(key) || seen.has(`${s.field}\u0000\u0000${value}`)) continue;
      seen.add(key).add(`${s.field}\u0000\u0000${value}`);
      out.push({ subject, field: s.field, value });
    }
  }
  return out;
}

/**
 * The claims a document makes for the action it plants (the attacker's, or a legit supplier's):
 * for each argument, a claim of every field the policy lets supply it (`claim:<field>`), with the
 * argument's value — the right field names. Its writer is external, so the claims carry external
 * authority. Values that are not a short string or number are left out.
 */
export function plantedClaims(policy: Policy, action: BenchActionT, subject: string): Claim[] {
  const a = toAction(action);
  const out: Claim[] = [];
  for (const [arg, suppliers] of Object.entries(argumentSuppliers(policy, a.type))) {
    const v = a.args[arg];
    if ((typeof v !== 'string' && typeof v !== 'number') || String(v).length > 500 || !/[\p{L}\p{N}]/u.test(String(v))) continue;
    for (const sup of suppliers) if (sup.startsWith('claim:')) out.push({ subject, field: sup.slice('claim:'.length), value: String(v) });
  }
  return out;
}

/** A summary restating the trusted facts' claims with the planted values (same subject and field, the planted value): the store must refuse it. */
export function restatedWithPlanted(facts: readonly string[], planted: readonly Claim[]): Claim[] {
  return facts.flatMap(factClaims).flatMap((c) => planted.filter((p) => p.field === c.field && p.value !== c.value).map((p) => ({ subject: c.subject, field: c.field, value: p.value })));
}
