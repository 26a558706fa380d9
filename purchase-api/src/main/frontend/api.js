// Reads purchase-api's GET API, with the till authentication it may ask for: the key is kept in
// sessionStorage (this browser tab's session only) and sent as "Authorization: Bearer <key>".

export const KEY_STORAGE = 'supermarket.sales.key';

/** A read that gave no figures: the HTTP status (0 when the API was not reached) and the API's own message. */
export class ReadError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'ReadError';
    this.status = status;
  }

  /** 401 (no key, or a key not accepted) and 403 (a key without the right): a sign-in problem. */
  get signInProblem() {
    return this.status === 401 || this.status === 403;
  }
}

/**
 * @param {object} options
 * @param {URL|string} options.base the API's base address (where /items/... is)
 * @param {Function} [options.fetch] the fetch to use
 * @param {Storage} [options.storage] where the key is kept (sessionStorage)
 */
export function createApi({ base, fetch: fetchFn = (...args) => globalThis.fetch(...args), storage = globalThis.sessionStorage }) {
  return {
    /** The key in use, or null. */
    key() {
      return storage.getItem(KEY_STORAGE);
    },

    signIn(key) {
      storage.setItem(KEY_STORAGE, key.trim());
    },

    signOut() {
      storage.removeItem(KEY_STORAGE);
    },

    /**
     * The JSON body of GET {@code path} (relative to the base, e.g. "items/top?limit=10"), or a
     * ReadError carrying the API's {"message"} (or what went wrong when there is none).
     */
    async read(path) {
      const headers = { Accept: 'application/json' };
      const key = storage.getItem(KEY_STORAGE);
      if (key) {
        headers.Authorization = `Bearer ${key}`;
      }
      let response;
      try {
        response = await fetchFn(new URL(path, base), { headers, cache: 'no-store', credentials: 'omit' });
      } catch (error) {
        throw new ReadError(0, `the API could not be reached (${error.message})`);
      }
      const text = await response.text();
      let body = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = null;
      }
      if (!response.ok) {
        const message = typeof body?.message === 'string' && body.message
          ? body.message
          : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
        throw new ReadError(response.status, message);
      }
      if (body === null || typeof body !== 'object') {
        throw new ReadError(response.status, 'the API answered something that is not a JSON object');
      }
      return body;
    },
  };
}
