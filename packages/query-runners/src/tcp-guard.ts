/**
 * What a runner asks of the outbound guard before it opens a TCP connection: the server passes its
 * OUTBOUND_ALLOWLIST guard (adapters/http/outbound.ts, whose OutboundGuard has this method), the
 * agent one that allows every host of its own network.
 */
export interface TcpGuard {
  /** Resolves `host`, checks every address, returns one to connect to (the socket never resolves the name again). Throws AppError ERR_OUTBOUND_001. */
  resolveTcp(host: string): Promise<string>;
}
