import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { startTestApp, type TestApp } from '../../support/app';
import { flowWorkspace, type FlowWorkspace } from '../../support/flow';
import { buildSignup } from '../../support/factories';

/**
 * One policy for every request (docs/errors.md "Validation errors", "Methods and content types",
 * "Refused bodies and the connection").
 */
describe('request policy', () => {
  let app: TestApp;
  let ws: FlowWorkspace;
  const auth = () => ({ authorization: `Bearer ${ws.user.accessToken}` });

  beforeAll(async () => {
    app = await startTestApp({ smtp: false, worker: false, env: { JSON_BODY_LIMIT: '64kb' } });
    ws = await flowWorkspace(app);
  });
  afterAll(() => app.close());

  describe('every problem of a request is listed', () => {
    const problems = (body: any) => body.relatedInfo.errors.map((e: any) => [e.path, e.code]);

    it.each([
      ['sign-up', 'POST', '/api/auth/signup', { email: 'not-an-email', name: 'Ada' }, [['email', 'ERR_USER_003'], ['password', 'ERR_VALID_005']]],
      ['document generation', 'POST', '/api/documents/generate', { format: 'tiff', variables: {} }, [['templateId', 'ERR_VALID_005'], ['format', 'ERR_VALID_001']]],
      ['report runs', 'POST', `/api/reporting/reports/${randomUUID()}/runs`, { version: 0, outputs: [] }, [['version', 'ERR_VALID_001'], ['outputs', 'ERR_VALID_001']]],
      ['Flow gates', 'POST', '/api/flow/gates', { validationMode: 'sometimes' }, [['name', 'ERR_VALID_005'], ['validationMode', 'ERR_VALID_001']]],
      ['templates', 'POST', '/api/templates', { description: 7, surprise: true }, [['name', 'ERR_VALID_005'], ['description', 'ERR_VALID_001'], ['surprise', 'ERR_VALID_001']]],
    ])('%s: both problems, with their codes, the first in code and message', async (_name, method, path, body, expected) => {
      const res = await app.request(method, path, { body, headers: path.includes('signup') ? {} : auth() });
      expect(res.status).toBe(400);
      expect(problems(res.body)).toEqual(expect.arrayContaining(expected));
      const [first] = res.body.relatedInfo.errors;
      expect(res.body).toMatchObject({ code: first.code, message: first.message, relatedInfo: { field: first.path } });
      for (const e of res.body.relatedInfo.errors) expect(e.message).toEqual(expect.any(String));
    });

    it('a missing required field is ERR_VALID_005 wherever it is missing', async () => {
      const login = await app.request('POST', '/api/auth/login', { body: { email: 'a@b.co' } });
      expect([login.status, login.body.code, login.body.relatedInfo.field]).toEqual([400, 'ERR_VALID_005', 'password']);
      const signup = await app.request('POST', '/api/auth/signup', { body: { ...buildSignup(), name: undefined } });
      expect([signup.status, signup.body.code, signup.body.relatedInfo.field]).toEqual([400, 'ERR_VALID_005', 'name']);
    });
  });

  describe('methods', () => {
    it.each([
      ['PUT', '/api/auth/login', ['POST']],
      ['DELETE', '/api/health', ['HEAD', 'GET']],
      ['POST', '/api/templates/some-template', ['HEAD', 'GET', 'PUT', 'DELETE']],
      ['PATCH', '/api/flow/gates', ['HEAD', 'GET', 'POST']],
    ])('%s %s is 405 with Allow', async (method, path, allowed) => {
      const res = await app.request(method, path, { headers: auth(), body: method === 'DELETE' ? undefined : {} });
      expect(res.status).toBe(405);
      expect(res.body).toMatchObject({ statusCode: 405, code: 'ERR_REQ_006', path });
      const allow = (res.headers.get('allow') ?? '').split(/,\s*/);
      expect(allow).toEqual(expect.arrayContaining(allowed));
      expect(allow).not.toContain(method);
      expect(res.body.relatedInfo.allowed).toEqual(allow);
    });

    it('a method no route takes (PROPFIND) is 501 ERR_REQ_008 in the error body, with Allow', async () => {
      const res = await app.request('PROPFIND', '/api/auth/login', { headers: auth() });
      expect(res.status).toBe(501);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.body).toMatchObject({ statusCode: 501, code: 'ERR_REQ_008', path: '/api/auth/login', relatedInfo: { allowed: ['POST'] } });
      expect(res.headers.get('allow')).toBe('POST');
    });

    it('an unknown path stays 404; OPTIONS answers Allow', async () => {
      expect((await app.request('PUT', '/api/no-such-thing', { body: {} })).body.code).toBe('ERR_REQ_003');
      const options = await app.request('OPTIONS', '/api/auth/login');
      expect(options.status).toBe(200);
      expect(options.headers.get('allow')).toBe('POST');
    });
  });

  describe('content types', () => {
    it('a JSON route given text/plain is 415, naming the type received and those accepted', async () => {
      const res = await app.request('POST', '/api/auth/login', { rawBody: 'email=a@b.co', headers: { 'content-type': 'text/plain; charset=utf-8' } });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 'ERR_REQ_007', relatedInfo: { field: 'Content-Type', received: 'text/plain', accepted: ['application/json'] } });
      expect(res.body.message).toContain('text/plain');
      const form = await app.request('PATCH', '/api/users/me', { rawBody: 'name=x', headers: { ...auth(), 'content-type': 'application/x-www-form-urlencoded' } });
      expect([form.status, form.body.code]).toEqual([415, 'ERR_REQ_007']);
    });

    it('a multipart route takes multipart, and names it among the accepted types', async () => {
      const boundary = 'policy-boundary';
      const part = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="t.json"\r\nContent-Type: application/json\r\n\r\n{}\r\n--${boundary}--\r\n`;
      const upload = await app.request('POST', '/api/templates/import', { rawBody: part, headers: { ...auth(), 'content-type': `multipart/form-data; boundary=${boundary}` } });
      expect(upload.status).not.toBe(415);
      const text = await app.request('POST', '/api/templates/import', { rawBody: '{}', headers: { ...auth(), 'content-type': 'text/plain' } });
      expect(text.status).toBe(415);
      expect(text.body.relatedInfo.accepted).toEqual(['application/json', 'multipart/form-data']);
      const stray = await app.request('POST', '/api/flow/gates', { rawBody: part, headers: { ...auth(), 'content-type': `multipart/form-data; boundary=${boundary}` } });
      expect([stray.status, stray.body.code]).toEqual([415, 'ERR_REQ_007']);
    });

    it('a request without a body is not checked', async () => {
      const res = await app.request('POST', `/api/reporting/reports/${randomUUID()}/runs`, { headers: { ...auth(), 'content-type': 'text/plain' } });
      expect(res.status).not.toBe(415);
    });
  });

  describe('a refused body never poisons its connection', () => {
    interface Answer {
      status: number;
      headers: IncomingHttpHeaders;
      body: any;
      reusedSocket: boolean;
    }

    /** One request through `agent`; the body is written in the chunks given. */
    const send = (agent: Agent, method: string, path: string, headers: Record<string, string>, chunks: Buffer[]) =>
      new Promise<Answer>((resolve, reject) => {
        const req = httpRequest(new URL(path, app.url), { method, headers, agent });
        req.on('response', (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text.startsWith('{') ? JSON.parse(text) : text, reusedSocket: req.reusedSocket });
          });
        });
        req.on('error', reject);
        for (const chunk of chunks) req.write(chunk);
        req.end();
      });

    const split = (body: Buffer, size = 16 * 1024) => Array.from({ length: Math.ceil(body.length / size) }, (_, i) => body.subarray(i * size, (i + 1) * size));
    const big = Buffer.from(JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(300 * 1024) }));
    const json = { 'content-type': 'application/json' };
    const nextRequest = (agent: Agent) =>
      send(agent, 'POST', '/api/auth/login', { ...json, 'content-encoding': 'gzip' }, [gzipSync(JSON.stringify({ email: 'a@b.co' }))]);

    it.each([
      ['413 by Content-Length', '/api/auth/login', { ...json, 'content-length': String(big.length) }, split(big), 413],
      ['413 by chunked size', '/api/auth/login', json, split(big), 413],
      ['413 by chunked size, on a Flow submission', '/api/flow/gates/GATE/validate', json, split(Buffer.from(JSON.stringify({ a: 'x'.repeat(1_500_000) }))), 413],
      ['413 by decompressed size (gzip bomb)', '/api/auth/login', { ...json, 'content-encoding': 'gzip' }, split(gzipSync(big)), 413],
      ['415', '/api/auth/login', { 'content-type': 'text/plain' }, split(Buffer.from('x'.repeat(200 * 1024))), 415],
    ])('%s: the next request on the same connection gets its own answer', async (_name, path, headers, chunks, status) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        let target = path;
        if (path.includes('GATE')) {
          const gate = await app.request('POST', '/api/flow/gates', { token: ws.key, body: { name: `Sized ${randomUUID()}` } });
          target = path.replace('GATE', gate.body.id);
        }
        const refused = await send(agent, 'POST', target, { ...headers, authorization: `Bearer ${ws.key}` }, chunks);
        expect(refused.status).toBe(status);
        expect(refused.body.statusCode).toBe(status);
        expect(refused.headers.connection).toBe('keep-alive');
        const next = await nextRequest(agent);
        expect(next.reusedSocket).toBe(true);
        expect([next.status, next.body.code, next.body.relatedInfo?.field]).toEqual([400, 'ERR_VALID_005', 'password']);
      } finally {
        agent.destroy();
      }
    });

    /**
     * A raw connection that sends a 20 MB body in 64 KB writes (waiting for each to drain) until the
     * service's answer and the end of the connection have arrived, as an uploading client does:
     * what it read, and whether the connection ended in an error (a reset).
     */
    const sendUntilAnswered = async (headers: string, stopAfter: number) => {
      const url = new URL(app.url);
      const socket = connect(Number(url.port), url.hostname);
      const received: Buffer[] = [];
      let ended = false;
      socket.on('data', (c: Buffer) => received.push(c));
      socket.on('end', () => {
        ended = true;
        socket.end();
      });
      const closed = new Promise<{ hadError: boolean; error?: string }>((resolve) => {
        let error: string | undefined;
        socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
        socket.on('close', (hadError) => resolve({ hadError, error }));
      });
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      socket.write(`POST /api/auth/login HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n${headers}Connection: keep-alive\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      for (let sent = 0; sent < stopAfter && !ended && !socket.destroyed; sent += chunk.length) {
        if (!socket.write(headers.includes('chunked') ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk)) {
          await new Promise<void>((resolve) => {
            socket.once('drain', resolve);
            socket.once('close', resolve);
          });
        }
      }
      const end = await closed;
      const text = Buffer.concat(received).toString('utf8');
      const [head, body] = text.split('\r\n\r\n');
      return { end, head, body: head.includes('chunked') ? body.split('\r\n')[1] : body };
    };

    it.each([
      ['declared by Content-Length', `Content-Length: ${20 * 1024 * 1024}\r\n`, 64 * 1024],
      ['declared, the client sending on all the while', `Content-Length: ${20 * 1024 * 1024}\r\n`, 20 * 1024 * 1024],
      ['chunked, found larger while drained, the client sending on', 'Transfer-Encoding: chunked\r\n', 20 * 1024 * 1024],
    ])('a rest larger than the drain bound (%s): a complete answer, then the end of the connection, no reset', async (_name, headers, stopAfter) => {
      const { end, head, body } = await sendUntilAnswered(headers, stopAfter);
      expect(end).toEqual({ hadError: false, error: undefined });
      expect(head).toMatch(/^HTTP\/1\.1 413 /);
      expect(JSON.parse(body)).toMatchObject({ statusCode: 413, code: 'ERR_REQ_002' });
      // A new connection works.
      expect((await app.request('GET', '/api/health')).status).toBe(200);
    });
  });
});
