// Hand-written SVG line charts (no chart library, nothing fetched from elsewhere).
import { h } from './ui.js';

const NS = 'http://www.w3.org/2000/svg';
const s = (tag, attrs = {}, ...kids) => {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const k of kids) el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return el;
};

export const TIER_STYLE = {
  high: { color: '#b91c1c', dash: '', mark: 'circle' },
  low: { color: '#1d4ed8', dash: '6 3', mark: 'square' },
  read_only: { color: '#047857', dash: '2 3', mark: 'diamond' },
};

function marker(kind, x, y, color) {
  if (kind === 'square') return s('rect', { x: x - 3.5, y: y - 3.5, width: 7, height: 7, fill: color });
  if (kind === 'diamond') return s('path', { d: `M${x} ${y - 4.5}L${x + 4.5} ${y}L${x} ${y + 4.5}L${x - 4.5} ${y}Z`, fill: color });
  return s('circle', { cx: x, cy: y, r: 3.5, fill: color });
}

/**
 * A line chart of ratios (0…1) over time buckets, one line per series; null values leave gaps.
 * series: [{name, values: (number|null)[]}]; labels: bucket labels. Returns an <svg> with a title.
 */
export function lineChart(title, labels, series) {
  const W = 420, H = 180, L = 40, R = 10, T = 12, B = 28;
  const x = (i) => L + (labels.length <= 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (labels.length - 1));
  const y = (v) => T + (1 - v) * (H - T - B);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${title}, per risk tier over time; the table below has the values`, class: 'chart' });
  svg.append(s('title', {}, title));
  for (const v of [0, 0.5, 1]) {
    svg.append(s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }));
    svg.append(s('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' }, `${Math.round(v * 100)}%`));
  }
  const step = Math.max(1, Math.ceil(labels.length / 4));
  labels.forEach((lab, i) => {
    if (i % step === 0 || i === labels.length - 1) svg.append(s('text', { x: x(i), y: H - 8, 'text-anchor': 'middle', class: 'axis' }, lab));
  });
  for (const ser of series) {
    const st = TIER_STYLE[ser.name] ?? { color: '#374151', dash: '', mark: 'circle' };
    let d = '';
    let pen = false;
    ser.values.forEach((v, i) => {
      if (v === null || v === undefined) {
        pen = false;
        return;
      }
      d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)} ${y(v).toFixed(1)}`;
      pen = true;
    });
    if (d) svg.append(s('path', { d, fill: 'none', stroke: st.color, 'stroke-width': 2, 'stroke-dasharray': st.dash, class: `series series-${ser.name}` }));
    ser.values.forEach((v, i) => {
      if (v !== null && v !== undefined) svg.append(marker(st.mark, x(i), y(v), st.color));
    });
  }
  return svg;
}

export function tierLegend() {
  return h(
    'ul.legend',
    { 'aria-label': 'Risk tiers' },
    Object.entries(TIER_STYLE).map(([name, st]) => {
      const sw = s('svg', { width: 28, height: 10, 'aria-hidden': 'true' });
      sw.append(s('line', { x1: 0, x2: 28, y1: 5, y2: 5, stroke: st.color, 'stroke-width': 2, 'stroke-dasharray': st.dash }));
      sw.append(marker(st.mark, 14, 5, st.color));
      return h('li', sw, ' ', name);
    }),
  );
}
