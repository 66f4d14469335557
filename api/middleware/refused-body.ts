import type { Context } from 'koa';

/**
 * How much of a refused body's rest is read and thrown away so that its connection can carry the
 * next request (docs/errors.md "Refused bodies and the connection"). Nothing read is kept.
 */
const REFUSED_BODY_DRAIN_BYTES = 8 * 1024 * 1024;

/**
 * Before an error is answered: a request body that was not read whole (refused for its size while
 * it streamed, refused by its Content-Length or content type before a byte was read, a request
 * refused before its body was parsed) is read to its end and discarded, up to
 * REFUSED_BODY_DRAIN_BYTES on the wire, so the answer is written on a connection that is ready for
 * the client's next request. A rest declared (Content-Length) or found to be larger than that, or a
 * client that goes away, is answered with `Connection: close`; the bytes that still arrive while
 * the answer is written are read and discarded too, so the client meets a clean close after a
 * complete answer rather than a reset. Compressed bodies are drained as they arrive (not
 * decompressed).
 */
export async function settleRefusedBody(ctx: Context): Promise<void> {
  const req = ctx.req;
  if (req.complete || req.destroyed) return;
  // Whatever was reading the body (a parser stopped at its limit, a decompressor) lets go of it.
  req.unpipe();
  req.removeAllListeners('data');
  const declared = Number(req.headers['content-length']);
  const drained = Number.isFinite(declared) && declared > REFUSED_BODY_DRAIN_BYTES ? false : await drain(ctx);
  if (!drained) {
    ctx.set('Connection', 'close');
    // Keep reading (and discarding) while the answer is written and Node closes the socket.
    req.on('data', () => undefined);
    req.resume();
  }
}

function drain(ctx: Context): Promise<boolean> {
  const req = ctx.req;
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (ok: boolean) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onClose);
      if (!ok) req.pause();
      resolve(ok);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > REFUSED_BODY_DRAIN_BYTES) finish(false);
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(req.complete);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.once('error', onClose);
    req.resume();
  });
}
