import type { ChannelKind } from '../../../domain/reporting/channel-kinds';
import type { ChannelSender } from './channel-sender';

/** Every channel kind's sender (design B4), by kind. Each kind's module registers here. */
export const CHANNEL_SENDERS: Partial<Record<ChannelKind, ChannelSender>> = {};
