// Derivation graphs drawn with cytoscape (served by memauth from node_modules; no CDN).
import cytoscape from '/dashboard/vendor/cytoscape.esm.min.mjs';
import { AUTH_COLOR, h, recordLink, badge, table } from './ui.js';

/**
 * Draw a lineage graph: nodes [{id, authority, label, focus?}], edges [{from, to, transform}]
 * (from = input, to = derived record). Roots at the top, the record(s) of interest below.
 * Returns a figure with the canvas and, for people who cannot see it, a table of the edges.
 */
export function lineageFigure(title, nodes, edges, { onOpen } = {}) {
  const box = h('div.graph', { role: 'img', 'aria-label': `${title}: ${nodes.length} records, ${edges.length} derivation edges; the table below lists them`, 'data-nodes': String(nodes.length), 'data-edges': String(edges.length), 'data-labels': JSON.stringify(nodes.map((n) => n.label ?? n.id)) });
  const legend = h('ul.legend', { 'aria-label': 'Node colours' }, Object.keys(AUTH_COLOR).map((a) => h('li', badge(a))));
  const rows = edges.map((e) => h('tr', h('td', recordLink(e.from)), h('td', e.transform), h('td', recordLink(e.to))));
  const fig = h('figure.graph-fig', h('figcaption', title), box, legend, h('details', h('summary', 'Graph as a table'), table('Derivation edges (input → derived)', ['Input', 'Transform', 'Derived record'], rows, { empty: 'No derivation edges: every record here is a root.' })));
  const known = new Set(nodes.map((n) => n.id));
  const elements = [
    ...nodes.map((n) => ({ data: { id: n.id, label: n.label ?? n.id, color: AUTH_COLOR[n.authority] ?? '#6b7280', focus: n.focus ? 1 : 0 } })),
    ...edges.filter((e) => known.has(e.from) && known.has(e.to)).map((e, i) => ({ data: { id: `e${i}`, source: e.from, target: e.to, label: e.transform } })),
  ];
  // draw once the figure is in the document (cytoscape needs a sized container)
  requestAnimationFrame(() => {
    const cy = cytoscape({
      container: box,
      elements,
      userZoomingEnabled: true,
      wheelSensitivity: 0.3,
      style: [
        { selector: 'node', style: { 'background-color': 'data(color)', label: 'data(label)', color: '#111827', 'font-size': 10, 'text-valign': 'bottom', 'text-margin-y': 4, 'text-wrap': 'ellipsis', 'text-max-width': 140, width: 26, height: 26, 'border-width': 2, 'border-color': '#ffffff' } },
        { selector: 'node[focus = 1]', style: { 'border-width': 4, 'border-color': '#111827', width: 34, height: 34 } },
        { selector: 'edge', style: { width: 2, 'line-color': '#9ca3af', 'target-arrow-color': '#6b7280', 'target-arrow-shape': 'triangle', 'curve-style': 'bezier', label: 'data(label)', 'font-size': 9, color: '#374151', 'text-background-color': '#ffffff', 'text-background-opacity': 1 } },
      ],
      layout: { name: 'breadthfirst', directed: true, spacingFactor: 1.2, padding: 20 },
    });
    if (onOpen) cy.on('tap', 'node', (ev) => onOpen(ev.target.id()));
    box.dataset.ready = 'true';
  });
  return fig;
}

/**
 * A node's label that says what the record is: `summarize by assistant` for a derived record (the
 * transform of the edge that made it), `browser · evil.example/page` for a written one (writer and
 * source, or that it is withheld from this token), then its status when not active. Drawn on the
 * canvas as text.
 */
export function nodeLabel(id, { principalId, sourceRef, status, withheld }, edges) {
  const made = edges.find((e) => e.to === id);
  const source = sourceRef ? sourceRef.replace(/^[a-z]+:\/\//i, '') : withheld ? '(source withheld)' : '';
  const what = made ? `${made.transform} by ${principalId ?? '?'}` : `${principalId ?? '?'}${source ? ` · ${source.length > 28 ? source.slice(0, 27) + '…' : source}` : ''}`;
  return status && status !== 'active' ? `${what} (${status})` : what;
}
