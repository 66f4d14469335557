import type { TestApp } from './app';

/** The `config` of a postgres datasource pointing at the test app's own database (tables the test makes there). */
export const testDatabaseConfig = (app: TestApp) => ({ host: '127.0.0.1', port: 5432, database: new URL(app.env.DATABASE_URL).pathname.slice(1), user: 'postgres', ssl: 'disable' });

/** A postgres datasource over the test app's own database, created through the API (admin `token`). */
export async function createTestDatasource(app: TestApp, token: string, name: string): Promise<{ id: string; shortId: string }> {
  const ds = await app.request('POST', '/api/reporting/datasources', { token, body: { name, kind: 'postgres', config: testDatabaseConfig(app), secrets: { password: 'unused' } } });
  if (ds.status !== 201) throw new Error(`datasource not created: ${ds.status} ${ds.text}`);
  return ds.body;
}
