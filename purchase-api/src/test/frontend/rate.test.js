import { describe, expect, it } from 'vitest';
import { PurchaseRate, WINDOW_MS } from '../../main/frontend/rate.js';

describe('purchases per minute', () => {
  it('needs two readings at least a second apart', () => {
    const rate = new PurchaseRate();
    expect(rate.current()).toBeNull();
    rate.add(1_000, 100);
    expect(rate.current()).toBeNull();
    rate.add(1_500, 101);
    expect(rate.current()).toBeNull();
    rate.add(6_000, 150);
    expect(rate.current()).toEqual({ perMinute: 600, seconds: 5 });
  });

  it('is the growth over the last minute of readings', () => {
    const rate = new PurchaseRate();
    for (let second = 0; second <= 120; second += 5) {
      // 10 purchases a second for the first minute, then 2.
      rate.add(second * 1000, second <= 60 ? second * 10 : 600 + (second - 60) * 2);
    }
    const current = rate.current();
    expect(current.seconds).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(current.seconds).toBeGreaterThanOrEqual(WINDOW_MS / 1000 - 5);
    expect(current.perMinute).toBe(120);
  });

  it('starts again when the counts do (fewer than before)', () => {
    const rate = new PurchaseRate();
    rate.add(0, 1000);
    rate.add(5_000, 1100);
    rate.add(10_000, 20);
    expect(rate.current()).toBeNull();
    rate.add(15_000, 70);
    expect(rate.current()).toEqual({ perMinute: 600, seconds: 5 });
  });
});
