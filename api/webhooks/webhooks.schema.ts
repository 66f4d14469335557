import Joi from 'joi';
import { DOCUMENT_EVENT_TYPES, type DocumentEventType } from '../../domain/webhooks/delivery';

/** Contract §4 subscription bodies. Whether the URL may be reached is the outbound guard's call. */
const url = Joi.string().trim().max(2048).uri({ scheme: ['http', 'https'] });
const events = Joi.array()
  .items(Joi.string().valid(...DOCUMENT_EVENT_TYPES))
  .min(1)
  .unique();
const description = Joi.string().trim().max(500).allow('', null);

export interface CreateSubscriptionInput {
  url: string;
  events: DocumentEventType[];
  description?: string | null;
}

export const createSubscriptionSchema = Joi.object<CreateSubscriptionInput, true>({
  url: url.required(),
  events: events.required(),
  description,
});

export interface UpdateSubscriptionInput {
  url?: string;
  events?: DocumentEventType[];
  description?: string | null;
  isActive?: boolean;
}

export const updateSubscriptionSchema = Joi.object<UpdateSubscriptionInput, true>({
  url,
  events,
  description,
  isActive: Joi.boolean().strict(),
}).min(1);

export interface PageQuery {
  page: number;
  limit: number;
}

/** Same paging words as API keys (spec, Limits 2): `page` and `limit`, default 20, at most 100. */
const page = {
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
};

export const listSubscriptionsSchema = Joi.object<PageQuery, true>(page);

export interface ListDeliveriesQuery extends PageQuery {
  status?: 'pending' | 'delivering' | 'completed' | 'failed';
}

export const listDeliveriesSchema = Joi.object<ListDeliveriesQuery, true>({
  ...page,
  status: Joi.string().valid('pending', 'delivering', 'completed', 'failed'),
});
