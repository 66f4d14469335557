import { lookup as dnsLookup } from 'node:dns/promises';
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { BlockList, isIP, isIPv4 } from 'node:net';
import { AppError } from '../../domain/errors';

/**
 * The guard in front of every request the service makes to a URL a user chose (webhooks,
 * delivery channels, custom render APIs, template images): without it, such a URL could reach
 * the metadata service, the database or anything else on the private network (SSRF).
 * OUTBOUND_ALLOWLIST lets an operator open specific internal hosts or ranges again.
 */

export interface ResolvedTarget {
  url: URL;
  /** Every address the host resolved to; all of them passed. */
  addresses: string[];
}

export interface GuardedRequestInit extends RequestInit {
  /** Overall budget for all hops, headers and body included (default: the guard's). */
  timeoutMs?: number;
  /** Refuse (ERR_OUTBOUND_001, reason `redirect_other_host`) a redirect to another host (http_json datasources). */
  sameHostRedirects?: boolean;
  /** false: a 3xx answer is returned as it is, never followed (chat and webhook channels treat it as a failure). */
  followRedirects?: boolean;
}

export interface OutboundGuard {
  /** Throws AppError ERR_OUTBOUND_001 unless `url` is http(s) and every address of its host may be reached. */
  assertAllowed(url: string | URL): Promise<ResolvedTarget>;
  /** fetch, with each redirect hop checked again. Bodies must be replayable (string, bytes) for 307/308. */
  guardedFetch(url: string | URL, init?: GuardedRequestInit): Promise<Response>;
  /**
   * For TCP connections (databases): resolves `host`, checks every address like assertAllowed and
   * returns one checked address to connect to, so the socket never resolves the name again (DNS
   * rebinding); TLS keeps the host name as `servername`. Throws AppError ERR_OUTBOUND_001.
   */
  resolveTcp(host: string): Promise<string>;
}

export type Lookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export interface OutboundGuardOptions {
  /** Replaces dns.lookup (tests). */
  lookup?: Lookup;
  timeoutMs?: number;
  maxRedirects?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_REDIRECTS = 3;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** The only request headers a redirect to another origin keeps: nothing in them is a secret. */
const CROSS_ORIGIN_HEADERS = new Set(['accept', 'accept-encoding', 'accept-language', 'content-type', 'user-agent']);

/** Addresses that are not on the public internet. */
const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", including the unspecified 0.0.0.0 that reaches localhost
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, where cloud metadata services live
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking, used by some networks internally
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the 255.255.255.255 broadcast
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed by some stacks)
  ['ff00::', 8], // multicast
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv6');
}

/**
 * `address` without its zone id (`fe80::1%eth0` → `fe80::1`): what `replace(/%.*$/, '')` gave,
 * without that pattern's retry from every `%` (quadratic on a long run of them).
 */
function withoutZone(address: string): string {
  let from = 0;
  for (let i = address.length - 1; i >= 0; i -= 1) {
    const c = address.charCodeAt(i);
    if (c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029) {
      from = i + 1;
      break;
    }
  }
  const zone = address.indexOf('%', from);
  return zone < 0 ? address : address.slice(0, zone);
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/**
 * The trailing dotted quad of an IPv6 text form (`::ffff:1.2.3.4` → `1.2.3.4`), read backwards:
 * what `/(\d+\.\d+\.\d+\.\d+)$/` found, without its quadratic retries over a long run of digits.
 */
function trailingDottedQuad(ip: string): string | undefined {
  let i = ip.length;
  for (let group = 0; group < 4; group += 1) {
    if (group > 0) {
      if (ip.charCodeAt(i - 1) !== 0x2e) return undefined;
      i -= 1;
    }
    const end = i;
    while (i > 0 && isDigit(ip.charCodeAt(i - 1))) i -= 1;
    if (i === end) return undefined;
  }
  return ip.slice(i);
}

/** Parses an IPv6 text form (with `::`, a zone id, or a trailing dotted quad) into 16 bytes. */
function ipv6Bytes(text: string): number[] | undefined {
  let ip = withoutZone(text);
  const quad = trailingDottedQuad(ip);
  if (quad) {
    if (!isIPv4(quad)) return undefined;
    const [a, b, c, d] = quad.split('.').map(Number);
    ip = `${ip.slice(0, -quad.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = ip.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const fill = 8 - head.length - tail.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return undefined;
  const groups = [...head, ...Array<number>(fill).fill(0), ...tail];
  if (groups.some((g) => Number.isNaN(g) || g < 0 || g > 0xffff)) return undefined;
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/**
 * Where an RFC 6052 address inside the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) carries its
 * IPv4 address: the operator picks the prefix length (/48, /56, /64 or /96), so the address alone does
 * not say which. Each layout names its four bytes and the bytes it requires to be zero (bit 64..71,
 * the "u" octet, is always zero; the suffix after the IPv4 bytes too).
 */
const LOCAL_NAT64_LAYOUTS: ReadonlyArray<{ at: number[]; zero: number[] }> = [
  { at: [6, 7, 9, 10], zero: [8, 11, 12, 13, 14, 15] }, // /48
  { at: [7, 9, 10, 11], zero: [8, 12, 13, 14, 15] }, // /56
  { at: [9, 10, 11, 12], zero: [8, 13, 14, 15] }, // /64
  { at: [12, 13, 14, 15], zero: [8] }, // /96
];

/**
 * The IPv4 addresses an IPv6 address stands for, if any: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible (::a.b.c.d), IPv4-translated for SIIT (::ffff:0:a.b.c.d, RFC 2765/6145), NAT64
 * (64:ff9b::a.b.c.d, and the local-use 64:ff9b:1::/48 of RFC 8215), 6to4 (2002:aabb:ccdd::) and
 * Teredo (2001:0::/32: the server's address in bits 32..63, the client's, inverted, in the last 32).
 * Each can carry a private IPv4 address past a check that only looks at IPv6 ranges.
 *
 * In 64:ff9b:1::/48 every RFC 6052 layout the address is consistent with is returned (all four
 * when none is): the guard refuses the address when any of them is internal, whatever length the
 * network's NAT64 uses. The common /96 form (64:ff9b:1::a.b.c.d) is consistent with one layout only.
 */
export function embeddedIPv4s(ipv6: string): string[] {
  const b = ipv6Bytes(ipv6);
  if (!b) return [];
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (at: number) => b.slice(at, at + 4).join('.');
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return [v4(12)];
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return [v4(12)];
  if (zero(0, 12)) return [v4(12)];
  const nat64 = b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b;
  if (nat64 && zero(4, 12)) return [v4(12)];
  if (nat64 && b[4] === 0x00 && b[5] === 0x01) {
    const consistent = LOCAL_NAT64_LAYOUTS.filter((layout) => layout.zero.every((i) => b[i] === 0));
    const layouts = consistent.length > 0 ? consistent : LOCAL_NAT64_LAYOUTS;
    return [...new Set(layouts.map((layout) => layout.at.map((i) => b[i]).join('.')))];
  }
  if (b[0] === 0x20 && b[1] === 0x02) return [v4(2)];
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) {
    return [v4(4), b.slice(12, 16).map((x) => x ^ 0xff).join('.')];
  }
  return [];
}

/** The first IPv4 address `ipv6` embeds (embeddedIPv4s), if any. */
export function embeddedIPv4(ipv6: string): string | undefined {
  return embeddedIPv4s(ipv6)[0];
}

/** The forms an address is judged by: itself, and every IPv4 address it embeds. */
function forms(address: string): Array<{ ip: string; family: 'ipv4' | 'ipv6' }> {
  const ip = withoutZone(address);
  if (isIP(ip) === 4) return [{ ip, family: 'ipv4' }];
  return [{ ip, family: 'ipv6' }, ...embeddedIPv4s(ip).map((inner) => ({ ip: inner, family: 'ipv4' as const }))];
}

/** True for loopback, private, link-local, CGNAT, unique-local, unspecified, multicast and reserved addresses. */
export function isInternalAddress(address: string): boolean {
  return forms(address).some(({ ip, family }) => INTERNAL.check(ip, family));
}

interface AllowList {
  hosts: Set<string>;
  suffixes: string[];
  addresses: BlockList;
}

/** Accepts `host.name`, `*.example.com`, `10.0.0.5`, `[fd00::1]`, `10.0.0.0/8`, `fd00::/8`. */
function parseAllowList(entries: string[]): AllowList {
  const list: AllowList = { hosts: new Set(), suffixes: [], addresses: new BlockList() };
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
    if (!entry) continue;
    const [ip, prefixText, ...rest] = entry.split('/');
    const family = isIP(ip);
    if (prefixText !== undefined) {
      const prefix = Number(prefixText);
      const max = family === 4 ? 32 : 128;
      if (!family || rest.length || !/^\d+$/.test(prefixText) || prefix > max) {
        throw new TypeError(`OUTBOUND_ALLOWLIST: invalid CIDR ${JSON.stringify(raw)}`);
      }
      list.addresses.addSubnet(ip, prefix, family === 4 ? 'ipv4' : 'ipv6');
    } else if (family) {
      list.addresses.addAddress(ip, family === 4 ? 'ipv4' : 'ipv6');
    } else if (/^\*\.([a-z0-9-]+\.)*[a-z0-9-]+$/.test(entry)) {
      list.suffixes.push(entry.slice(1));
    } else if (/^([a-z0-9_-]+\.)*[a-z0-9_-]+\.?$/.test(entry)) {
      list.hosts.add(entry.replace(/\.$/, ''));
    } else {
      throw new TypeError(`OUTBOUND_ALLOWLIST: invalid entry ${JSON.stringify(raw)}`);
    }
  }
  return list;
}

/**
 * The refusal of an internal address names the setting that opens it, so whoever reads it (the
 * person saving a target, a delivery's attempt record) knows what an operator would change.
 */
function internalMessage(host: string): string {
  return `Outbound address not allowed: ${host} is a private or internal address (an operator can open it with OUTBOUND_ALLOWLIST)`;
}

function refuse(message: string, host: string, reason: string): AppError {
  return new AppError('ERR_OUTBOUND_001', message, { host, reason });
}

const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export function createOutboundGuard(allowlist: string[], options: OutboundGuardOptions = {}): OutboundGuard {
  const allowed = parseAllowList(allowlist);
  const lookup = options.lookup ?? systemLookup;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;

  const hostAllowed = (host: string) =>
    allowed.hosts.has(host) || allowed.suffixes.some((suffix) => host.endsWith(suffix));
  const addressAllowed = (address: string) =>
    forms(address).some(({ ip, family }) => allowed.addresses.check(ip, family));

  async function assertAllowed(input: string | URL): Promise<ResolvedTarget> {
    let url: URL;
    try {
      url = new URL(String(input));
    } catch {
      throw refuse('Outbound URL is not a valid URL', '', 'invalid_url');
    }
    const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw refuse(`Outbound URL must use http or https, not ${url.protocol}`, host, 'scheme');
    }
    if (!host) throw refuse('Outbound URL has no host', host, 'invalid_url');

    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : (await lookup(host)).map((a) => a.address);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A name that does not exist is the caller's mistake; other DNS failures may pass.
      if (code === 'ENOTFOUND' || code === 'ENODATA') throw refuse(`Host ${host} does not resolve`, host, 'unresolvable');
      throw err;
    }
    if (addresses.length === 0) throw refuse(`Host ${host} does not resolve`, host, 'unresolvable');
    if (hostAllowed(host)) return { url, addresses };
    // Every record must pass: a name answering with one public and one private address
    // would otherwise let the connection pick the private one.
    for (const address of addresses) {
      if (isInternalAddress(address) && !addressAllowed(address)) {
        throw refuse(internalMessage(host), host, 'internal_address');
      }
    }
    return { url, addresses };
  }

  /*
   * DNS rebinding: a check that resolves the name and a connection that resolves it again leave a
   * gap a hostile DNS server could use (public answer first, private one next). So the connection
   * itself resolves through the guard: undici's connect-time lookup returns only addresses that
   * pass, and the socket goes to exactly those.
   */
  async function connectAddresses(hostname: string): Promise<Array<{ address: string; family: number }>> {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    const records = await lookup(host);
    if (hostAllowed(host)) return records;
    for (const { address } of records) {
      if (isInternalAddress(address) && !addressAllowed(address)) {
        throw refuse(internalMessage(host), host, 'internal_address');
      }
    }
    return records;
  }
  const dispatcher = new Agent({
    connect: {
      lookup: (hostname, opts, callback) => {
        connectAddresses(hostname).then(
          (records) =>
            opts.all ? callback(null, records as never) : callback(null, records[0].address, records[0].family),
          (err) => callback(err, '', 0),
        );
      },
    },
  });

  async function guardedFetch(input: string | URL, init: GuardedRequestInit = {}): Promise<Response> {
    const { timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS, sameHostRedirects = false, followRedirects = true, ...rest } = init;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = rest.signal ? AbortSignal.any([rest.signal, timeout]) : timeout;
    let method = (rest.method ?? 'GET').toUpperCase();
    let body = rest.body;
    const headers = new Headers(rest.headers);
    let current = (await assertAllowed(input)).url;

    for (let hop = 0; ; hop += 1) {
      let response: Response;
      try {
        const init = { ...rest, method, body, headers, signal, redirect: 'manual', dispatcher } as unknown as UndiciRequestInit;
        response = (await undiciFetch(current, init)) as unknown as Response;
      } catch (err) {
        // A refusal at connect time (the lookup above) arrives wrapped in fetch's TypeError.
        const cause = (err as { cause?: unknown }).cause;
        throw cause instanceof AppError ? cause : err;
      }
      const location = response.headers.get('location');
      if (!followRedirects || !REDIRECTS.has(response.status) || !location) return response;
      await response.body?.cancel();
      if (hop >= maxRedirects) {
        throw refuse(`More than ${maxRedirects} redirects`, current.hostname, 'too_many_redirects');
      }
      const target = new URL(location, current);
      if (sameHostRedirects && target.host !== current.host) {
        throw refuse(`Redirect to another host (${target.hostname}) refused`, target.hostname, 'redirect_other_host');
      }
      const next = (await assertAllowed(target)).url;
      // Same rewriting as browsers: 303, and 301/302 after a POST, continue as a bodiless GET.
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
        headers.delete('content-type');
        headers.delete('content-length');
      }
      // Credentials meant for one origin must not be handed to the next: on a change of origin
      // (host, port or scheme) only the content negotiation headers go on; custom header values
      // (API keys, tokens, signatures) stay with the origin they were set for.
      if (next.origin !== current.origin) {
        const names: string[] = [];
        headers.forEach((_value, name) => names.push(name));
        for (const name of names) if (!CROSS_ORIGIN_HEADERS.has(name)) headers.delete(name);
      }
      current = next;
    }
  }

  async function resolveTcp(hostname: string): Promise<string> {
    const host = hostname.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
    if (!host) throw refuse('Outbound host is empty', host, 'invalid_url');
    if (isIP(host)) {
      if (isInternalAddress(host) && !addressAllowed(host) && !hostAllowed(host)) {
        throw refuse(internalMessage(host), host, 'internal_address');
      }
      return host;
    }
    let records: Array<{ address: string; family: number }>;
    try {
      records = await connectAddresses(host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') throw refuse(`Host ${host} does not resolve`, host, 'unresolvable');
      throw err;
    }
    if (records.length === 0) throw refuse(`Host ${host} does not resolve`, host, 'unresolvable');
    return records[0].address;
  }

  return { assertAllowed, guardedFetch, resolveTcp };
}

/** A user-chosen target as a save names it: a URL (HTTP) or a host (TCP), and the body field it came from. */
export type SavedTarget = { field: string; url: string } | { field: string; host: string };

/**
 * Checks a target when it is saved (report file-share channels, datasources; Flow gates the same
 * way): an address the guard refuses is 400 ERR_OUTBOUND_001 whose message starts with the field
 * and names OUTBOUND_ALLOWLIST, `relatedInfo.field` the field. A host that does not resolve now,
 * or a DNS failure, is not refused here: every use checks the target again before it connects.
 */
export async function assertSavedTarget(guard: OutboundGuard, target: SavedTarget): Promise<void> {
  try {
    if ('url' in target) await guard.assertAllowed(target.url);
    else await guard.resolveTcp(target.host);
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'ERR_OUTBOUND_001') return;
    if (err.relatedInfo?.reason === 'unresolvable') return;
    throw new AppError('ERR_OUTBOUND_001', `${target.field}: ${err.message}`, { ...err.relatedInfo, field: target.field });
  }
}
