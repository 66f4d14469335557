import { designerCallAllowed } from '../../../api/templates/embed-fence';
import { originProblem } from '../../../api/templates/embed.schema';

/** The rules of the embedded designer (docs/embedding.md) that need no service: the fence and the origin check. */
describe('the embed token fence', () => {
  const T = '3f1c2b7e-8a4d-4e2f-9b1a-2c3d4e5f6a7b';
  const OTHER = '9a0d2b7e-8a4d-4e2f-9b1a-2c3d4e5f6a7b';

  it("lets through the designer's own calls for the token's template", () => {
    for (const [method, path] of [
      ['GET', '/api/embed/session'],
      ['GET', '/api/templates/component-types'],
      ['GET', `/api/templates/${T}`],
      ['PUT', `/api/templates/${T}`],
      ['GET', `/api/templates/${T}/sample-data`],
      ['PUT', `/api/templates/${T}/sample-data`],
      ['POST', `/api/templates/${T}/preview`],
      ['POST', `/api/templates/${T}/preview/grid`],
      ['POST', `/api/templates/${T}/calculate`],
      ['POST', `/api/templates/${T}/publish`],
    ]) {
      expect([method, path, designerCallAllowed(method, path, T)]).toEqual([method, path, true]);
    }
  });

  it('refuses everything else: other templates, other methods, other prefixes, lists, look-alike paths', () => {
    for (const [method, path] of [
      ['GET', '/api/templates'],
      ['GET', '/api/templates/'],
      ['GET', `/api/templates/${OTHER}`],
      ['PUT', `/api/templates/${OTHER}/sample-data`],
      ['DELETE', `/api/templates/${T}`],
      ['HEAD', `/api/templates/${T}`],
      ['GET', `/api/templates/${T}/`],
      ['GET', `/api/templates/${T}/versions`],
      ['POST', `/api/templates/${T}/embed-tokens`],
      ['GET', `/api/v1/templates/${T}`],
      ['GET', `/api/templates/attachment/${T}`],
      ['GET', `/API/TEMPLATES/${T}`],
      ['GET', `/api/templates/${T}/../${OTHER}`],
      ['POST', '/api/documents/generate'],
      ['GET', '/api/teams'],
      ['GET', '/api/embed/session/'],
      ['GET', '/api/templates/folders'],
    ]) {
      expect([method, path, designerCallAllowed(method, path, T)]).toEqual([method, path, false]);
    }
  });
});

describe('an allowed origin', () => {
  it('is an origin exactly as a browser writes it', () => {
    for (const ok of ['https://app.example.com', 'http://localhost:8080', 'http://127.0.0.1:5173', 'https://[::1]:8443', 'https://xn--bcher-kva.example']) expect([ok, originProblem(ok)]).toEqual([ok, undefined]);
    for (const bad of ['*', 'https://*.example.com', 'https://example.com/', 'https://example.com/app', 'javascript:alert(1)', 'HTTPS://EXAMPLE.COM', 'https://example.com:443', 'https://a@example.com', 'https://example.com; script-src *', 'null', "'self'", '']) {
      expect([bad, typeof originProblem(bad)]).toEqual([bad, 'string']);
    }
  });
});
