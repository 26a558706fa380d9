// How figures and times are written on the page: fixed formats, so what the page shows can be
// compared with what the API answered.

const COUNT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** 1234567 -> "1,234,567". */
export function count(value) {
  return COUNT.format(value);
}

/** The local time of day, "HH:MM:SS". */
export function clock(date) {
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((part) => String(part).padStart(2, '0')).join(':');
}
