import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

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
