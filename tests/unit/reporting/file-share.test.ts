import { Readable } from 'node:stream';
import type { DeliveryFile, DeliveryMessage } from '../../../adapters/channels/channel-sender';
import { failureResult, pathSegments, remoteFiles, shareSettings, statusOutcome } from '../../../adapters/channels/file-share';

/**
 * File-share names and rules (docs/reporting.md "File shares"): remote names from the file or the
 * channel's pattern, suffixes for files of one format, paths that cannot climb, conflict settings,
 * outcomes. The senders themselves are tested against real servers (channel-shares.test.ts).
 */

const file = (filename: string, format: DeliveryFile['format'] = 'pdf'): DeliveryFile => ({
  filename,
  format,
  contentType: 'application/octet-stream',
  bytes: 1,
  open: async () => Readable.from([Buffer.from('x')]),
  url: 'https://x.example/f',
  expiresAt: '2026-12-01T00:00:00.000Z',
  reportName: 'Sales',
});

const message = (files: DeliveryFile[], parameters: Record<string, unknown> = {}): DeliveryMessage => ({
  event: 'report.run.completed',
  eventId: 'e',
  deliveryId: 'd',
  projectId: 'p',
  report: { id: 'r', name: 'Sales Report', slug: null },
  run: { id: 'run', shortId: 'R7', status: 'delivering', trigger: 'schedule', scheduledFor: '2026-11-30T23:30:00.000Z', timezone: 'Europe/Berlin', parameters },
  files,
  runUrl: 'https://x.example/runs/run',
});

const names = (msg: DeliveryMessage, filenamePattern?: string) => remoteFiles(msg, { filenamePattern, conflict: 'unique' }).map((f) => f.name);

describe('file-share names', () => {
  it("keep the file's own name, sanitised to one segment", () => {
    expect(names(message([file('sales-2026-11-30.pdf'), file('../../etc/passwd', 'csv'), file('.hidden.xlsx', 'excel')]))).toEqual([
      'sales-2026-11-30.pdf',
      'passwd.csv',
      'hidden.xlsx',
    ]);
  });

  it('render the pattern in the run zone; the slug falls back to the sanitised name', () => {
    expect(names(message([file('a.pdf')]), '{slug}_{scheduledFor:yyyy-MM-dd}_{runShortId}')).toEqual(['Sales-Report_2026-12-01_R7.pdf']);
  });

  it('files of one format keep what tells them apart; names stay unique whatever their case', () => {
    const msg = message([file('s-2026-orders.csv', 'csv'), file('s-2026-items.csv', 'csv'), file('s-2026.pdf'), file('X.pdf'), file('x.pdf')]);
    expect(names(msg, 'weekly')).toEqual(['weekly-orders.csv', 'weekly-items.csv', 'weekly-s-2026.pdf', 'weekly-X.pdf', 'weekly-x-2.pdf']);
  });

  it('hostile: parameter values with separators and dots stay inside one segment, long names are capped', () => {
    const [name] = names(message([file('a.pdf')], { p: `../../${'a/'.repeat(300)}` }), '{param.p}');
    expect(name).not.toContain('/');
    expect(name.startsWith('.')).toBe(false);
    expect(name.length).toBeLessThanOrEqual(124);
  });
});

describe('file-share settings and paths', () => {
  it('default to unique; refuse unknown modes and bad patterns', () => {
    expect(shareSettings({})).toEqual({ conflict: 'unique', filenamePattern: undefined });
    expect(() => shareSettings({ conflict: 'replace' })).toThrow('conflict must be overwrite, unique or fail');
    expect(() => shareSettings({ filenamePattern: '{nope}' })).toThrow(/filenamePattern: Unknown token/);
    expect(() => shareSettings({ filenamePattern: 'x'.repeat(201) })).toThrow(/longer than 200/);
  });

  it('drop empty and . segments; refuse .. and backslashes', () => {
    expect(pathSegments('/a//./b/', 'directory')).toEqual(['a', 'b']);
    expect(() => pathSegments('a/../../b', 'directory')).toThrow("directory must not contain '..'");
    expect(() => pathSegments('a\\..\\b', 'prefix')).toThrow("prefix must use '/' as separator");
  });
});

describe('file-share outcomes', () => {
  it('5xx, 429 and 408 are retried; other statuses are permanent', () => {
    expect([500, 503, 429, 408, 400, 401, 403, 404, 409, 301].map(statusOutcome)).toEqual(['retry', 'retry', 'retry', 'retry', 'permanent', 'permanent', 'permanent', 'permanent', 'permanent', 'permanent']);
  });

  it('network errors are retried, also when a library kept only the message; guard refusals are permanent', () => {
    expect(failureResult(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:22'), { code: 'ECONNREFUSED' }), 'x')).toEqual({ outcome: 'retry', error: 'Connection refused' });
    expect(failureResult(new Error('AWS SDK error wrapper for Error: read ECONNRESET'), 'x')).toEqual({ outcome: 'retry', error: 'Connection failed (ECONNRESET)' });
    expect(failureResult(Object.assign(new Error('Outbound address not allowed: x is a private or internal address'), { code: 'ERR_OUTBOUND_001' }), 'x')).toEqual({
      outcome: 'permanent',
      error: 'Outbound address not allowed: x is a private or internal address',
    });
    expect(failureResult(new Error('something odd with secret=hunter2'), 'SFTP upload')).toEqual({ outcome: 'retry', error: 'SFTP upload failed unexpectedly' });
  });
});
