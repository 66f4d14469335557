import { createServer, type Server, type Socket } from 'node:net';

/**
 * A hostile PostgreSQL server for tests (a tenant chooses the host of a datasource): it speaks just
 * enough of the wire protocol (v3) to let a client in without a password, answer simple queries,
 * and answer every extended-protocol Execute (the runner's cursor) with rows of its choosing:
 * `rowBytes` bytes of text per row, `rows` of them, whatever the client asked for (or, `silent`,
 * nothing at all after the handshake). `bytesSent` says how much of that left the server before
 * the client hung up.
 */
export interface HostilePostgres {
  port: number;
  /** DataRow bytes written to sockets so far. */
  bytesSent(): number;
  /** Connections the server has accepted. */
  connections(): number;
  close(): Promise<void>;
}

export interface HostilePostgresOptions {
  rowBytes: number;
  rows: number;
  /** Also answer the simple-protocol `SELECT version()` and catalogue queries with these rows. */
  simpleRows?: boolean;
  /** Let the client in, then never answer anything again (a server that goes silent). */
  silent?: boolean;
}

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const cstring = (s: string) => Buffer.from(`${s}\0`, 'utf8');
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const int16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};

const ready = () => message('Z', Buffer.from('I'));
const complete = (tag: string) => message('C', cstring(tag));

/** One text column named `v` (type text, OID 25). */
function rowDescription(): Buffer {
  return message('T', Buffer.concat([int16(1), cstring('v'), int32(0), int16(0), int32(25), int16(-1), int32(-1), int16(0)]));
}

export async function startHostilePostgres(options: HostilePostgresOptions): Promise<HostilePostgres> {
  let sent = 0;
  let accepted = 0;
  const sockets = new Set<Socket>();
  // One row's message, built once: the server repeats it.
  const value = Buffer.alloc(options.rowBytes, 0x61);
  const dataRow = message('D', Buffer.concat([int16(1), int32(value.length), value]));

  /** Writes the rows, waiting for the socket to drain, until done or the client hangs up. */
  async function sendRows(socket: Socket): Promise<void> {
    for (let i = 0; i < options.rows && !socket.destroyed; i += 1) {
      sent += dataRow.length;
      if (!socket.write(dataRow)) {
        await new Promise<void>((resolve) => {
          socket.once('drain', resolve);
          socket.once('close', resolve);
        });
      }
    }
  }

  const server: Server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    let started = false;
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return;
          const length = buffer.readUInt32BE(0);
          if (buffer.length < length) return;
          const code = buffer.readUInt32BE(4);
          buffer = buffer.subarray(length);
          if (code === 80877103) {
            // SSLRequest: no TLS here.
            socket.write('N');
            continue;
          }
          started = true;
          socket.write(Buffer.concat([message('R', int32(0)), message('S', Buffer.concat([cstring('server_version'), cstring('16.0')])), message('K', Buffer.concat([int32(1), int32(2)])), ready()]));
          continue;
        }
        if (options.silent || buffer.length < 5) return;
        const type = String.fromCharCode(buffer[0]);
        const length = buffer.readUInt32BE(1);
        if (buffer.length < length + 1) return;
        const body = buffer.subarray(5, length + 1);
        buffer = buffer.subarray(length + 1);
        if (type === 'X') {
          socket.end();
          return;
        }
        if (type === 'Q') {
          const text = body.toString('utf8').replace(/\0$/, '');
          if (options.simpleRows && /^\s*select/i.test(text)) {
            socket.write(rowDescription());
            void sendRows(socket).then(() => !socket.destroyed && socket.write(Buffer.concat([complete('SELECT'), ready()])));
            return;
          }
          socket.write(Buffer.concat([complete(text.split(/\s/)[0].toUpperCase() || 'SELECT'), ready()]));
        } else if (type === 'P') socket.write(message('1', Buffer.alloc(0)));
        else if (type === 'B') socket.write(message('2', Buffer.alloc(0)));
        else if (type === 'D') socket.write(rowDescription());
        else if (type === 'E') {
          void sendRows(socket).then(() => !socket.destroyed && socket.write(complete('SELECT')));
          return;
        } else if (type === 'S') socket.write(ready());
        else if (type === 'C') socket.write(message('3', Buffer.alloc(0)));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    bytesSent: () => sent,
    connections: () => accepted,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
