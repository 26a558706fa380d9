import { describe, expect, it } from 'vitest';
import { createApi, KEY_STORAGE, ReadError } from '../../main/frontend/api.js';

class MemoryStorage {
  constructor() {
    this.values = new Map();
  }

  getItem(key) {
    return this.values.has(key) ? this.values.get(key) : null;
  }

  setItem(key, value) {
    this.values.set(key, String(value));
  }

  removeItem(key) {
    this.values.delete(key);
  }
}

function answering(status, body, statusText = '') {
  const calls = [];
  const fetch = async (url, options) => {
    calls.push({ url: String(url), options });
    return { ok: status >= 200 && status < 300, status, statusText, text: async () => body };
  };
  return { fetch, calls };
}

describe('the API client', () => {
  it('reads a GET relative to the API base, without a key until one is given', async () => {
    const { fetch, calls } = answering(200, '{"stores":[{"itemID":3,"numberOfItems":7}]}');
    const api = createApi({ base: 'http://shop.example:8080/', fetch, storage: new MemoryStorage() });

    const body = await api.read('items/store/7?limit=10');

    expect(body).toEqual({ stores: [{ itemID: 3, numberOfItems: 7 }] });
    expect(calls[0].url).toBe('http://shop.example:8080/items/store/7?limit=10');
    expect(calls[0].options.headers.Authorization).toBeUndefined();
    expect(calls[0].options.cache).toBe('no-store');
  });

  it('sends the key of the session as a bearer token, and forgets it on sign-out', async () => {
    const { fetch, calls } = answering(200, '{}');
    const storage = new MemoryStorage();
    const api = createApi({ base: 'http://localhost/', fetch, storage });

    api.signIn('  tk_manager_key \n');
    await api.read('items/top');
    api.signOut();
    await api.read('items/top');

    expect(calls[0].options.headers.Authorization).toBe('Bearer tk_manager_key');
    expect(calls[1].options.headers.Authorization).toBeUndefined();
    expect(storage.getItem(KEY_STORAGE)).toBeNull();
  });

  it('fails with the API\'s message and status', async () => {
    const api = createApi({ base: 'http://localhost/', fetch: answering(504, '{"message":"store-service did not answer within 3000 ms; retry later"}').fetch, storage: new MemoryStorage() });

    const failure = await api.read('items/top').catch((error) => error);

    expect(failure).toBeInstanceOf(ReadError);
    expect(failure.status).toBe(504);
    expect(failure.message).toBe('store-service did not answer within 3000 ms; retry later');
    expect(failure.signInProblem).toBe(false);
  });

  it('calls 401 and 403 sign-in problems', async () => {
    for (const status of [401, 403]) {
      const api = createApi({ base: 'http://localhost/', fetch: answering(status, '{"message":"no key"}').fetch, storage: new MemoryStorage() });
      const failure = await api.read('items/top').catch((error) => error);
      expect(failure.signInProblem).toBe(true);
      expect(failure.message).toBe('no key');
    }
  });

  it('says what happened when there is no message to show', async () => {
    const storage = new MemoryStorage();
    const html = await createApi({ base: 'http://localhost/', fetch: answering(502, '<html>Bad Gateway</html>', 'Bad Gateway').fetch, storage })
      .read('items/top').catch((error) => error);
    const notJson = await createApi({ base: 'http://localhost/', fetch: answering(200, 'hello').fetch, storage })
      .read('items/top').catch((error) => error);
    const unreachable = await createApi({ base: 'http://localhost/', fetch: async () => { throw new TypeError('Failed to fetch'); }, storage })
      .read('items/top').catch((error) => error);

    expect(html.message).toBe('HTTP 502 Bad Gateway');
    expect(notJson.message).toBe('the API answered something that is not a JSON object');
    expect(unreachable.status).toBe(0);
    expect(unreachable.message).toBe('the API could not be reached (Failed to fetch)');
  });
});
