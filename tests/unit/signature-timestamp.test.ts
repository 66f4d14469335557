import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timestampToken } from '../../adapters/rendering/pdf-tools/sign';

/**
 * The timestamp authority of a signature (docs/documents.md "Signatures") is reached through the
 * outbound guard when it is used, not only when it was saved: an address the guard blocks, an
 * authority that answers an error or something that is no timestamp each fail with 502 ERR_SIGN_003.
 */
describe('signature timestamps: the outbound guard and the answer', () => {
  const signature = new Uint8Array(256).fill(7);

  it('refuses an address the guard blocks (loopback, metadata) without OUTBOUND_ALLOWLIST', async () => {
    for (const url of ['http://127.0.0.1:9/tsa', 'http://169.254.169.254/latest']) {
      await expect(timestampToken(url, signature, [])).rejects.toMatchObject({ code: 'ERR_SIGN_003', status: 502, relatedInfo: { reason: 'outbound', cause: 'ERR_OUTBOUND_001' } });
    }
  });

  it('an authority that answers an HTTP error, or bytes that are no TimeStampResp, is ERR_SIGN_003', async () => {
    let answer: [number, Buffer] = [500, Buffer.from('down')];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(answer[0], { 'content-type': 'application/timestamp-reply' }).end(answer[1]));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`;
    try {
      await expect(timestampToken(url, signature, ['127.0.0.1'])).rejects.toMatchObject({ code: 'ERR_SIGN_003', relatedInfo: { reason: 'http_status', status: 500 } });
      answer = [200, Buffer.from('not a timestamp')];
      await expect(timestampToken(url, signature, ['127.0.0.1'])).rejects.toMatchObject({ code: 'ERR_SIGN_003', relatedInfo: { reason: 'malformed' } });
      answer = [200, Buffer.alloc(128 * 1024, 0x30)];
      await expect(timestampToken(url, signature, ['127.0.0.1'])).rejects.toMatchObject({ code: 'ERR_SIGN_003', relatedInfo: { reason: 'too_large' } });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
