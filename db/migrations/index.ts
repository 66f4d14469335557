import { Identity1732200000000 } from './1732200000000-identity';

/** In order. A migration, once on main, never changes: add a new one. */
export const MIGRATIONS = [Identity1732200000000];
