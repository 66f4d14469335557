import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOutboundGuard, embeddedIPv4, embeddedIPv4s, isInternalAddress, type Lookup } from '../../adapters/http/outbound';
import { AppError } from '../../domain/errors';

/** A resolver answering from a table, so tests never depend on the machine's DNS. */
const fakeDns =
  (table: Record<string, string[]>): Lookup =>
  async (host) => {
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe('ERR_OUTBOUND_001');
  expect((err as AppError).status).toBe(400);
  return err as AppError;
}

describe('isInternalAddress', () => {
  it.each([
    '127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254',
    '100.64.0.1', '100.127.255.254', '0.0.0.0', '224.0.0.251', '255.255.255.255',
    '::1', '::', 'fd12:3456::1', 'fc00::1', 'fe80::1', 'fe80::1%lo', 'ff02::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.1.2.3', '::ffff:a9fe:a9fe', '::127.0.0.1',
    '64:ff9b::10.0.0.1', '64:ff9b::a00:1', '2002:c0a8:0101::1',
  ])('treats %s as internal', (address) => {
    expect(isInternalAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
    'treats %s as public',
    (address) => {
      expect(isInternalAddress(address)).toBe(false);
    },
  );

  it('finds the IPv4 address inside mapped, compatible, NAT64 and 6to4 forms', () => {
    expect(embeddedIPv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(embeddedIPv4('::ffff:192.168.0.1')).toBe('192.168.0.1');
    expect(embeddedIPv4('64:ff9b::a00:1')).toBe('10.0.0.1');
    expect(embeddedIPv4('2002:0a00:0001::')).toBe('10.0.0.1');
    expect(embeddedIPv4('2606:4700::1111')).toBeUndefined();
  });
});

describe('IPv6 transition ranges: the IPv4 address inside is judged like any IPv4 address', () => {
  it.each([
    // SIIT, IPv4-translated ::ffff:0:a.b.c.d (RFC 2765/6145; not the IPv4-mapped ::ffff:a.b.c.d)
    ['::ffff:0:127.0.0.1', ['127.0.0.1']],
    ['::ffff:0:a00:1', ['10.0.0.1']],
    ['::ffff:0:a9fe:a9fe', ['169.254.169.254']],
    // RFC 8215 local-use NAT64 64:ff9b:1::/48, /96 layout
    ['64:ff9b:1::10.0.0.1', ['10.0.0.1']],
    ['64:ff9b:1::c0a8:101', ['192.168.1.1']],
    // …its /48 layout (10.0.0.1 in bytes 6, 7, 9 and 10)
    ['64:ff9b:1:a00:0:100::', ['10.0.0.1', '0.0.1.0', '0.1.0.0', '0.0.0.0']],
    // Teredo 2001:0::/32: a private client (last 32 bits, inverted) behind a public server…
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', ['65.54.227.120', '10.0.0.1']],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', ['65.54.227.120', '127.0.0.1']],
    // …or a link-local server
    ['2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7', ['169.254.169.254', '8.8.8.8']],
  ])('refuses %s (embeds %j)', (address, embedded) => {
    expect(embeddedIPv4s(address)).toEqual(embedded);
    expect(isInternalAddress(address)).toBe(true);
  });

  it.each([
    ['::ffff:0:8.8.8.8', ['8.8.8.8']],
    ['::ffff:0:5db8:d822', ['93.184.216.34']],
    ['64:ff9b:1::8.8.8.8', ['8.8.8.8']],
    ['64:ff9b:1::5db8:d822', ['93.184.216.34']],
    // Teredo with a public server and a public client (RFC 4380's example server, client 8.8.8.8)
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', ['65.54.227.120', '8.8.8.8']],
  ])('lets %s through (embeds %j)', (address, embedded) => {
    expect(embeddedIPv4s(address)).toEqual(embedded);
    expect(isInternalAddress(address)).toBe(false);
  });

  it('refuses an address of the local-use NAT64 prefix whose layout is ambiguous and one layout is internal', () => {
    // 8.8.8.8 in the /48 layout, but a /96 NAT64 would send it to 0.0.0.0: refused, whatever the network uses.
    expect(isInternalAddress('64:ff9b:1:808:8:800::')).toBe(true);
    // A non-zero "u" octet fits no layout: every layout is judged.
    expect(embeddedIPv4s('64:ff9b:1:0:ff00::808:808')).toEqual(['0.0.0.0', '0.0.0.8', '8.8.8.8']);
    expect(isInternalAddress('64:ff9b:1:0:ff00::808:808')).toBe(true);
  });

  it('leaves other 2001: and 64:ff9b: addresses to the IPv6 ranges', () => {
    expect(embeddedIPv4s('2001:db8::a00:1')).toEqual([]);
    expect(embeddedIPv4s('2001:4860:4860::8888')).toEqual([]);
    expect(embeddedIPv4s('64:ff9b:2::a00:1')).toEqual([]);
    expect(isInternalAddress('2001:4860:4860::8888')).toBe(false);
  });

  it('refuses such targets in URLs and DNS answers, and the allow-list opens them by their IPv4 address', async () => {
    const lookup = fakeDns({ 'siit.example.com': ['::ffff:0:a9fe:a9fe'], 'teredo.example.com': ['2001:0:4136:e378:8000:63bf:f5ff:fffe'] });
    const guard = createOutboundGuard([], { lookup });
    for (const url of ['http://[::ffff:0:7f00:1]/', 'http://[64:ff9b:1::a00:1]/', 'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'https://siit.example.com/', 'https://teredo.example.com/']) {
      expect((await refusal(guard.assertAllowed(url))).relatedInfo).toMatchObject({ reason: 'internal_address' });
    }
    await refusal(guard.resolveTcp('64:ff9b:1::c0a8:101'));
    await expect(guard.assertAllowed('http://[64:ff9b:1::808:808]/')).resolves.toBeDefined();
    await expect(guard.assertAllowed('http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/')).resolves.toBeDefined();
    await expect(createOutboundGuard(['10.0.0.0/8'], { lookup }).assertAllowed('https://teredo.example.com/')).resolves.toBeDefined();
  });
});

describe('assertAllowed', () => {
  const guard = createOutboundGuard([], {
    lookup: fakeDns({
      'hooks.example.com': ['93.184.216.34', '2606:2800:220:1::1'],
      'mixed.example.com': ['93.184.216.34', '10.0.0.7'],
      'rebind.example.com': ['::ffff:169.254.169.254'],
      'intranet.corp': ['192.168.10.20'],
    }),
  });

  it('lets public hosts and addresses through with what they resolved to', async () => {
    const target = await guard.assertAllowed('https://hooks.example.com/in?x=1');
    expect(target.url.hostname).toBe('hooks.example.com');
    expect(target.addresses).toEqual(['93.184.216.34', '2606:2800:220:1::1']);
    await expect(guard.assertAllowed('http://93.184.216.34:8080/')).resolves.toMatchObject({ addresses: ['93.184.216.34'] });
  });

  it.each([
    'http://127.0.0.1/',
    'http://2130706433/', // 127.0.0.1 as one decimal number
    'http://0x7f.1/',
    'http://0.0.0.0:3000/',
    'http://10.1.2.3/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.1.1/',
    'http://[::1]:8080/',
    'http://[::ffff:127.0.0.1]/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://[64:ff9b::a00:1]/',
    'https://intranet.corp/',
    'https://mixed.example.com/', // one private record is enough to refuse
    'https://rebind.example.com/',
  ])('refuses %s', async (url) => {
    const err = await refusal(guard.assertAllowed(url));
    expect(err.relatedInfo).toMatchObject({ reason: 'internal_address' });
  });

  it('refuses other schemes, broken URLs and names that do not exist', async () => {
    expect((await refusal(guard.assertAllowed('ftp://hooks.example.com/'))).relatedInfo).toMatchObject({ reason: 'scheme' });
    expect((await refusal(guard.assertAllowed('file:///etc/passwd'))).relatedInfo).toMatchObject({ reason: 'scheme' });
    expect((await refusal(guard.assertAllowed('not a url'))).relatedInfo).toMatchObject({ reason: 'invalid_url' });
    expect((await refusal(guard.assertAllowed('https://nowhere.invalid/'))).relatedInfo).toMatchObject({ reason: 'unresolvable' });
  });

  it('refuses localhost as the system resolver answers it', async () => {
    await refusal(createOutboundGuard([]).assertAllowed('http://localhost:1234/'));
  });

  it('opens internal targets listed by host name, wildcard, IP or CIDR', async () => {
    const lookup = fakeDns({ 'intranet.corp': ['192.168.10.20'], 'api.svc.corp': ['10.9.8.7'], 'other.corp': ['10.9.8.8'] });
    const open = (entries: string[]) => createOutboundGuard(entries, { lookup });

    await expect(open(['intranet.corp']).assertAllowed('https://intranet.corp/')).resolves.toBeDefined();
    await expect(open(['INTRANET.corp.']).assertAllowed('https://intranet.corp./')).resolves.toBeDefined();
    await expect(open(['*.svc.corp']).assertAllowed('https://api.svc.corp/')).resolves.toBeDefined();
    await refusal(open(['*.svc.corp']).assertAllowed('https://other.corp/'));

    await expect(open(['10.9.8.7']).assertAllowed('https://api.svc.corp/')).resolves.toBeDefined();
    await refusal(open(['10.9.8.7']).assertAllowed('https://other.corp/'));
    await expect(open(['10.9.8.0/24']).assertAllowed('https://other.corp/')).resolves.toBeDefined();
    await refusal(open(['10.9.9.0/24']).assertAllowed('https://other.corp/'));

    // An IPv4 entry covers the IPv4-mapped IPv6 spelling of the same address.
    await expect(open(['127.0.0.1']).assertAllowed('http://[::ffff:127.0.0.1]/')).resolves.toBeDefined();
    await refusal(open(['127.0.0.1']).assertAllowed('http://127.0.0.2/'));
    await expect(open(['127.0.0.0/8']).assertAllowed('http://127.0.0.2/')).resolves.toBeDefined();

    await expect(open(['[::1]']).assertAllowed('http://[::1]/')).resolves.toBeDefined();
    await expect(open(['fd00::/8']).assertAllowed('http://[fd12::5]/')).resolves.toBeDefined();
    await refusal(open(['fd00::/8']).assertAllowed('http://[fe80::5]/'));
  });

  it('rejects malformed allow-list entries at start-up', () => {
    expect(() => createOutboundGuard(['10.0.0.0/33'])).toThrow(/invalid CIDR/);
    expect(() => createOutboundGuard(['intranet/8'])).toThrow(/invalid CIDR/);
    expect(() => createOutboundGuard(['http://host/'])).toThrow(/invalid/);
  });
});

describe('guardedFetch against a real local server', () => {
  let server: Server;
  let base: string;
  const seen: IncomingMessage[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req);
      const { pathname, searchParams } = new URL(req.url ?? '/', 'http://x');
      const redirect = (status: number, to: string) => res.writeHead(status, { location: to }).end();
      if (pathname === '/ok') res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization ?? null }));
      else if (pathname === '/to-private') redirect(302, 'http://10.255.255.1/steal');
      else if (pathname === '/headers') res.end(JSON.stringify({ method: req.method, headers: req.headers }));
      else if (pathname === '/to-headers') redirect(307, '/headers');
      else if (pathname === '/to-ok') redirect(Number(searchParams.get('status') ?? 302), '/ok');
      else if (pathname === '/to-other-origin') redirect(307, `${searchParams.get('origin')}/ok`);
      else if (pathname === '/loop') redirect(302, '/loop');
      else if (pathname === '/slow') setTimeout(() => res.end('late'), 5000).unref();
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('is refused without an allow-list entry and reached with one', async () => {
    const before = seen.length;
    const refused = await refusal(createOutboundGuard([]).guardedFetch(`${base}/ok`));
    expect(seen.length).toBe(before); // refused before connecting
    // The refusal names the setting an operator would change.
    expect(refused.message).toBe('Outbound address not allowed: 127.0.0.1 is a private or internal address (an operator can open it with OUTBOUND_ALLOWLIST)');

    const res = await createOutboundGuard(['127.0.0.1']).guardedFetch(`${base}/ok`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ method: 'GET', auth: null });
  });

  it('follows allowed redirects and refuses a hop to a private address', async () => {
    const guard = createOutboundGuard(['127.0.0.1']);
    const followed = await guard.guardedFetch(`${base}/to-ok`);
    expect(await followed.json()).toMatchObject({ method: 'GET' });

    const err = await refusal(guard.guardedFetch(`${base}/to-private`));
    expect(err.relatedInfo).toMatchObject({ host: '10.255.255.1', reason: 'internal_address' });
  });

  it('rewrites POST to GET on 303 and keeps it on 307', async () => {
    const guard = createOutboundGuard(['127.0.0.1']);
    const post = { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } };
    expect(await (await guard.guardedFetch(`${base}/to-ok?status=303`, post)).json()).toMatchObject({ method: 'GET' });
    expect(await (await guard.guardedFetch(`${base}/to-ok?status=307`, post)).json()).toMatchObject({ method: 'POST' });
  });

  it('drops credentials when a redirect changes origin', async () => {
    const guard = createOutboundGuard(['127.0.0.1', '::1']);
    const other = base.replace('127.0.0.1', 'localhost');
    const res = await guard.guardedFetch(`${base}/to-other-origin?origin=${encodeURIComponent(other)}`, {
      headers: { authorization: 'Bearer secret' },
    });
    expect(await res.json()).toEqual({ method: 'GET', auth: null });
  });

  it('keeps custom headers on a same-origin redirect and drops their values when the redirect changes origin', async () => {
    // A second server, on another port: another origin, whose owner must not learn the first one's key.
    const received: Array<Record<string, string | string[] | undefined>> = [];
    const other = createServer((req, res) => {
      received.push(req.headers);
      res.end(JSON.stringify({ method: req.method }));
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const guard = createOutboundGuard(['127.0.0.1']);
      const headers = {
        'x-api-key': 'key-for-the-first-origin',
        'X-Service-Signature': 'v1=abc',
        authorization: 'Bearer secret',
        cookie: 'session=1',
        accept: 'application/json',
        'content-type': 'application/json',
        'user-agent': 'Formwork-Test',
      };
      const body = '{"a":1}';

      const same = await guard.guardedFetch(`${base}/to-headers`, { method: 'POST', headers, body });
      expect(await same.json()).toMatchObject({
        method: 'POST',
        headers: { 'x-api-key': 'key-for-the-first-origin', 'x-service-signature': 'v1=abc', authorization: 'Bearer secret' },
      });

      const crossed = await guard.guardedFetch(`${base}/to-other-origin?origin=${encodeURIComponent(otherBase)}`, { method: 'POST', headers, body });
      expect(crossed.status).toBe(200);
      expect(await crossed.json()).toEqual({ method: 'POST' }); // 307 keeps the method and body
      expect(received).toHaveLength(1);
      const got = received[0];
      for (const name of ['x-api-key', 'x-service-signature', 'authorization', 'cookie']) expect(got[name]).toBeUndefined();
      expect(JSON.stringify(got)).not.toContain('key-for-the-first-origin');
      expect(got).toMatchObject({ accept: 'application/json', 'content-type': 'application/json', 'user-agent': 'Formwork-Test' });
    } finally {
      other.closeAllConnections();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('stops after three redirects', async () => {
    const err = await refusal(createOutboundGuard(['127.0.0.1']).guardedFetch(`${base}/loop`));
    expect(err.relatedInfo).toMatchObject({ reason: 'too_many_redirects' });
  });

  it('gives up when the target does not answer in time', async () => {
    const guard = createOutboundGuard(['127.0.0.1'], { timeoutMs: 200 });
    await expect(guard.guardedFetch(`${base}/slow`)).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('connects only to the address it checked: a DNS answer that turns private after the check is refused', async () => {
    // A rebinding resolver: public for the check, loopback (this test's server) when connecting.
    let calls = 0;
    const rebinding = async () => [{ address: calls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    const port = (server.address() as AddressInfo).port;
    const before = seen.length;
    const err = await refusal(createOutboundGuard([], { lookup: rebinding }).guardedFetch(`http://rebind.example:${port}/ok`));
    expect(err.relatedInfo).toMatchObject({ host: 'rebind.example', reason: 'internal_address' });
    expect(calls).toBe(2);
    expect(seen.length).toBe(before);

    // The same name, allow-listed, is reached through the address the lookup gave.
    const allowed = await createOutboundGuard(['rebind.example'], { lookup: async () => [{ address: '127.0.0.1', family: 4 }] }).guardedFetch(
      `http://rebind.example:${port}/ok`,
    );
    expect(allowed.status).toBe(200);
  });
});

describe('resolveTcp (database connections)', () => {
  const lookup = fakeDns({
    'db.example.com': ['93.184.216.34'],
    'mixed.example.com': ['93.184.216.35', '10.0.0.8'],
    'db.corp': ['10.1.2.3'],
    'v6only.example.com': ['::1'],
  });

  it('returns the checked address to connect to, never the name', async () => {
    const guard = createOutboundGuard([], { lookup });
    await expect(guard.resolveTcp('db.example.com')).resolves.toBe('93.184.216.34');
    await expect(guard.resolveTcp('DB.Example.com.')).resolves.toBe('93.184.216.34');
    await expect(guard.resolveTcp('8.8.8.8')).resolves.toBe('8.8.8.8');
  });

  it('refuses loopback, private and mixed answers unless the allow-list opens them', async () => {
    const closed = createOutboundGuard([], { lookup });
    expect((await refusal(closed.resolveTcp('127.0.0.1'))).relatedInfo).toMatchObject({ reason: 'internal_address' });
    await refusal(closed.resolveTcp('[::1]'));
    await refusal(closed.resolveTcp('::ffff:10.0.0.1'));
    await refusal(closed.resolveTcp('mixed.example.com'));
    await refusal(closed.resolveTcp('db.corp'));
    await refusal(closed.resolveTcp('v6only.example.com'));
    expect((await refusal(closed.resolveTcp('nowhere.example'))).relatedInfo).toMatchObject({ reason: 'unresolvable' });
    await refusal(closed.resolveTcp(''));

    await expect(createOutboundGuard(['127.0.0.1'], { lookup }).resolveTcp('127.0.0.1')).resolves.toBe('127.0.0.1');
    await expect(createOutboundGuard(['10.0.0.0/8'], { lookup }).resolveTcp('db.corp')).resolves.toBe('10.1.2.3');
    await expect(createOutboundGuard(['db.corp'], { lookup }).resolveTcp('db.corp')).resolves.toBe('10.1.2.3');
    await refusal(createOutboundGuard(['10.1.2.3'], { lookup }).resolveTcp('mixed.example.com'));
  });
});
