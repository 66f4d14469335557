import { AppError } from '../errors';
import type { Evaluator } from '../evaluation';
import { jsonParams, type HttpRequestSpec } from './http-request';
import type { ParameterDef, ParameterValue } from './parameters';
import type { CompiledQuery, DatasourceKind } from './query-runner';

/** What compiling needs of a query (a draft or a published version's definition). */
export interface CompilableQuery {
  language: string;
  text: string;
  request?: HttpRequestSpec | null;
  transform?: string | null;
  parameters: ParameterDef[];
}

/**
 * A query with its typed values, in the form its datasource kind runs (the one place query previews,
 * report previews and report runs compile): SQL with bind parameters and an http request with the
 * values substituted are made in the evaluation workers (domain/checks.ts), never on the caller's
 * thread; a `table` query (csv) carries its transform and the values it sees. Secrets are never
 * part of it: the runner adds them. `what` names the query in errors (e.g. "the query of dataset 'x'").
 */
export async function compileQuery(
  evaluator: Evaluator,
  tenant: string,
  kind: DatasourceKind,
  query: CompilableQuery,
  values: Record<string, ParameterValue>,
  what = 'the query',
): Promise<CompiledQuery> {
  switch (kind) {
    case 'postgres':
    case 'mysql':
    case 'sqlite':
      return evaluator.check(tenant, 'compiledQuery', query.text, kind, query.parameters, values);
    case 'http_json':
      if (query.language !== 'http' || !query.request) {
        throw new AppError('ERR_QRY_002', `${what} is not an http query`, { errors: [{ path: 'language', code: 'LANGUAGE_MISMATCH', message: "an http_json datasource runs language 'http'" }] });
      }
      return { text: '', values: [], request: await evaluator.check(tenant, 'compiledHttpRequest', query.request, query.transform ?? null, query.parameters, values) };
    case 'csv':
      return { text: '', values: [], table: { ...(query.transform ? { transform: query.transform } : {}), params: jsonParams(values) } };
    default:
      throw new AppError('ERR_DS_005', `Datasource kind '${kind}' cannot run queries directly`);
  }
}
