import { AppError } from '../../../domain/errors';
import { parseAvatarImage, sniffImageFormat } from '../../../domain/identity/avatar-image';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([36, 0, 0, 0]), Buffer.from('WEBPVP8 ')]);

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? err.code : 'not an AppError';
  }
  return undefined;
}

describe('avatar images are judged by content', () => {
  it('recognises JPEG, PNG and WebP by their magic bytes', () => {
    expect(sniffImageFormat(JPEG)?.contentType).toBe('image/jpeg');
    expect(sniffImageFormat(PNG)?.contentType).toBe('image/png');
    expect(sniffImageFormat(WEBP)?.contentType).toBe('image/webp');
    expect(sniffImageFormat(Buffer.from('GIF89a......'))).toBeUndefined();
    expect(sniffImageFormat(Buffer.from('RIFF\0\0\0\0WAVE'))).toBeUndefined();
  });

  it('accepts plain base64 and data URLs, ignoring the type the data URL claims', () => {
    expect(parseAvatarImage(PNG.toString('base64'), 1000).contentType).toBe('image/png');
    const claimedJpeg = parseAvatarImage(`data:image/jpeg;base64,${PNG.toString('base64')}`, 1000);
    expect(claimedJpeg).toMatchObject({ contentType: 'image/png', extension: 'png' });
    expect(claimedJpeg.bytes).toEqual(PNG);
    // Line-wrapped base64 (as MIME tools produce) is fine.
    const wrapped = WEBP.toString('base64').replace(/(.{8})/g, '$1\n');
    expect(parseAvatarImage(wrapped, 1000).contentType).toBe('image/webp');
  });

  it('refuses text behind an image prefix, non-base64 and empty data with ERR_USER_008', () => {
    expect(codeOf(() => parseAvatarImage(`data:image/png;base64,${Buffer.from('hello, world').toString('base64')}`, 1000))).toBe('ERR_USER_008');
    expect(codeOf(() => parseAvatarImage('this is not base64!', 1000))).toBe('ERR_USER_008');
    expect(codeOf(() => parseAvatarImage('data:image/png;base64,', 1000))).toBe('ERR_USER_008');
  });

  it('refuses images over the limit with ERR_USER_009 and accepts one exactly at it', () => {
    const big = Buffer.concat([PNG, Buffer.alloc(100 - PNG.length)]);
    expect(parseAvatarImage(big.toString('base64'), 100).bytes.length).toBe(100);
    expect(codeOf(() => parseAvatarImage(big.toString('base64'), 99))).toBe('ERR_USER_009');
  });

  it('says the limit in words a person reads', () => {
    const message = (maxBytes: number) => {
      try {
        parseAvatarImage(Buffer.alloc(maxBytes + 4, 1).toString('base64'), maxBytes);
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect([message(2 * 1024 * 1024), message(1536 * 1024), message(4096), message(1500)]).toEqual([
      'Image is larger than 2 MB, the most a profile picture may be',
      'Image is larger than 1.5 MB, the most a profile picture may be',
      'Image is larger than 4 KB, the most a profile picture may be',
      'Image is larger than 1500 bytes, the most a profile picture may be',
    ]);
  });
});
