import { buffer as readAll } from 'node:stream/consumers';
import type { ArtefactStorage } from '../../adapters/storage/storage';

/** Binary enough to catch any text decoding on the way through an adapter. */
export const BINARY_PDF = Buffer.from('%PDF-1.7\n% binary: \x00\x01\x02\xff\n%%EOF\n', 'latin1');

/**
 * What every ArtefactStorage adapter must do, run against each real adapter: put, read back
 * with its content type and size, report, delete (twice), and refuse a missing key with ERR_FILE_001.
 */
export async function expectStorageRoundTrip(storage: ArtefactStorage, key = 'documents/team-1/job-1.pdf'): Promise<void> {
  expect(await storage.exists(key)).toBe(false);
  await storage.put(key, BINARY_PDF, 'application/pdf');
  expect(await storage.exists(key)).toBe(true);

  const object = await storage.get(key);
  expect(object.contentType).toBe('application/pdf');
  expect(object.size).toBe(BINARY_PDF.length);
  expect(await readAll(object.body)).toEqual(BINARY_PDF);

  await storage.delete(key);
  expect(await storage.exists(key)).toBe(false);
  await expect(storage.delete(key)).resolves.toBeUndefined();
  await expect(storage.get(key)).rejects.toMatchObject({ code: 'ERR_FILE_001' });
}
