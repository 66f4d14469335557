import { channelConfig, MAX_SLACK_TEXT } from '../../domain/reporting/channel-config';
import { fillTokens } from '../../domain/reporting/message-text';
import type { ChannelSender, DeliveryMessage } from './channel-sender';
import { itemLines, messageValues, postJson, testResult } from './sender-support';

/**
 * Slack incoming webhooks (docs/reporting.md "Channels"; also Mattermost and Rocket.Chat): one POST of `{text,
 * blocks}` with links to the run's files, never the files. Slack answers 200 `ok`; 429 carries
 * Retry-After. The webhook URL is a secret (its path is the credential).
 */

const DEFAULT_TEXT = '*{{report.name}}*: run {{run.shortId}} {{run.status}} ({{run.scheduledFor | date}})';
/** Files listed by name; the rest are counted (a Slack section holds 3,000 characters). */
const MAX_LISTED_FILES = 20;

/** `&`, `<` and `>` are Slack's control characters in mrkdwn; values must not open a link or mention. */
const escapeSlack = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function slackBody(text: string | undefined, message: DeliveryMessage) {
  const values = Object.fromEntries(Object.entries(messageValues(message)).map(([k, v]) => [k, escapeSlack(v ?? '')]));
  const listed = message.files.slice(0, MAX_LISTED_FILES);
  const links = listed.map((f) => `• <${f.url}|${escapeSlack(f.filename)}>`).join('\n');
  const more = message.files.length > listed.length ? `\n…and ${message.files.length - listed.length} more` : '';
  const main = fillTokens(text ?? DEFAULT_TEXT, { ...values, links }, MAX_SLACK_TEXT);
  const items = itemLines(message);
  const blocks: unknown[] = [{ type: 'section', text: { type: 'mrkdwn', text: main } }];
  if (items) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: escapeSlack(items).slice(0, MAX_SLACK_TEXT) } });
  if (listed.length > 0) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `${links}${more}`.slice(0, MAX_SLACK_TEXT) } });
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: escapeSlack(`Run ${message.run.shortId} · ${message.run.status}`) }] });
  return { text: main, blocks };
}

export const slackSender: ChannelSender = {
  kind: 'slack',
  targets: () => [{ key: 'default', masked: 'Slack webhook' }],
  async send(ctx, _target, message) {
    const url = ctx.secrets.webhookUrl;
    if (!url) return { outcome: 'permanent', error: 'The channel has no webhook URL' };
    return postJson(ctx, url, slackBody(channelConfig('slack', ctx.config).text, message), 'Slack');
  },
  async test(ctx) {
    const url = ctx.secrets.webhookUrl;
    if (!url) return { ok: false, error: 'The channel has no webhook URL' };
    const r = await postJson(ctx, url, { text: `Formwork test message for channel ${ctx.channelShortId}` }, 'Slack');
    return testResult(r);
  },
};
