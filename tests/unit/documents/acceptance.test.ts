import { checkAcceptance, type AcceptanceLimits } from '../../../domain/documents/acceptance';
import { renderGaveUp } from '../../../domain/documents/job-status';
import { AppError } from '../../../domain/errors';
import type { Component, TemplateDefinition } from '../../../domain/templates/template.types';

const limits: AcceptanceLimits = {
  maxVariableChars: 1000,
  maxVariablesBytes: 20_000,
  maxImageChars: 5000,
  maxLoopIterations: 100,
  maxExcelRows: 50,
  imageAllowlist: ['cdn.example.com'],
};

const template = (components: Component[], variables: TemplateDefinition['variables'] = []): Pick<TemplateDefinition, 'schema' | 'variables'> => ({
  schema: { pageSize: 'A4', sections: [{ id: 's', components }] },
  variables,
});
const table = (id: string, dataSource: string, extra: Record<string, unknown> = {}): Component => ({ id, type: 'table', props: { dataSource, columns: [{ header: 'A', field: 'a' }], ...extra } });

function refusal(run: () => void): { code: string; relatedInfo: Record<string, unknown> | undefined } {
  try {
    run();
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, relatedInfo: err.relatedInfo };
    throw err;
  }
  throw new Error('accepted');
}

describe('checks at acceptance (docs/documents.md "Checks at acceptance")', () => {
  it('refuses a string past the cap, anywhere in the variables, naming its path and the limit', () => {
    const long = 'x'.repeat(1001);
    expect(refusal(() => checkAcceptance(template([]), { note: long }, 'pdf', limits))).toEqual({ code: 'ERR_LIMIT_017', relatedInfo: { field: 'note', limit: 1000, size: 1001 } });
    expect(refusal(() => checkAcceptance(template([]), { items: [{ a: 1 }, { a: long }] }, 'pdf', limits, 'documents[2].variables.'))).toMatchObject({
      code: 'ERR_LIMIT_017',
      relatedInfo: { field: 'documents[2].variables.items[1].a', limit: 1000 },
    });
    expect(() => checkAcceptance(template([]), { note: 'x'.repeat(1000) }, 'pdf', limits)).not.toThrow();
  });

  it('measures a data: image against the image cap instead', () => {
    const image = (n: number) => `data:image/png;base64,${'A'.repeat(n)}`;
    expect(() => checkAcceptance(template([]), { logo: image(4000) }, 'pdf', limits)).not.toThrow();
    expect(refusal(() => checkAcceptance(template([]), { logo: image(5000) }, 'pdf', limits))).toMatchObject({ code: 'ERR_OUTPUT_007', relatedInfo: { field: 'logo', limit: 5000 } });
  });

  it('refuses variables larger than the whole-payload cap as JSON', () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`v${i}`, 'y'.repeat(600)]));
    expect(refusal(() => checkAcceptance(template([]), many, 'pdf', limits))).toMatchObject({ code: 'ERR_LIMIT_018', relatedInfo: { field: 'variables', limit: 20_000 } });
    expect(refusal(() => checkAcceptance(template([]), many, 'pdf', limits, 'documents[0].variables.'))).toMatchObject({ relatedInfo: { field: 'documents[0].variables' } });
  });

  it('refuses an array the template iterates past the loop limit, and past the row limit in a workbook', () => {
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ a: i }));
    const t = template([{ id: 'box', type: 'box', props: { components: [table('lines', '{{items}}')] } }]);
    expect(refusal(() => checkAcceptance(t, { items: rows(101) }, 'pdf', limits))).toEqual({
      code: 'ERR_LIMIT_007',
      relatedInfo: { field: 'items', componentId: 'lines', limit: 100, size: 101 },
    });
    expect(() => checkAcceptance(t, { items: rows(100) }, 'pdf', limits)).not.toThrow();
    expect(refusal(() => checkAcceptance(t, { items: rows(51) }, 'excel', limits))).toMatchObject({ code: 'ERR_LIMIT_003', relatedInfo: { field: 'items', limit: 50 } });
    // An array no component iterates, and a table hidden by a condition, are not counted.
    expect(() => checkAcceptance(template([]), { items: rows(500) }, 'pdf', limits)).not.toThrow();
    expect(() => checkAcceptance(template([table('t', 'items', { visibleIf: 'show' })]), { items: rows(500) }, 'pdf', limits)).not.toThrow();
  });

  it('refuses an image variable on a host the render would not load, naming the setting', () => {
    const t = template([], [
      { name: 'logo', type: 'image', required: false },
      { name: 'people', type: 'array', required: false, items: { type: 'object', properties: [{ name: 'photo', type: 'image' }] } },
    ]);
    expect(() => checkAcceptance(t, { logo: 'https://cdn.example.com/a.png' }, 'pdf', limits)).not.toThrow();
    expect(refusal(() => checkAcceptance(t, { logo: 'https://evil.example.net/a.png' }, 'pdf', limits))).toEqual({
      code: 'ERR_OUTBOUND_001',
      relatedInfo: { field: 'logo', host: 'evil.example.net', setting: 'IMAGE_HOST_ALLOWLIST' },
    });
    expect(refusal(() => checkAcceptance(t, { people: [{ photo: 'http://10.0.0.1/p.png' }] }, 'pdf', limits))).toMatchObject({ code: 'ERR_OUTBOUND_001', relatedInfo: { field: 'people[0].photo' } });
  });
});

describe('a render that gave up', () => {
  it('keeps the catalogue code and words, never the browser message', () => {
    const timeout = renderGaveUp('Rendering failed: Navigation timeout of 30000 ms exceeded');
    expect(timeout.code).toBe('ERR_RENDER_001');
    expect(timeout.message).toMatch(/^Rendering did not finish in time/);
    const crash = renderGaveUp('Rendering failed: Protocol error (Page.printToPDF): Target closed');
    expect(crash).toEqual({ code: 'ERR_RENDER_001', message: expect.stringMatching(/^Rendering failed/) });
    for (const m of [timeout.message, crash.message]) expect(m).not.toMatch(/Navigation|Protocol|30000|Target/);
    expect(renderGaveUp('Merging failed: boom').message).toMatch(/^Merging failed/);
  });
});
