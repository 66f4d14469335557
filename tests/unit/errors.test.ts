import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, ERRORS, errorBody } from '../../domain/errors';

describe('error catalogue', () => {
  it('is documented: docs/errors.md lists every code with its status', () => {
    const doc = readFileSync(join(__dirname, '../../docs/errors.md'), 'utf8');
    const missing = Object.entries(ERRORS).filter(([code, e]) => !doc.includes(`| \`${code}\` | ${e.status} |`));
    expect(missing.map(([c]) => c)).toEqual([]);
  });

  it('keeps the spec statuses of the spec codes', () => {
    expect(ERRORS.ERR_AKEY_002.status).toBe(401);
    expect(ERRORS.ERR_AUTH_005.status).toBe(403);
    expect(ERRORS.ERR_QUOTA_003.status).toBe(429);
    expect(ERRORS['FLOW.GATE_PAUSED'].status).toBe(409);
    expect(ERRORS.ERR_FLOW_RUN_005.status).toBe(413);
  });

  it('renders the spec body, with relatedInfo only when given', () => {
    const at = new Date('2026-01-02T03:04:05Z');
    expect(errorBody(new AppError('ERR_TMPL_001'), '/api/templates/x', at)).toEqual({
      statusCode: 404,
      code: 'ERR_TMPL_001',
      message: 'Template not found',
      timestamp: '2026-01-02T03:04:05.000Z',
      path: '/api/templates/x',
    });
    expect(errorBody(new AppError('ERR_VALID_005', 'name is required', { field: 'name' }), '/p', at).relatedInfo).toEqual({ field: 'name' });
  });
});
