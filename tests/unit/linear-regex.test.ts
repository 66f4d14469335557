import {
  escapeHtml,
  getPath,
  interpolateHtml,
  interpolateText,
  isRegexSpace,
  parsePath,
  placeholders,
  resolveTyped,
  scanPlaceholders,
  singlePlaceholder,
} from '../../domain/templates/interpolate';
import { bareDataPath, dataPath, length } from '../../domain/templates/components/props';
import { crossCheckTemplate, nameContext, type ComponentVisit } from '../../domain/templates/template-checks';
import { DEFAULT_FORMAT_OPTIONS, toDate, toNumber } from '../../domain/templates/format';
import { headerFooterSlot } from '../../domain/templates/build-html';
import { fieldLabel } from '../../domain/templates/automation-fields';
import { isDataImageUrl } from '../../domain/templates/image-hosts';
import type { ValidationIssue } from '../../domain/templates/template.types';
import { SLUG_PATTERN, slugify } from '../../domain/identity/slugs';
import { normalizeBackupCode } from '../../domain/identity/backup-codes';
import { normalizeTimeZone } from '../../domain/identity/time-zones';
import { parseAvatarImage } from '../../domain/identity/avatar-image';
import { FORMAT_CHECKS } from '../../domain/flow/formats';
import { gateSlug } from '../../domain/flow/flow-ids';
import { FILENAME_PATTERN } from '../../domain/documents/files';
import { verifyWebhookSignature } from '../../domain/signing';
import { parseDuration } from '../../domain/webhooks/delivery';
import { findLinks } from '../../adapters/mail/outbox-mailer';
import { contentDisposition } from '../../adapters/storage/storage';
import { embeddedIPv4, isInternalAddress } from '../../adapters/http/outbound';
import { sheetName } from '../../adapters/rendering/excel-renderer';
import { cpuMsOf } from '../support/cpu-time';

/**
 * Every pattern of ours that reads tenant text must be linear (issue 10). Each case feeds about
 * 100 KB built to make a backtracking pattern retry (long runs of what a repetition matches,
 * ending in a character that makes the match fail), bounds the time, and checks the answer.
 */

const N = 100_000;
/**
 * CPU time, generous: a linear pass over 100 KB takes a few milliseconds; the old patterns took
 * minutes on this input (5 s already on 3 KB of it). CPU time, so a busy machine does not move it.
 */
const BOUND_CPU_MS = 2000;

function timed<T>(run: () => T): T {
  const { result, cpuMs } = cpuMsOf(run);
  expect(cpuMs).toBeLessThan(BOUND_CPU_MS);
  return result;
}

function timedThrow(run: () => unknown): unknown {
  return timed(() => {
    try {
      run();
    } catch (err) {
      return err;
    }
    throw new Error('expected a throw');
  });
}

// The patterns the scanners replace, kept here to check the scanners against them on short inputs.
const OLD_PLACEHOLDER = /\{\{\s*([^{}|]+?)\s*(?:\|\s*([A-Za-z]+)\s*)?\}\}/g;
const OLD_SINGLE_PLACEHOLDER = /^\s*\{\{\s*([^{}|]+?)\s*(?:\|\s*([A-Za-z]+)\s*)?\}\}\s*$/;
const OLD_BARE_DATA_PATH = /^\s*\{\{\s*|\s*\}\}\s*$/g;
const OLD_NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A small seeded generator, so a failing input can be reproduced. */
function randomTexts(alphabet: string[], count: number, maxLength: number, seed = 42): string[] {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state;
  };
  const out: string[] = [];
  for (let n = 0; n < count; n += 1) {
    let s = '';
    const len = next() % (maxLength + 1);
    for (let i = 0; i < len; i += 1) s += alphabet[next() % alphabet.length];
    out.push(s);
  }
  return out;
}

describe('placeholder scanner (domain/templates/interpolate.ts)', () => {
  describe('on normal input', () => {
    const scope = { name: 'Zoë', total: 1234.5, items: [{ name: 'first' }], when: new Date('2024-03-01T00:00:00Z') };

    it('finds {{ path }} and {{ path | format }} with whitespace trimmed', () => {
      expect(placeholders('Hi {{ name }}, {{total|currency}} and {{  items[0].name  |  upper  }}.')).toEqual([
        { path: 'name', format: undefined },
        { path: 'total', format: 'currency' },
        { path: 'items[0].name', format: 'upper' },
      ]);
      expect(scanPlaceholders('a {{x}} b')).toEqual([{ start: 2, end: 7, path: 'x' }]);
      expect(placeholders('{{\tname\n}}')).toEqual([{ path: 'name', format: undefined }]);
      expect(placeholders('{{\u00a0name\u3000| date\u2028}}')).toEqual([{ path: 'name', format: 'date' }]);
    });

    it('finds nothing in malformed placeholders', () => {
      for (const text of ['{{}}', '{{name}', '{name}}', '{{na{me}}', '{{a|}}', '{{a|1}}', '{{a|b|c}}', '{{a | b c}}', '{{a}x}', 'plain']) {
        expect(placeholders(text)).toEqual([]);
      }
    });

    it('starts a placeholder at the last of several braces, and never overlaps two', () => {
      expect(scanPlaceholders('{{{a}}')).toEqual([{ start: 1, end: 6, path: 'a' }]);
      expect(placeholders('{{a}}}}{{b}}')).toEqual([{ path: 'a', format: undefined }, { path: 'b', format: undefined }]);
      expect(placeholders('{{ }}')).toEqual([{ path: ' ', format: undefined }]);
    });

    it('interpolates, formats, escapes and keeps {{constructor}} empty', () => {
      expect(interpolateText('Hi {{ name }} / {{missing}} / {{ total | currency }}', scope)).toBe('Hi Zoë /  / $1,234.50');
      expect(interpolateText('{{when | date}}', scope)).toBe('Mar 1, 2024');
      expect(interpolateText('{{constructor}}{{__proto__}}{{name.length}}', scope)).toBe('');
      expect(interpolateText('no placeholders', scope)).toBe('no placeholders');
      expect(interpolateText('{{name}}{{name}}', scope)).toBe('ZoëZoë');
      expect(interpolateText('$& {{name}} $1', scope)).toBe('$& Zoë $1');
      expect(interpolateHtml('<i>{{name}}</i>', { name: '<b>&' })).toBe('&lt;i&gt;&lt;b&gt;&amp;&lt;/i&gt;');
    });

    it('types a lone placeholder and interpolates anything else', () => {
      expect(resolveTyped('  {{ total | currency }}\n', scope)).toEqual({ value: 1234.5, format: 'currency' });
      expect(resolveTyped('{{total|unknown}}', scope)).toEqual({ value: 1234.5, format: undefined });
      expect(resolveTyped('{{total}} ', scope)).toEqual({ value: 1234.5, format: undefined });
      expect(resolveTyped('{{total}}.', scope)).toEqual({ value: '1234.5.' });
      expect(resolveTyped('{{total}}{{total}}', scope)).toEqual({ value: '1234.51234.5' });
      expect(singlePlaceholder('x{{total}}')).toBeUndefined();
    });

    it('reads \\s exactly as regular expressions do, for every UTF-16 code unit', () => {
      const mismatches: number[] = [];
      for (let code = 0; code <= 0xffff; code += 1) if (isRegexSpace(code) !== /\s/.test(String.fromCharCode(code))) mismatches.push(code);
      expect(mismatches).toEqual([]);
    });

    it('agrees with the patterns it replaces on 30,000 random short texts', () => {
      const alphabet = ['{', '{', '}', '}', '|', ' ', '\t', '\u00a0', 'a', 'b', 'Z', '.', '[', '1', ']', '$', '\n'];
      const differences: unknown[] = [];
      const differ = (text: string, what: string, mine: unknown, old: unknown) => {
        if (JSON.stringify(mine) !== JSON.stringify(old)) differences.push({ text, what, mine, old });
      };
      for (const text of randomTexts(alphabet, 30_000, 14)) {
        const old = [...text.matchAll(OLD_PLACEHOLDER)].map((m) => ({ start: m.index, end: m.index! + m[0].length, path: m[1], format: m[2] }));
        differ(text, 'placeholders', scanPlaceholders(text).map((m) => ({ start: m.start, end: m.end, path: m.path, format: m.format })), old);
        const single = OLD_SINGLE_PLACEHOLDER.exec(text);
        const mine = singlePlaceholder(text);
        differ(text, 'single', mine && { path: mine.path, format: mine.format }, single ? { path: single[1], format: single[2] } : undefined);
        differ(text, 'bareDataPath', bareDataPath(text), text.replace(OLD_BARE_DATA_PATH, ''));
      }
      expect(differences).toEqual([]);
    });
  });

  describe('on 100 KB of adversarial input', () => {
    const spaces = ' '.repeat(N);
    const cases: Array<[string, string, Array<{ path: string; format?: string }>]> = [
      ['{{ and spaces', `{{${spaces}`, []],
      ['{{ and spaces ending in x', `{{${spaces}x`, []],
      ['{{ and spaces ending in }', `{{${spaces}}`, []],
      ['{{a and " |" runs', `{{a${' |'.repeat(N / 2)}`, []],
      ['{{a| and spaces', `{{a|${spaces}b }`, []],
      ['{{a| letters, no close', `{{a| ${'b'.repeat(N)} }`, []],
      ['{{ runs', '{{'.repeat(N / 2), []],
      ['{{ a runs', '{{ a'.repeat(N / 4), []],
      ['tabs, newlines and ideographic spaces', `{{${'\t\n\u3000'.repeat(N / 3)}|`, []],
      ['a long path', `{{ ${'a.'.repeat(N / 2)}b }}`, [{ path: `${'a.'.repeat(N / 2)}b`, format: undefined }]],
      ['a long run of whitespace inside a match', `{{${spaces}x${spaces}|${spaces}date${spaces}}}`, [{ path: 'x', format: 'date' }]],
    ];

    it.each(cases)('placeholders: %s', (_name, text, expected) => {
      expect(timed(() => placeholders(text))).toEqual(expected);
    });

    it.each(cases)('interpolateText, interpolateHtml and resolveTyped: %s', (_name, text, expected) => {
      const scope = { x: 'X', a: { a: 'never' } };
      const out = timed(() => interpolateText(text, scope));
      if (expected.length === 0) expect(out).toBe(text);
      timed(() => interpolateHtml(text, scope));
      const typed = timed(() => resolveTyped(text, scope));
      if (expected.length === 0) expect(typed).toEqual({ value: text });
    });

    it('many placeholders in one text', () => {
      const count = Math.floor(N / 7);
      const text = '{{ a }}'.repeat(count);
      expect(timed(() => interpolateText(text, { a: 'x' }))).toBe('x'.repeat(count));
      expect(timed(() => placeholders(text))).toHaveLength(count);
    });

    it('resolveTyped: a lone placeholder padded with whitespace, and one followed by text', () => {
      expect(timed(() => resolveTyped(`${spaces}{{ total | currency }}${spaces}`, { total: 3 }))).toEqual({ value: 3, format: 'currency' });
      expect(timed(() => resolveTyped(`${spaces}{{total}}${spaces}x`, { total: 3 }))).toEqual({ value: `${spaces}3${spaces}x` });
    });

    it('parsePath and getPath', () => {
      expect(timed(() => parsePath(`[${spaces}x`))).toEqual([`[${spaces}x`]);
      expect(timed(() => parsePath(`a[${'1'.repeat(N)} x`))).toEqual([`a[${'1'.repeat(N)} x`]);
      expect(timed(() => parsePath('[ 1'.repeat(N / 3)))).toEqual(['[ 1'.repeat(N / 3)]);
      expect(timed(() => parsePath(`a${'[ 1 ]'.repeat(N / 5)}`))).toHaveLength(N / 5 + 1);
      expect(timed(() => getPath({ a: {} }, 'a.'.repeat(N / 2)))).toBeUndefined();
    });

    it('escapeHtml', () => {
      expect(timed(() => escapeHtml('<&'.repeat(N / 2)))).toBe('&lt;&amp;'.repeat(N / 2));
    });
  });
});

describe('data paths (domain/templates/components/props.ts)', () => {
  it('bareDataPath strips {{ }} on normal input', () => {
    expect(bareDataPath('{{ items }}')).toBe('items');
    expect(bareDataPath('  {{order.lines}}  ')).toBe('order.lines');
    expect(bareDataPath('items')).toBe('items');
    expect(bareDataPath('{{items')).toBe('items');
    expect(bareDataPath('items }}')).toBe('items');
    expect(bareDataPath('{{}}')).toBe('');
    expect(bareDataPath('{{a}}}')).toBe('a}');
  });

  it.each([
    ['spaces ending in x', `${' '.repeat(N)}x`, `${' '.repeat(N)}x`],
    ['{{ and spaces ending in x', `{{${' '.repeat(N)}x`, 'x'],
    ['spaces then }}', `a${' '.repeat(N)}}}`, 'a'],
    ['spaces then } and x', `a${' '.repeat(N)}}x`, `a${' '.repeat(N)}}x`],
    ['}} runs', '}}'.repeat(N / 2), '}}'.repeat(N / 2 - 1)],
  ])('bareDataPath over 100 KB: %s', (_name, input, expected) => {
    expect(timed(() => bareDataPath(input))).toBe(expected);
  });

  it.each([
    ['{{ and a.a.a… ending in !', `{{ ${'a.'.repeat(N / 2)}!`],
    ['a[1][1]… ending in [', `a${'[1]'.repeat(N / 3)}[`],
    ['a long identifier and spaces', `{{${'a'.repeat(N / 2)}${' '.repeat(N / 2)}}`],
  ])('the dataPath pattern over 100 KB: %s', (_name, input) => {
    expect(timed(() => dataPath.validate(input).error)).toBeDefined();
  });

  it('the CSS length pattern over 100 KB', () => {
    expect(timed(() => length.validate(`${'1'.repeat(N / 2)}.${'1'.repeat(N / 2)}x`).error)).toBeDefined();
    expect(length.validate('12.5mm').error).toBeUndefined();
  });
});

describe('value formats (domain/templates/format.ts)', () => {
  it('toNumber reads what it read before', () => {
    const texts = ['1', '-1', '+1.5', '1.', '.5', '1e3', '1.5E-3', '.', '', 'e1', '1e', '1..2', ' 7 ', '0x10', '1_000', '١'];
    for (const t of texts) expect(toNumber(t)).toBe(OLD_NUMERIC.test(t.trim()) ? Number(t.trim()) : undefined);
    const differences = randomTexts(['1', '2', '.', 'e', 'E', '+', '-', ' ', 'x'], 20_000, 8, 7).filter(
      (t) => !Object.is(toNumber(t), OLD_NUMERIC.test(t.trim()) ? Number(t.trim()) : undefined),
    );
    expect(differences).toEqual([]);
  });

  it.each([
    ['digits ending in x', `${'1'.repeat(N)}x`, undefined],
    ['1. and digits ending in x', `1.${'1'.repeat(N)}x`, undefined],
    ['1. and zeros', `1.${'0'.repeat(N)}`, 1],
    ['digits and an unfinished exponent', `-${'1'.repeat(N)}e`, undefined],
  ])('toNumber over 100 KB: %s', (_name, input, expected) => {
    expect(timed(() => toNumber(input))).toBe(expected);
  });

  it('toDate over 100 KB', () => {
    expect(timed(() => toDate(`2024-01-01T00:00:00.${'1'.repeat(N)}x`))).toBeUndefined();
    expect(timed(() => toDate(`${' '.repeat(N)}2024-01-01${' '.repeat(N)}`))).toEqual(new Date('2024-01-01T00:00:00Z'));
  });
});

describe('template cross-checks (domain/templates/template-checks.ts)', () => {
  const run = (schema: unknown, visits: ComponentVisit[], names = nameContext({ variables: [], constants: {}, calculatedVariables: [] })) => {
    const errors: ValidationIssue[] = [];
    const warnings: ValidationIssue[] = [];
    crossCheckTemplate(schema, visits, 'pdf', names, errors, warnings);
    return { errors, warnings };
  };
  const text = (value: string): ComponentVisit => ({
    component: { id: 't', type: 'text', props: { text: value } },
    path: 'sections[0].components[0]',
    aliases: [],
  });

  it('finds placeholders in titles, headers, footers and text props in 100 KB each', () => {
    const schema = {
      header: { left: `{{${' '.repeat(N)}`, center: `{{a${' |'.repeat(N / 2)}` },
      footer: { right: `{{ ${'b'.repeat(N)} | ${'c'.repeat(N)}` },
      sections: [{ title: '{{'.repeat(N / 2) }],
    };
    const { warnings } = timed(() => run(schema, [text(`{{${' '.repeat(N)}`), text(`{{ customer }}${' '.repeat(N)}`)]));
    expect(warnings).toEqual([{ path: 'sections[0].components[0].props.text', message: "{{customer}} refers to an unknown variable 'customer'" }]);
  });

  it('notices variables read by calculated expressions in one pass (500 names, 100 KB of expressions)', () => {
    const variables = Array.from({ length: 500 }, (_, i) => ({ name: `v${'a'.repeat(90)}${i}`, type: 'string' as const, required: false }));
    const filler = `${'a'.repeat(90)} `.repeat(N / 91);
    const names = nameContext({
      variables: [...variables, ...['used', 'dollar', 'prefix'].map((name) => ({ name, type: 'string' as const, required: false }))],
      constants: {},
      calculatedVariables: [{ name: 'calc', expression: `${filler}used + $dollar + prefixed + v${'a'.repeat(90)}7` }],
    });
    const { warnings } = timed(() => run({ sections: [] }, [], names));
    const unused = warnings.map((w) => w.message.match(/'(.*)'/)![1]);
    expect(unused).toHaveLength(500 + 2 - 1);
    expect(unused).toEqual(expect.arrayContaining(['dollar', 'prefix']));
    expect(unused).not.toContain('used');
    expect(unused).not.toContain(`v${'a'.repeat(90)}7`);
  });

  it('reads variables in expressions exactly as the pattern it replaces', () => {
    const cases: Array<[string, string, boolean]> = [
      ['total', 'total', true],
      ['total', '$total', false],
      ['total', 'a.total + 1', true],
      ['total', 'totals', false],
      ['total', 'subtotal', false],
      ['total', 'total$', true],
      ['total', '($sum(total))', true],
      ['_x', '_x', true],
    ];
    for (const [name, expression, read] of cases) {
      const names = nameContext({ variables: [{ name, type: 'number', required: false }], constants: {}, calculatedVariables: [{ name: 'c', expression }] });
      const re = new RegExp(`(^|[^$\\w])${name}(?![\\w])`);
      expect(re.test(expression)).toBe(read);
      expect(run({ sections: [] }, [], names).warnings).toHaveLength(read ? 0 : 1);
    }
  });
});

describe('other text patterns over 100 KB', () => {
  it('headerFooterSlot ({page} and {pages})', () => {
    const o = DEFAULT_FORMAT_OPTIONS;
    expect(timed(() => headerFooterSlot('{'.repeat(N), {}, o))).toBe('{'.repeat(N));
    expect(timed(() => headerFooterSlot(`${'{page'.repeat(N / 5)}}`, {}, o))).toBe(`${'{page'.repeat(N / 5 - 1)}<span class="pageNumber"></span>`);
    expect(timed(() => headerFooterSlot(`{{${' '.repeat(N)}`, {}, o))).toBe(`{{${' '.repeat(N)}`);
  });

  it('fieldLabel (automation fields)', () => {
    expect(timed(() => fieldLabel(`${'_'.repeat(N)}a`))).toBe('A');
    expect(timed(() => fieldLabel('aB'.repeat(N / 2)))).toBe(`A${' Ba'.repeat(N / 2 - 1)} B`);
  });

  it('isDataImageUrl', () => {
    expect(timed(() => isDataImageUrl(`${' '.repeat(N)}data:image/png`))).toBe(false);
  });

  it('slugify, SLUG_PATTERN and gateSlug', () => {
    expect(timed(() => slugify(`a${'-'.repeat(N)}x`))).toBe('a-x');
    expect(timed(() => slugify(`${'-'.repeat(N)}a${' '.repeat(N)}`))).toBe('a');
    expect(timed(() => slugify(`a${"'".repeat(N)}`))).toBe('a');
    expect(timed(() => SLUG_PATTERN.test(`${'a-'.repeat(N / 2)}!`))).toBe(false);
    expect(timed(() => gateSlug(`${'!'.repeat(N)}`))).toBe('gate');
  });

  it('normalizeBackupCode', () => {
    expect(timed(() => normalizeBackupCode(`${' -'.repeat(N / 2)}x`))).toBeUndefined();
  });

  it('normalizeTimeZone', () => {
    expect(timed(() => normalizeTimeZone(`${'a/'.repeat(N / 2)}!`))).toBeUndefined();
    expect(timed(() => normalizeTimeZone(`A${'b'.repeat(N)}/`))).toBeUndefined();
    expect(normalizeTimeZone('europe/berlin')).toBe('Europe/Berlin');
  });

  it.each([
    ['data: and ; runs', `data:${';'.repeat(N)}x`],
    ['data: and ;a runs', `data:${';a'.repeat(N / 2)},`],
    ['data: and ;base64 runs', `data:${';base64'.repeat(N / 7)}x`],
    ['base64 then ===', `${'A'.repeat(N)}===`],
  ])('parseAvatarImage: %s', (_name, input) => {
    expect(timedThrow(() => parseAvatarImage(input, 10 * N))).toMatchObject({ code: 'ERR_USER_008' });
  });

  it('Flow formats (email, date, date-time, uuid, url)', () => {
    expect(timed(() => FORMAT_CHECKS.email(`a@${'a'.repeat(N)}!`))).toBe(false);
    expect(timed(() => FORMAT_CHECKS.email(`a@${'a.'.repeat(N / 2)}!`))).toBe(false);
    expect(FORMAT_CHECKS.email('ada@example.com')).toBe(true);
    expect(timed(() => FORMAT_CHECKS['date-time'](`2024-01-01T00:00:00.${'1'.repeat(N)}Z`))).toBe(false);
    expect(timed(() => FORMAT_CHECKS.date(`${'1'.repeat(N)}`))).toBe(false);
    expect(timed(() => FORMAT_CHECKS.uuid(`${'a'.repeat(N)}`))).toBe(false);
    expect(timed(() => FORMAT_CHECKS.url(`http://${'a'.repeat(N)}`))).toBe(false);
  });

  it('FILENAME_PATTERN and contentDisposition (download names)', () => {
    expect(timed(() => FILENAME_PATTERN.test('a'.repeat(N)))).toBe(false);
    const k = N / 4;
    expect(timed(() => contentDisposition(`"\\é${"'()*".repeat(k)}`))).toBe(
      `attachment; filename="___${"'()*".repeat(k)}"; filename*=UTF-8''%22%5C%C3%A9${'%27%28%29%2A'.repeat(k)}`,
    );
  });

  it('verifyWebhookSignature (signature header)', () => {
    expect(timed(() => verifyWebhookSignature('secret', 1, '{}', `${' ,'.repeat(N / 2)}v1=x`, { toleranceSeconds: 0 }))).toBe(false);
  });

  it('parseDuration', () => {
    expect(timedThrow(() => parseDuration(`${'1'.repeat(N)}x`))).toBeInstanceOf(RangeError);
    expect(timedThrow(() => parseDuration(`1.${'1'.repeat(N)}q`))).toBeInstanceOf(RangeError);
    expect(parseDuration(' 30s ')).toBe(30_000);
  });

  it('findLinks (outbox log)', () => {
    expect(timed(() => findLinks('http://'.repeat(N / 7)))).toEqual(['http://'.repeat(N / 7)]);
    expect(timed(() => findLinks('http:/'.repeat(N / 6)))).toEqual([]);
    expect(timed(() => findLinks(`see https://a.example/x ${'h'.repeat(N)}`))).toEqual(['https://a.example/x']);
  });

  it('sheetName (worksheet names from section titles)', () => {
    // `/^'+|'+$/g` took about 10 s on the first of these.
    expect(timed(() => sheetName(`a${"'".repeat(N)}x`, new Set()))).toBe('a');
    expect(timed(() => sheetName(`${"'".repeat(N)}b${"'".repeat(N)}`, new Set()))).toBe('b');
    expect(timed(() => sheetName(" '".repeat(N / 2), new Set()))).toBe('Sheet');
    expect(timed(() => sheetName(`${'[:*?/'.repeat(N / 5)}c`, new Set()))).toBe('c');
    expect(sheetName("'Q1 report'", new Set())).toBe('Q1 report');
    expect(sheetName('Budget: 2024/25', new Set())).toBe('Budget  2024 25');
    const used = new Set<string>();
    expect([sheetName('Lines', used), sheetName('lines', used), sheetName('x'.repeat(40), used), sheetName('x'.repeat(40), used)]).toEqual([
      'Lines',
      'lines 2',
      'x'.repeat(31),
      `${'x'.repeat(29)} 2`,
    ]);
  });

  it('isInternalAddress and embeddedIPv4 (zone ids, trailing dotted quads)', () => {
    expect(timed(() => embeddedIPv4('1'.repeat(N)))).toBeUndefined();
    expect(timed(() => embeddedIPv4(`::ffff:${'1'.repeat(N)}.1.1.1`))).toBeUndefined();
    expect(timed(() => isInternalAddress(`fe80::1${'%'.repeat(N)}\n`))).toBe(true);
    expect(timed(() => isInternalAddress(`fe80::1%${'x'.repeat(N)}`))).toBe(true);
    expect(embeddedIPv4('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(embeddedIPv4('::ffff:10.1.2.3%eth0')).toBe('10.1.2.3');
  });
});
