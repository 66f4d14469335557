import { randomUUID } from 'node:crypto';
import { channelConfig } from '../../domain/reporting/channel-config';
import type { WebhookEnvelope } from '../../domain/webhooks/delivery';
import type { OutboundGuard } from '../http/outbound';
import { sendSignedEvent } from '../http/send-webhook';
import type { ChannelContext, ChannelSender, DeliveryMessage, SendResult } from './channel-sender';
import { CHANNEL_TIMEOUT_MS, REPORTS_USER_AGENT, resultOfStatus, testResult } from './sender-support';

/**
 * Signed webhooks (docs/reporting.md "Channels"; docs/webhooks.md): the document webhooks' envelope, headers and
 * HMAC (X-Service-Signature over `<timestamp>.<body>`, signed afresh on every attempt), events
 * `report.run.completed` and `report.job_run.completed`; POST …/test sends `report.test`. The
 * signing secret is the channel's generated `whsec_…` secret.
 */

const TEST_EVENT = 'report.test';

/** The guard with redirects never followed: a moved endpoint is a failure its owner must fix. */
function noRedirects(guard: OutboundGuard): OutboundGuard {
  return { ...guard, guardedFetch: (url, init) => guard.guardedFetch(url, { ...init, followRedirects: false }) };
}

function reportEnvelope(message: DeliveryMessage): WebhookEnvelope {
  const { run } = message;
  return {
    id: message.eventId,
    type: message.event,
    timestamp: new Date().toISOString(),
    data: {
      run: {
        id: run.id,
        shortId: run.shortId,
        status: run.status,
        trigger: run.trigger,
        scheduledFor: run.scheduledFor,
        timezone: run.timezone,
        parameters: run.parameters,
        ...(run.items ? { items: run.items } : {}),
        url: message.runUrl,
      },
      report: message.report,
      files: message.files.map((f) => ({ filename: f.filename, format: f.format, bytes: f.bytes, url: f.url, expiresAt: f.expiresAt })),
    },
  };
}

async function post(ctx: ChannelContext, event: WebhookEnvelope): Promise<SendResult> {
  const secret = ctx.secrets.secret;
  if (!secret) return { outcome: 'permanent', error: 'The channel has no signing secret' };
  const { url, headers } = channelConfig('webhook', ctx.config);
  const body = JSON.stringify({ id: event.id, type: event.type, timestamp: event.timestamp, data: event.data });
  const r = await sendSignedEvent(noRedirects(ctx.guard), { url, body, secret, eventId: event.id, eventType: event.type, userAgent: REPORTS_USER_AGENT, headers }, CHANNEL_TIMEOUT_MS);
  // sendWebhook's error may quote the receiver's answer; a report delivery keeps our words only.
  if (r.statusCode !== null) return resultOfStatus(r.statusCode, 'Receiver', r.retryAfter ?? null);
  return { outcome: r.outcome, error: r.error ?? 'Network error' };
}

export const webhookSender: ChannelSender = {
  kind: 'webhook',
  targets(config) {
    const { url } = channelConfig('webhook', config);
    let host = 'webhook';
    try {
      host = new URL(url).host;
    } catch {
      // Stored configs were checked; keep a placeholder rather than fail.
    }
    return [{ key: 'default', masked: host }];
  },
  send: (ctx, _target, message) => post(ctx, reportEnvelope(message)),
  async test(ctx) {
    const event: WebhookEnvelope = {
      id: randomUUID(),
      type: TEST_EVENT,
      timestamp: new Date().toISOString(),
      data: { channelId: ctx.channelId, channelShortId: ctx.channelShortId, message: 'Formwork test event' },
    };
    return testResult(await post(ctx, event));
  },
};
