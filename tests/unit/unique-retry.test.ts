import { insertWithFreshCandidates, violatedIndex } from '../../db/sql';

/** A unique violation as pg reports it (TypeORM's QueryFailedError keeps it as `driverError`). */
const violation = (constraint: string) => Object.assign(new Error(`duplicate key value violates unique constraint "${constraint}"`), { code: '23505', constraint });

describe('insertWithFreshCandidates (db/sql.ts): slug and short-id retries', () => {
  it('tries again with a fresh candidate on a violation of a named index, and answers what the insert answers', async () => {
    const taken = new Set(['acme', 'acme-x1']);
    let slug = 'acme';
    const fresh = ['acme-x1', 'acme-x2'];
    const tried: string[] = [];
    const result = await insertWithFreshCandidates(4, { projects_slug_key: () => void (slug = fresh.shift()!) }, async () => {
      tried.push(slug);
      if (taken.has(slug)) throw violation('projects_slug_key');
      return { slug };
    });
    expect(result).toEqual({ slug: 'acme-x2' });
    expect(tried).toEqual(['acme', 'acme-x1', 'acme-x2']);
  });

  it('throws the last violation once the attempts are spent, and any other error at once', async () => {
    let calls = 0;
    const always = insertWithFreshCandidates(3, { t_slug_key: () => undefined }, async () => {
      calls += 1;
      throw violation('t_slug_key');
    });
    await expect(always).rejects.toMatchObject({ constraint: 't_slug_key' });
    expect(calls).toBe(3);

    calls = 0;
    const name = insertWithFreshCandidates(3, { t_slug_key: () => undefined }, async () => {
      calls += 1;
      throw violation('t_name_key');
    });
    await expect(name).rejects.toMatchObject({ constraint: 't_name_key' });
    expect(calls).toBe(1);

    const other = insertWithFreshCandidates(3, { t_slug_key: () => undefined }, async () => {
      throw new Error('connection lost');
    });
    await expect(other).rejects.toThrow('connection lost');
  });

  it('reads the violated index from pg errors and from TypeORM wrappers', () => {
    expect(violatedIndex(violation('a_key'))).toBe('a_key');
    expect(violatedIndex({ driverError: { code: '23505', constraint: 'b_key' } })).toBe('b_key');
    expect(violatedIndex(new Error('other'))).toBeUndefined();
  });
});
