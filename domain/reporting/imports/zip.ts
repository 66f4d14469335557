import { fromBuffer, type Entry, type ZipFile } from 'yauzl';
import { AppError } from '../../errors';

/**
 * The entries of an uploaded zip, read from memory with the import caps (docs/reporting.md "Limits"): at most
 * `maxEntries` entries and `maxBytes` unpacked in all. The declared sizes are checked before any
 * entry is inflated, and the bytes are counted again while inflating (yauzl also refuses an entry
 * whose inflated size differs from the declared one), so a zip bomb stops at the cap.
 */

export interface ZipCaps {
  maxEntries: number;
  maxBytes: number;
}

export const isZip = (bytes: Buffer) => bytes.length >= 4 && bytes.readUInt32LE(0) === 0x04034b50;

const tooLarge = (message: string, caps: ZipCaps) => new AppError('ERR_IMP_004', message, { maxEntries: caps.maxEntries, maxUnpackedBytes: caps.maxBytes });
const invalid = (message: string) => new AppError('ERR_IMP_003', undefined, { errors: [{ path: '$', message: `not a readable zip: ${message.slice(0, 200)}` }] });

function open(bytes: Buffer): Promise<ZipFile> {
  return new Promise((resolve, reject) => fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (err, zip) => (err ? reject(invalid(err.message)) : resolve(zip))));
}

function readEntry(zip: ZipFile, entry: Entry, budget: { left: number }, caps: ZipCaps): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err) return reject(invalid(err.message));
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        budget.left -= chunk.length;
        if (budget.left < 0) {
          stream.destroy();
          reject(tooLarge(`The zip unpacks to more than ${caps.maxBytes} bytes`, caps));
          return;
        }
        chunks.push(chunk);
      });
      stream.on('error', (e: Error) => reject(budget.left < 0 ? tooLarge(`The zip unpacks to more than ${caps.maxBytes} bytes`, caps) : invalid(e.message)));
      stream.on('end', () => resolve(Buffer.concat(chunks)));
    });
  });
}

/** Every file entry (directories left out) with its bytes; `wanted` chooses which entries are inflated at all. */
export async function unzipEntries(bytes: Buffer, caps: ZipCaps, wanted: (name: string) => boolean): Promise<Array<{ name: string; bytes: Buffer }>> {
  const zip = await open(bytes);
  {
    if (zip.entryCount > caps.maxEntries) throw tooLarge(`The zip has more than ${caps.maxEntries} entries`, caps);
    const budget = { left: caps.maxBytes };
    const out: Array<{ name: string; bytes: Buffer }> = [];
    let declared = 0;
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (e: Error) => reject(e instanceof AppError ? e : invalid(e.message)));
      zip.on('end', () => resolve());
      zip.on('entry', (entry: Entry) => {
        declared += entry.uncompressedSize;
        if (declared > caps.maxBytes) return reject(tooLarge(`The zip unpacks to more than ${caps.maxBytes} bytes`, caps));
        if (entry.fileName.endsWith('/') || !wanted(entry.fileName)) return zip.readEntry();
        readEntry(zip, entry, budget, caps).then((b) => {
          out.push({ name: entry.fileName, bytes: b });
          zip.readEntry();
        }, reject);
      });
      zip.readEntry();
    });
    return out;
  }
}
