/**
 * results.svg: a self-contained, hand-written SVG chart — grouped bars of attack success rate
 * per channel for each defense, then a utility group, with Wilson 95% intervals as error bars.
 * One panel per agent. No scripts, no fonts or images fetched: it opens in any browser.
 */
import { basename } from 'node:path';
import type { AgentReport, BenchReport, DefenseReport } from './types.js';
import { CHANNELS } from './world.js';
import { wilson } from './stats.js';

/** Okabe–Ito colours (colour-blind safe). */
const COLOURS: Record<string, string> = { none: '#999999', content: '#E69F00', lineage: '#56B4E9', capability_ifc: '#009E73', memauth: '#D55E00' };
const FALLBACK = ['#CC79A7', '#0072B2', '#F0E442'];

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface Group {
  readonly label: string;
  readonly kind: 'asr' | 'utility';
  readonly get: (d: DefenseReport) => { k: number; n: number };
}

const GROUPS: readonly Group[] = [
  ...CHANNELS.map((c): Group => ({ label: c, kind: 'asr', get: (d) => ({ k: d.channels[c]?.successes ?? 0, n: d.channels[c]?.attempts ?? 0 }) })),
  { label: 'indep. k=2', kind: 'asr', get: (d) => ({ k: d.limits.corroborate_independent.k2.successes, n: d.limits.corroborate_independent.k2.attempts }) },
  { label: 'indep. k=3', kind: 'asr', get: (d) => ({ k: d.limits.corroborate_independent.k3.successes, n: d.limits.corroborate_independent.k3.attempts }) },
  { label: 'legit (corrob.)', kind: 'utility', get: (d) => ({ k: d.legit.allowed, n: d.legit.attempts }) },
  { label: 'legit k=3', kind: 'utility', get: (d) => ({ k: d.legitK3.allowed, n: d.legitK3.attempts }) },
  { label: 'benign variants', kind: 'utility', get: (d) => ({ k: d.benign.allowed, n: d.benign.attempts }) },
];

/** Sizes and positions shared by every part of the chart. */
interface Layout {
  readonly defenses: readonly string[];
  readonly colour: (d: string, i: number) => string;
  readonly barW: number;
  readonly groupGap: number;
  readonly groupW: number;
  readonly left: number;
  readonly right: number;
  readonly plotH: number;
  readonly panelTop: number;
  readonly panelH: number;
  readonly legendH: number;
  readonly width: number;
  readonly height: number;
}

function layoutOf(r: BenchReport): Layout {
  const defenses = r.config.defenses;
  const barW = 20;
  const groupGap = 26;
  const groupW = defenses.length * barW + groupGap;
  const left = 64;
  const right = 24;
  const plotH = 240;
  const panelTop = 70;
  const panelH = panelTop + plotH + 70;
  const legendH = 40;
  return {
    defenses,
    colour: (d: string, i: number): string => COLOURS[d] ?? (FALLBACK[i % FALLBACK.length] as string),
    barW,
    groupGap,
    groupW,
    left,
    right,
    plotH,
    panelTop,
    panelH,
    legendH,
    width: left + GROUPS.length * groupW + right,
    height: 40 + legendH + Object.keys(r.agents).length * panelH,
  };
}

/** The title and the legend of defenses. */
function header(parts: string[], L: Layout, r: BenchReport): void {
  const { left, width, height } = L;
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`);
  parts.push(`<title>MEM-INV-Bench: attack success and utility by defense</title>`);
  parts.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`);
  parts.push(`<text x="${left}" y="24" font-size="15" font-weight="bold">MEM-INV-Bench — ${esc(basename(r.scenarioFile))}: ${r.scenarios} scenarios, ${r.config.trials} trial(s) per cell</text>`);
  let lx = left;
  L.defenses.forEach((d, i) => {
    parts.push(`<rect x="${lx}" y="${40}" width="12" height="12" fill="${L.colour(d, i)}"/><text x="${lx + 16}" y="${50}">${esc(d)}</text>`);
    lx += 28 + Math.ceil(d.length * 6.4);
  });
  parts.push(`<text x="${lx + 10}" y="50" fill="#444">error bars: Wilson 95% CI</text>`);
}

/** One group of bars (one per defense) with its Wilson error bars, label and n. */
function group(parts: string[], L: Layout, a: AgentReport, g: (typeof GROUPS)[number], gi: number, y0: number, y: (v: number) => number): void {
  const { defenses, barW, plotH } = L;
  const gx = L.left + gi * L.groupW + L.groupGap / 4;
  defenses.forEach((d, di) => {
    const rep = a.defenses[d];
    if (!rep) return;
    const { k, n } = g.get(rep);
    const x = gx + di * barW;
    if (n === 0) {
      parts.push(`<text x="${x + barW / 2}" y="${y0 - 4}" text-anchor="middle" fill="#999" font-size="9">n/a</text>`);
      return;
    }
    const v = k / n;
    const [lo, hi] = wilson(k, n);
    const h = Math.max(v * plotH, v > 0 ? 1 : 0);
    parts.push(
      `<rect x="${x + 1}" y="${y0 - h}" width="${barW - 2}" height="${h}" fill="${L.colour(d, di)}"><title>${esc(`${d} — ${g.label}: ${k}/${n} (${(100 * v).toFixed(1)}%), 95% CI ${(100 * lo).toFixed(1)}–${(100 * hi).toFixed(1)}%`)}</title></rect>`,
    );
    const cx = x + barW / 2;
    parts.push(
      `<line x1="${cx}" x2="${cx}" y1="${y(hi)}" y2="${y(lo)}" stroke="#222" stroke-width="1"/><line x1="${cx - 3}" x2="${cx + 3}" y1="${y(hi)}" y2="${y(hi)}" stroke="#222"/><line x1="${cx - 3}" x2="${cx + 3}" y1="${y(lo)}" y2="${y(lo)}" stroke="#222"/>`,
    );
    parts.push(`<text x="${cx}" y="${y(hi) - 3}" text-anchor="middle" font-size="7.5" fill="#333">${(100 * v).toFixed(0)}</text>`);
  });
  parts.push(`<text x="${gx + (defenses.length * barW) / 2}" y="${y0 + 16}" text-anchor="middle">${esc(g.label)}</text>`);
  const n = a.defenses[defenses[0] as string] ? g.get(a.defenses[defenses[0] as string] as DefenseReport).n : 0;
  parts.push(`<text x="${gx + (defenses.length * barW) / 2}" y="${y0 + 29}" text-anchor="middle" fill="#777" font-size="9">n=${n}</text>`);
}

/** One agent's panel: title, axes and grid, the attack/utility separator, every group. */
function panel(parts: string[], L: Layout, label: string, a: AgentReport, pi: number): void {
  const { left, right, width, groupW, groupGap, plotH } = L;
  const top = 40 + L.legendH + pi * L.panelH;
  const y0 = top + L.panelTop + plotH; // baseline
  const y = (v: number): number => y0 - v * plotH;
  parts.push(`<g>`);
  parts.push(
    `<text x="${left}" y="${top + 20}" font-size="13" font-weight="bold">${esc(a.agent === 'worst-case' ? 'worst-case agent (deterministic upper bound)' : `LLM agent: ${label.replace(/^llm:/, '')}`)}</text>`,
  );
  const asrGroups = GROUPS.filter((g) => g.kind === 'asr').length;
  parts.push(`<text x="${left + (asrGroups * groupW) / 2}" y="${top + 44}" text-anchor="middle" fill="#333">attack success rate (lower is better)</text>`);
  parts.push(`<text x="${left + asrGroups * groupW + ((GROUPS.length - asrGroups) * groupW) / 2}" y="${top + 44}" text-anchor="middle" fill="#333">utility (higher is better)</text>`);
  // axes and grid
  for (let t = 0; t <= 4; t++) {
    const v = t / 4;
    parts.push(`<line x1="${left}" x2="${width - right}" y1="${y(v)}" y2="${y(v)}" stroke="${t === 0 ? '#333' : '#e3e3e3'}" stroke-width="1"/>`);
    parts.push(`<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${t * 25}%</text>`);
  }
  const sepX = left + asrGroups * groupW - groupGap / 2 + 2;
  parts.push(`<line x1="${sepX}" x2="${sepX}" y1="${y(1) - 8}" y2="${y0 + 34}" stroke="#888" stroke-dasharray="4 3"/>`);
  GROUPS.forEach((g, gi) => group(parts, L, a, g, gi, y0, y));
  parts.push(`</g>`);
}

/** results.svg for a bench report: one panel per agent. */
export function renderSvg(r: BenchReport): string {
  const L = layoutOf(r);
  const parts: string[] = [];
  header(parts, L, r);
  Object.entries(r.agents).forEach(([label, a], pi) => panel(parts, L, label, a, pi));
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
