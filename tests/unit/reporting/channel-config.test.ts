import { channelConfig, checkChannelSettings, missingSecrets } from '../../../domain/reporting/channel-config';
import { dateInZone, fillTokens, oneLine, unknownTokens } from '../../../domain/reporting/message-text';

/** Channel config per kind and the placeholders of channel texts (docs/reporting.md "Channels"). */
describe('channel config', () => {
  it('applies each kind’s defaults', () => {
    expect(checkChannelSettings('email', { to: ['Ann@Example.com'] }, {})).toEqual({
      config: { to: ['ann@example.com'], subject: '{{report.name}} — {{run.scheduledFor | date}}', attach: 'files', maxAttachmentMb: 10 },
      secrets: {},
      issues: [],
    });
    expect(checkChannelSettings('sftp', { host: 'sftp.example.com', username: 'u', directory: 'in', hostKeySha256: `SHA256:${'a'.repeat(43)}` }, { password: 'p' })).toMatchObject({
      config: { port: 22, conflict: 'unique' },
      secrets: { password: 'p' },
      issues: [],
    });
    expect(checkChannelSettings('webdav', { baseUrl: 'https://dav.example.com' }, {}).config).toEqual({ baseUrl: 'https://dav.example.com', directory: '', createDirectories: true, conflict: 'unique' });
    expect(channelConfig('slack', { text: 'x' }).text).toBe('x');
  });

  it('names every problem, caps the list and never quotes a secret', () => {
    const many = checkChannelSettings('email', { to: Array.from({ length: 200 }, (_, i) => `bad ${i}`) }, {});
    expect(many.issues.length).toBe(20);
    const secret = checkChannelSettings('sftp', { host: 'h.example.com', username: 'u', directory: 'd', hostKeySha256: `SHA256:${'a'.repeat(43)}` }, { privateKey: 'TOPSECRET not a key', extra: 'TOPSECRET2' });
    expect(secret.issues).toEqual([
      { path: 'secrets.privateKey', message: "'secrets.privateKey' must be a PEM or OpenSSH private key" },
      { path: 'secrets.extra', message: "'secrets.extra' is not a secret of this kind" },
    ]);
    expect(JSON.stringify(secret.issues)).not.toContain('TOPSECRET');
    // A rule's reason that looks like a Joi template is reported as written, not evaluated.
    const pattern = checkChannelSettings('s3', { bucket: 'reports', region: 'eu-west-1', filenamePattern: '{#label}{{#value}}' }, {});
    expect(pattern.issues[0].path).toBe('config.filenamePattern');
    expect(pattern.issues[0].message).toContain('#label');
  });

  it('knows which secrets a kind needs', () => {
    expect(missingSecrets('slack', [])).toEqual([{ path: 'secrets.webhookUrl', message: "'secrets.webhookUrl' is required" }]);
    expect(missingSecrets('sftp', ['passphrase'])).toHaveLength(2);
    expect(missingSecrets('sftp', ['privateKey', 'passphrase'])).toEqual([]);
    expect(missingSecrets('email', [])).toEqual([]);
  });
});

describe('channel message placeholders', () => {
  it('replaces known tokens only, tolerates spacing, and cuts the result', () => {
    const values = { 'report.name': 'Sales', 'run.scheduledFor | date': '2026-11-23' } as const;
    expect(fillTokens('{{ report.name }} {{run.scheduledFor|date}} {{run.status}} {{nope}}', values, 100)).toBe('Sales 2026-11-23  {{nope}}');
    expect(fillTokens('{{report.name}}'.repeat(10), values, 12)).toBe('SalesSalesS…');
    expect(unknownTokens('{{report.name}} {{constructor}} {{__proto__}} {{constructor}}')).toEqual(['constructor', '__proto__']);
    // A long run of braces is bounded work.
    const started = Date.now();
    unknownTokens('{{'.repeat(100_000));
    fillTokens(`{{${'x'.repeat(100_000)}`, values, 10);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('writes the date in the run’s zone, UTC for an unknown zone, and keeps one line', () => {
    expect(dateInZone('2026-11-22T23:30:00Z', 'Europe/Berlin')).toBe('2026-11-23');
    expect(dateInZone('2026-11-22T23:30:00Z', 'America/New_York')).toBe('2026-11-22');
    expect(dateInZone('2026-11-22T23:30:00Z', 'Not/AZone')).toBe('2026-11-22');
    expect(dateInZone('garbage', 'UTC')).toBe('');
    expect(oneLine('a\r\nBcc: x\u2028y\u0000')).toBe('a Bcc: x y ');
  });
});
