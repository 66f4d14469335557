import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openApiPath } from '../../../api/openapi/document';
import { allOperations, openApiDocument } from '../../../api/openapi/operations';

/**
 * The served document is valid OpenAPI 3.1, checked by @seriousme/openapi-schema-validator (the
 * official 3.1 JSON Schema plus its checks). The package is ESM only, so its own CLI runs it in a
 * child process on the document written to a file (so this test is an integration test).
 */
const run = promisify(execFile);
const doc = openApiDocument({ serverUrl: 'https://formwork.example', batchMaxDocuments: 5000 }) as {
  openapi: string;
  paths: Record<string, Record<string, { security: unknown[]; responses: Record<string, unknown>; requestBody?: { content: Record<string, { example?: unknown }> } }>>;
  components: { securitySchemes: Record<string, { type: string; flows?: { clientCredentials?: { tokenUrl: string } } }> };
};

test('the document is valid OpenAPI 3.1', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(doc));
    const cli = require.resolve('@seriousme/openapi-schema-validator/bin/validate-api-cli.js');
    const { stdout } = await run(process.execPath, [cli, file]).catch((err: { stdout: string }) => ({ stdout: err.stdout }));
    const result = JSON.parse(stdout) as { valid: boolean; errors?: unknown };
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('every operation answers its errors with the shared error body', () => {
  const operations = allOperations({ batchMaxDocuments: 5000 });
  expect(Object.values(doc.paths).flatMap((methods) => Object.values(methods)).length).toBe(operations.length);
  for (const op of operations) {
    const answers = doc.paths[openApiPath(op.path)][op.method].responses;
    const errors = Object.entries(answers).filter(([status]) => Number(status) >= 400);
    expect(errors.map(([s]) => s)).toEqual(expect.arrayContaining(['400', '429', '500']));
    // An answer the operation describes itself (Flow validate's 422 is a run, not an error) is its own.
    for (const [status, answer] of errors) {
      if (!(Number(status) in op.responses)) expect(answer).toEqual({ $ref: expect.stringMatching(/^#\/components\/responses\/[A-Za-z]+$/) });
    }
  }
  const error = (doc.components as unknown as { schemas: Record<string, { required: string[] }> }).schemas.Error;
  expect(error.required).toEqual(['statusCode', 'code', 'message', 'timestamp', 'path']);
});

test('the security schemes name every credential, OAuth client credentials included', () => {
  const schemes = doc.components.securitySchemes;
  expect(Object.keys(schemes).sort()).toEqual(['agentToken', 'apiKey', 'embedToken', 'oauthClientCredentials', 'reviewToken', 'userJwt']);
  // The embedded designer's calls also take an embed token (docs/embedding.md); others do not.
  expect(doc.paths['/api/templates/{id}'].put.security).toEqual([{ userJwt: [] }, { embedToken: [] }]);
  expect(doc.paths['/api/embed/session'].get.security).toEqual([{ embedToken: [] }]);
  expect(doc.paths['/api/templates/{id}/versions'].get.security).not.toContainEqual({ embedToken: [] });
  expect(schemes.oauthClientCredentials.flows?.clientCredentials?.tokenUrl).toBe('/api/oauth/token');
  expect(doc.paths['/api/api-keys'].get.security).toEqual([{ userJwt: [] }]);
  expect(doc.paths['/api/health'].get.security).toEqual([]);
  expect(doc.paths['/api/documents/generate'].post.security).toEqual([{ userJwt: [] }, { apiKey: [] }, { oauthClientCredentials: [] }]);
});

test('request examples pass the route\'s own Joi schema', () => {
  const ops = allOperations({ batchMaxDocuments: 5000 }).filter((op) => op.request?.body && op.request.example !== undefined);
  expect(ops.length).toBeGreaterThan(3);
  for (const op of ops) expect(op.request!.body!.validate(op.request!.example, { convert: true }).error).toBeUndefined();
});
