import Router from '@koa/router';
import type { Context } from 'koa';
import { createOutboundGuard } from '../../adapters/http/outbound';
import { P12_MAX_BYTES } from '../../adapters/rendering/pdf-tools/p12';
import type { Services } from '../../platform/services';
import { requireProject, type ProjectRequirement, type Scope } from '../middleware/guards';
import { multipartUpload } from '../middleware/uploads';
import { mount } from '../openapi/route';
import { validate } from '../validation';
import { signingCertificateEndpoints as routes } from './signing-certificates.endpoints';
import * as schema from './signing-certificates.schema';
import * as certificates from './signing-certificates.service';

/**
 * Who may do what with signing certificates (docs/documents.md "Signatures"). A certificate signs
 * in the company's name, so uploading and deleting one takes a signed-in admin (owners included);
 * no API key may (403 ERR_AUTH_005, `required: "jwt"`). Reading the list (no secret in it) takes a
 * member, or an API key with `generate_documents`: those who may ask for a signature.
 */
const SIGNING_CERTIFICATE_ACCESS = {
  read: { role: 'member', permission: 'generate_documents' },
  manage: { role: 'admin' },
} as const satisfies Record<string, ProjectRequirement>;

export function signingCertificateRoutes(services: Services): Router {
  const { db, config } = services;
  const router = new Router({ prefix: '/api/signing-certificates' });
  const read = requireProject(db, SIGNING_CERTIFICATE_ACCESS.read);
  const manage = requireProject(db, SIGNING_CERTIFICATE_ACCESS.manage);
  const deps = { db, guard: createOutboundGuard(config.outbound.allowlist) };
  const scope = (ctx: Context) => ctx.state.scope as Scope;
  // Past P12_MAX_BYTES the upload is cut off while it streams: 413 ERR_REQ_002.
  const upload = multipartUpload({ ...config.uploads, maxFileBytes: P12_MAX_BYTES }, '/api/signing-certificates');

  // The body is multipart (fields and the file) or JSON (with the file base64): the handler validates it, by its kind.
  mount(router, { operation: routes.upload.operation }, manage, upload, async (ctx) => {
    let p12: Buffer;
    let input: schema.UploadCertificateFields;
    if (ctx.is('multipart')) {
      const files = ctx.request.files?.file;
      input = validate(schema.uploadCertificateFieldsSchema, ctx.request.body ?? {});
      p12 = await certificates.uploadedP12(Array.isArray(files) ? files[0] : files);
    } else {
      const { p12: base64, ...rest } = validate(schema.uploadCertificateJsonSchema, ctx.request.body ?? {});
      input = rest;
      p12 = Buffer.from(base64, 'base64');
    }
    const { projectId, userId } = scope(ctx);
    const created = await certificates.createCertificate(deps, { projectId, userId }, p12, input);
    ctx.status = 201;
    ctx.set('Location', `/api/signing-certificates/${created.id}`);
    ctx.body = certificates.presentCertificate(created);
  });

  mount(router, routes.list, read, async (ctx) => {
    ctx.body = { data: (await certificates.listCertificates(deps, scope(ctx).projectId)).map(certificates.presentCertificate) };
  });

  mount(router, routes.get, read, async (ctx) => {
    ctx.body = certificates.presentCertificate(await certificates.getCertificate(deps, scope(ctx).projectId, ctx.params.id));
  });

  mount(router, routes.delete, manage, async (ctx) => {
    await certificates.deleteCertificate(deps, scope(ctx).projectId, ctx.params.id);
    ctx.status = 204;
  });

  return router;
}
