import type { ChannelKind } from '../../domain/reporting/channel-kinds';
import type { ChannelSender } from './channel-sender';
import { emailSender } from './email';
import { s3Sender } from './s3';
import { sftpSender } from './sftp';
import { slackSender } from './slack';
import { teamsSender } from './teams';
import { webdavSender } from './webdav';
import { webhookSender } from './webhook';

/** Every channel kind's sender (docs/reporting.md "Channels"), by kind. */
export const CHANNEL_SENDERS: Record<ChannelKind, ChannelSender> = {
  email: emailSender,
  slack: slackSender,
  teams: teamsSender,
  webhook: webhookSender,
  s3: s3Sender,
  sftp: sftpSender,
  webdav: webdavSender,
};
