import { describe, expect, it } from 'vitest';
import { clock, count } from '../../main/frontend/format.js';

describe('formats', () => {
  it('writes counts with thousands separators and times as HH:MM:SS', () => {
    expect(count(1234567)).toBe('1,234,567');
    expect(count(0)).toBe('0');
    expect(clock(new Date(2021, 0, 1, 9, 5, 3))).toBe('09:05:03');
  });
});
