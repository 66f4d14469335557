import { ConfigError, loadConfig } from '../../../domain/config';
import {
  DEFAULT_RETRY_DELAYS_MS,
  outcomeForStatus,
  parseDuration,
  parseRetryDelays,
  retrySchedule,
} from '../../../domain/webhooks/delivery';

describe('webhook delivery rules', () => {
  it('classifies answers as the spec says: 2xx delivered, 4xx permanent, 5xx retried', () => {
    expect([200, 201, 204, 299].map(outcomeForStatus)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
    expect([400, 401, 404, 410, 429, 499].map(outcomeForStatus)).toEqual(Array(6).fill('permanent'));
    expect([500, 502, 503, 504, 599].map(outcomeForStatus)).toEqual(Array(5).fill('retry'));
    // Redirects are not followed and informational answers are not an answer: permanent.
    expect([101, 301, 302, 308].map(outcomeForStatus)).toEqual(Array(4).fill('permanent'));
  });

  it('parses durations in ms or with s, m, h suffixes', () => {
    expect(['200', '200ms', '1.5s', '30s', '2m', '10m', '1h'].map(parseDuration)).toEqual([200, 200, 1500, 30_000, 120_000, 600_000, 3_600_000]);
    for (const bad of ['', 'soon', '-5', '5d', '1e3', 's']) expect(() => parseDuration(bad)).toThrow(RangeError);
  });

  it('takes one to three retry delays', () => {
    expect(parseRetryDelays('30s,2m,10m')).toEqual([30_000, 120_000, 600_000]);
    expect(parseRetryDelays(' 200 , 400,800 ')).toEqual([200, 400, 800]);
    expect(parseRetryDelays('5s')).toEqual([5000]);
    expect(() => parseRetryDelays('1s,2s,3s,4s')).toThrow(/1 to 3/);
    expect(() => parseRetryDelays('1s,,3s')).toThrow(/1 to 3/);
  });

  it('caps a schedule at three retries and defaults to the spec', () => {
    expect(retrySchedule(undefined)).toEqual([30_000, 120_000, 600_000]);
    expect(retrySchedule([1, 2, 3, 4, 5])).toEqual([1, 2, 3]);
    expect(retrySchedule([])).toEqual([]);
    expect(DEFAULT_RETRY_DELAYS_MS).toEqual([30_000, 120_000, 600_000]);
  });

  it('reads WEBHOOK_RETRY_DELAYS, defaulting to the spec and naming the variable when bad', () => {
    expect(loadConfig({}).webhooks.retryDelaysMs).toEqual([30_000, 120_000, 600_000]);
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS: '200,400,800' }).webhooks.retryDelaysMs).toEqual([200, 400, 800]);
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS: 'often' })).toThrow(ConfigError);
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS: 'often' })).toThrow(/^Invalid configuration: WEBHOOK_RETRY_DELAYS not a duration/);
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS: '1s,2s,3s,4s' })).toThrow(/WEBHOOK_RETRY_DELAYS must list 1 to 3/);
  });
});
