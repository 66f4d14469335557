import { randomBase62 } from '../signing';

/**
 * The spec's four flags, `manage_gates` (Flow gate configuration) and `read_runs` (Flow run
 * payloads; docs/identity.md, docs/security.md "Permissions") and the reporting flags
 * `read_reports` and `run_reports` (docs/reporting.md), and `embed_designer` (mint tokens that open one
 * template's designer in another site's page: docs/embedding.md).
 */
export const API_KEY_PERMISSIONS = ['generate_documents', 'read_documents', 'read_templates', 'manage_webhooks', 'manage_gates', 'read_runs', 'read_reports', 'run_reports', 'embed_designer'] as const;
export type ApiKeyPermission = (typeof API_KEY_PERMISSIONS)[number];
export type ApiKeyPermissions = Record<ApiKeyPermission, boolean>;

const API_KEY_PREFIX = 'fm_live_';

/**
 * Contract §2: omitted → the three everyday flags only. Not `manage_gates` (gate configuration holds
 * delivery URLs and render endpoints), not `read_runs` (run payloads are the submitters' data), not
 * the reporting flags (reports reach business databases): a key gets those only when asked for
 * (issue 29; keys made before keep what they had, db/migrations/1732200011629-api-key-read-runs.ts).
 * An object → the flags it omits are false.
 */
export function resolvePermissions(given?: Partial<ApiKeyPermissions>): ApiKeyPermissions {
  if (!given) {
    return { generate_documents: true, read_documents: true, read_templates: true, manage_webhooks: false, manage_gates: false, read_runs: false, read_reports: false, run_reports: false, embed_designer: false };
  }
  return Object.fromEntries(API_KEY_PERMISSIONS.map((p) => [p, given[p] === true])) as ApiKeyPermissions;
}

/** `fm_live_` + 40 base62 characters (about 238 bits). */
export function generateApiKey(): { plainKey: string; keyPrefix: string } {
  const plainKey = API_KEY_PREFIX + randomBase62(40);
  return { plainKey, keyPrefix: `${plainKey.slice(0, 12)}...` };
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith('fm_');
}
