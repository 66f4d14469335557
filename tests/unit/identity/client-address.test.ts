import { loadConfig } from '../../../domain/config';
import { clientAddressKey } from '../../../domain/identity/client-address';

describe('clientAddressKey', () => {
  it('keeps IPv4 addresses', () => {
    expect(clientAddressKey('192.0.2.1')).toBe('192.0.2.1');
    expect(clientAddressKey(' 192.0.2.1 ')).toBe('192.0.2.1');
  });

  it('groups IPv6 by /64 in every spelling', () => {
    const key = '2001:db8:0:1::/64';
    for (const ip of ['2001:db8:0:1::1', '2001:0DB8:0000:0001:ffff:ffff:ffff:ffff', '2001:db8::1:0:0:0:5', '[2001:db8:0:1::9]', 'fe80::1%eth0'.replace('fe80::1', '2001:db8:0:1::1')]) {
      expect(clientAddressKey(ip)).toBe(key);
    }
    expect(clientAddressKey('2001:db8:0:2::1')).toBe('2001:db8:0:2::/64');
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64');
    expect(clientAddressKey('2001:db8:1:2:3:4:192.0.2.1')).toBe('2001:db8:1:2::/64');
  });

  it('treats IPv4-mapped IPv6 as IPv4', () => {
    expect(clientAddressKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientAddressKey('::ffff:c000:201')).toBe('192.0.2.1');
  });

  it('bounds anything that is not an address', () => {
    expect(clientAddressKey('x'.repeat(10_000))).toHaveLength(64);
    expect(clientAddressKey('')).toBe('');
  });
});

describe('TRUST_PROXY', () => {
  const hops = (value?: string) => {
    const c = loadConfig({ TRUST_PROXY: value });
    return { trustProxy: c.trustProxy, proxyHops: c.proxyHops };
  };

  it('takes a number of proxies, and true/false as 1/0 for compatibility', () => {
    expect(hops(undefined)).toEqual({ trustProxy: false, proxyHops: 0 });
    expect(hops('false')).toEqual({ trustProxy: false, proxyHops: 0 });
    expect(hops('0')).toEqual({ trustProxy: false, proxyHops: 0 });
    expect(hops('true')).toEqual({ trustProxy: true, proxyHops: 1 });
    expect(hops('1')).toEqual({ trustProxy: true, proxyHops: 1 });
    expect(hops('3')).toEqual({ trustProxy: true, proxyHops: 3 });
  });

  it('refuses anything else, naming the variable', () => {
    expect(() => loadConfig({ TRUST_PROXY: '-1' })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig({ TRUST_PROXY: 'some' })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig({ TRUST_PROXY: '1.5' })).toThrow(/TRUST_PROXY/);
  });
});
