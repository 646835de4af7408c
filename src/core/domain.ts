/**
 * Independence domains (docs/design.md § Principals and origin): the one canonical form two
 * principals' domains are compared in. Pure.
 */
import { domainToASCII } from 'node:url';

/**
 * Independence domains (docs/design.md § Principals and origin: `domain` is the administrative domain or
 * upstream provider; two principals in one domain are not independent).
 *
 * A domain is compared in one canonical form, so spelling variants of one domain are one vote:
 * 1. Unicode NFC, surrounding white space trimmed, lower case (`" ERP-Vendor "` is `erp-vendor`);
 * 2. when the result has the shape of a host name — no white space and none of `/ \ : ? # @ [ ] %`
 *    — it is converted with IDNA (UTS #46, `url.domainToASCII`) and one trailing dot (the DNS
 *    root) is dropped: `Ledger.ACME.`, `ledger.acme.`, `ｌｅｄｇｅｒ.acme` are `ledger.acme`,
 *    `bücher.example` is `xn--bcher-kva.example`;
 * 3. anything else — a name IDNA refuses, or a domain that is no host name (`bank/eu`,
 *    `erp vendor`) — stays as step 1 left it: IDNA is never applied to a part of it (so
 *    `bank/eu` and `bank/us` stay two domains).
 *
 * Every step only merges spellings, never splits one: a value equal to another in step 1 is equal
 * after it, so domains stored by an older memauth (step 1 only) compare safely once normalised
 * again at decision time. The function is idempotent.
 *
 * @param domain - a domain as registered (any string).
 * @returns its canonical form (the empty string only for an empty or blank input).
 */
export function normalizeDomain(domain: string): string {
  const hit = memo.get(domain);
  if (hit !== undefined) return hit;
  const out = canonical(domain);
  if (memo.size >= MEMO_MAX) memo.clear();
  memo.set(domain, out);
  return out;
}

const MEMO_MAX = 4096;
const memo = new Map<string, string>();
/** characters that make a string something other than a host name. */
const NOT_HOST = /[\s/\\:?#@[\]%]/u;
/** what IDNA's output must look like to be taken. */
const ASCII_HOST = /^[a-z0-9._-]+$/;

function canonical(domain: string): string {
  const base = domain.normalize('NFC').trim().toLowerCase();
  if (base === '' || NOT_HOST.test(base)) return base;
  const ascii = domainToASCII(base);
  // refused by IDNA, or mapped to something that is no plain host name (e.g. a look-alike of `/`)
  if (!ASCII_HOST.test(ascii)) return base;
  return ascii.endsWith('.') && !ascii.endsWith('..') && ascii.length > 1 ? ascii.slice(0, -1) : ascii;
}
