import type { GateEntity } from '../../db/flow/gate.entity';
import type { DeliveryChannel } from '../../domain/flow/gate-settings';
import { AppError } from '../../domain/errors';

/**
 * Write-only gate secrets (docs/flow.md, docs/security.md "Credentials: secrets at rest"):
 * `renderConfig.secret`, each delivery channel's `secret` and its header values are stored
 * encrypted and never shown again. Responses carry `{"set": true}` in their place; a request may
 * send that marker back (or leave the field out) to keep what is stored.
 */

export interface StoredSecret {
  set: true;
}

const STORED: StoredSecret = Object.freeze({ set: true });

/** A secret as a request may give it: the value, or the marker of the stored one. */
export type WriteOnly = string | StoredSecret;

export interface DeliveryChannelInput {
  type: 'webhook';
  url: string;
  /** Left out or `{"set": true}`: the secret of the stored channel with the same URL. */
  secret?: WriteOnly;
  /** Left out: the stored channel's headers; a value `{"set": true}`: that header's stored value. */
  headers?: Record<string, WriteOnly>;
}

const isStored = (v: unknown): v is StoredSecret => typeof v === 'object' && v !== null && (v as StoredSecret).set === true;

/** A gate as responses show it: the secrets replaced by `{"set": true}`. */
export function maskRenderConfig(config: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!config || config.secret === undefined || config.secret === null) return config;
  return { ...config, secret: STORED };
}

export function maskChannel(c: DeliveryChannel) {
  const { headers, ...rest } = c;
  return {
    ...rest,
    secret: STORED,
    ...(headers ? { headers: Object.fromEntries(Object.keys(headers).map((name) => [name, STORED])) } : {}),
  };
}

/**
 * The renderConfig to store: a `secret` left out or sent as `{"set": true}` keeps the stored one;
 * `null` removes it; a string replaces it.
 */
function resolveRenderConfig(stored: Record<string, unknown> | null | undefined, input: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!input) return input;
  const { secret, ...rest } = input;
  if (secret === null) return rest;
  if (typeof secret === 'string') return { ...rest, secret };
  const kept = stored?.secret;
  if (typeof kept === 'string') return { ...rest, secret: kept };
  if (isStored(secret)) {
    throw new AppError('ERR_VALID_005', 'renderConfig.secret: no secret is stored for this gate, send the secret itself', { field: 'renderConfig.secret' });
  }
  return rest;
}

/**
 * The delivery channels to store. A channel without a new secret takes the one of the stored
 * channel with the same URL; a new channel must bring its own (400 ERR_VALID_005).
 */
function resolveDeliveryChannels(stored: DeliveryChannel[] | undefined, input: DeliveryChannelInput[]): DeliveryChannel[] {
  return input.map((channel, i) => {
    const previous = stored?.[i]?.url === channel.url ? stored[i] : stored?.find((s) => s.url === channel.url);
    const secret = typeof channel.secret === 'string' ? channel.secret : previous?.secret;
    if (!secret) {
      throw new AppError('ERR_VALID_005', `deliveryChannels[${i}].secret is required for a new delivery channel (only a stored channel with the same url keeps its secret)`, {
        field: `deliveryChannels[${i}].secret`,
      });
    }
    const out: DeliveryChannel = { type: channel.type, url: channel.url, secret };
    if (channel.headers === undefined) {
      if (previous?.headers) out.headers = previous.headers;
      return out;
    }
    out.headers = {};
    for (const [name, value] of Object.entries(channel.headers)) {
      const kept = typeof value === 'string' ? value : previous?.headers?.[name];
      if (kept === undefined) {
        throw new AppError('ERR_VALID_005', `deliveryChannels[${i}].headers.${name}: no value is stored for this header, send the value itself`, {
          field: `deliveryChannels[${i}].headers.${name}`,
        });
      }
      out.headers[name] = kept;
    }
    return out;
  });
}

/** The settings with write-only secrets resolved against the stored gate (none when creating). */
export function resolveGateSecrets<T extends { renderConfig?: Record<string, unknown> | null; deliveryChannels?: DeliveryChannelInput[] }>(
  stored: Pick<GateEntity, 'renderConfig' | 'deliveryChannels'> | undefined,
  input: T,
): Omit<T, 'deliveryChannels'> & { deliveryChannels?: DeliveryChannel[] } {
  const out = { ...input } as Omit<T, 'deliveryChannels'> & { deliveryChannels?: DeliveryChannel[] };
  if (input.renderConfig !== undefined) out.renderConfig = resolveRenderConfig(stored?.renderConfig, input.renderConfig);
  if (input.deliveryChannels !== undefined) out.deliveryChannels = resolveDeliveryChannels(stored?.deliveryChannels, input.deliveryChannels);
  return out;
}
