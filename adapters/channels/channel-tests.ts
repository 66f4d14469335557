import { createOutboundGuard } from '../http/outbound';
import type { Mailer } from '../mail/mailer';
import { CHANNEL_SENDERS } from '.';
import type { Config } from '../../domain/config';
import type { ChannelKind } from '../../domain/reporting/channel-kinds';

/** A stored channel, secrets decrypted: what a test message is sent with. */
export interface ChannelTestTarget {
  kind: ChannelKind;
  channelId: string;
  channelShortId: string;
  projectId: string;
  config: Record<string, unknown>;
  secrets: Record<string, string>;
  /** E-mail: the one address the test message goes to (the caller's; never the channel's recipients). */
  testRecipient?: string;
}

export interface ChannelTestOutcome {
  ok: boolean;
  error?: string;
  details?: Record<string, unknown>;
}

/** POST /api/reporting/channels/:id/test waits at most this long for the sender. */
const TEST_TIMEOUT_MS = 10_000;

/**
 * Runs a channel kind's test (adapters/channels: a test mail to the caller, a chat
 * post, a signed `report.test` event, a file written and deleted on a share) in the calling
 * process, behind the outbound guard (OUTBOUND_ALLOWLIST; redirects never followed) and within
 * 10 s. The API's channel test uses it; an error is an outcome, never thrown.
 */
export function channelTests(config: Config, mailer: Mailer): (target: ChannelTestTarget) => Promise<ChannelTestOutcome> {
  const guard = createOutboundGuard(config.outbound.allowlist, { maxRedirects: 0, timeoutMs: TEST_TIMEOUT_MS });
  return async (target) => {
    const sender = CHANNEL_SENDERS[target.kind];
    const signal = AbortSignal.timeout(TEST_TIMEOUT_MS);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<ChannelTestOutcome>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, error: `The test did not finish within ${TEST_TIMEOUT_MS / 1000} s` }), TEST_TIMEOUT_MS);
    });
    try {
      return await Promise.race([sender.test({ ...target, guard, mailer, signal }), timeout]);
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    } finally {
      clearTimeout(timer);
    }
  };
}
