import type { Socket } from 'node:net';
import type { Context } from 'koa';

/**
 * How much of a refused body's rest is read and thrown away so that its connection can carry the
 * next request (docs/errors.md "Refused bodies and the connection"). Nothing read is kept.
 */
const REFUSED_BODY_DRAIN_BYTES = 8 * 1024 * 1024;
/**
 * A connection closed after a refusal goes on reading what the client still sends (its lingering
 * close) until the client closes, for this long and this many bytes at most (nginx lingers 30 s).
 */
const LINGER_MS = 30_000;
const LINGER_BYTES = 64 * 1024 * 1024;

/**
 * Called as an error is answered: a request body that was not read whole (refused for its size
 * while it streamed, refused by its Content-Length or content type before a byte was read, a
 * request refused before its body was parsed) is read on to its end and discarded, up to
 * REFUSED_BODY_DRAIN_BYTES on the wire, so the connection carries the client's next request. The
 * answer does not wait for it: a client still sending gets its 413 at once. A compressed body is
 * drained as it arrives (not decompressed).
 *
 * A rest larger than the bound (declared by Content-Length, or found so while it is drained,
 * chunked) ends the connection with a lingering close, as nginx and Apache end one: once the
 * answer is written the service closes its side (the client reads a complete answer, then the
 * end), and goes on reading and discarding what the client still sends until the client closes
 * too, for LINGER_MS and LINGER_BYTES at most. Destroying the socket at once instead would leave the client's
 * bytes unread, and the TCP reset that follows can reach the client before it read the answer
 * (ECONNRESET instead of a 413). `Connection: close` is not sent for it: Node's server destroys a
 * socket as soon as such an answer is written.
 */
export function settleRefusedBody(ctx: Context): void {
  const req = ctx.req;
  if (req.complete || req.destroyed) return;
  // Whatever was reading the body (a parser stopped at its limit, a decompressor) lets go of it.
  req.unpipe();
  req.removeAllListeners('data');
  // The client hanging up mid-body ends the request with an error nobody else listens to.
  req.on('error', () => undefined);
  let lingering = false;
  const closeAfterAnswer = () => {
    if (lingering) return;
    lingering = true;
    const close = () => lingerAndClose(req.socket);
    if (ctx.res.writableFinished) close();
    else ctx.res.once('finish', close);
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) req.socket.destroy();
    });
  };
  // Node's server gives a connection whose answer is written 5 s of silence (its keep-alive
  // timeout), then destroys it: a client that pauses mid-body (a loaded machine) would meet a
  // reset before reading its answer. While the refused body is still arriving it gets LINGER_MS.
  const patient = () => {
    if (!req.complete && !req.socket.destroyed) req.socket.setTimeout(LINGER_MS);
  };
  if (ctx.res.writableFinished) patient();
  else ctx.res.once('finish', patient);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > REFUSED_BODY_DRAIN_BYTES) closeAfterAnswer();
  let seen = 0;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > REFUSED_BODY_DRAIN_BYTES) closeAfterAnswer();
    if (seen > REFUSED_BODY_DRAIN_BYTES + LINGER_BYTES) req.socket.destroy();
  });
  req.resume();
}

/** Closes the service's side of `socket` now, reads on (the request's 'data' discards it) until the client closes, then destroys it. */
function lingerAndClose(socket: Socket): void {
  if (socket.destroyed) return;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.end();
}
