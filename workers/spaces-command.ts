import { parseArgs } from 'node:util';
import { tenantExists } from '../activities/store/keys';
import { assignLegacySpaces, listLegacySpaces } from '../activities/store/spaces';
import { runCommand, UsageError, withCommandDb, type CliIo, type Print } from './cli';

const USAGE = `usage: npm run -s spaces -- <command>
  list-legacy
  migrate-legacy --tenant <id> [--space <space_id> ...] [--dry-run]`;

/**
 * Operator CLI for spaces: lists legacy spaces (no owner) and assigns them to a tenant, against
 * DATABASE_URL while the service runs. Prints JSON to `out`.
 * @returns the process exit code (0 ok, 2 usage error, 1 failure)
 */
export function runSpacesCli(argv: string[], io: CliIo): Promise<number> {
  return runCommand(argv, io, USAGE, spacesCommand);
}

async function spacesCommand(argv: string[], env: CliIo['env'], print: Print): Promise<void> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { tenant: { type: 'string' }, space: { type: 'string', multiple: true }, 'dry-run': { type: 'boolean' } },
  });
  if (command !== 'migrate-legacy' && command !== 'list-legacy')
    throw new UsageError(`unknown command ${command ?? '(none)'}`);
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
  if (command === 'migrate-legacy' && !values.tenant) throw new UsageError('--tenant <id> is required');
  await withCommandDb(env, async (db) => {
    const legacy = await listLegacySpaces(db);
    if (command === 'list-legacy') return print({ legacy_spaces: legacy });
    const tenantId = values.tenant!;
    if (!(await tenantExists(db, tenantId))) throw new UsageError(`tenant ${tenantId} does not exist`);
    const wanted = values.space;
    if (wanted) {
      const unknown = wanted.filter((id) => !legacy.some((s) => s.id === id));
      if (unknown.length) throw new UsageError(`not legacy spaces (unknown or already owned): ${unknown.join(', ')}`);
    }
    if (values['dry-run']) {
      const ids = legacy.map((s) => s.id).filter((id) => !wanted || wanted.includes(id));
      return print({ tenant_id: tenantId, dry_run: true, would_assign: ids });
    }
    const assigned = await assignLegacySpaces(db, { tenantId, ids: wanted });
    print({ tenant_id: tenantId, assigned, remaining_legacy: legacy.length - assigned.length });
  });
}
