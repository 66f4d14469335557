import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * Hostile database servers for tests (docs/security.md "Reporting datasources: secrets tied to their
 * target"): they speak just enough of a wire protocol to ask for the password, and record every byte
 * the client sends.
 */

export interface Hostile {
  port: number;
  /** Everything the runner wrote, once its socket closed (the password too, decrypted, when it was RSA-encrypted). */
  received: () => Promise<string>;
  close: () => Promise<void>;
}

/** A server whose each connection is handled by `speak`; `received` resolves when the first connection closes. */
export async function hostile(speak: (socket: Socket, seen: Buffer[]) => void): Promise<Hostile> {
  let resolve!: (text: string) => void;
  const done = new Promise<string>((r) => (resolve = r));
  const server: Server = createServer((socket) => {
    const seen: Buffer[] = [];
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Buffer.concat(seen).toString('latin1')));
    speak(socket, seen);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    received: () => done,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** PostgreSQL: after the startup message, AuthenticationCleartextPassword ('R', code 3). */
export function postgresAskingCleartext(socket: Socket, seen: Buffer[]) {
  let asked = false;
  socket.on('data', (chunk) => {
    seen.push(chunk);
    if (asked) return void socket.end(); // an answer to the request: the password message
    asked = true;
    const r = Buffer.alloc(9);
    r.write('R', 0);
    r.writeInt32BE(8, 1);
    r.writeInt32BE(3, 5);
    socket.write(r);
  });
}
