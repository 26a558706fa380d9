// The sales page: three views over purchase-api's GET API (the chain, a store, an item), each a
// table and a bar chart read again every REFRESH_MS while the page is visible. A failed read shows
// the API's message and marks the figures on screen as not updated; a 401 or 403 asks to sign in.
import './style.css';
import { createApi } from './api.js';
import { barChart, MAX_BARS } from './chart.js';
import { clock, count } from './format.js';
import { PurchaseRate } from './rate.js';
import { apiPath, DEFAULT_LIMITS, href, MAX_LIMIT, parse } from './routes.js';

export const REFRESH_MS = 5_000;

const VIEWS = {
  chain: {
    title: () => 'The chain',
    idLabel: null,
    limitLabel: 'Items shown',
    list: 'items',
    idField: 'itemID',
    entry: 'Item',
    link: (id) => href({ view: 'item', id, limit: DEFAULT_LIMITS.item }),
    caption: () => 'Items sold most over every store',
  },
  store: {
    title: (route) => `Store ${route.id}`,
    idLabel: 'Store',
    limitLabel: 'Items shown',
    list: 'stores', // the published contract's key, even for items
    idField: 'itemID',
    entry: 'Item',
    link: (id) => href({ view: 'item', id, limit: DEFAULT_LIMITS.item }),
    caption: (route) => `Items sold most at store ${route.id}`,
  },
  item: {
    title: (route) => `Item ${route.id}`,
    idLabel: 'Item',
    limitLabel: 'Stores shown',
    list: 'stores',
    idField: 'storeID',
    entry: 'Store',
    link: (id) => href({ view: 'store', id, limit: DEFAULT_LIMITS.store }),
    caption: (route) => `Stores that sold item ${route.id} most`,
  },
};

const api = createApi({ base: new URL('../', document.baseURI) });
const rate = new PurchaseRate();
const lastIds = { store: 1, item: 1 };
let route = null;
let parts = null;
let figuresReadAt = null;
let timer = null;
let generation = 0;

function el(name, attributes = {}, ...children) {
  const node = document.createElement(name);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === false || value == null) {
      continue;
    }
    if (key === 'class') {
      node.className = value;
    } else {
      node.setAttribute(key, value === true ? '' : String(value));
    }
  }
  node.append(...children.filter((child) => child != null));
  return node;
}

/** Builds the view of {@code route}: heading, controls, status lines and an empty figures area. */
function render() {
  const view = VIEWS[route.view];
  const main = document.getElementById('view');
  const heading = el('h2', { id: 'view-title', tabindex: '-1' }, view.title(route));
  const form = el('form', { class: 'controls', id: 'controls' },
    view.idLabel ? el('label', { for: 'view-id' }, view.idLabel) : null,
    view.idLabel ? el('input', { id: 'view-id', name: 'id', type: 'number', min: '1', step: '1', inputmode: 'numeric', required: true, value: route.id }) : null,
    el('label', { for: 'view-limit' }, view.limitLabel),
    el('input', { id: 'view-limit', name: 'limit', type: 'number', min: '1', max: String(MAX_LIMIT), step: '1', inputmode: 'numeric', required: true, value: route.limit }),
    el('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const id = form.elements.id ? Number(form.elements.id.value) : null;
    const next = href({ view: route.view, id, limit: Number(form.elements.limit.value) });
    if (next === location.hash) {
      refresh();
    } else {
      location.hash = next;
    }
  });
  const status = el('p', { id: 'read-status', class: 'read-status', role: 'status' }, 'Reading…');
  const problem = el('p', { id: 'read-problem', class: 'problem', role: 'alert', hidden: true });
  const figures = el('div', { id: 'figures', class: 'figures' });
  main.replaceChildren(el('section', { 'aria-labelledby': 'view-title' }, heading, form, status, problem, figures));
  parts = { heading, status, problem, figures };
  figuresReadAt = null;
  for (const name of Object.keys(VIEWS)) {
    const link = document.getElementById(`nav-${name}`);
    link.href = name === 'chain' ? '#/chain' : `#/${name}/${lastIds[name]}`;
    if (name === route.view) {
      link.setAttribute('aria-current', 'page');
    } else {
      link.removeAttribute('aria-current');
    }
  }
  document.title = `${view.title(route)} · Sales`;
}

/** Shows a successful read of the current route, {@code body} as the API answered it, read at {@code at}. */
function show(body, at) {
  const view = VIEWS[route.view];
  const rows = (body[view.list] ?? []).map((entry) => ({ id: entry[view.idField], quantity: entry.numberOfItems }));
  const content = [];
  if (route.view === 'chain') {
    rate.add(at.getTime(), body.purchases);
    const current = rate.current();
    content.push(el('div', { class: 'headline', id: 'chain-rate' },
      current
        ? el('p', { class: 'figure' },
          el('span', { class: 'figure-value', id: 'purchases-per-minute' }, count(current.perMinute)),
          el('span', { class: 'figure-label' }, ' purchases per minute'))
        : el('p', { class: 'figure' }, 'Purchases per minute: ',
          el('span', { id: 'purchases-per-minute' }, 'measuring…')),
      el('p', { class: 'note', id: 'rate-note' }, current
        ? `Over the last ${current.seconds} s of readings; ${count(body.purchases)} purchases counted in all.`
        : `The rate needs a second reading, in ${REFRESH_MS / 1000} s; ${count(body.purchases)} purchases counted in all.`)));
  }
  if (rows.length === 0) {
    content.push(el('p', { class: 'empty', id: 'no-sales' }, route.view === 'item' ? 'No store has sold this item yet.' : 'No sales yet.'));
  } else {
    content.push(table(view, rows), chart(view, rows));
  }
  parts.figures.replaceChildren(...content);
  // Which view's read these figures are (the browser test waits on it).
  parts.figures.dataset.route = href(route);
  parts.figures.classList.remove('stale');
  parts.figures.removeAttribute('aria-describedby');
  parts.problem.hidden = true;
  parts.problem.textContent = '';
  figuresReadAt = at;
  parts.status.textContent = `Read at ${clock(at)}; read again every ${REFRESH_MS / 1000} s.`;
  hideSignIn();
}

function table(view, rows) {
  const body = el('tbody', {}, ...rows.map((row, index) => el('tr', {},
    el('td', { class: 'rank' }, String(index + 1)),
    el('td', {}, el('a', { href: view.link(row.id) }, `${view.entry} ${row.id}`)),
    el('td', { class: 'quantity' }, count(row.quantity)))));
  return el('div', { class: 'table-wrap' },
    el('table', { id: 'ranking' },
      el('caption', {}, view.caption(route)),
      el('thead', {}, el('tr', {},
        el('th', { scope: 'col' }, 'Rank'),
        el('th', { scope: 'col' }, view.entry),
        el('th', { scope: 'col', class: 'quantity' }, 'Units sold'))),
      body));
}

function chart(view, rows) {
  const drawn = rows.map((row) => ({ label: `${view.entry} ${row.id}`, quantity: row.quantity, text: count(row.quantity) }));
  return el('figure', { class: 'chart' },
    barChart(drawn),
    el('figcaption', {}, rows.length > MAX_BARS ? `The first ${MAX_BARS} of the ${rows.length} in the table.` : 'The table\'s figures as bars.'));
}

/** Shows a failed read, at {@code at}: the API's message; the figures on screen marked as not updated, or none. */
function fail(error, at) {
  const status = error.status ? ` (HTTP ${error.status})` : '';
  if (error.signInProblem) {
    parts.figures.replaceChildren();
    delete parts.figures.dataset.route;
    figuresReadAt = null;
    parts.problem.hidden = true;
    parts.status.textContent = `Not read at ${clock(at)}: sign in.`;
    showSignIn(`Sign-in problem${status}: ${error.message}`);
    return;
  }
  parts.problem.hidden = false;
  parts.problem.textContent = `The read at ${clock(at)} failed${status}: ${error.message}`;
  if (figuresReadAt) {
    parts.figures.classList.add('stale');
    parts.figures.setAttribute('aria-describedby', 'read-status');
    parts.status.textContent = `Not updated: the figures below were read at ${clock(figuresReadAt)}; the read at ${clock(at)} failed.`;
  } else {
    parts.status.textContent = `No figures: the read at ${clock(at)} failed.`;
  }
}

function showSignIn(problem) {
  const panel = document.getElementById('sign-in');
  document.getElementById('sign-in-problem').textContent = problem;
  const wasHidden = panel.hidden;
  panel.hidden = false;
  if (wasHidden) {
    document.getElementById('key').focus();
  }
}

function hideSignIn() {
  document.getElementById('sign-in').hidden = true;
}

function showSession() {
  const signedIn = api.key() !== null;
  document.getElementById('session').hidden = !signedIn;
}

/** Reads the current route's figures now, then again every REFRESH_MS while the page is visible. */
async function refresh() {
  clearTimeout(timer);
  const mine = ++generation;
  const reading = route;
  try {
    const body = await api.read(apiPath(reading));
    if (mine === generation) {
      show(body, new Date());
    }
  } catch (error) {
    if (mine !== generation) {
      return;
    }
    if (error.name !== 'ReadError') {
      throw error;
    }
    fail(error, new Date());
  }
  if (mine === generation && document.visibilityState === 'visible') {
    timer = setTimeout(refresh, REFRESH_MS);
  }
}

function navigate(focus) {
  route = parse(location.hash);
  if (route.id) {
    lastIds[route.view] = route.id;
  }
  render();
  if (focus) {
    parts.heading.focus();
  }
  refresh();
}

document.getElementById('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = document.getElementById('key');
  api.signIn(input.value);
  input.value = '';
  showSession();
  hideSignIn();
  // Not the refused read's "sign in" any more: the new key's read is under way.
  parts.status.textContent = 'Reading…';
  parts.heading.focus();
  refresh();
});
document.getElementById('sign-out').addEventListener('click', () => {
  api.signOut();
  showSession();
  refresh();
});
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') {
    refresh();
  } else {
    clearTimeout(timer);
  }
});
window.addEventListener('hashchange', () => navigate(true));
if (!location.hash) {
  history.replaceState(null, '', '#/chain');
}
showSession();
navigate(false);
