import { createHash } from 'node:crypto';
import { createPool, createTypeParserPreset, type DatabasePool, type Interceptor } from 'slonik';
import type { Logger } from 'pino';

/**
 * Validates every row of a typed query (`sql.type(schema)`) so a drifting database fails
 * loudly instead of leaking wrong shapes into the service.
 */
const resultParser: Interceptor = {
  name: 'result-parser',
  transformRowAsync: async (ctx, _query, row) => {
    const parser = ctx.resultParser;
    if (!parser) return row;
    const result = await parser['~standard'].validate(row);
    if (result.issues) {
      const first = result.issues[0];
      throw new Error(
        `Row does not match its schema at ${first?.path?.map((p) => (typeof p === 'object' ? p.key : p)).join('.')}: ${first?.message}`,
      );
    }
    return result.value as typeof row;
  },
};

/** A timestamptz (as PostgreSQL prints it, or as JSON renders it) the way rows give it: ISO text, UTC, milliseconds. */
export const timestamptzText = (value: string) => new Date(value).toISOString();

const isoTimestamp = (value: string) => new Date(value.includes('T') ? value : value.replace(' ', 'T')).toISOString();

/** Statement text -> its prepared-statement name (the hot statements: a bounded set of texts). */
const preparedNames = new Map<string, string>();
const PREPARED_NAMES_MAX = 1000;

/**
 * Hot statements are named prepared statements (`sql.prepared(name, schema)`): each connection parses
 * and plans them once instead of on every execution (PostgreSQL's plan cache picks a generic plan
 * after five runs when it is no worse). The pg driver refuses a name reused for another text on the
 * same connection, and a statement built from fragments can have variants, so the name given in the
 * code is only a prefix: this suffixes a hash of the exact text (one prepared statement per variant).
 * Past `PREPARED_NAMES_MAX` distinct texts (a statement that is not fixed text after all) a statement
 * runs unnamed, as every other statement does.
 */
const preparedStatementNames: Interceptor = {
  name: 'prepared-statement-names',
  transformQuery: (_ctx, query) => {
    if (!query.name) return query;
    let name = preparedNames.get(query.sql);
    if (name === undefined) {
      if (preparedNames.size >= PREPARED_NAMES_MAX) return { sql: query.sql, values: query.values };
      name = `${query.name.slice(0, 40)}_${createHash('sha1').update(query.sql).digest('hex').slice(0, 16)}`;
      preparedNames.set(query.sql, name);
    }
    return { name, sql: query.sql, values: query.values };
  },
};

/** Timestamps as ISO strings, int8 and numeric as numbers. */
const typeParsers = [
  ...createTypeParserPreset().filter((p) => !['timestamp', 'timestamptz', 'int8', 'numeric', 'date'].includes(p.name)),
  { name: 'timestamptz', parse: timestamptzText },
  { name: 'timestamp', parse: (v: string) => isoTimestamp(v + 'Z') },
  { name: 'int8', parse: (v: string) => Number.parseInt(v, 10) },
  { name: 'numeric', parse: (v: string) => Number.parseFloat(v) },
  { name: 'date', parse: (v: string) => v },
];

export type Db = DatabasePool;

export async function createDb(opts: { url: string; maxConnections?: number; log?: Logger }): Promise<Db> {
  const pool = await createPool(opts.url, {
    interceptors: [preparedStatementNames, resultParser],
    typeParsers,
    maximumPoolSize: opts.maxConnections ?? 10,
    connectionTimeout: 10_000,
    statementTimeout: 60_000,
    idleTimeout: 10_000,
    // The default sends DISCARD ALL each time a connection goes back to the pool: one extra round
    // trip per query, and it would drop the connection's prepared statements (see
    // preparedStatementNames). Our code never changes session state outside a transaction (no SET,
    // no temp tables); the only session state is those statements, kept on purpose.
    resetConnection: async () => {},
  });
  // Slonik also emits integrity errors (foreign key, unique, ...) on the pool. Without a listener Node turns
  // that emit into ERR_UNHANDLED_ERROR, which replaces the typed error the caller should receive. The caller
  // handles (and logs) the error it gets, so the listener keeps the typed error intact and notes it at debug only.
  pool.on('error', (err: unknown) => opts.log?.debug({ err }, 'database pool error'));
  return pool;
}
