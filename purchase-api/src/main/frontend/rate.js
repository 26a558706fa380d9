// The chain's purchases per minute, from the purchases store-service has counted (GET /items/top's
// "purchases") sampled at each read: the growth over the last minute of readings.

export const WINDOW_MS = 60_000;
/** Less than this apart, two readings say nothing about a rate. */
export const MIN_SPAN_MS = 1_000;

export class PurchaseRate {
  constructor() {
    this.samples = [];
  }

  /** A reading: {@code purchases} counted, read at {@code at} (epoch ms). */
  add(at, purchases) {
    const last = this.samples.at(-1);
    if (last && (purchases < last.purchases || at < last.at)) {
      // Fewer than before: the counts started again (a store-service without its state); so does the rate.
      this.samples = [];
    }
    this.samples.push({ at, purchases });
    while (this.samples.length > 2 && this.samples[1].at <= at - WINDOW_MS) {
      this.samples.shift();
    }
  }

  /** Forgets every reading (the key changed, say). */
  clear() {
    this.samples = [];
  }

  /**
   * {perMinute, seconds}: purchases per minute over the readings of the last minute, and how many
   * seconds they span; null until two readings at least MIN_SPAN_MS apart.
   */
  current() {
    if (this.samples.length < 2) {
      return null;
    }
    const first = this.samples[0];
    const last = this.samples.at(-1);
    const span = last.at - first.at;
    if (span < MIN_SPAN_MS) {
      return null;
    }
    return { perMinute: Math.round(((last.purchases - first.purchases) * 60_000) / span), seconds: Math.round(span / 1000) };
  }
}
