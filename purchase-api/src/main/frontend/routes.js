// The page's three views and their addresses: #/chain, #/store/<id>, #/item/<id>, each with an
// optional ?limit=<n> (how many rows).

export const DEFAULT_LIMITS = { chain: 10, store: 10, item: 5 };
export const MAX_LIMIT = 1000;

/** The route of a location hash; anything unknown is the chain. */
export function parse(hash) {
  const match = /^#\/(chain|store|item)(?:\/([^/?]*))?(?:\?(.*))?$/.exec(hash ?? '');
  const view = match ? match[1] : 'chain';
  const params = new URLSearchParams(match?.[3] ?? '');
  const id = view === 'chain' ? null : positive(match?.[2]) ?? 1;
  const limit = Math.min(positive(params.get('limit')) ?? DEFAULT_LIMITS[view], MAX_LIMIT);
  return { view, id, limit };
}

/** The hash of a route; the default limit left out. */
export function href({ view, id, limit }) {
  const path = view === 'chain' ? '#/chain' : `#/${view}/${id}`;
  return limit && limit !== DEFAULT_LIMITS[view] ? `${path}?limit=${limit}` : path;
}

/** The GET (relative to the API's base) that gives a route's figures. */
export function apiPath({ view, id, limit }) {
  switch (view) {
    case 'store':
      return `items/store/${id}?limit=${limit}`;
    case 'item':
      return `items/top10/${id}?limit=${limit}`;
    default:
      return `items/top?limit=${limit}`;
  }
}

function positive(text) {
  if (text == null || !/^[0-9]{1,9}$/.test(text)) {
    return null;
  }
  const value = Number(text);
  return value >= 1 ? value : null;
}
