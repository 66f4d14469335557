import { startTestApp, type TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';

interface Key {
  id: string;
  name: string;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
  lastUsedAt: string | null;
}

/** GET /api/api-keys: pagination, sorting and the isActive filter (spec, Limits §2). */
describe('API key list', () => {
  let app: TestApp;
  let user: SignedUpUser;
  let keys: Key[];
  beforeAll(async () => {
    app = await startTestApp();
    user = await signUp(app, { verified: true });
    keys = [];
    for (const name of ['delta', 'Alpha', 'echo', 'bravo', 'Charlie']) keys.push(await createKey(app, user.accessToken, { name }));
    // Distinct, known times (as if used and edited on different days), set directly so the order
    // under test does not hang on how many milliseconds apart the requests above happened to run.
    const at = (day: number) => new Date(Date.UTC(2026, 0, day)).toISOString();
    const times: Array<[number, number | null, number]> = [[1, 4, 9], [2, null, 8], [3, 2, 7], [4, 5, 6], [5, null, 10]];
    for (const [i, [created, used, updated]] of times.entries()) {
      await app.services.db.query(`UPDATE api_keys SET created_at = $2, last_used_at = $3, updated_at = $4 WHERE id = $1`, [
        keys[i].id,
        at(created),
        used === null ? null : at(used),
        at(updated),
      ]);
    }
    await app.request('POST', `/api/api-keys/${keys[1].id}/revoke`, { token: user.accessToken });
    await app.request('POST', `/api/api-keys/${keys[3].id}/revoke`, { token: user.accessToken });
    // Revoking stamps updated_at; put the known values back.
    await app.services.db.query(`UPDATE api_keys SET updated_at = $2 WHERE id = $1`, [keys[1].id, at(8)]);
    await app.services.db.query(`UPDATE api_keys SET updated_at = $2 WHERE id = $1`, [keys[3].id, at(6)]);
  });
  afterAll(() => app.close());

  const list = (query = '') => app.request('GET', `/api/api-keys${query}`, { token: user.accessToken });
  const names = (body: { data: Key[] }) => body.data.map((k) => k.name);

  it('defaults to page 1, limit 20, newest first, with the full key objects', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['Charlie', 'bravo', 'echo', 'Alpha', 'delta']);
    expect(res.body.meta).toEqual({ total: 5, page: 1, limit: 20, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    expect(Object.keys(res.body.data[0]).sort()).toEqual(
      ['createdAt', 'expiresAt', 'id', 'inactiveReason', 'isActive', 'keyPrefix', 'keyType', 'lastUsedAt', 'name', 'permissions', 'teamId', 'updatedAt'].sort(),
    );
    expect(res.text).not.toMatch(/fm_live_[0-9A-Za-z]{13}/);
  });

  it('pages with limit and reports the meta of each page', async () => {
    const pages = [];
    for (const page of [1, 2, 3, 4]) pages.push((await list(`?limit=2&page=${page}`)).body);
    expect(pages.map((p) => p.meta)).toEqual([
      { total: 5, page: 1, limit: 2, totalPages: 3, hasNextPage: true, hasPreviousPage: false },
      { total: 5, page: 2, limit: 2, totalPages: 3, hasNextPage: true, hasPreviousPage: true },
      { total: 5, page: 3, limit: 2, totalPages: 3, hasNextPage: false, hasPreviousPage: true },
      { total: 5, page: 4, limit: 2, totalPages: 3, hasNextPage: false, hasPreviousPage: true },
    ]);
    expect(pages.map(names)).toEqual([['Charlie', 'bravo'], ['echo', 'Alpha'], ['delta'], []]);
  });

  it.each([
    ['?sortBy=createdAt&sortOrder=asc', ['delta', 'Alpha', 'echo', 'bravo', 'Charlie']],
    ['?sortBy=name', ['echo', 'delta', 'Charlie', 'bravo', 'Alpha']],
    ['?sortBy=name&sortOrder=asc', ['Alpha', 'bravo', 'Charlie', 'delta', 'echo']],
    ['?sortBy=updatedAt&sortOrder=desc', ['Charlie', 'delta', 'Alpha', 'echo', 'bravo']],
    ['?sortBy=updatedAt&sortOrder=ASC', ['bravo', 'echo', 'Alpha', 'delta', 'Charlie']],
    // Keys never used come last in both directions.
    ['?sortBy=lastUsedAt', ['bravo', 'delta', 'echo', 'Charlie', 'Alpha']],
    ['?sortBy=lastUsedAt&sortOrder=asc', ['echo', 'delta', 'bravo', 'Charlie', 'Alpha']],
  ])('sorts %s', async (query, expected) => {
    const res = await list(query);
    expect(res.status).toBe(200);
    const got = names(res.body);
    // Alpha and Charlie both have no lastUsedAt: their relative order is the id tie-break, not asserted.
    if (query.includes('lastUsedAt')) {
      expect(got.slice(0, 3)).toEqual(expected.slice(0, 3));
      expect(got.slice(3).sort()).toEqual(['Alpha', 'Charlie']);
    } else {
      expect(got).toEqual(expected);
    }
  });

  it('filters on isActive, and counts the filtered set in meta', async () => {
    const inactive = await list('?isActive=false');
    expect(names(inactive.body)).toEqual(['bravo', 'Alpha']);
    expect(inactive.body.data.every((k: Key) => !k.isActive)).toBe(true);
    expect(inactive.body.meta).toMatchObject({ total: 2, totalPages: 1 });
    const active = await list('?isActive=true&limit=1');
    expect(names(active.body)).toEqual(['Charlie']);
    expect(active.body.meta).toEqual({ total: 3, page: 1, limit: 1, totalPages: 3, hasNextPage: true, hasPreviousPage: false });
  });

  it.each([
    ['?limit=101', 'limit'],
    ['?limit=0', 'limit'],
    ['?page=0', 'page'],
    ['?page=two', 'page'],
    ['?sortBy=keyHash', 'sortBy'],
    ['?sortOrder=up', 'sortOrder'],
    ['?isActive=maybe', 'isActive'],
    ['?limit=5&limit=6', 'limit'],
    ['?offset=10', 'offset'],
  ])('refuses %s with 400 ERR_VALID_001 on %s', async (query, field) => {
    const res = await list(query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'ERR_VALID_001', relatedInfo: { field } });
  });

  it('accepts the largest limit, 100', async () => {
    const res = await list('?limit=100');
    expect(res.body.meta).toMatchObject({ limit: 100, total: 5 });
  });
});
