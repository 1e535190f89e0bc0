import { parseArgs } from 'node:util';
import { createTenant, listKeys, mintKey, revokeKey, tenantExists } from '../activities/store/keys';
import { limitsCommand } from './limits-command';
import { normalizeAppName, scopeString } from '../schema/auth';
import { runCommand, UsageError, withCommandDb, type CliIo, type Print } from './cli';

const USAGE = `usage: npm run -s keys -- <command>
  create --scopes <csv> [--tenant <id>] [--name <label>] [--legacy]
  bootstrap --app <name> [--tenant <id>] [--name <label>]
  revoke <key_id>
  list [--tenant <id>]
  limits (--key <key_id> | --tenant <id>) [--rpm N] [--tpm N] [--tpd N] [--tpmonth N]
         (0 clears a limit; with no value given, prints the current limits)`;

/**
 * Operator CLI for keys; works while the service runs, against DATABASE_URL. Prints JSON to `out`.
 * @returns the process exit code (0 ok, 2 usage error, 1 failure)
 */
export function runKeysCli(argv: string[], io: CliIo): Promise<number> {
  return runCommand(argv, io, USAGE, keysCommand);
}

async function keysCommand(argv: string[], env: CliIo['env'], print: Print): Promise<void> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      scopes: { type: 'string' },
      tenant: { type: 'string' },
      name: { type: 'string' },
      app: { type: 'string' },
      legacy: { type: 'boolean' },
      key: { type: 'string' },
      rpm: { type: 'string' },
      tpm: { type: 'string' },
      tpd: { type: 'string' },
      tpmonth: { type: 'string' },
    },
  });
  if (!command || !['create', 'bootstrap', 'revoke', 'list', 'limits'].includes(command))
    throw new UsageError(`unknown command ${command ?? '(none)'}`);
  await withCommandDb(env, async (db) => {
    const tenantFor = async () => {
      if (values.tenant) {
        if (!(await tenantExists(db, values.tenant))) throw new UsageError(`tenant ${values.tenant} does not exist`);
        return values.tenant;
      }
      return createTenant(db, { name: values.name });
    };
    if (command === 'create') {
      const scopes = (values.scopes ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (!scopes.length)
        throw new UsageError('--scopes is required (comma-separated, e.g. runtime:chat,runtime:records)');
      const bad = scopes.filter((s) => !scopeString.safeParse(s).success);
      if (bad.length) throw new UsageError(`invalid scope(s): ${bad.join(', ')}`);
      const tenantId = await tenantFor();
      const k = await mintKey(db, { tenantId, kind: values.legacy ? 'legacy' : 'runtime', scopes, name: values.name });
      print({ api_key: k.apiKey, key_id: k.keyId, tenant_id: k.tenantId, scopes: k.scopes });
    } else if (command === 'bootstrap') {
      const app = normalizeAppName(values.app ?? '');
      if (!app) throw new UsageError('--app <name> is required');
      const tenantId = await tenantFor();
      const k = await mintKey(db, {
        tenantId,
        kind: 'bootstrap',
        scopes: [`bootstrap:app:${app}`],
        name: values.name ?? `bootstrap ${app}`,
      });
      print({ api_key: k.apiKey, key_id: k.keyId, tenant_id: k.tenantId, scopes: k.scopes });
    } else if (command === 'revoke') {
      const keyId = positionals[0];
      if (!keyId) throw new UsageError('revoke needs a key id');
      if (!(await revokeKey(db, keyId))) throw new UsageError(`no key ${keyId}`);
      print({ key_id: keyId, revoked: true });
    } else if (command === 'limits') {
      print(await limitsCommand(db, values));
    } else {
      print({ keys: await listKeys(db, { tenantId: values.tenant }) });
    }
  });
}
