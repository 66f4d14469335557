import { constants, generateKeyPairSync, privateDecrypt, randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { createOutboundGuard } from '../../../adapters/http/outbound';
import { createQueryRunner } from '../../../adapters/query-runners/runners';
import type { DatasourceKind, SqlConnectionConfig } from '../../../domain/reporting/query-runner';
import { hostile, postgresAskingCleartext, type Hostile } from '../../support/hostile-databases';

/**
 * Hostile database servers (docs/security.md "Reporting datasources: secrets tied to their target"):
 * each speaks just enough of its wire protocol to ask the runner for the password itself, and records
 * every byte the runner sends. Without `allowCleartextPassword` (and without verify-full TLS) the
 * runner fails with ERR_QRY_006 `CLEARTEXT_PASSWORD_REFUSED` and the password never arrives; with the
 * flag it does (which shows the server would have seen it).
 */

const guard = createOutboundGuard(['127.0.0.1']);

const mysqlPacket = (seq: number, payload: Buffer) => {
  const header = Buffer.alloc(4);
  header.writeUIntLE(payload.length, 0, 3);
  header[3] = seq;
  return Buffer.concat([header, payload]);
};

/** A protocol-10 handshake offering mysql_native_password (protocol 4.1, secure connection, plugin auth). */
function mysqlHandshake(scramble: Buffer): Buffer {
  const caps = 0x0001 | 0x0004 | 0x0008 | 0x0200 | 0x2000 | 0x8000 | 0x80000;
  const head = Buffer.alloc(4);
  head.writeUInt32LE(7);
  const flags = Buffer.alloc(2 + 1 + 2 + 2 + 1 + 10);
  flags.writeUInt16LE(caps & 0xffff, 0);
  flags[2] = 0x21;
  flags.writeUInt16LE(0x0002, 3);
  flags.writeUInt16LE(caps >>> 16, 5);
  flags[7] = 21;
  return Buffer.concat([Buffer.from([0x0a]), Buffer.from('5.7.44-hostile\0'), head, scramble.subarray(0, 8), Buffer.from([0]), flags, scramble.subarray(8, 20), Buffer.from([0]), Buffer.from('mysql_native_password\0')]);
}

/**
 * MySQL: handshake, then an auth switch to `plugin`. `mysql_clear_password`: the client answers with the
 * password. `caching_sha2_password`: the server asks for full authentication, hands over its own RSA
 * key when asked, and decrypts what comes back (what a hostile server learns that way).
 */
function mysqlAsking(plugin: 'mysql_clear_password' | 'caching_sha2_password') {
  const scramble = randomBytes(20);
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return (socket: Socket, seen: Buffer[]) => {
    let buffered = Buffer.alloc(0);
    let step = 0;
    socket.write(mysqlPacket(0, mysqlHandshake(scramble)));
    socket.on('data', (chunk) => {
      seen.push(chunk);
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUIntLE(0, 3)) {
        const length = buffered.readUIntLE(0, 3);
        const seq = buffered[3];
        const payload = buffered.subarray(4, 4 + length);
        buffered = buffered.subarray(4 + length);
        step += 1;
        if (step === 1) {
          socket.write(mysqlPacket(seq + 1, Buffer.concat([Buffer.from([0xfe]), Buffer.from(`${plugin}\0`), scramble, Buffer.from([0])])));
        } else if (plugin === 'caching_sha2_password' && step === 2) {
          socket.write(mysqlPacket(seq + 1, Buffer.from([0x01, 0x04]))); // perform full authentication
        } else if (plugin === 'caching_sha2_password' && step === 3 && payload.length === 1 && payload[0] === 0x02) {
          socket.write(mysqlPacket(seq + 1, Buffer.concat([Buffer.from([0x01]), Buffer.from(publicKey.export({ type: 'spki', format: 'pem' }))])));
        } else if (plugin === 'caching_sha2_password' && step === 4) {
          const xored = privateDecrypt({ key: privateKey, oaepHash: 'sha1', padding: constants.RSA_PKCS1_OAEP_PADDING }, payload);
          seen.push(Buffer.from(xored.map((b, i) => b ^ scramble[i % scramble.length])));
          socket.end();
        } else {
          socket.end();
        }
      }
    });
  };
}

describe('runners refuse to send the password to a server that asks for it in clear', () => {
  const servers: Hostile[] = [];
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  async function attempt(kind: DatasourceKind, speak: (socket: Socket, seen: Buffer[]) => void, extra: Partial<SqlConnectionConfig> = {}) {
    const server = await hostile(speak);
    servers.push(server);
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const config: SqlConnectionConfig = { host: '127.0.0.1', port: server.port, database: 'sales', user: 'reader', ssl: 'disable', ...extra };
    const runner = createQueryRunner({ kind, config, secrets: { password }, guard });
    const error = await runner.test().then(
      () => undefined,
      (err: { code?: string; relatedInfo?: Record<string, unknown> }) => err,
    );
    await runner.close();
    return { error, password, received: await server.received() };
  }

  it('PostgreSQL AuthenticationCleartextPassword: ERR_QRY_006 CLEARTEXT_PASSWORD_REFUSED, and the password never arrives', async () => {
    const { error, password, received } = await attempt('postgres', postgresAskingCleartext);
    expect([error?.code, error?.relatedInfo?.dbCode]).toEqual(['ERR_QRY_006', 'CLEARTEXT_PASSWORD_REFUSED']);
    expect(received).toContain('reader'); // the startup message arrived: the server was reached
    expect(received).not.toContain(password);
  });

  it('PostgreSQL with allowCleartextPassword: the server gets the password (what the default refuses)', async () => {
    const { password, received } = await attempt('postgres', postgresAskingCleartext, { allowCleartextPassword: true });
    expect(received).toContain(password);
  });

  it('MySQL mysql_clear_password: refused, the password never arrives; with the flag it does', async () => {
    const refused = await attempt('mysql', mysqlAsking('mysql_clear_password'));
    expect([refused.error?.code, refused.error?.relatedInfo?.dbCode]).toEqual(['ERR_QRY_006', 'CLEARTEXT_PASSWORD_REFUSED']);
    expect(refused.received).toContain('reader');
    expect(refused.received).not.toContain(refused.password);

    const allowed = await attempt('mysql', mysqlAsking('mysql_clear_password'), { allowCleartextPassword: true });
    expect(allowed.received).toContain(allowed.password);
  });

  it('MySQL caching_sha2_password full authentication with the server’s own RSA key: refused; with the flag the server decrypts the password', async () => {
    const refused = await attempt('mysql', mysqlAsking('caching_sha2_password'));
    expect([refused.error?.code, refused.error?.relatedInfo?.dbCode]).toEqual(['ERR_QRY_006', 'CLEARTEXT_PASSWORD_REFUSED']);
    expect(refused.received).toContain('reader');
    expect(refused.received).not.toContain(refused.password);

    const allowed = await attempt('mysql', mysqlAsking('caching_sha2_password'), { allowCleartextPassword: true });
    expect(allowed.received).toContain(allowed.password);
  });
});
