import { describe, expect, it } from 'vitest';
import { apiPath, href, parse } from '../../main/frontend/routes.js';

describe('routes', () => {
  it('reads the three views with their default limits', () => {
    expect(parse('#/chain')).toEqual({ view: 'chain', id: null, limit: 10 });
    expect(parse('#/store/7')).toEqual({ view: 'store', id: 7, limit: 10 });
    expect(parse('#/item/101?limit=20')).toEqual({ view: 'item', id: 101, limit: 20 });
  });

  it('falls back on the chain, id 1 and the default limit, and caps the limit at the API\'s', () => {
    expect(parse('')).toEqual({ view: 'chain', id: null, limit: 10 });
    expect(parse('#/nowhere')).toEqual({ view: 'chain', id: null, limit: 10 });
    expect(parse('#/store/abc?limit=0')).toEqual({ view: 'store', id: 1, limit: 10 });
    expect(parse('#/item/5?limit=5000')).toEqual({ view: 'item', id: 5, limit: 1000 });
  });

  it('writes a route back and names its GET', () => {
    expect(href({ view: 'store', id: 7, limit: 10 })).toBe('#/store/7');
    expect(href({ view: 'item', id: 3, limit: 8 })).toBe('#/item/3?limit=8');
    expect(apiPath(parse('#/chain?limit=25'))).toBe('items/top?limit=25');
    expect(apiPath(parse('#/store/7'))).toBe('items/store/7?limit=10');
    expect(apiPath(parse('#/item/3'))).toBe('items/top10/3?limit=5');
  });
});
