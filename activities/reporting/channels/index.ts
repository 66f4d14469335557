import type { ChannelKind } from '../../../domain/reporting/channel-kinds';
import type { ChannelSender } from './channel-sender';
import { s3Sender } from './s3';
import { sftpSender } from './sftp';
import { webdavSender } from './webdav';

/** Every channel kind's sender (design B4), by kind. Each kind's module registers here. */
export const CHANNEL_SENDERS: Partial<Record<ChannelKind, ChannelSender>> = {
  s3: s3Sender,
  sftp: sftpSender,
  webdav: webdavSender,
};
