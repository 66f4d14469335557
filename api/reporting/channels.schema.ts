import Joi from 'joi';
import { CHANNEL_KINDS, type ChannelKind } from '../../domain/reporting/channel-kinds';

/**
 * Channel bodies (docs/reporting.md "Channels"; design B5.3, B5.4). The body's shape is checked
 * here (unknown fields: 400 ERR_VALID_001); `config` and `secrets` per kind by the service with
 * domain/reporting/channel-config.ts (400 ERR_CHAN_002 naming every problem).
 */

const name = Joi.string().trim().min(1).max(100);
/** Checked per kind later; bounded here so a huge body is not walked twice. */
const config = Joi.object().unknown(true).max(50);
const secrets = Joi.object().unknown(true).max(20);

export interface CreateChannelInput {
  name: string;
  kind: ChannelKind;
  config: Record<string, unknown>;
  secrets?: Record<string, unknown>;
  isActive?: boolean;
}

export type UpdateChannelInput = Partial<Omit<CreateChannelInput, 'kind'>>;

export const createChannelSchema = Joi.object<CreateChannelInput>({
  name: name.required(),
  kind: Joi.string()
    .valid(...CHANNEL_KINDS)
    .required(),
  config: config.required(),
  secrets,
  isActive: Joi.boolean().strict(),
});

export const updateChannelSchema = Joi.object<UpdateChannelInput>({ name, config, secrets, isActive: Joi.boolean().strict() }).min(1);

export interface ListChannelsQuery {
  page: number;
  limit: number;
  kind?: ChannelKind;
  search?: string;
  isActive?: boolean;
}

export const listChannelsSchema = Joi.object<ListChannelsQuery>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  kind: Joi.string().valid(...CHANNEL_KINDS),
  search: Joi.string().trim().max(100).allow(''),
  isActive: Joi.boolean(),
});

/** POST …/test takes an empty body. */
export const testChannelSchema = Joi.object({});
