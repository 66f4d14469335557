import Joi from 'joi';
import { CHANNEL_KINDS, type ChannelKind } from '../../domain/reporting/channel-kinds';

/**
 * Channel bodies (docs/reporting.md "Channels"). The body's shape is checked
 * here (unknown fields: 400 ERR_VALID_001); `config` and `secrets` per kind by the service with
 * domain/reporting/channel-config.ts (400 ERR_CHAN_002 naming every problem).
 */

const name = Joi.string().trim().min(1).max(100);
/** Checked per kind later; bounded here so a huge body is not walked twice. */
const config = Joi.object()
  .unknown(true)
  .max(50)
  .description(
    'Per kind (docs/reporting.md "Channels"). A webhook\'s `headers` values are write-only secrets: answers show `{"set": true}` per header name; ' +
      'on update a string sets a value, `{"set": true}` keeps the stored one, a name left out of `headers` removes it, and `headers` left out keeps them all. ' +
      "Changing an SFTP `host`, `port` or `hostKeySha256`, a WebDAV `baseUrl` or a webhook `url`'s origin keeps no stored secret: " +
      'give each again (or null) in the same request, else 400 ERR_CHAN_005. Creating or changing an e-mail channel needs a verified sender (403 ERR_AUTH_006).',
  );
const secrets = Joi.object()
  .unknown(true)
  .max(20)
  .description('Write-only: a string sets a secret, null clears it, a name left out keeps it; answers show `{"set": true, "updatedAt"}` per name.');

export interface CreateChannelInput {
  name: string;
  kind: ChannelKind;
  config: Record<string, unknown>;
  secrets?: Record<string, unknown>;
  isActive?: boolean;
}

export type UpdateChannelInput = Partial<Omit<CreateChannelInput, 'kind'>>;

export const createChannelSchema = Joi.object<CreateChannelInput, true>({
  name: name.required(),
  kind: Joi.string()
    .valid(...CHANNEL_KINDS)
    .required(),
  config: config.required(),
  secrets,
  isActive: Joi.boolean().strict(),
});

export const updateChannelSchema = Joi.object<UpdateChannelInput, true>({ name, config, secrets, isActive: Joi.boolean().strict() }).min(1);

export interface ListChannelsQuery {
  page: number;
  limit: number;
  kind?: ChannelKind;
  search?: string;
  isActive?: boolean;
}

export const listChannelsSchema = Joi.object<ListChannelsQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  kind: Joi.string().valid(...CHANNEL_KINDS),
  search: Joi.string().trim().max(100).allow(''),
  isActive: Joi.boolean(),
});

/** POST …/test takes an empty body. */
export const testChannelSchema = Joi.object<Record<never, never>, true>({});
