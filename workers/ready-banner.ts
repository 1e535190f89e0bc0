import type { Logger } from 'pino';
import type { Db } from '../activities/store/db';
import { createTenant, mintKey } from '../activities/store/keys';
import { SCOPES } from '../schema/auth';

/** Hosts that only this machine can reach: the only place a development key may be minted. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * A local development key with every runtime scope, for `npm start -- --dev-key` (or SVC_DEV_KEY=1).
 * Refused (undefined, with a warning) unless the service listens on loopback; the production entries
 * (`npm run api`, `npm run worker`) never call this.
 */
export async function mintDevKey(opts: {
  db: Db;
  host: string;
  log: Logger;
}): Promise<{ apiKey: string; tenantId: string } | undefined> {
  if (!isLoopbackHost(opts.host)) {
    opts.log.warn(
      { host: opts.host },
      'dev key refused: the service is not bound to loopback (HOST); mint a key with npm run -s keys -- create',
    );
    return undefined;
  }
  const tenantId = await createTenant(opts.db, { name: 'local development' });
  const key = await mintKey(opts.db, {
    tenantId,
    kind: 'runtime',
    scopes: [...SCOPES],
    name: 'dev key (npm start --dev-key)',
  });
  return { apiKey: key.apiKey, tenantId };
}

export interface ReadyInfo {
  apiUrl: string;
  temporalAddress: string;
  temporalUiUrl?: string;
  namespace: string;
  database: string;
  startupMs: number;
  devKey?: { apiKey: string; tenantId: string };
}

/** The Temporal UI's workflow list filtered to one tenant (search attribute SvcTenant). */
export function temporalUiTenantLink(uiUrl: string, namespace: string, tenantId: string): string {
  return `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(`SvcTenant="${tenantId}"`)}`;
}

export const FIRST_KEY_COMMAND =
  'npm run -s keys -- create --scopes runtime:chat,runtime:models,runtime:spaces,runtime:workspaces,runtime:records';

/** What a person needs once the service is up: where everything is and how to get a first key. */
export function readyBanner(info: ReadyInfo): string {
  const tenant = info.devKey?.tenantId ?? '<tenant id>';
  const rows: Array<[string, string]> = [
    ['API', info.apiUrl],
    ['OpenAPI', `${info.apiUrl}/openapi.json`],
    ['Temporal', info.temporalAddress],
    ['Temporal UI', info.temporalUiUrl ?? 'external cluster (see its own UI)'],
  ];
  if (info.temporalUiUrl) rows.push(['  one tenant', temporalUiTenantLink(info.temporalUiUrl, info.namespace, tenant)]);
  rows.push(['Database', info.database]);
  if (info.devKey) rows.push(['Dev key', `${info.devKey.apiKey}  (every scope; local development only)`]);
  else rows.push(['First key', FIRST_KEY_COMMAND]);
  rows.push([
    'Try it',
    `curl -s ${info.apiUrl}/models -H "Authorization: Bearer ${info.devKey ? info.devKey.apiKey : '<api_key>'}"`,
  ]);
  const width = Math.max(...rows.map(([k]) => k.length));
  return [
    `svc runtime ready in ${(info.startupMs / 1000).toFixed(1)} s`,
    ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`),
    '',
  ].join('\n');
}
