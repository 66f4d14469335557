import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { startTestApp, type TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';

interface ComponentTypeInfo {
  type: string;
  container: boolean;
  children: 'components' | 'columns' | null;
  props: Record<string, unknown>;
}

/** Every component in a definition, however deep (sections, headers, footers, containers' children). */
function componentsIn(value: unknown, found: Array<{ id: string; type: string; props: Record<string, unknown> }> = []) {
  if (Array.isArray(value)) value.forEach((v) => componentsIn(v, found));
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.id === 'string' && typeof o.type === 'string' && o.props && typeof o.props === 'object') found.push(o as never);
    Object.values(o).forEach((v) => componentsIn(v, found));
  }
  return found;
}

describe('component types: the props schemas an editor builds its forms from (api/templates/component-types.ts)', () => {
  let app: TestApp;
  let user: SignedUpUser;
  let types: ComponentTypeInfo[];
  beforeAll(async () => {
    app = await startTestApp();
    user = await signUp(app, { verified: true });
    const res = await app.request('GET', '/api/templates/component-types', { token: user.accessToken });
    expect(res.status).toBe(200);
    types = res.body.data;
  });
  afterAll(() => app.close());

  it('lists every type of the catalogue with its props schema and where containers hold children; API keys with read_templates read it', async () => {
    expect(types.map((t) => t.type).sort()).toEqual(
      ['barcode', 'box', 'chart', 'columns', 'divider', 'heading', 'html', 'image', 'keyValue', 'list', 'markdown', 'pageBreak', 'qrcode', 'repeat', 'spacer', 'table', 'text', 'toc'].sort(),
    );
    const byType = Object.fromEntries(types.map((t) => [t.type, t]));
    expect(byType.columns).toMatchObject({ container: true, children: 'columns' });
    expect(byType.box).toMatchObject({ container: true, children: 'components' });
    expect(byType.repeat).toMatchObject({ container: true, children: 'components' });
    expect(byType.text).toMatchObject({ container: false, children: null, props: { type: 'object', required: ['text'] } });
    expect(byType.heading.props).toMatchObject({ properties: { level: { type: 'integer' } } });

    const key = await createKey(app, user.accessToken, { name: 'reader', permissions: { read_templates: true } });
    const withKey = await app.request('GET', '/api/v1/templates/component-types', { token: key.plainKey });
    expect(withKey.status).toBe(200);
    expect(withKey.body.data).toHaveLength(types.length);
    expect((await app.request('GET', '/api/templates/component-types')).status).toBe(401);
  });

  it('every component of the four examples passes the served schema of its type', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validators = Object.fromEntries(types.map((t) => [t.type, ajv.compile(t.props)]));
    const dir = join(__dirname, '../../../docs/examples');
    const checked: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const example = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { definition: unknown };
      for (const component of componentsIn(example.definition)) {
        const validate = validators[component.type];
        expect({ file, id: component.id, known: !!validate }).toEqual({ file, id: component.id, known: true });
        expect({ file, id: component.id, valid: validate(component.props), errors: validate.errors ?? null }).toEqual({ file, id: component.id, valid: true, errors: null });
        checked.push(component.type);
      }
    }
    // The examples use most of the catalogue.
    expect(new Set(checked).size).toBeGreaterThanOrEqual(12);
  });

  it('what the served schema refuses, validate-schema refuses too, on the same component', async () => {
    const ajv = new Ajv2020({ strict: false });
    const validators = Object.fromEntries(types.map((t) => [t.type, ajv.compile(t.props)]));
    const wrong: Array<[string, Record<string, unknown>]> = [
      ['heading', { text: 'Title', level: 9 }],
      ['table', { dataSource: 'items' }],
      ['text', { text: 'Hello', colour: 'red' }],
      ['qrcode', { value: 'x', size: 'huge' }],
      ['columns', { columns: 'two' }],
      ['divider', { thickness: 2 }],
      ['spacer', { height: 'tall' }],
    ];
    for (const [type, props] of wrong) {
      expect({ type, props, servedSchemaAccepts: validators[type](props) }).toEqual({ type, props, servedSchemaAccepts: false });
      const schema = { sections: [{ id: 's', components: [{ id: 'c1', type, props }] }] };
      const res = await app.request('POST', '/api/templates/validate-schema', { token: user.accessToken, body: { templateType: 'pdf', schema } });
      expect(res.status).toBe(200);
      expect({ type, props, valid: res.body.valid, names: JSON.stringify(res.body.errors).includes('c1') || JSON.stringify(res.body.errors).includes('components[0]') }).toEqual({
        type,
        props,
        valid: false,
        names: true,
      });
    }
    // And a right one passes both.
    expect(validators.heading({ text: 'Title', level: 2 })).toBe(true);
    const ok = await app.request('POST', '/api/templates/validate-schema', { token: user.accessToken, body: { templateType: 'pdf', schema: { sections: [{ id: 's', components: [{ id: 'c1', type: 'heading', props: { text: 'Title', level: 2 } }] }] } } });
    expect(ok.body.valid).toBe(true);
  });
});
