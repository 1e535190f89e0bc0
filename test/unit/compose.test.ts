import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../workers/temporal-dev';

const ROOT = path.resolve(__dirname, '../..');
const file = path.join(ROOT, 'docker-compose.yml');

/** `docker compose` (plugin) or Debian's `docker-compose`: whichever this machine has (.ci/run installs the latter). */
function composeCli(): string[] | undefined {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return ['docker', 'compose'];
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return ['docker-compose'];
  return undefined;
}

test('api and worker scale independently with replicas, one host port per api replica', () => {
  const doc = parse(readFileSync(file, 'utf8'));
  expect(doc.services.api.deploy.replicas).toBeGreaterThanOrEqual(2);
  expect(doc.services.worker.deploy.replicas).toBeGreaterThanOrEqual(2);
  expect(doc.services.api.ports).toEqual(['8080-8081:8080']);
  // No fixed container names: they would make a second replica impossible.
  expect(doc.services.api.container_name).toBeUndefined();
  expect(doc.services.worker.container_name).toBeUndefined();
});

test("the compose file passes the compose client's own validation", () => {
  const cli = composeCli();
  // CI installs docker-compose; a developer machine without any compose client checks the YAML above only.
  if (!cli) return expect(process.env.CI).not.toBe('true');
  const r = spawnSync(cli[0], [...cli.slice(1), '-f', file, 'config', '-q'], {
    encoding: 'utf8',
    env: { ...process.env, SVC_REGISTRATION_TOKEN: 'x' },
  });
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
});

test("the compose file's Temporal server reads our dynamic config: the buffered-events limit our dev servers have", () => {
  const temporal = parse(readFileSync(file, 'utf8')).services.temporal;
  const [host, container] = String(temporal.volumes[0]).split(':');
  // The image resolves DYNAMIC_CONFIG_FILE_PATH from /etc/temporal.
  expect(path.posix.join('/etc/temporal', temporal.environment.DYNAMIC_CONFIG_FILE_PATH)).toBe(container);
  const config = parse(readFileSync(path.join(ROOT, host), 'utf8'));
  const key = 'history.maximumBufferedEventsBatch';
  expect(config[key]).toEqual([{ value: DEV_SERVER_DYNAMIC_CONFIG[key], constraints: {} }]);
  // The image's own development settings, which the mounted file replaces, are kept.
  expect(config['system.forceSearchAttributesCacheRefreshOnRead'][0].value).toBe(true);
});
