import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { TestApp, TestResponse } from './app';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>; components: { schemas: Record<string, unknown> } };

/** Whether a body is what the OpenAPI document promises for one answer, and why not. */
export type AnswerValidator = (body: unknown) => { valid: boolean; errors: unknown };

export interface DocumentedAnswers {
  /** The check of one operation's answer with `status`; throws when the document has no JSON answer for it. */
  validatorOf(method: string, path: string, status: number): AnswerValidator;
  /** Asserts the answer has `status` and a body the document's schema for that answer accepts. */
  expectDocumented(res: TestResponse, method: string, path: string, status?: number): void;
}

/** The service's own OpenAPI document (`GET /api/openapi.json`) as answer checks, components resolved by ajv. */
export async function documentedAnswers(app: TestApp): Promise<DocumentedAnswers> {
  // Component references become references into one schema holding the components, so ajv resolves them.
  const doc = JSON.parse(JSON.stringify((await app.request<Doc>('GET', '/api/openapi.json')).body).replaceAll('"#/components/schemas/', '"doc#/$defs/')) as Doc;
  const ajv = addFormats(new Ajv2020({ strict: false }));
  ajv.addSchema({ $id: 'doc', $defs: doc.components.schemas });
  const validatorOf = (method: string, path: string, status: number): AnswerValidator => {
    const schema = doc.paths[path]?.[method]?.responses[String(status)]?.content?.['application/json']?.schema;
    if (!schema) throw new Error(`no JSON answer documented for ${method} ${path} ${status}`);
    const validate = ajv.compile(schema as object);
    return (body) => ({ valid: validate(body), errors: validate.errors ?? null });
  };
  return {
    validatorOf,
    expectDocumented(res, method, path, status = 200) {
      expect({ status: res.status, body: res.body }).toEqual({ status, body: res.body });
      expect(validatorOf(method, path, status)(res.body)).toEqual({ valid: true, errors: null });
    },
  };
}
