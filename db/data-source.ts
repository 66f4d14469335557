import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

/**
 * The TypeORM data source. Schema changes only through migrations (run at start-up by every
 * role: TypeORM takes a lock table-wide, so concurrent replicas are safe); never `synchronize`.
 */
function createDataSource(url: string, poolSize = 10): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTransactionMode: 'each',
    synchronize: false,
    // Failed queries are logged by the error renderer; TypeORM's own log would print parameters (secrets).
    logging: false,
    extra: { max: poolSize },
  });
}

export async function openDatabase(url: string, poolSize?: number): Promise<DataSource> {
  const ds = createDataSource(url, poolSize);
  await ds.initialize();
  await ds.runMigrations();
  return ds;
}
