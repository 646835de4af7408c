/**
 * The lexicon of the plain-request grammar (docs/design.md § Claims and intent): the word lists a
 * request is read against — negators, hedges, function words, business nouns, period words,
 * relations, the nouns of each kind of object — and the small readers that need only them (a
 * period word, a title, a purchase's term). Used by src/core/request-grammar.ts and
 * src/core/party-slots.ts. Pure.
 */

/** A set of the words of some lines (white-space separated). */
export const words = (...lines: string[]): Set<string> => new Set(lines.join(' ').split(/\s+/).filter(Boolean));

/** Words that negate (and contractions written without their apostrophe). One anywhere makes a turn not plain. */
export const NEGATORS: ReadonlySet<string> = words(
  "not never no don't dont doesn't didn't won't wouldn't shouldn't mustn't cannot can't stop avoid without nobody neither nor nothing none",
  'didnt doesnt cant wont shouldnt wouldnt couldnt isnt arent wasnt werent mustnt neednt havent hasnt hadnt',
);

/**
 * Words of doubt, condition, delay, warning, retraction, repetition or choice, and units and points
 * of time. A second line behind the allow-list: one anywhere ends plainness.
 */
export const HEDGES: ReadonlySet<string> = words(
  'but if unless until whether check verify confirm legit legitimate real really phishing scam fraud fraudulent suspicious fake',
  'ignore refuse reject wait hold later before after except instead rather maybe perhaps claiming claims claimed asked says said',
  'emailed wrote when once next tomorrow tonight soon due provided assuming should case otherwise remind schedule approves approved',
  'approval approve pending subject deliver delivers delivered delivery arrive arrives forbid prohibit cancel halt block postpone',
  'defer delay only weekly monthly yearly daily every recurring again twice repeat another more extra scratch forget disregard undo',
  'revert retract either or whichever whatever any earliest nope nah kidding joking scrap ban banned',
  'minute minutes hour hours day days week weeks fortnight month months year years quarter noon midnight morning afternoon evening',
  'monday tuesday wednesday thursday friday saturday sunday weekend eod eow eom asap deadline',
);

/** Words a turn may open with before its intent phrase. */
export const LEAD_WORDS: ReadonlySet<string> = words('please kindly ok okay yes hi hello go ahead and also just now');

/** Function words of a request: articles, possessives, pronouns and the prepositions that name a party or an object. */
export const FUNCTION_WORDS: ReadonlySet<string> = words(
  'the a an our my their his her its this that these those to for of with in into via and it at please now today immediately full all same thanks',
);

/**
 * Nouns and adjectives of business requests that name no party, amount, time or condition — and
 * no relation to a party (`supplier`, `partner`, `team` would let "pay Acme's supplier" name Acme)
 * and no role (`admin`: "give mallory the admin report").
 */
export const NOUNS: ReadonlySet<string> = words(
  'invoice invoices bill bills payment payments rent fee fees deposit amount balance total account accounts office access report',
  'reports file files copy export data repository repo folder document documents plan subscription service production staging',
  'build version release role order usd eur gbp chf jpy cad aud dollars euros pounds open latest current outstanding usual new',
  'security quote quotes proposal proposals contract contracts brochure brochures catalogue catalog signed draft final run',
  'salary salaries payroll',
);

/** Period adjectives: allowed only before a noun, and never after a {@link TIME_PREPOSITIONS time preposition}. */
export const PERIOD_WORDS: ReadonlySet<string> = words(
  'january february march april june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec',
  "last previous q1 q2 q3 q4 h1 h2 month's week's year's quarter's",
);
export const FISCAL_YEAR = /^fy\d{2,4}$/;
/** Words that relate a party to another, or name a role: "pay Acme's supplier", "give mallory the admin report". */
export const RELATIONS: ReadonlySet<string> = words(
  'supplier suppliers vendor vendors partner partners customer customers client clients contractor contractors team teams contact contacts',
  'member members owner owners landlord landlords agent agents admin admins administrator viewer viewers editor editors maintainer',
);
/** Nouns a number after them labels rather than counts. */
export const LABELLED: ReadonlySet<string> = words('invoice invoices bill bills account accounts order reference ref number no ticket po item version release');
/** Prepositions of time: a period word after one of them schedules the action ("in March") rather than naming its object. */
export const TIME_PREPOSITIONS: ReadonlySet<string> = words('in on at by from to for within during through since starting till until');
/** The kinds of object an action acts on. */
export type ObjectCategory = 'money' | 'data' | 'access' | 'deploy';

/**
 * The nouns of each kind of object. A noun of another kind than the action's ends plainness; a
 * noun of no kind (an adjective such as `open`, `latest`) is neutral.
 */
export const OBJECTS: Readonly<Record<ObjectCategory, ReadonlySet<string>>> = {
  money: words(
    'invoice invoices bill bills payment payments rent fee fees deposit deposits amount balance total account accounts office plan subscription order',
    'security usd eur gbp chf jpy cad aud dollars euros pounds',
  ),
  data: words('report reports file files copy export data document documents folder invoice invoices bill bills balance statement statements'),
  access: words('access role roles repository repositories repo repos account accounts folder'),
  deploy: words('build builds version release production staging service'),
};
export const ALL_OBJECTS: ReadonlySet<string> = new Set(Object.values(OBJECTS).flatMap((set) => [...set]));

/** Relations to a party that may stand as a title before its name ("contractor Dana Web"); never a role (`admin`, `owner`, `member`, …). */
const TITLES: ReadonlySet<string> = words('supplier vendor partner customer client contractor landlord contact');

/**
 * Is the relation word at `ws[j]` a title — a party relation in the singular ({@link TITLES}), right before a name that
 * `grounding` knows, and not after a possessive or `of` ("contractor Dana Web", "vendor Acme";
 * not "Acme's supplier Globex", "the contractors Bob", "the supplier of Acme")?
 */
export function isTitle(ws: readonly string[], j: number, isName: (w: string) => boolean): boolean {
  const w = ws[j] as string;
  const prev = ws[j - 1] ?? '';
  const next = ws[j + 1];
  return TITLES.has(w) && next !== undefined && isName(next) && !prev.endsWith("'s") && prev !== "'s" && prev !== 'of';
}

/** Nouns of a group of people; after `our` or `my` and business nouns, a group of the speaker's own organisation ("our payroll team"). */
export const GROUPS: ReadonlySet<string> = words('team department desk');
const OWN: ReadonlySet<string> = words('our my');

/**
 * Is `ws[j]` the group noun of a group of the speaker's own ("our payroll team", "my team"): a
 * {@link GROUPS} noun after only business nouns back to `our` or `my`? It names no party: where such
 * a group receives something is for a system of record to say (src/core/party-naming.ts).
 */
export function isOwnGroup(ws: readonly string[], j: number): boolean {
  if (!GROUPS.has(ws[j] as string)) return false;
  let i = j - 1;
  while (i >= 0 && NOUNS.has(ws[i] as string)) i--;
  return OWN.has(ws[i] ?? '');
}

const COUNTS: ReadonlySet<string> = words('a an one two three four five six seven eight nine ten eleven twelve');
const TERM_UNITS: ReadonlySet<string> = words('week weeks month months quarter quarters year years');

/**
 * The indices of the words of a purchase's *term*: `for`, a count in words and a unit of time
 * ("renew the plan for one year", "for twelve months") — how long what is bought lasts, not when
 * to act (which `in`, `on`, `after`, `every` … say, and stay hedges). Read only for an action that
 * moves money; a count in digits stays a number.
 */
export function termIndices(ws: readonly string[]): Set<number> {
  const out = new Set<number>();
  for (let i = 0; i + 2 < ws.length; i++) if (ws[i] === 'for' && COUNTS.has(ws[i + 1] as string) && TERM_UNITS.has(ws[i + 2] as string)) out.add(i + 1).add(i + 2);
  return out;
}

/** A period word ("march", "q3", "last", "month's", "fy2026"). */
export function isPeriodWord(w: string): boolean {
  return PERIOD_WORDS.has(w) || PERIOD_WORDS.has(`${w}'s`) || FISCAL_YEAR.test(w);
}
