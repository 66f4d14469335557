import { startTestApp, type TestApp } from '../../support/app';
import { signUp } from '../../support/factories';

// A real 1×1 PNG, and minimal JPEG / WebP headers (only the content check looks at them).
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.alloc(32)]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([40, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(32)]);
const MAX_BYTES = 4096;

describe('users: avatar upload (spec "Users (JWT only)", POST/DELETE /api/users/me/avatar)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { AVATAR_MAX_BYTES: String(MAX_BYTES) } });
  });
  afterAll(() => app.close());

  const avatarKey = async (userId: string): Promise<string | null> =>
    (await app.services.db.query(`SELECT avatar_key FROM users WHERE id = $1`, [userId]))[0].avatar_key;

  async function download(url: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
    const res = await fetch(url);
    return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
  }

  it('stores a PNG and serves it through a signed, expiring link, also from GET /me', async () => {
    const user = await signUp(app);
    const res = await app.request('POST', '/api/users/me/avatar', { token: user.accessToken, body: { imageData: PNG.toString('base64') } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.any(String), avatarUrl: expect.stringMatching(/[?&]expires=\d+.*signature=[0-9a-f]{64}/) });
    expect(await download(res.body.avatarUrl)).toEqual({ status: 200, type: 'image/png', bytes: PNG });

    const me = await app.request('GET', '/api/users/me', { token: user.accessToken });
    expect(me.body.profilePictureUrl).toEqual(expect.stringContaining(`/api/files/avatars/${user.id}/`));
    expect((await download(me.body.profilePictureUrl)).bytes).toEqual(PNG);
    // Login and refresh answer the same user object, picture included.
    const login = await app.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
    expect((await download(login.body.user.profilePictureUrl)).bytes).toEqual(PNG);
    const refreshed = await app.request('POST', '/api/auth/refresh', { body: { refreshToken: login.body.refreshToken } });
    expect(refreshed.body.user.profilePictureUrl).toEqual(expect.stringContaining(`/api/files/avatars/${user.id}/`));
    // The link is signed: editing it breaks it.
    const forged = me.body.profilePictureUrl.replace(/signature=([0-9a-f])/, (_: string, c: string) => `signature=${c === '0' ? '1' : '0'}`);
    expect(forged).not.toBe(me.body.profilePictureUrl);
    expect((await fetch(forged)).status).toBe(403);
  });

  it('decides the format by content: a PNG claimed as JPEG is stored as PNG', async () => {
    const user = await signUp(app);
    const res = await app.request('POST', '/api/users/me/avatar', { token: user.accessToken, body: { imageData: `data:image/jpeg;base64,${PNG.toString('base64')}` } });
    expect(res.status).toBe(200);
    expect(await avatarKey(user.id)).toMatch(/\.png$/);
    expect((await download(res.body.avatarUrl)).type).toBe('image/png');
  });

  it('accepts JPEG and WebP', async () => {
    const user = await signUp(app);
    for (const [bytes, type] of [[JPEG, 'image/jpeg'], [WEBP, 'image/webp']] as const) {
      const res = await app.request('POST', '/api/users/me/avatar', { token: user.accessToken, body: { imageData: `data:application/octet-stream;base64,${bytes.toString('base64')}` } });
      expect(res.status).toBe(200);
      expect(await download(res.body.avatarUrl)).toEqual({ status: 200, type, bytes });
    }
  });

  it('refuses a text file behind an image data-URL prefix, non-base64 and other formats with 400 ERR_USER_008', async () => {
    const user = await signUp(app);
    const bodies = [
      `data:image/png;base64,${Buffer.from('I am a text file, honestly.').toString('base64')}`,
      // An SVG is a document that can run script: refused whatever it claims to be.
      `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>').toString('base64')}`,
      `data:image/png;base64,${Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>').toString('base64')}`,
      'not base64 at all!',
      Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;').toString('base64'),
    ];
    for (const imageData of bodies) {
      const res = await app.request('POST', '/api/users/me/avatar', { token: user.accessToken, body: { imageData } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'ERR_USER_008', relatedInfo: { field: 'imageData' } });
    }
    const missing = await app.request('POST', '/api/users/me/avatar', { token: user.accessToken, body: {} });
    expect(missing.body).toMatchObject({ code: 'ERR_VALID_005', relatedInfo: { field: 'imageData' } });
    expect(await avatarKey(user.id)).toBeNull();
  });

  it('refuses an image over AVATAR_MAX_BYTES with 413 ERR_USER_009', async () => {
    const user = await signUp(app);
    const big = Buffer.concat([PNG, Buffer.alloc(MAX_BYTES + 1 - PNG.length)]);
    const res = await app.request('POST', '/api/users/me/avatar', { token: user.accessToken, body: { imageData: big.toString('base64') } });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'ERR_USER_009', message: 'Image is larger than 4 KB, the most a profile picture may be', relatedInfo: { maxBytes: MAX_BYTES } });
    expect(await avatarKey(user.id)).toBeNull();
    // What the dashboard shows before an upload: the formats and this limit.
    const limits = await app.request('GET', '/api/users/me/avatar/requirements', { token: user.accessToken });
    expect(limits.body).toEqual({ formats: ['image/jpeg', 'image/png', 'image/webp'], maxBytes: MAX_BYTES });
    const exact = Buffer.concat([PNG, Buffer.alloc(MAX_BYTES - PNG.length)]);
    expect((await app.request('POST', '/api/users/me/avatar', { token: user.accessToken, body: { imageData: exact.toString('base64') } })).status).toBe(200);
  });

  it('answers the picture itself at GET /api/users/me/avatar (this origin, whatever the storage), as an image that runs nothing', async () => {
    const user = await signUp(app);
    const none = await app.request('GET', '/api/users/me/avatar', { token: user.accessToken });
    expect([none.status, none.body.code]).toEqual([404, 'ERR_USER_010']);
    await app.request('POST', '/api/users/me/avatar', { token: user.accessToken, body: { imageData: `data:image/jpeg;base64,${PNG.toString('base64')}` } });
    const res = await fetch(`${app.url}/api/users/me/avatar`, { headers: { authorization: `Bearer ${user.accessToken}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(Buffer.from(await res.arrayBuffer())).toEqual(PNG);
    // Only the signed-in user's own: no credential, none.
    expect((await fetch(`${app.url}/api/users/me/avatar`)).status).toBe(401);
    await app.request('DELETE', '/api/users/me/avatar', { token: user.accessToken });
    expect((await app.request('GET', '/api/users/me/avatar', { token: user.accessToken })).body.code).toBe('ERR_USER_010');
  });

  it('deletes the replaced file, and the file itself on DELETE', async () => {
    const user = await signUp(app);
    const { storage } = app.services;
    await app.request('POST', '/api/users/me/avatar', { token: user.accessToken, body: { imageData: PNG.toString('base64') } });
    const firstKey = (await avatarKey(user.id))!;
    const second = await app.request('POST', '/api/users/me/avatar', { token: user.accessToken, body: { imageData: JPEG.toString('base64') } });
    const secondKey = (await avatarKey(user.id))!;
    expect(secondKey).not.toBe(firstKey);
    expect(await storage.exists(firstKey)).toBe(false);
    expect(await storage.exists(secondKey)).toBe(true);

    const del = await app.request('DELETE', '/api/users/me/avatar', { token: user.accessToken });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: expect.any(String) });
    expect(await storage.exists(secondKey)).toBe(false);
    expect(await avatarKey(user.id)).toBeNull();
    expect((await app.request('GET', '/api/users/me', { token: user.accessToken })).body.profilePictureUrl).toBeNull();
    expect((await download(second.body.avatarUrl)).status).toBe(404);
    // Deleting again is harmless.
    expect((await app.request('DELETE', '/api/users/me/avatar', { token: user.accessToken })).status).toBe(200);
  });
});
