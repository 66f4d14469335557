import { FORMAT_CHECKS } from '../../../domain/flow/formats';
import { seededRandom, testCases } from '../../support/seeded-random';

/**
 * The date and date-time formats are fixed-position scans (domain/flow/formats.ts). These are the
 * regular expressions they replaced, kept here as the reference: every string below, hand-picked
 * edges and seeded mutations of valid values, must get the same verdict from both.
 */
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

function referenceValidDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return d <= days[m - 1];
}
function referenceDate(v: string): boolean {
  const m = DATE.exec(v);
  return !!m && referenceValidDate(Number(m[1]), Number(m[2]), Number(m[3]));
}
function referenceDateTime(v: string): boolean {
  const m = DATE_TIME.exec(v);
  if (!m || !referenceValidDate(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 60) return false;
  return m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
}


const EDGES = [
  '2024-02-29', '2023-02-29', '2000-02-29', '1900-02-29', '0000-02-29', '2024-12-31', '2024-13-01', '2024-00-10', '2024-01-00', '2024-04-31',
  '2024-1-01', '2024-01-1', '202-01-01', '20240-01-01', '2024/01/01', '２０２４-01-01', '2024-01-01 ', ' 2024-01-01', '2024-01-01\n', '',
  '2024-05-01T12:00:00Z', '2024-05-01t12:00:00z', '2024-05-01T23:59:60Z', '2024-05-01T24:00:00Z', '2024-05-01T12:60:00Z', '2024-05-01T12:00:61Z',
  '2024-05-01T12:00:00.1Z', '2024-05-01T12:00:00.123456789Z', '2024-05-01T12:00:00.1234567890Z', '2024-05-01T12:00:00.Z', '2024-05-01T12:00:00+02:00',
  '2024-05-01T12:00:00-23:59', '2024-05-01T12:00:00+24:00', '2024-05-01T12:00:00+02:60', '2024-05-01T12:00:00+0200', '2024-05-01T12:00:00+02:00Z',
  '2024-05-01T12:00:00', '2024-05-01 12:00:00Z', '2024-02-30T12:00:00Z', '2024-05-01T12:00:00.5+01:30', '2024-05-01T1:00:00Z', '2024-05-01T12:00:00ZZ',
];

const ALPHABET = '0123456789-:.TtZz+ x１';

/** A valid date or date-time, then 0 to 3 edits: a character replaced, inserted or removed. */
function mutated(next: () => number): string {
  const pick = (n: number) => Math.floor(next() * n);
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  const date = `${pad(pick(10000), 4)}-${pad(1 + pick(12), 2)}-${pad(1 + pick(31), 2)}`;
  const zone = [() => 'Z', () => 'z', () => `${next() < 0.5 ? '+' : '-'}${pad(pick(25), 2)}:${pad(pick(61), 2)}`][pick(3)]();
  const fraction = next() < 0.3 ? `.${'1234567890'.slice(0, 1 + pick(10))}` : '';
  let s = next() < 0.4 ? date : `${date}${next() < 0.5 ? 'T' : 't'}${pad(pick(25), 2)}:${pad(pick(61), 2)}:${pad(pick(62), 2)}${fraction}${zone}`;
  for (let edits = pick(4); edits > 0; edits -= 1) {
    const at = pick(s.length + 1);
    const c = ALPHABET[pick(ALPHABET.length)];
    const kind = pick(3);
    s = kind === 0 ? s.slice(0, at) + c + s.slice(at + 1) : kind === 1 ? s.slice(0, at) + c + s.slice(at) : s.slice(0, at) + s.slice(at + 1);
  }
  return s;
}

describe('date and date-time formats', () => {
  const samples = [...EDGES, ...Array.from({ length: testCases(20_000, 5_000) }, ((next) => () => mutated(next))(seededRandom(17)))];

  it('give the verdict of the regular expressions they replaced, on edges and 20,000 seeded mutations', () => {
    const differ = samples.filter((s) => FORMAT_CHECKS.date(s) !== referenceDate(s) || FORMAT_CHECKS['date-time'](s) !== referenceDateTime(s));
    expect(differ).toEqual([]);
  });

  it('accept real dates and date-times and refuse impossible ones', () => {
    expect(['2024-02-29', '2000-02-29', '1999-12-31'].map(FORMAT_CHECKS.date)).toEqual([true, true, true]);
    expect(['2023-02-29', '1900-02-29', '2024-04-31', '2024-1-01'].map(FORMAT_CHECKS.date)).toEqual([false, false, false, false]);
    expect(['2024-05-01T12:00:00Z', '2024-05-01T23:59:60.999+02:00'].map(FORMAT_CHECKS['date-time'])).toEqual([true, true]);
    expect(['2024-05-01T24:00:00Z', '2024-05-01T12:00:00', '2024-05-01T12:00:00.Z'].map(FORMAT_CHECKS['date-time'])).toEqual([false, false, false]);
    // Both verdicts occur among the mutations, so the comparison above compares something.
    const valid = samples.filter((s) => FORMAT_CHECKS['date-time'](s)).length;
    expect(valid).toBeGreaterThan(samples.length / 20);
    expect(valid).toBeLessThan(samples.length - samples.length / 20);
  });
});
