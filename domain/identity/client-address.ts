import { isIPv6 } from 'node:net';

/**
 * The key anonymous rate limits count a client under. An IPv4 address is itself; an IPv6 address
 * is its /64 network (`2001:db8:1:2::/64`), because one subscriber usually holds a whole /64 and
 * could otherwise take a fresh address for every request. IPv4-mapped IPv6 (`::ffff:192.0.2.1`,
 * how a dual-stack socket reports IPv4 clients) is the IPv4 address. Anything else (no address,
 * a proxy's odd value) is kept as given, cut to 64 characters.
 */
export function clientAddressKey(ip: string): string {
  let a = ip.trim();
  if (a.startsWith('[') && a.includes(']')) a = a.slice(1, a.indexOf(']'));
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  if (!isIPv6(a)) return a.slice(0, 64);
  const g = ipv6Groups(a);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return [g[6] >> 8, g[6] & 0xff, g[7] >> 8, g[7] & 0xff].join('.');
  }
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted IPv4 part converted). */
function ipv6Groups(address: string): number[] {
  const parse = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((h) => {
          if (!h.includes('.')) return [parseInt(h, 16)];
          const [a, b, c, d] = h.split('.').map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head, tail] = address.split('::');
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
