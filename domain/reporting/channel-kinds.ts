/**
 * Distribution channel kinds (docs/reporting.md "Channels"). Pure: the
 * API, the activities and the workflows share it.
 */
export const CHANNEL_KINDS = ['email', 'slack', 'teams', 'webhook', 's3', 'sftp', 'webdav'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** Members may manage e-mail channels; every other kind needs an admin (docs/reporting.md "Channels"). */
export const MEMBER_CHANNEL_KINDS: readonly ChannelKind[] = ['email'];

/** One place a channel sends to: an e-mail recipient, or `default` for the single target of other kinds. */
export interface ChannelTarget {
  /** Stable within the channel (stored, never shown): the recipient address, or `default`. */
  key: string;
  /** As the delivery record shows it: the address, host + path, the webhook's host. */
  masked: string;
}

/** What a share does when the file name is taken (SSRS AutoIncrement for `unique`). */
export type ConflictMode = 'overwrite' | 'unique' | 'fail';
