// The sales page in Debian's Chromium (driven by playwright-core), against a real platform after a
// real run, with till authentication on: scripts/run-local.sh --auth --page-test starts it all and
// runs this with the environment below. Node's own test runner: node --test <this file>.
//
// SALES_PAGE_URL   the page, e.g. http://127.0.0.1:8080/sales/
// TILL_KEYS        scripts/till-keys.sh's till-keys.txt of the run (a manager key and store keys)
// TOP_ITEMS        check-gets --top-items-out of the run: the chain's top items counted over the
//                  purchases database (brute force), written before this test sends anything
// SCREENSHOTS      optional: a folder for the views' screenshots
// CHROMIUM         the browser (default /usr/bin/chromium)
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';

const PAGE = required('SALES_PAGE_URL');
const ORIGIN = new URL(PAGE).origin;
const KEYS = parseKeys(readFileSync(required('TILL_KEYS'), 'utf8'));
const BRUTE_FORCE = JSON.parse(readFileSync(required('TOP_ITEMS'), 'utf8'));
const SCREENSHOTS = process.env.SCREENSHOTS || null;
const REFRESH_MS = 5_000;
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let context;
let profile;
const requested = [];
const pageErrors = [];

function required(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set (scripts/run-local.sh --page-test sets it)`);
  }
  return value;
}

function parseKeys(text) {
  const keys = { manager: null, stores: new Map() };
  for (const line of text.split('\n')) {
    const [scope, key] = line.trim().split(/\s+/);
    if (!scope || scope.startsWith('#') || !key) {
      continue;
    }
    if (scope === 'manager') {
      keys.manager ??= key;
    } else if (!keys.stores.has(Number(scope))) {
      keys.stores.set(Number(scope), key);
    }
  }
  assert.ok(keys.manager, 'TILL_KEYS holds a manager key');
  return keys;
}

/** GET of the API itself, with the manager key: what the page must show. */
async function api(path) {
  const response = await fetch(`${ORIGIN}/${path}`, { headers: { Authorization: `Bearer ${KEYS.manager}` } });
  assert.equal(response.status, 200, `GET /${path}: ${await response.clone().text()}`);
  return response.json();
}

async function post(store, items) {
  const body = JSON.stringify({ items: items.map(([item, quantity]) => ({ ItemID: String(item), numberOfItems: quantity })) });
  const response = await fetch(`${ORIGIN}/purchase/${store}/customer/${store * 1000}/date/20210101`, {
    method: 'POST', body, headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${KEYS.stores.get(store)}` },
  });
  assert.equal(response.status, 201, `POST at store ${store}: ${await response.text()}`);
}

/** A new tab: its own sessionStorage, so signed out. */
async function openPage(hash = '#/chain') {
  const page = await context.newPage();
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  await page.goto(new URL(hash, PAGE).toString());
  return page;
}

async function signIn(page, key) {
  await page.getByLabel('Manager key').fill(key);
  await page.getByLabel('Manager key').press('Enter');
}

/** Asks for another view with the keyboard (the labelled field, a value, Enter) and waits for its figures. */
async function showWithKeyboard(page, label, value, hash) {
  const field = page.getByLabel(label, { exact: true });
  await field.fill(String(value));
  await field.press('Enter');
  await page.locator(`#figures[data-route="${hash}"]`).waitFor({ timeout: 3 * REFRESH_MS });
}

/** The ranking table as [[id, quantity], ...], from what the page shows. */
async function shownRows(page) {
  return page.$$eval('#ranking tbody tr', (rows) => rows.map((row) => {
    const cells = row.querySelectorAll('td');
    return [Number(cells[1].textContent.replace(/^\D+/, '')), Number(cells[2].textContent.replace(/,/g, ''))];
  }));
}

function rowsOf(entries, idField) {
  return entries.map((entry) => [entry[idField], entry.numberOfItems]);
}

async function screenshot(page, name) {
  if (SCREENSHOTS) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: true });
  }
}

before(async () => {
  profile = mkdtempSync(join(tmpdir(), 'sales-page-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 860 },
  });
});

after(async () => {
  await context?.close();
  rmSync(profile, { recursive: true, force: true });
});

test('without a key, and with a wrong one, the page asks to sign in and shows the API\'s refusal', async () => {
  const page = await openPage('#/chain');

  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  assert.match(await page.locator('#sign-in-problem').textContent(), /^Sign-in problem \(HTTP 401\): \S/);
  await signIn(page, 'tk_this_is_not_a_key_of_this_platform');
  await page.waitForFunction(() => document.getElementById('read-status').textContent.startsWith('Not read at'));

  assert.equal(await page.locator('#sign-in').isVisible(), true);
  assert.match(await page.locator('#sign-in-problem').textContent(), /^Sign-in problem \(HTTP 401\): /);
  assert.equal(await page.locator('#ranking').count(), 0, 'no figures without a valid key');
  await page.close();
});

test('a till\'s key sees its own store and is refused the chain, as a sign-in problem', async () => {
  const [store, key] = [...KEYS.stores.entries()][0];
  const page = await openPage(`#/store/${store}`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await signIn(page, key);
  await page.locator('#ranking').waitFor();

  assert.deepEqual(await shownRows(page), rowsOf((await api(`items/store/${store}`)).stores, 'itemID'));
  await page.getByRole('link', { name: 'Chain' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  assert.match(await page.locator('#sign-in-problem').textContent(), /^Sign-in problem \(HTTP 403\): .*manager key/);
  assert.equal(await page.locator('#ranking').count(), 0);
  await page.close();
});

test('the chain view\'s top items and purchases are the brute-force count over the purchases database', async () => {
  const page = await openPage('#/chain');
  await signIn(page, KEYS.manager);
  await page.locator('#ranking').waitFor();

  assert.deepEqual(await shownRows(page), rowsOf(BRUTE_FORCE.items.slice(0, 10), 'itemID'));
  assert.match(await page.locator('#rate-note').textContent(), new RegExp(`${BRUTE_FORCE.purchases.toLocaleString('en-US')} purchases counted in all`));
  // More rows, asked with the keyboard.
  await showWithKeyboard(page, 'Items shown', 50, '#/chain?limit=50');
  assert.deepEqual(await shownRows(page), rowsOf(BRUTE_FORCE.items.slice(0, 50), 'itemID'));
  await page.close();
});

test('the store and item views show exactly what the GET API answers', async () => {
  const page = await openPage('#/store/1');
  await signIn(page, KEYS.manager);
  await page.locator('#ranking').waitFor();
  const items = [];
  for (const store of KEYS.stores.keys()) {
    await showWithKeyboard(page, 'Store', store, `#/store/${store}`);
    const expected = (await api(`items/store/${store}`)).stores;
    assert.deepEqual(await shownRows(page), rowsOf(expected, 'itemID'), `store ${store}`);
    assert.equal(await page.getByRole('heading', { level: 2 }).textContent(), `Store ${store}`);
    items.unshift(...expected.slice(0, 2).map((entry) => entry.itemID));
  }
  await screenshot(page, 'sales-store.png');

  // An item of the table shown (the last store's first) leads to its view.
  const first = items[0];
  await page.getByRole('link', { name: `Item ${first}`, exact: true }).first().click();
  await page.locator(`#figures[data-route="#/item/${first}"]`).waitFor();
  for (const item of new Set(items)) {
    if (item !== first) {
      await showWithKeyboard(page, 'Item', item, `#/item/${item}`);
    }
    assert.deepEqual(await shownRows(page), rowsOf((await api(`items/top10/${item}`)).stores, 'storeID'), `item ${item}`);
  }
  // The chain's first item, sold at most stores.
  const top = BRUTE_FORCE.items[0].itemID;
  await showWithKeyboard(page, 'Item', top, `#/item/${top}`);
  assert.deepEqual(await shownRows(page), rowsOf((await api(`items/top10/${top}`)).stores, 'storeID'), `item ${top}`);
  await screenshot(page, 'sales-item.png');
  await page.close();
});

test('the open views pick up purchases sent meanwhile, without a reload', async () => {
  const stores = [...KEYS.stores.keys()];
  const store = stores[stores.length - 1];
  const item = 99_991;
  const chain = await openPage('#/chain');
  await signIn(chain, KEYS.manager);
  await chain.locator('#ranking').waitFor();
  const storeView = await openPage(`#/store/${store}`);
  await signIn(storeView, KEYS.manager);
  await storeView.locator('#ranking').waitFor();
  const before = (await api('items/top?limit=1000')).items.find((entry) => entry.itemID === item)?.numberOfItems ?? 0;
  const { items: leaders, purchases: purchasesBefore } = await api('items/top');
  // Three purchases that make the item the chain's first, by a little.
  const each = Math.floor((leaders[0]?.numberOfItems ?? 0) / 3) + 2;
  const navigations = [];
  chain.on('framenavigated', () => navigations.push(chain.url()));

  for (let i = 0; i < 3; i++) {
    await post(store, [[item, each], [1, 1]]);
  }

  const deadline = Date.now() + 60_000;
  let expectedChain;
  for (;;) {
    expectedChain = await api('items/top');
    if (expectedChain.purchases === purchasesBefore + 3 || Date.now() > deadline) {
      break;
    }
    await new Promise((resolve) => { setTimeout(resolve, 200); });
  }
  assert.equal(expectedChain.purchases, purchasesBefore + 3, 'store-service counted the purchases');
  assert.deepEqual(expectedChain.items[0], { itemID: item, numberOfItems: before + 3 * each });
  const expectedStore = (await api(`items/store/${store}`)).stores;
  const showsFirst = ([id, quantity]) => {
    const cells = document.querySelectorAll('#ranking tbody tr:first-child td');
    return cells.length === 3 && cells[1].textContent === `Item ${id}` && cells[2].textContent.replace(/,/g, '') === String(quantity);
  };
  await chain.waitForFunction(showsFirst, [item, before + 3 * each], { timeout: 3 * REFRESH_MS });
  assert.deepEqual(await shownRows(chain), rowsOf(expectedChain.items, 'itemID'));
  assert.match(await chain.locator('#purchases-per-minute').textContent(), /^[1-9][0-9,]*$/, 'the purchases per minute');
  await storeView.waitForFunction(showsFirst, [expectedStore[0].itemID, expectedStore[0].numberOfItems], { timeout: 3 * REFRESH_MS });
  assert.deepEqual(await shownRows(storeView), rowsOf(expectedStore, 'itemID'));
  assert.deepEqual(navigations, [], 'the chain view was not reloaded');
  await screenshot(chain, 'sales-chain.png');
  await chain.close();
  await storeView.close();
});

test('a failed read shows the API\'s message, and figures already shown are marked as not updated', async () => {
  const page = await openPage('#/store/99999');
  await signIn(page, KEYS.manager);
  await page.waitForFunction(() => document.getElementById('read-status').textContent.startsWith('No figures'));
  assert.match(await page.locator('#read-problem').textContent(), /failed \(HTTP 404\): no store 99999 \(known: 1\.\.\d+\)/);

  await showWithKeyboard(page, 'Store', 1, '#/store/1');
  const shown = await shownRows(page);
  // The next read fails as the API fails when store-service is away.
  await page.route('**/items/store/**', (route) => route.fulfill({
    status: 504, contentType: 'application/json',
    body: JSON.stringify({ message: 'store-service did not answer within 3000 ms; retry later' }),
  }));
  await page.waitForFunction(() => document.getElementById('read-status').textContent.startsWith('Not updated'), null,
    { timeout: 3 * REFRESH_MS });

  assert.match(await page.locator('#read-problem').textContent(), /failed \(HTTP 504\): store-service did not answer within 3000 ms; retry later/);
  assert.match(await page.locator('#read-status').textContent(), /^Not updated: the figures below were read at \d\d:\d\d:\d\d; the read at \d\d:\d\d:\d\d failed\.$/);
  assert.equal(await page.locator('#figures').getAttribute('class'), 'figures stale');
  assert.deepEqual(await shownRows(page), shown);
  await page.unroute('**/items/store/**');
  await page.waitForFunction(() => document.getElementById('read-status').textContent.startsWith('Read at'), null,
    { timeout: 3 * REFRESH_MS });
  assert.equal(await page.locator('#figures').getAttribute('class'), 'figures');
  await page.close();
});

test('the views can be used with the keyboard alone, and read on a phone', async () => {
  const page = await openPage('#/chain');
  await signIn(page, KEYS.manager);
  await page.locator('#ranking').waitFor();
  // Signed in, the view's heading has the focus; from a fresh load (the key stays for the tab's
  // session): Tab to the Item view's link, Enter; the view's heading takes the focus.
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'view-title');
  await page.reload();
  await page.locator('#ranking').waitFor();
  let reached = false;
  for (let i = 0; i < 10 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement?.id === 'nav-item');
  }
  assert.ok(reached, 'the Item link is reached with Tab');
  await page.keyboard.press('Enter');
  await page.waitForURL(/#\/item\/\d+$/);
  // The URL changes before the browser dispatches hashchange, whose handler moves the focus.
  await page.waitForFunction(() => document.activeElement?.id === 'view-title', null, { timeout: 2000 })
    .catch(() => {});
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'view-title');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'view-id', 'the item field comes next');

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(new URL('#/chain', PAGE).toString());
  await page.locator('#figures[data-route="#/chain"]').waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.equal(overflow, 0, 'nothing wider than a phone\'s screen');
  await screenshot(page, 'sales-chain-phone.png');
  await page.close();
});

test('the page asked nothing of any other origin and raised no script error', () => {
  const elsewhere = requested.filter((url) => !url.startsWith(`${ORIGIN}/`));
  assert.deepEqual(elsewhere, []);
  assert.deepEqual(pageErrors, []);
});
