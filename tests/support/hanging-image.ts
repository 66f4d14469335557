import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TemplateBody } from './templates';
import { waitFor } from './wait';

/** One image request the server holds: answered by `release`, or dropped by the browser (`closed`). */
export interface HeldRequest {
  url: string;
  /** The browser gave up on it (its page closed, its render was cancelled). */
  closed: boolean;
  /** Answers with a 1×1 PNG, so the page finishes loading. */
  release(): void;
}

export interface HangingImageServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** `127.0.0.1:<port>`, the allow-list entry (IMAGE_HOST_ALLOWLIST) documents load from it with (the page's CSP needs the port). */
  host: string;
  /** Every request so far, oldest first. */
  held: HeldRequest[];
  /** Waits for the n-th request (1-based): the render that loads it is in progress until it is answered. */
  request(n?: number): Promise<HeldRequest>;
  stop(): Promise<void>;
}

/** A one-page PDF template whose `logo` variable is an image URL: pointed at this server, its render waits. */
export const HANGING_IMAGE_TEMPLATE: Partial<TemplateBody> = {
  outputFormats: ['pdf'],
  schema: {
    pageSize: 'A4',
    sections: [
      {
        id: 'main',
        components: [
          { id: 'title', type: 'heading', props: { text: 'Dear {{customer}}', level: 1 } },
          { id: 'logo', type: 'image', props: { src: '{{logo}}', alt: 'no logo' } },
        ],
      },
    ],
  },
  variables: [
    { name: 'customer', type: 'string', required: true },
    { name: 'logo', type: 'string', required: false },
  ],
  constants: {},
  calculatedVariables: [],
};

const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/**
 * An image host that answers nothing until told to: a document with an image from it stays in
 * Chromium's `setContent` (which waits for the page's images) for as long as the test wants, which
 * makes "a render in progress" exact and observable, and shows when the browser abandons the page.
 */
export async function startHangingImageServer(): Promise<HangingImageServer> {
  const held: HeldRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const entry: HeldRequest = {
      url: req.url ?? '',
      closed: false,
      release() {
        if (!res.writableEnded) res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG_1X1.length }).end(PNG_1X1);
      },
    };
    res.on('close', () => {
      if (!res.writableEnded) entry.closed = true;
    });
    held.push(entry);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    held,
    request: (n = 1) => waitFor(() => held[n - 1], { timeoutMs: 30_000, what: `image request ${n}` }),
    async stop() {
      held.forEach((h) => h.release());
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
