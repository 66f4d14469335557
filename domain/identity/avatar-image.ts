import { AppError } from '../errors';

/**
 * Avatar uploads arrive as base64, optionally as a data URL. The MIME type a data URL claims is
 * ignored: the format is decided by the file's own magic bytes, so a text file labelled
 * `image/png` is refused and a PNG labelled `image/jpeg` is stored as the PNG it is.
 */

export type AvatarFormat = { contentType: 'image/jpeg' | 'image/png' | 'image/webp'; extension: 'jpg' | 'png' | 'webp' };

export interface AvatarImage extends AvatarFormat {
  bytes: Buffer;
}

const DATA_URL_PREFIX = /^data:[^,;]*(;[^,;]*)*;base64,/i;
// Standard and URL-safe alphabets; padding only at the end.
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The image format of `bytes` judged by content alone, or undefined when it is none we accept. */
export function sniffImageFormat(bytes: Buffer): AvatarFormat | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { contentType: 'image/jpeg', extension: 'jpg' };
  if (bytes.length >= PNG.length && bytes.subarray(0, PNG.length).equals(PNG)) return { contentType: 'image/png', extension: 'png' };
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') {
    return { contentType: 'image/webp', extension: 'webp' };
  }
  return undefined;
}

/** 2097152 → "2 MB", 4096 → "4 KB", 1500 → "1500 bytes" (binary units, as file managers count). */
function readableSize(bytes: number): string {
  const round = (n: number) => String(Math.round(n * 10) / 10);
  if (bytes >= 1024 * 1024) return `${round(bytes / (1024 * 1024))} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

/**
 * Decodes and checks an uploaded avatar. Throws ERR_USER_009 when it would exceed `maxBytes`
 * decoded (judged from the text length first, so an oversized upload is never decoded) and
 * ERR_USER_008 when it is not base64 or not a JPEG, PNG or WebP image.
 */
export function parseAvatarImage(imageData: string, maxBytes: number): AvatarImage {
  const base64 = imageData.trim().replace(DATA_URL_PREFIX, '').replace(/\s+/g, '');
  if (base64.length === 0 || !BASE64.test(base64) || base64.length % 4 === 1) {
    throw new AppError('ERR_USER_008', 'imageData must be base64 (optionally a data URL) of a JPEG, PNG or WebP image', { field: 'imageData' });
  }
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  const decodedLength = Math.floor((base64.length * 3) / 4) - padding;
  if (decodedLength > maxBytes) {
    throw new AppError('ERR_USER_009', `Image is larger than ${readableSize(maxBytes)}, the most a profile picture may be`, { field: 'imageData', maxBytes });
  }
  const bytes = Buffer.from(base64, 'base64');
  const format = sniffImageFormat(bytes);
  if (!format) throw new AppError('ERR_USER_008', undefined, { field: 'imageData' });
  return { bytes, ...format };
}
