import { base32Decode, hotp, totp } from '../../support/totp';

// The helper that checks the service must itself be right: RFC test vectors.
describe('test TOTP helper (RFC 4226 / RFC 6238 vectors)', () => {
  const key = Buffer.from('12345678901234567890', 'ascii');

  it('matches the RFC 4226 appendix D HOTP values', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expect(expected.map((_, i) => hotp(key, i))).toEqual(expected);
  });

  it('matches the RFC 6238 appendix B SHA-1 values (last 6 digits)', () => {
    const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'; // base32 of the ASCII key above
    expect(base32Decode(secret)).toEqual(key);
    expect(totp(secret, 59_000)).toBe('287082');
    expect(totp(secret, 1_111_111_109_000)).toBe('081804');
    expect(totp(secret, 1_234_567_890_000)).toBe('005924');
    expect(totp(secret, 2_000_000_000_000)).toBe('279037');
  });
});
