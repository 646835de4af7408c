// The metrics page: the seven metrics per risk tier over time windows (GET /v1/metrics/series).
import { api } from './api.js';
import { lineChart, tierLegend } from './charts.js';
import { errorBox, page } from './layout.js';
import { announce, fmtTime, h, table } from './ui.js';

const METRICS = [
  ['originCoverage', 'Origin coverage', 'records whose origin is complete and matches the audit chain'],
  ['taintRetention', 'Taint retention', 'derived records that kept every input’s taint'],
  ['launderingAsr', 'Laundering ASR', 'exposed decisions that proceeded without a confirmation (lower is better for high); requests of the application, agents and people — external principals’ and tools’ are in their own table below'],
  ['legitimateUtility', 'Legitimate utility', 'clean decisions that proceeded'],
  ['corroborationValidity', 'Corroboration validity', 'recorded corroborations that count'],
  ['highRiskDependencyRate', 'High-risk dependency rate', 'dependencies below trusted_tool_verified'],
  ['decisionReplayRate', 'Decision replay rate', 'replays from the log that match'],
];
const TIERS = ['high', 'low', 'read_only'];

export async function metricsPage() {
  const out = h('div', { 'aria-live': 'polite' }, h('p', 'Computing (this replays decisions from the audit log)…'));
  const buckets = h('select', { id: 'm-buckets' }, [6, 12, 24].map((n) => h('option', { value: String(n), selected: n === 12 }, String(n))));
  page('Metrics', h('p.lead', 'The seven metrics of docs/design.md per risk tier, over equal time windows from the first decision to now (computed by the server from the store: GET /v1/metrics/series).'), h('form.filters', { on: { submit: (e) => e.preventDefault() } }, h('div.field', h('label', { for: 'm-buckets' }, 'Time windows'), buckets)), out);
  const draw = async () => {
    out.replaceChildren(h('p', 'Computing…'));
    let series;
    try {
      series = await api.metricsSeries(Number(buckets.value));
    } catch (e) {
      out.replaceChildren(errorBox(e));
      return;
    }
    // label each window by its end, as precisely as the window size needs
    const cut = series.bucketMs < 60_000 ? [11, 19] : series.bucketMs < 86_400_000 ? [11, 16] : [5, 10];
    const labels = series.buckets.map((b) => b.to.slice(cut[0], cut[1]));
    const charts = METRICS.map(([key, title, help]) => {
      const ser = TIERS.map((t) => ({ name: t, values: series.buckets.map((b) => b.tiers[t][key].value) }));
      const rows = series.buckets.map((b) => h('tr', h('th', { scope: 'row' }, `${fmtTime(b.from)} – ${fmtTime(b.to)}`), TIERS.map((t) => h('td', ratioText(b.tiers[t][key])))));
      return h('section.chart-card', { 'aria-labelledby': `mh-${key}` }, h('h2', { id: `mh-${key}` }, title), h('p.help', help), lineChart(title, labels, ser), h('details', h('summary', 'Values'), table(`${title} per window`, ['Window', ...TIERS], rows)));
    });
    const sum = (t, f) => series.buckets.reduce((n, b) => n + f(b.tiers[t]), 0);
    const own = TIERS.reduce((n, t) => n + sum(t, (x) => x.decisions), 0);
    const ext = TIERS.reduce((n, t) => n + sum(t, (x) => x.external.decisions), 0);
    if (own + ext === 0) {
      out.replaceChildren(h('p.msg.msg-info.empty', 'No decision recorded yet: the metrics appear once the gate has decided something (POST /v1/decisions, or authorize_action over MCP).'));
      announce('No metrics yet');
      return;
    }
    const totals = TIERS.map((t) => h('tr', h('th', { scope: 'row' }, t), h('td', String(sum(t, (x) => x.decisions))), h('td', String(sum(t, (x) => x.external.decisions)))));
    out.replaceChildren(tierLegend(), h('div.charts', charts), table('Decisions per tier in these windows', ['Tier', 'Own (application, agents, people)', 'External principals and tools'], totals), externalTable(series, sum));
    announce('Metrics drawn');
  };
  buckets.addEventListener('change', draw);
  await draw();
}

const ratioText = (r) => (r.value === null ? '— (nothing to measure)' : `${(r.value * 100).toFixed(1)}% (${r.numerator}/${r.denominator})`);

/** A ratio summed over the windows. */
const summed = (series, t, key, sum) => {
  const n = sum(t, (x) => x.external[key].numerator);
  const d = sum(t, (x) => x.external[key].denominator);
  return { numerator: n, denominator: d, value: d === 0 ? null : n / d };
};

/** The decisions external principals requested, apart: they never dilute the figures above. */
function externalTable(series, sum) {
  const rows = TIERS.map((t) =>
    h('tr', h('th', { scope: 'row' }, t), h('td', String(sum(t, (x) => x.external.decisions))), ['launderingAsr', 'legitimateUtility', 'highRiskDependencyRate'].map((k) => h('td', ratioText(summed(series, t, k, sum))))),
  );
  return h(
    'section.metrics-external',
    { 'aria-labelledby': 'mh-external' },
    h('h2', { id: 'mh-external' }, 'Requested by external principals (reported apart)'),
    h('p.help', 'An external token can request any number of actions the gate denies; counted with your own decisions they would dilute the attack success rate. Here they are on their own, over all the windows above.'),
    table('External principals’ decisions per tier', ['Tier', 'Decisions', 'Laundering ASR', 'Legitimate utility', 'High-risk dependency rate'], rows, { className: 'external-metrics' }),
  );
}
