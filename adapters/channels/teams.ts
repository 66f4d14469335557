import { channelConfig, MAX_TEAMS_TEXT, MAX_TEAMS_TITLE } from '../../domain/reporting/channel-config';
import { fillTokens, oneLine } from '../../domain/reporting/message-text';
import type { ChannelSender, DeliveryMessage } from './channel-sender';
import { itemLines, messageValues, plainLinks, postJson, testResult } from './sender-support';

/**
 * Microsoft Teams Workflows webhooks (docs/reporting.md "Channels"): an Adaptive Card 1.4 wrapped in `{type:
 * "message", attachments: […]}`, one "open" button per file (the retired connectors' MessageCard
 * is not produced). Success is any 2xx.
 */

const DEFAULT_TITLE = '{{report.name}}';
const DEFAULT_TEXT = 'Run {{run.shortId}} {{run.status}} ({{run.scheduledFor | date}})';
/** Buttons on one card; further files are listed as text. */
const MAX_ACTIONS = 6;

type CardElement = Record<string, unknown>;

function wrap(body: CardElement[], actions: CardElement[] = []) {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', body, ...(actions.length ? { actions } : {}) },
      },
    ],
  };
}

function teamsCard(config: { title?: string; text?: string }, message: DeliveryMessage) {
  const values = messageValues(message);
  const title = oneLine(fillTokens(config.title ?? DEFAULT_TITLE, { ...values, links: '' }, MAX_TEAMS_TITLE));
  const text = fillTokens(config.text ?? DEFAULT_TEXT, { ...values, links: plainLinks(message.files) }, MAX_TEAMS_TEXT);
  const body: CardElement[] = [
    { type: 'TextBlock', text: title, weight: 'Bolder', size: 'Medium', wrap: true },
    { type: 'TextBlock', text, wrap: true },
    {
      type: 'FactSet',
      facts: [
        { title: 'Status', value: message.run.status },
        { title: 'Scheduled for', value: values['run.scheduledFor | date'] ?? '' },
        { title: 'Run', value: message.run.shortId },
      ],
    },
  ];
  const items = itemLines(message);
  if (items) body.push({ type: 'TextBlock', text: items.slice(0, MAX_TEAMS_TEXT), wrap: true });
  const buttons = message.files.slice(0, MAX_ACTIONS);
  const rest = message.files.slice(MAX_ACTIONS);
  if (rest.length) body.push({ type: 'TextBlock', text: plainLinks(rest).slice(0, MAX_TEAMS_TEXT), wrap: true });
  return wrap(
    body,
    buttons.map((f) => ({ type: 'Action.OpenUrl', title: `Download ${f.filename}`, url: f.url })),
  );
}

export const teamsSender: ChannelSender = {
  kind: 'teams',
  targets: () => [{ key: 'default', masked: 'Teams webhook' }],
  async send(ctx, _target, message) {
    const url = ctx.secrets.webhookUrl;
    if (!url) return { outcome: 'permanent', error: 'The channel has no webhook URL' };
    return postJson(ctx, url, teamsCard(channelConfig('teams', ctx.config), message), 'Teams');
  },
  async test(ctx) {
    const url = ctx.secrets.webhookUrl;
    if (!url) return { ok: false, error: 'The channel has no webhook URL' };
    const card = wrap([{ type: 'TextBlock', text: `Formwork test message for channel ${ctx.channelShortId}`, wrap: true }]);
    const r = await postJson(ctx, url, card, 'Teams');
    return testResult(r);
  },
};
