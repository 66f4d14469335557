import type { ValueTransformer } from 'typeorm';
import { mapHeaderValues, sealSecret, unsealSecret } from '../domain/secret-box';
import type { DeliveryChannel } from '../domain/flow/gate-settings';
import type { DatasourceSecrets } from './reporting/datasource.entity';
import type { OutputOptions } from '../domain/documents/output';

/**
 * Column transformers of secrets at rest (domain/secret-box.ts): entities hold plaintext, the
 * database holds `enc:v1:…` ciphertext. Reading a legacy plaintext value returns it unchanged;
 * the start-up step (db/secrets-at-rest.ts) encrypts such rows.
 */

const sealText = (v: string | null | undefined) => (typeof v === 'string' ? sealSecret(v) : v);
const unsealText = (v: string | null | undefined) => (typeof v === 'string' ? unsealSecret(v) : v);

/** A text column holding one secret (TOTP seed, webhook signing secret). */
export const sealedText: ValueTransformer = { to: sealText, from: unsealText };

/** A header map (jsonb) whose values are secrets. */
export const sealedHeaders: ValueTransformer = {
  to: (v: Record<string, string> | null | undefined) => (v ? mapHeaderValues(v, sealSecret) : v),
  from: (v: Record<string, string> | null | undefined) => (v ? mapHeaderValues(v, unsealSecret) : v),
};

type ChannelConfig = Record<string, unknown> | null | undefined;

/**
 * A reporting channel's `config` (jsonb): the values of a webhook channel's `headers` are secrets
 * (they carry a receiver's API key or bearer token), everything else is not. Other kinds have no
 * `headers`, so the map leaves their config as it is.
 */
export function mapChannelConfigHeaders(v: ChannelConfig, f: (s: string) => string): ChannelConfig {
  if (!v || typeof v.headers !== 'object' || v.headers === null || Array.isArray(v.headers)) return v;
  return { ...v, headers: mapHeaderValues(v.headers as Record<string, string>, f) };
}

export const sealedChannelConfig: ValueTransformer = {
  to: (v: ChannelConfig) => mapChannelConfigHeaders(v, sealSecret),
  from: (v: ChannelConfig) => mapChannelConfigHeaders(v, unsealSecret),
};

type RenderConfig = Record<string, unknown> | null | undefined;

/** A gate's `renderConfig` (jsonb): its `secret` (the custom render API's signing key) is sealed. */
export function mapRenderConfigSecret(v: RenderConfig, f: (s: string) => string): RenderConfig {
  return v && typeof v.secret === 'string' ? { ...v, secret: f(v.secret) } : v;
}

export const sealedRenderConfig: ValueTransformer = {
  to: (v: RenderConfig) => mapRenderConfigSecret(v, sealSecret),
  from: (v: RenderConfig) => mapRenderConfigSecret(v, unsealSecret),
};

/** A gate's delivery channels (jsonb): each channel's `secret` and header values are sealed. */
export function mapChannelSecrets(v: DeliveryChannel[] | null | undefined, f: (s: string) => string): DeliveryChannel[] | null | undefined {
  if (!Array.isArray(v)) return v;
  return v.map((c) => {
    const out: DeliveryChannel = { ...c, secret: typeof c.secret === 'string' ? f(c.secret) : c.secret };
    if (c.headers) out.headers = mapHeaderValues(c.headers, f);
    return out;
  });
}

export const sealedChannels: ValueTransformer = {
  to: (v: DeliveryChannel[] | null | undefined) => mapChannelSecrets(v, sealSecret),
  from: (v: DeliveryChannel[] | null | undefined) => mapChannelSecrets(v, unsealSecret),
};

/** A reporting datasource's secrets (jsonb `{name: {value, updatedAt}}`): each `value` is sealed. */
export function mapDatasourceSecrets(v: DatasourceSecrets | null | undefined, f: (s: string) => string): DatasourceSecrets | null | undefined {
  return v ? Object.fromEntries(Object.entries(v).map(([name, s]) => [name, { ...s, value: typeof s.value === 'string' ? f(s.value) : s.value }])) : v;
}

export const sealedDatasourceSecrets: ValueTransformer = {
  to: (v: DatasourceSecrets | null | undefined) => mapDatasourceSecrets(v, sealSecret),
  from: (v: DatasourceSecrets | null | undefined) => mapDatasourceSecrets(v, unsealSecret),
};

type DatasourceConfig = Record<string, unknown> | null | undefined;

/** A reporting datasource's `config` (jsonb): the values of an http_json datasource's `defaultHeaders` are sealed, the rest stays as it is. */
export function mapDatasourceConfigHeaders(v: DatasourceConfig, f: (s: string) => string): DatasourceConfig {
  const headers = v?.defaultHeaders;
  if (!v || !headers || typeof headers !== 'object') return v;
  return { ...v, defaultHeaders: mapHeaderValues(headers as Record<string, string>, f) };
}

export const sealedDatasourceConfig: ValueTransformer = {
  to: (v: DatasourceConfig) => mapDatasourceConfigHeaders(v, sealSecret),
  from: (v: DatasourceConfig) => mapDatasourceConfigHeaders(v, unsealSecret),
};

type Output = OutputOptions | null | undefined;

/** A job's or batch's `output` (jsonb): the encryption passwords are sealed, the rest is not. */
export function mapOutputPasswords(v: Output, f: (s: string) => string): Output {
  const e = v?.encryption;
  if (!v || !e) return v;
  return { ...v, encryption: { ...e, ownerPassword: f(e.ownerPassword), ...(typeof e.userPassword === 'string' && e.userPassword ? { userPassword: f(e.userPassword) } : {}) } };
}

export const sealedOutput: ValueTransformer = {
  to: (v: Output) => mapOutputPasswords(v, sealSecret),
  from: (v: Output) => mapOutputPasswords(v, unsealSecret),
};
