import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import { AppError } from '../../domain/errors';
import type { Services } from '../../platform/services';
import { openApiEndpoints as routes } from './openapi.endpoints';
import { openApiDocument } from './operations';
import { mount } from './route';

/**
 * GET /api/openapi.json, the OpenAPI 3.1 document of every route (api/openapi/operations.ts), and
 * GET /api/docs, a Swagger UI reference page reading it. The page's scripts and styles are the
 * swagger-ui-dist package's own files served from here: nothing is fetched from elsewhere, and the
 * page's CSP allows only this origin (images also as data: URLs, which Swagger UI's icons are).
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The package's files the page uses, by the name it is served as. */
const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'application/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: 'favicon-32x32.png', type: 'image/png' },
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Formwork API reference</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/api/docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>
`;

/** Not inline (the CSP allows no inline script): the page's own start-up script. */
const INIT = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis],
});
`;

export function openApiRoutes(services: Services): Router {
  const { config } = services;
  const router = new Router();
  const assetDir = dirname(require.resolve('swagger-ui-dist/package.json'));
  let document: string | undefined;

  mount(router, routes.document, (ctx) => {
    document ??= JSON.stringify(openApiDocument({ serverUrl: config.publicUrl, batchMaxDocuments: config.documents.batchMaxDocuments }));
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = document;
  });

  mount(router, routes.page, (ctx) => {
    ctx.set('Content-Security-Policy', DOCS_CSP);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });

  mount(router, routes.file, async (ctx) => {
    ctx.set('Content-Security-Policy', DOCS_CSP);
    if (ctx.params.file === 'init.js') {
      ctx.type = 'application/javascript; charset=utf-8';
      ctx.body = INIT;
      return;
    }
    const asset = Object.hasOwn(ASSETS, ctx.params.file) ? ASSETS[ctx.params.file] : undefined;
    if (!asset) throw new AppError('ERR_REQ_003', `Cannot GET ${ctx.path}`);
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = asset.type;
    ctx.body = await readFile(join(assetDir, asset.file));
  });

  return router;
}
