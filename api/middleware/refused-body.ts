import type { Context } from 'koa';

/**
 * How much of a refused body's rest is read and thrown away so that its connection can carry the
 * next request (docs/errors.md "Refused bodies and the connection"). Nothing read is kept.
 */
const REFUSED_BODY_DRAIN_BYTES = 8 * 1024 * 1024;

/**
 * Called as an error is answered: a request body that was not read whole (refused for its size
 * while it streamed, refused by its Content-Length or content type before a byte was read, a
 * request refused before its body was parsed) is read on to its end and discarded, up to
 * REFUSED_BODY_DRAIN_BYTES on the wire, so the connection carries the client's next request. The
 * answer does not wait for it: a client still sending gets its 413 at once. A rest declared
 * (Content-Length) larger than the bound is answered with `Connection: close`; the bytes that still
 * arrive while the answer is written are read and discarded too, so the client meets a clean close
 * after a complete answer rather than a reset. A rest found larger than the bound while it is
 * drained (chunked, no Content-Length) closes the connection once the answer is written.
 * Compressed bodies are drained as they arrive (not decompressed).
 */
export function settleRefusedBody(ctx: Context): void {
  const req = ctx.req;
  if (req.complete || req.destroyed) return;
  // Whatever was reading the body (a parser stopped at its limit, a decompressor) lets go of it.
  req.unpipe();
  req.removeAllListeners('data');
  const declared = Number(req.headers['content-length']);
  const closing = Number.isFinite(declared) && declared > REFUSED_BODY_DRAIN_BYTES;
  if (closing) ctx.set('Connection', 'close');
  let seen = 0;
  let over = false;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (closing || over || seen <= REFUSED_BODY_DRAIN_BYTES) return;
    over = true;
    const close = () => req.socket.destroy();
    if (ctx.res.writableFinished) close();
    else ctx.res.once('finish', close).once('close', close);
  });
  req.resume();
}
