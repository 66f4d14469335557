import { API_KEY_PERMISSIONS, resolvePermissions } from '../../../domain/identity/api-keys';

describe('API key permission defaults', () => {
  it('a key made without a permissions object gets the everyday flags, not manage_gates, read_runs, the reporting flags or embed_designer', () => {
    expect(resolvePermissions()).toEqual({
      generate_documents: true,
      read_documents: true,
      read_templates: true,
      manage_webhooks: false,
      manage_gates: false,
      read_runs: false,
      read_reports: false,
      run_reports: false,
      embed_designer: false,
    });
  });

  it('a permissions object grants exactly the flags it sets to true', () => {
    expect(resolvePermissions({ read_reports: true })).toEqual(Object.fromEntries(API_KEY_PERMISSIONS.map((p) => [p, p === 'read_reports'])));
    expect(resolvePermissions({ run_reports: true, read_reports: false })).toMatchObject({ read_reports: false, run_reports: true, generate_documents: false });
    expect(Object.values(resolvePermissions({}))).toEqual(API_KEY_PERMISSIONS.map(() => false));
  });
});
