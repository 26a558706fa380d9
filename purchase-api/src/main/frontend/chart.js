// A horizontal bar chart of a ranking as SVG: one bar per row, its length the quantity. The table
// beside it carries the same figures for screen readers and the keyboard, so the chart is hidden
// from them. Sizes are SVG attributes and colours are CSS classes: no inline style, which the
// page's Content-Security-Policy refuses.

const SVG = 'http://www.w3.org/2000/svg';
const ROW = 24;
const LABEL = 100;
const WIDTH = 440;
const VALUE_ROOM = 64;

/** Most rows drawn; a longer ranking is drawn up to here (the table has them all). */
export const MAX_BARS = 40;

function element(name, attributes, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) {
    node.setAttribute(key, String(value));
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/**
 * @param {{label: string, quantity: number, text: string}[]} rows most first
 * @returns {SVGSVGElement}
 */
export function barChart(rows) {
  const shown = rows.slice(0, MAX_BARS);
  const height = shown.length * ROW + 4;
  const svg = element('svg', { viewBox: `0 0 ${WIDTH} ${height}`, class: 'bar-chart', 'aria-hidden': 'true', focusable: 'false' });
  const most = Math.max(1, ...shown.map((row) => row.quantity));
  const room = WIDTH - LABEL - VALUE_ROOM;
  shown.forEach((row, index) => {
    const y = index * ROW + 2;
    const length = Math.max(1, Math.round((row.quantity / most) * room));
    svg.append(
      element('text', { x: LABEL - 8, y: y + ROW / 2, class: 'bar-label', 'text-anchor': 'end', 'dominant-baseline': 'middle' }, row.label),
      element('rect', { x: LABEL, y: y + 3, width: length, height: ROW - 6, rx: 3, class: 'bar' }),
      element('text', { x: LABEL + length + 6, y: y + ROW / 2, class: 'bar-value', 'dominant-baseline': 'middle' }, row.text),
    );
  });
  return svg;
}
