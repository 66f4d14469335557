import type { FreetextConfig, Gate } from './model';

/**
 * The gate's settings as the form holds them, and the body fields they become (docs/flow.md "Gates",
 * "Write-only secrets"). Secrets are never read back: a stored one is `{"set": true}` in the gate, and
 * the form holds only a new value typed over it (empty: keep the stored one).
 */
export interface HeaderRow {
  name: string;
  value: string;
  stored: boolean;
}

export interface ChannelRow {
  url: string;
  /** The URL of the stored channel this row was read from (its secret is kept while the URL stays). */
  storedUrl?: string;
  secret: string;
  headers: HeaderRow[];
}

export interface SettingsForm {
  name: string;
  description: string;
  validationMode: Gate['validationMode'];
  freetext: { minLength: number | ''; maxLength: number | ''; requiredPatterns: string[]; forbiddenPatterns: string[] };
  renderMode: Gate['renderMode'];
  renderTemplateId: string | null;
  renderFormat: string;
  renderUrl: string;
  renderSecret: string;
  renderSecretStored: boolean;
  removeRenderSecret: boolean;
  renderRest: Record<string, unknown>;
  approvalMode: Gate['approvalMode'];
  approvers: Array<{ email: string; name: string }>;
  requiredApprovals: number;
  timeoutMinutes: number;
  onTimeout: 'reject' | 'approve';
  notificationMode: Gate['notificationMode'];
  notificationDigestMinutes: number;
  channels: ChannelRow[];
  maxSubmissionsPerMinute: number | '';
  circuitBreakerEnabled: boolean;
  maxFailures: number;
  cooldownSeconds: number;
}

export function newSettings(): SettingsForm {
  return {
    name: '',
    description: '',
    validationMode: 'variables',
    freetext: { minLength: '', maxLength: '', requiredPatterns: [], forbiddenPatterns: [] },
    renderMode: 'none',
    renderTemplateId: null,
    renderFormat: 'pdf',
    renderUrl: '',
    renderSecret: '',
    renderSecretStored: false,
    removeRenderSecret: false,
    renderRest: {},
    approvalMode: 'auto',
    approvers: [],
    requiredApprovals: 1,
    timeoutMinutes: 1440,
    onTimeout: 'reject',
    notificationMode: 'digest',
    notificationDigestMinutes: 5,
    channels: [],
    maxSubmissionsPerMinute: '',
    circuitBreakerEnabled: true,
    maxFailures: 5,
    cooldownSeconds: 300,
  };
}

export function settingsOf(gate: Gate): SettingsForm {
  const { format, url, secret, ...rest } = gate.renderConfig ?? {};
  const ft = gate.freetextConfig;
  return {
    name: gate.name,
    description: gate.description ?? '',
    validationMode: gate.validationMode,
    freetext: { minLength: ft?.minLength ?? '', maxLength: ft?.maxLength ?? '', requiredPatterns: ft?.requiredPatterns ?? [], forbiddenPatterns: ft?.forbiddenPatterns ?? [] },
    renderMode: gate.renderMode,
    renderTemplateId: gate.renderTemplateId,
    renderFormat: typeof format === 'string' ? format : 'pdf',
    renderUrl: typeof url === 'string' ? url : '',
    renderSecret: '',
    renderSecretStored: secret !== undefined && secret !== null,
    removeRenderSecret: false,
    renderRest: rest,
    approvalMode: gate.approvalMode,
    approvers: (gate.approvalConfig?.approvers ?? []).map((a) => ({ email: a.email, name: a.name ?? '' })),
    requiredApprovals: gate.approvalConfig?.requiredApprovals ?? 1,
    timeoutMinutes: gate.approvalConfig?.timeoutMinutes ?? 1440,
    onTimeout: gate.approvalConfig?.onTimeout ?? 'reject',
    notificationMode: gate.notificationMode,
    notificationDigestMinutes: gate.notificationDigestMinutes ?? 5,
    channels: gate.deliveryChannels.map((c) => ({ url: c.url, storedUrl: c.url, secret: '', headers: Object.keys(c.headers ?? {}).map((name) => ({ name, value: '', stored: true })) })),
    maxSubmissionsPerMinute: gate.maxSubmissionsPerMinute ?? '',
    circuitBreakerEnabled: gate.circuitBreakerEnabled,
    maxFailures: gate.maxFailures,
    cooldownSeconds: gate.cooldownSeconds,
  };
}

const STORED = { set: true } as const;
type Secret = string | typeof STORED;

/** The fields of a create or update body the form stands for. */
export function settingsBody(f: SettingsForm) {
  const freetextConfig: FreetextConfig | null =
    f.validationMode === 'freetext'
      ? {
          ...(f.freetext.minLength !== '' ? { minLength: f.freetext.minLength } : {}),
          ...(f.freetext.maxLength !== '' ? { maxLength: f.freetext.maxLength } : {}),
          ...(f.freetext.requiredPatterns.length ? { requiredPatterns: f.freetext.requiredPatterns } : {}),
          ...(f.freetext.forbiddenPatterns.length ? { forbiddenPatterns: f.freetext.forbiddenPatterns } : {}),
        }
      : null;
  const secret: Secret | null | undefined = f.renderSecret ? f.renderSecret : f.removeRenderSecret ? null : f.renderSecretStored ? STORED : undefined;
  const renderConfig: Record<string, unknown> = {
    ...f.renderRest,
    ...(f.renderMode === 'native' ? { format: f.renderFormat } : {}),
    ...(f.renderMode === 'custom_api' ? { url: f.renderUrl.trim() } : {}),
    ...(secret !== undefined ? { secret } : {}),
  };
  return {
    name: f.name.trim(),
    description: f.description.trim() || null,
    validationMode: f.validationMode,
    freetextConfig,
    renderMode: f.renderMode,
    renderTemplateId: f.renderMode === 'native' ? f.renderTemplateId : null,
    renderConfig: Object.keys(renderConfig).length ? renderConfig : null,
    approvalMode: f.approvalMode,
    approvalConfig:
      f.approvalMode === 'manual'
        ? {
            approvers: f.approvers.map((a) => ({ email: a.email.trim(), ...(a.name.trim() ? { name: a.name.trim() } : {}) })),
            requiredApprovals: f.requiredApprovals,
            timeoutMinutes: f.timeoutMinutes,
            onTimeout: f.onTimeout,
          }
        : null,
    notificationMode: f.notificationMode,
    notificationDigestMinutes: f.notificationDigestMinutes,
    deliveryChannels: f.channels.map((c) => ({
      type: 'webhook' as const,
      url: c.url.trim(),
      // A new secret replaces the stored one; none keeps the stored channel's (same URL).
      ...(c.secret ? { secret: c.secret } : c.storedUrl ? { secret: STORED } : {}),
      headers: Object.fromEntries(c.headers.filter((h) => h.name.trim()).map((h) => [h.name.trim(), h.value ? h.value : STORED] as [string, Secret])),
    })),
    maxSubmissionsPerMinute: f.maxSubmissionsPerMinute === '' ? null : f.maxSubmissionsPerMinute,
    circuitBreakerEnabled: f.circuitBreakerEnabled,
    maxFailures: f.maxFailures,
    cooldownSeconds: f.cooldownSeconds,
  };
}

export type SettingsBody = ReturnType<typeof settingsBody>;

/** The fields of `next` that differ from `before` (what a PUT sends). */
export function changedFields(before: SettingsBody, next: SettingsBody): Partial<SettingsBody> {
  const changed: Record<string, unknown> = {};
  for (const key of Object.keys(next) as Array<keyof SettingsBody>) if (JSON.stringify(next[key]) !== JSON.stringify(before[key])) changed[key] = next[key];
  return changed as Partial<SettingsBody>;
}
